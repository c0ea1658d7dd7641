"""Differential test: the reference against the literal mutable model on arbitrary traces.

Where the stateful test plays realistic pulse trains, this one draws unstructured polls
on a nanosecond scale (L = 1000 ns, timestamps within a few L, several kinds and names) so
ties, exact boundaries, out-of-order stamps, huge rates and re-registrations are common.
Every output must match, and the run invariants (RB-I1, RB-I2, RB-I3, RB-I5) must hold.
"""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from tests.rate_aware_batcher.traces import literal_outputs, reference_outputs
from timealign.rate_aware_batcher import (
    Config,
    End,
    Input,
    Poll,
    Polled,
    SetBatchLength,
    invariants,
)

KINDS = ("detector_events", "monitor_counts", "log", "run_control")


@st.composite
def traces(draw: st.DrawFn) -> tuple[Config, list[Input]]:
    length = draw(st.sampled_from([1e-6, 1e-6, 5e-7, 2e-6]))
    timeout = draw(st.sampled_from([None, None, 1e-6, 3e-6, 4e-6]))
    base = draw(st.integers(0, 10**6))
    serial = 0
    inputs: list[Input] = []
    for _ in range(draw(st.integers(1, 40))):
        if draw(st.integers(0, 9)) == 0:
            inputs.append(SetBatchLength(draw(st.sampled_from([1e-6, 2e-6, 5e-7]))))
            continue
        messages = []
        for _ in range(draw(st.integers(0, 4))):
            serial += 1
            kind = draw(st.sampled_from(KINDS))
            name = draw(st.sampled_from(["a", "b"]))
            base += draw(st.integers(-50, 400))
            stamp = max(0, base + draw(st.sampled_from([0, 0, 0, 10, -700, 5_000])))
            messages.append(Polled(kind, name, stamp, f"m{serial}"))
        inputs.append(Poll(tuple(messages)))
    inputs.append(End())
    return Config(length, timeout), inputs


@given(traces())
@example((Config(1e-6), [Poll((Polled("detector_events", "a", 0, "m1"),)), End()]))
def test_reference_matches_literal_model(trace: tuple[Config, list[Input]]) -> None:
    config, inputs = trace
    mine = reference_outputs(config, inputs)
    assert mine == literal_outputs(config, inputs)
    assert invariants.no_loss_no_duplication(config, inputs, mine) == []
    assert invariants.one_batch_per_poll(config, inputs, mine) == []
    assert invariants.windows_ordered(config, inputs, mine) == []
    assert invariants.ungated_ride_along(config, inputs, mine) == []
