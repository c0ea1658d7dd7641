"""Differential test: the reference against the literal mutable model on arbitrary traces.

Where the stateful test plays realistic pulse trains, this one draws unstructured polls
on a nanosecond scale (L = 1000 ns, timestamps within a few L, several kinds and names) so
ties, exact boundaries, out-of-order stamps, huge rates and re-registrations are common.
Both profiles (RB-R17) are drawn, with a wall clock on the polls (RB-R18) that stalls,
advances and leaps past the head's backstop threshold (RB-R26). Every output must match,
and the run invariants of the profile (RB-I1, RB-I2, RB-I3 or RB-I9, RB-I5) must hold.
"""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from tests.rate_aware_batcher.support import literal_outputs, reference_outputs
from timealign.rate_aware_batcher import (
    Batch,
    Config,
    End,
    Input,
    Poll,
    Polled,
    SetBatchLength,
    invariants,
)

KINDS = ("detector_events", "monitor_counts", "log", "run_control", "device")


@st.composite
def traces(draw: st.DrawFn) -> tuple[Config, list[Input]]:
    length = draw(st.sampled_from([1e-6, 1e-6, 5e-7, 2e-6]))
    profile = draw(st.sampled_from(["card", "esslivedata-head"]))
    timeout = draw(st.sampled_from([None, None, 1e-6, 3e-6, 4e-6]))
    if profile != "card" and timeout is not None and timeout / length > 3:
        timeout = float("inf")  # refused at head (RB-R19); inf turns the timeout off
    base = draw(st.integers(-(10**6), 10**6))
    serial = now = 0
    inputs: list[Input] = []
    for _ in range(draw(st.integers(1, 40))):
        if draw(st.integers(0, 9)) == 0:
            inputs.append(SetBatchLength(draw(st.sampled_from([1e-6, 2e-6, 5e-7]))))
            continue
        messages = []
        for _ in range(draw(st.integers(0, 4))):
            serial += 1
            kind = draw(st.sampled_from(KINDS if profile != "card" else KINDS[:-1]))
            name = draw(st.sampled_from(["a", "b"]))
            base += draw(st.integers(-50, 400))
            stamp = base + draw(st.sampled_from([0, 0, 0, 10, -700, 5_000, 3_000_000]))
            messages.append(Polled(kind, name, stamp, f"m{serial}"))
        now += draw(st.sampled_from([0, 300, 300, 2_000, 25_000]))
        inputs.append(Poll(tuple(messages), now=draw(st.sampled_from([now, now, None]))))
    inputs.append(End())
    return Config(length, timeout, profile=profile), inputs


@given(traces())
@example((Config(1e-6), [Poll((Polled("detector_events", "a", 0, "m1"),)), End()]))
def test_reference_matches_literal_model(trace: tuple[Config, list[Input]]) -> None:
    config, inputs = trace
    mine = reference_outputs(config, inputs)
    assert mine == literal_outputs(config, inputs)
    assert invariants.no_loss_no_duplication(config, inputs, mine) == []
    assert invariants.one_batch_per_poll(config, inputs, mine) == []
    windows = invariants.windows_ordered_head if config.head else invariants.windows_ordered
    assert windows(config, inputs, mine) == []
    assert invariants.ungated_ride_along(config, inputs, mine) == []


EXTREME = st.sampled_from([1e300, 1e-300, 1e-10, float("inf"), float("nan"), 0, -1.0])
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats() | EXTREME
    | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                 max_size=3),
    max_leaves=8,
)
FIELDS = {"kind": st.sampled_from(["log", "detector_events", "camera"]) | JSONISH,
          "name": st.text(max_size=2) | JSONISH, "timestamp": st.integers(-5, 10**6) | JSONISH,
          "id": st.text(max_size=2) | JSONISH}


@given(st.lists(st.one_of(
    st.fixed_dictionaries({"op": st.just("poll"), "messages": st.lists(
        st.fixed_dictionaries({}, optional=FIELDS), max_size=3)},
        optional={"now": st.integers(-(2**64), 2**64) | JSONISH}),
    st.fixed_dictionaries({"op": st.sampled_from(["set_batch_length", "end", "tick"]),
                           "seconds": JSONISH}),
    JSONISH,
), max_size=12), st.fixed_dictionaries({}, optional={
    "batch_length_s": JSONISH | st.floats(1e-9, 5), "timeout_s": JSONISH | st.just("inf"),
    "timeout_factor": JSONISH, "profile": st.sampled_from(["card", "esslivedata-head"])
    | JSONISH}))
@example([{"op": "set_batch_length", "seconds": 1e20}], {"timeout_factor": 1e290})
@example([], {"batch_length_s": 1e300})
def test_only_invalid_input_escapes(raw_inputs: list[object],
                                    raw_config: dict[str, object]) -> None:
    """RB-D1 to RB-D4, RB-R17 to RB-R19: arbitrary JSON is refused with InvalidInput, never
    another exception from deep inside; the run goes on from the state before the refused
    input; the fast path refuses exactly what the rule text refuses (same field and rule)
    and otherwise stays in lockstep with it."""
    from timealign import InvalidInput
    from timealign.lockstep import Lockstep
    from timealign.rate_aware_batcher import ALGORITHM

    try:
        config = ALGORITHM.codec.config_from_json(raw_config)
    except InvalidInput as error:
        assert error.rule.startswith(("RB-", "VEC-"))
        return
    run = Lockstep(ALGORITHM, config)
    for raw in raw_inputs:
        before = run.state
        try:
            item = ALGORITHM.codec.input_from_json(raw)  # type: ignore[arg-type]
            run.step(item)
        except InvalidInput as error:
            assert error.rule.startswith(("RB-", "VEC-"))
            assert run.state == before


def test_empty_poll_recovers_a_gap_left_by_a_close() -> None:
    """RB-R13 on an empty poll: the close of input 1 re-routes pulse 3600 to overflow again
    (a window ahead) with no gridded message left in the new window, so the next poll, empty,
    must jump the window to 3000 rather than time out an empty [2000, 3000) batch."""
    pulses = tuple(Polled("detector_events", "a", t, f"p{t}") for t in (0, 250, 500, 750, 1000))
    inputs: list[Input] = [
        Poll(pulses),
        Poll((Polled("detector_events", "a", 1250, "q1"),
              Polled("detector_events", "a", 3600, "q2"))),
        Poll(()),
        Poll((Polled("detector_events", "a", 3750, "q3"),)),
        End(),
    ]
    mine = reference_outputs(Config(1e-6), inputs)
    assert mine == literal_outputs(Config(1e-6), inputs)
    assert [(k, o) for k, o in mine if k >= 2] == [(3, Batch(3000, 4000, ("q2", "q3")))]
