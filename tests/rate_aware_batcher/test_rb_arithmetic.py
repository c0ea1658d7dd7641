"""Upstream arithmetic reproduced exactly: truncation, half-even rounding, floor divmod,
the estimator's medians and snap (RB-R1 to RB-R6)."""

from __future__ import annotations

import statistics

from hypothesis import given
from hypothesis import strategies as st

from tests.rate_aware_batcher.literal_model import Estimator, PulseGrid
from timealign.rate_aware_batcher.estimator import integer_rate_hz, median, observe
from timealign.rate_aware_batcher.grid import (
    Grid,
    batch_base_index,
    from_seconds,
    period_of,
    pulse_index,
    slot_in_batch,
    slots_per_batch,
    sub_rate,
    timeout_offset,
)


def test_from_seconds_truncates_toward_zero_rb_r1() -> None:
    """RB-R1."""
    assert from_seconds(2.01) == 2_009_999_999
    assert from_seconds(1.0) == 1_000_000_000
    assert timeout_offset(1.2, 1_000_000_000) == 1_200_000_000
    assert timeout_offset(1.2, from_seconds(0.1)) == int(1.2 * (100_000_000 / 1e9) * 1e9)


def test_observe_keeps_positive_diffs_only_rb_r2() -> None:
    """RB-R2."""
    last, diffs = observe(None, (), 100)
    assert (last, diffs) == (100, ())
    last, diffs = observe(last, diffs, 100)  # duplicate: no diff
    last, diffs = observe(last, diffs, 50)  # out of order: last does not move
    assert (last, diffs) == (100, ())
    last, diffs = observe(last, diffs, 170)
    assert (last, diffs) == (170, (70,))
    for k in range(40):
        last, diffs = observe(last, diffs, 170 + 10 * (k + 1))
    assert len(diffs) == 32 and diffs[-1] == 10


def test_integer_rate_rb_r3() -> None:
    """RB-R3."""
    p14 = (71_428_571, 71_428_572) * 3
    assert integer_rate_hz(p14[:3]) is None  # fewer than 4 diffs
    assert integer_rate_hz(p14) == 14
    # a diff spanning two pulses counts as two periods; a short split diff is dropped
    assert integer_rate_hz((*p14, 142_857_143, 1_000)) == 14
    # 0.7, 0.85 and 1.4 Hz do not snap; 0.4 Hz rounds to 0
    for hz in (0.7, 0.85, 1.4, 0.4):
        assert integer_rate_hz((round(1e9 / hz),) * 4) is None
    assert integer_rate_hz((round(1e9 / 0.95),) * 4) == 1
    assert median([1, 2]) == 1.5 and median([3, 1, 2]) == 2


def test_grid_arithmetic_rb_r4_rb_r5_rb_r6() -> None:
    """RB-R4, RB-R5, RB-R6."""
    assert period_of(14) == 71_428_571
    assert slots_per_batch(14, 750_000_000) == 10  # 10.5 -> 10, half to even
    assert slots_per_batch(14, 2_000_000_000) == 28
    assert sub_rate(1, 999_999_999) and not sub_rate(1, 1_000_000_000)
    # floor divmod below the origin, and the drift tolerance
    assert batch_base_index(-1, 0, 100) == 0  # r = 99 > 50 -> q + 1 = 0
    assert batch_base_index(1_000_000, 0, 71_428_571) == 0
    assert batch_base_index(1_000_001, 0, 71_428_571) == 1
    assert pulse_index(150, 0, 100) == 2 and pulse_index(250, 0, 100) == 2  # half to even
    assert slot_in_batch(250, 100, Grid(0, 100, 10)) == 1


@given(st.lists(st.integers(1, 10**10), min_size=0, max_size=40))
def test_estimator_matches_statistics_median_reading(diffs: list[int]) -> None:
    """RB-R3 against the literal model's ``statistics.median`` transcription."""
    model = Estimator()
    model.diffs.extend(diffs[-32:])
    assert integer_rate_hz(tuple(diffs[-32:])) == model.integer_rate_hz
    if diffs:
        assert median(diffs) == statistics.median(diffs)


@given(st.integers(-(10**15), 10**15), st.integers(-(10**15), 10**15),
       st.integers(1, 10**10), st.integers(-(10**12), 10**12))
def test_slot_matches_literal_grid(t: int, start: int, period: int, origin: int) -> None:
    """RB-R5/RB-R6 against the literal model's grid."""
    grid = PulseGrid(origin, period, 14)
    assert slot_in_batch(t, start, Grid(origin, period, 14)) == grid.slot_in_batch(t, start)
