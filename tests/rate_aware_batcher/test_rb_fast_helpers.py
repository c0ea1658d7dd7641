"""The fast path's grid and estimator helpers in lockstep with the rule text's (RB-R2 to
RB-R4, RB-R7, RB-R10, RB-R13, RB-R19, RB-R20).

``fast.py`` carries its own transcription of the contract-checked helpers of ``grid.py`` and
``estimator.py`` so that the compiled build compiles the whole step (issue 26). Each pair
must agree on every input of the rule-text helper's domain, in the build that is installed
(compiled or pure; ``make test-pure`` runs the pure one): the same result, float for float.
"""

from __future__ import annotations

import math

from hypothesis import example, given
from hypothesis import strategies as st

from timealign.rate_aware_batcher import estimator, fast, grid

NS = st.integers(-(2**63), 2**63 - 1)
LENGTH = st.integers(1, 10**15)
RATE = st.integers(1, 10**6 - 1)
# Diffs around a few pulse periods with jitter and missing pulses, and wild ones.
PERIOD = st.sampled_from([71_428_571, 200_000_000, 1_000_000_000, 10_000_000, 1_000, 7])


def _jittered(p: int) -> st.SearchStrategy[list[int]]:
    return st.lists(st.tuples(st.integers(1, 4), st.integers(-p // 5, p // 5)).map(
        lambda kj: max(1, kj[0] * p + kj[1])), max_size=32)


JITTERED = PERIOD.flatmap(_jittered)
WILD = st.lists(st.integers(1, 2**64), max_size=32)


@given(st.one_of(JITTERED, WILD))
@example([2**52, 1, 1, 1])
@example([3, 3, 6, 6])
@example([1_000_000_000] * 4)
def test_rb_r3_integer_rate_fast_equals_rule_text(diffs: list[int]) -> None:
    """RB-R3: ``_integer_rate_hz`` is ``estimator.integer_rate_hz`` on any ring."""
    ring = tuple(diffs)
    assert fast._integer_rate_hz(ring) == estimator.integer_rate_hz(ring)


@given(st.one_of(st.none(), NS), st.lists(st.integers(1, 2**64), max_size=32),
       st.lists(NS, max_size=40))
def test_rb_r2_observe_fast_equals_rule_text(last: int | None, diffs: list[int],
                                             stamps: list[int]) -> None:
    """RB-R2: ``_observe`` and ``_observe_all`` are the estimator's, stamp by stamp."""
    ring = tuple(diffs)
    assert fast._observe_all(last, ring, tuple(stamps)) == \
        estimator.observe_all(last, ring, stamps)
    want, got = (last, ring), (last, ring)
    for t in stamps:
        want, got = estimator.observe(*want, t), fast._observe(*got, t)
        assert got == want


@given(RATE, LENGTH)
def test_rb_r4_r7_grid_shape_fast_equals_rule_text(rate: int, length: int) -> None:
    """RB-R4, RB-R7: period, slots per batch and the sub-rate test."""
    assert fast._period_of(rate) == grid.period_of(rate)
    assert fast._slots_per_batch(rate, length) == grid.slots_per_batch(rate, length)
    assert fast._sub_rate(rate, length) == grid.sub_rate(rate, length)


@given(NS, NS, LENGTH)
def test_rb_r7_r13_window_arithmetic_fast_equals_rule_text(a: int, b: int,
                                                           length: int) -> None:
    """RB-R7's 43-year guard and RB-R13's gap steps."""
    assert fast._origin_plausible(a, b, length) == grid.origin_plausible(a, b, length)
    assert fast._gap_steps(a, b, length) == grid.gap_steps(a, b, length)


@given(st.lists(NS, min_size=1, max_size=8), LENGTH)
def test_rb_r20_plausible_anchor_fast_equals_rule_text(stamps: list[int], length: int) -> None:
    """RB-R20: head's anchor."""
    assert fast._plausible_anchor(list(stamps), length) == \
        grid.plausible_anchor(stamps, length)


@given(st.one_of(st.floats(0.0, 3.0, exclude_min=True), st.just(math.inf),
                 st.floats(1e-9, 1e3)), st.integers(1, 10**12))
def test_rb_r10_r19_timeout_distance_fast_equals_rule_text(factor: float, length: int) -> None:
    """RB-R10's timeout offset and RB-R19's infinite factor."""
    assert fast._timeout_distance(factor, length) == grid.timeout_distance(factor, length)
