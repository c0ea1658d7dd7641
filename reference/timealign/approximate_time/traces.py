"""What ApproximateTime knows about the traces it is checked on (spec/conformance.md).

The explorer's alphabets (``proofs/explore_approximate_time.py`` walks them exhaustively,
``timealign conform --explore`` up to a depth), the fuzz strategy (:mod:`.strategies`),
the observability profiles (CF-R11), the output -> rule map (CF-R14) and the targets
(CF-R18): ROS 2 (rolling, and the nine-slot policy of Humble and Jazzy, AT-D22) and ROS 1
``message_filters``. Registered as ``ALGORITHM.checks.traces``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from timealign.approximate_time.model import Config, Input, Message
from timealign.traces import JSON, Instance, Profile, RuleMap, Target, Trace, Traces

# --- the explorer's alphabets --------------------------------------------------------------


def any_order(topics: int, stamps: Sequence[int]) -> Callable[[Trace], list[Input]]:
    """Every topic with every stamp: ties, out-of-order stamps, bursts (overflow)."""
    def moves(trace: Trace) -> list[Input]:
        ident = f"m{len(trace)}"
        return [Message(k, s, ident) for k in range(topics) for s in stamps]
    return moves


def in_order(topics: int, steps: Sequence[int]) -> Callable[[Trace], list[Input]]:
    """Per-topic stamps non-decreasing: each move advances one topic by a step."""
    def moves(trace: Trace) -> list[Input]:
        ident = f"m{len(trace)}"
        last = [0] * topics
        for item in trace:
            if isinstance(item, Message):
                last[item.topic] = item.stamp
        return [Message(k, last[k] + d, ident) for k in range(topics) for d in steps]
    return moves


def named(shape: str) -> Callable[[Config], str]:
    """An instance's name for a config ``--where`` changed (CF-R31): its topic count, queue
    size and alphabet, and its arithmetic when not ros2 (``at/n2-q9-any-order``)."""
    def name(config: Config) -> str:
        arithmetic = "" if config.arithmetic == "ros2" else f"-{config.arithmetic}"
        return f"at/n{config.topics}-q{config.queue_size}-{shape}{arithmetic}"
    return name


INSTANCES = (
    Instance("at/n2-q1-any-order", Config(2, 1), any_order(2, (0, 1, 2)),
             named("any-order")),
    Instance("at/n3-q2-ties", Config(3, 2), any_order(3, (0, 1)), named("ties")),
    Instance("at/n2-q1-interval", Config(2, 1, max_interval_duration=1),
             any_order(2, (0, 1, 3)), named("interval")),
    Instance("at/n2-ros1-penalty", Config(2, 2, age_penalty=0.7, arithmetic="ros1"),
             any_order(2, (0, 10, 17, 27)), named("penalty")),
    Instance("at/n2-bounds", Config(2, 9, inter_message_lower_bounds=[2, 1]),
             in_order(2, (2, 3)), named("bounds")),
)


def _in(arithmetic: str) -> tuple[Instance, ...]:
    """The instances in one arithmetic (the others re-run in it, named for it)."""
    found = []
    for item in INSTANCES:
        given = item.config
        if given.arithmetic != arithmetic:
            config = Config(given.topics, given.queue_size, given.age_penalty,
                            given.max_interval_duration, given.inter_message_lower_bounds,
                            arithmetic)
            item = attrs.evolve(item, name=f"{item.name}-{arithmetic}", config=config)
        found.append(item)
    return tuple(found)


# --- fuzz ----------------------------------------------------------------------------------

def _fuzz(min_topics: int = 1, arithmetics: tuple[str, ...] | None = None) -> Any:
    def draw(size: int) -> Any:
        from timealign.approximate_time.strategies import ARITHMETICS, at_runs

        return at_runs(max_inputs=size, epoch=True, min_topics=min_topics,
                       arithmetics=arithmetics or ARITHMETICS)
    return draw


# --- observability and rules ---------------------------------------------------------------

PROFILES: dict[str, Profile] = {
    "full": None,
    # ROS 2 message_filters reports only its callbacks (CF-R11).
    "upstream": {"published": (("ids",), ())},
}

RULES: RuleMap = {
    ("published", None): ("AT-R12", "AT-R14"),
    ("dropped", "interval_too_wide"): ("AT-R8", "AT-D10"),
    ("dropped", "pivot_refused"): ("AT-R9", "AT-D3"),
    ("dropped", "superseded"): ("AT-R11", "AT-D1"),
    ("dropped", "queue_overflow"): ("AT-R5", "AT-D4"),
    ("warning", "out_of_order"): ("AT-R4", "AT-D12"),
    ("warning", "closer_than_bound"): ("AT-R4",),
    ("pending", None): ("AT-R17", "AT-D20"),
}

# --- targets (CF-R18) ----------------------------------------------------------------------

# Every trace the reference refuses lies outside both targets (AT-D17): upstream takes a
# config the reference refuses (a negative age penalty) or has undefined behaviour on it
# (queue size 0), and throws on a negative stamp where the reference refuses one input.
REFUSED = {
    "AT-R1": "a config upstream takes or aborts on (AT-D17)",
    "AT-R2": "an input upstream throws on or cannot express (AT-D17, AT-D19)",
    "AT-R19": "ROS 1's 32-bit time: upstream throws inside add() and may stay stuck (AT-R19)",
    "AT-R20": "a virtual time past int64: upstream throws inside process() (AT-R20)",
}


def _settle_ros1(config: Any, inputs: list[Any]) -> list[Any]:
    """Drop the messages the reference refuses under AT-R19 (a generated ros1 trace mixes
    stamps near 0 with epoch stamps), so the rest of the trace stays inside the target."""
    from timealign.approximate_time.machine import initial, step
    from timealign.errors import InvalidInput

    state, kept = initial(config), []
    for item in inputs:
        try:
            state, _ = step(config, state, item)
        except InvalidInput as error:
            if error.rule == "AT-R19":
                continue
            raise
        kept.append(item)
    return kept


def _arithmetic(config: JSON) -> str:
    return str(config.get("arithmetic") or "ros2")


def _topics(config: JSON) -> int:
    topics = config.get("topics")
    return len(topics) if isinstance(topics, list) else int(topics) if \
        isinstance(topics, int) else 0


def _outside_ros2(config: JSON, _inputs: Sequence[JSON]) -> str | None:
    if _arithmetic(config) != "ros2":
        return "ros1 arithmetic (AT-R16)"
    return None


#: The nine-slot policy of ROS 2 Humble and Jazzy (``approximate_time.h``): M0 and M1 are
#: mandatory, M2 to M8 default to NullType (AT-D22).
NINE_SLOTS = (2, 9)


def _outside_nine_slots(config: JSON, inputs: Sequence[JSON]) -> str | None:
    """Humble and Jazzy: the ros2 target's domain, two to nine topics (AT-D22)."""
    reason = _outside_ros2(config, inputs)
    if reason is not None:
        return reason
    topics = _topics(config)
    if topics < NINE_SLOTS[0]:
        return "one topic: the nine-slot policy takes at least two (AT-D22)"
    if topics > NINE_SLOTS[1]:
        return "more than nine topics: the nine-slot policy has nine (AT-D22)"
    return None


