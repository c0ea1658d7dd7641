"""AT-R19: the ros1 profile keeps to ROS 1's 32-bit time (config and message refusals)."""

from __future__ import annotations

import pytest

from timealign.approximate_time import Config, End, Message, fast, initial, step
from timealign.approximate_time.ros1 import DURATION_MAX, TIME_MAX, in_range
from timealign.errors import InvalidInput

EPOCH = 1_700_000_000_123_456_789


def test_ros1_limits_are_the_rostime_ranges_at_r19() -> None:
    assert TIME_MAX == (2**32 - 1) * 10**9 + 999_999_999
    assert DURATION_MAX == (2**31 - 1) * 10**9 + 999_999_999
    assert Config(2, 1, arithmetic="ros1").max_interval_duration == DURATION_MAX


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"topics": 1}, "topics"),
    ({"topics": 2, "max_interval_duration": DURATION_MAX + 1}, "max_interval_duration"),
    ({"topics": 2, "inter_message_lower_bounds": [0, DURATION_MAX + 1]},
     "inter_message_lower_bounds"),
])
def test_ros1_config_refusals_at_r19(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        Config(queue_size=1, arithmetic="ros1", **kwargs)  # type: ignore[arg-type]
    assert (caught.value.field, caught.value.rule) == (field, "AT-R19")
    Config(queue_size=1, **kwargs)  # type: ignore[arg-type]  # ros2 takes each of them


def test_in_range_edges_at_r19() -> None:
    assert in_range(TIME_MAX, 0, TIME_MAX, TIME_MAX, 0, 1.1)
    assert not in_range(TIME_MAX, 1, TIME_MAX, TIME_MAX, 1, 1.1)
    # ``Duration * 1.0`` goes through double seconds: DURATION_MAX rounds up to 2^31 s
    # and leaves the range, in ROS 1 (fromSec throws) as here; 1 ms less stays inside.
    assert not in_range(DURATION_MAX, 0, 0, DURATION_MAX, 0, 1.0)
    assert in_range(DURATION_MAX - 10**6, 0, 0, DURATION_MAX - 10**6, 0, 1.0)
    # The age penalty scales the span: 1.7e9 s fits with 1.1, not with 1.5.
    assert in_range(EPOCH, 0, 0, EPOCH, 0, 1.1)
    assert not in_range(EPOCH, 0, 0, EPOCH, 0, 1.5)


@pytest.mark.parametrize("steps", [(initial, step), (fast.initial, fast.step)],
                         ids=["machine", "fast"])
def test_a_refused_message_changes_nothing_at_r19(steps: tuple[object, object]) -> None:
    make, advance = steps
    config = Config(2, 10, age_penalty=0.5, arithmetic="ros1")
    state = make(config)  # type: ignore[operator]
    for message in (Message(1, 1, "b0"), Message(0, 0, "a0")):
        state, _ = advance(config, state, message)  # type: ignore[operator]
    with pytest.raises(InvalidInput) as caught:
        advance(config, state, Message(0, EPOCH, "a1"))  # type: ignore[operator]
    assert (caught.value.field, caught.value.rule) == ("stamp", "AT-R19")
    state, outputs = advance(config, state, Message(0, 5, "a2"))  # type: ignore[operator]
    assert [o.ids for o in outputs] == [("a0", "b0")]
    # ros2 takes the same message (its durations are int64 ns).
    ros2 = Config(2, 10, age_penalty=0.5)
    state = make(ros2)  # type: ignore[operator]
    for item in (Message(1, 1, "b0"), Message(0, 0, "a0"), Message(0, EPOCH, "a1"), End()):
        state, _ = advance(ros2, state, item)  # type: ignore[operator]


def test_the_pivot_time_is_in_play_at_r19() -> None:
    """A superseded pivot message leaves its stamp in ``pivot_time``: it still counts."""
    config = Config(2, 10, age_penalty=0.0, arithmetic="ros1")
    state = initial(config)
    # a0@0, b@10: candidate {a0, b10}, pivot topic 1, pivot_time 10; D[0] empties.
    for message in (Message(0, 0, "a0"), Message(1, 10, "b10")):
        state, _ = step(config, state, message)
    if state.pivot != -1:
        assert state.pivot_time in {m.stamp for k in range(2) for m in state.held(k)} | {10}
    with pytest.raises(InvalidInput):
        step(config, state, Message(0, 10 + DURATION_MAX + 1, "far"))


def test_python_synchronizer_traces_at_h6() -> None:
    """AT-H6: on the hazard's minimal traces the reference publishes what the ROS 1 C++
    policy published (examples/ros1_message_filters), not what the ROS 1 Python
    synchronizer did (in the comments)."""
    def published(queue: int, messages: list[tuple[str, int, int]]) -> list[tuple[str, ...]]:
        config, sets = Config(2, queue, arithmetic="ros1"), []
        state = initial(config)
        for ident, topic, stamp in messages:
            state, outputs = step(config, state, Message(topic, stamp, ident))
            sets += [o.ids for o in outputs if hasattr(o, "messages")]  # type: ignore[union-attr]
        return sets

    assert published(1, [("m0", 0, 0), ("m1", 1, 5)]) == []  # Python: {m0, m1}
    assert published(10, [("a0", 0, 0), ("a1", 0, 0), ("b0", 1, 0)]) == [("a0", "b0")]
    # Python: {a1, b0}
    assert published(1, [("a0", 0, 10), ("a1", 0, 5), ("b0", 1, 5)]) == [("a1", "b0")]
    # Python: {a0, b0}
    assert published(1, [("b1", 1, 0), ("b2", 1, 0), ("a1", 0, 0), ("a2", 0, 0),
                         ("b3", 1, 0)]) == []  # Python: {a1, b2}, {a2, b3}