def _nine_slots(distribution: str, revision: str) -> Target:
    return Target(
        name=f"ros2-{distribution.lower()}",
        summary=f"ROS 2 {distribution} message_filters ApproximateTime (C++, nine-slot "
                f"approximate_time.h @{revision}): ros2 arithmetic, 2 to 9 topics "
                f"(AT-D22), published sets only",
        observe="upstream",
        instances=_in("ros2"),
        fuzz=_fuzz(min_topics=NINE_SLOTS[0], arithmetics=("ros2",)),
        outside=_outside_nine_slots,
        refused=REFUSED,
    )


def _outside_ros1(config: JSON, _inputs: Sequence[JSON]) -> str | None:
    if _arithmetic(config) != "ros1":
        return "ros2 arithmetic (AT-D23)"
    if _topics(config) < 2:
        return "one topic: the ROS 1 policy takes at least two (AT-R19)"
    return None


TARGETS = {
    "ros2": Target(
        name="ros2",
        summary="ROS 2 message_filters ApproximateTime (C++, rolling: variadic "
                "approximate_time.hpp): ros2 arithmetic, published sets only",
        observe="upstream",
        instances=_in("ros2"),
        fuzz=_fuzz(arithmetics=("ros2",)),
        outside=_outside_ros2,
        refused=REFUSED,
    ),
    "ros2-humble": _nine_slots("Humble", "fc93cd9"),
    "ros2-jazzy": _nine_slots("Jazzy", "d3eecd6"),
    "ros1": Target(
        name="ros1",
        summary="ROS 1 message_filters ApproximateTime (C++, noetic): ros1 arithmetic, "
                "2 or more topics, 32-bit time (AT-R19), published sets only",
        observe="upstream",
        instances=_in("ros1"),
        fuzz=_fuzz(min_topics=2, arithmetics=("ros1",)),
        outside=_outside_ros1,
        refused=REFUSED,
        settle=_settle_ros1,
    ),
}

TRACES = Traces(instances=INSTANCES, fuzz=_fuzz(), profiles=PROFILES, rules=RULES,
                targets=TARGETS)
