"""The contract-checked helpers against independent definitions (AT-R6, AT-D23, AT-R16,
AT-H2)."""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from timealign.approximate_time.arithmetic import (
    end_boundary,
    exact_scale,
    scale_factor,
    scale_ros1,
    scale_ros2,
    start_boundary,
)
from timealign.approximate_time.machine import _scaler as scaler
from timealign.approximate_time.model import Config

stamps = st.lists(st.integers(0, 5), min_size=1, max_size=6).map(tuple)
penalties = st.sampled_from([0.0, 0.1, 0.25, 0.3, 0.7, 1e-9, 0.123456789, 1.5])


@given(stamps)
def test_at_r6_boundaries_follow_the_upstream_scan(values: tuple[int, ...]) -> None:
    """AT-R6, AT-D2: the helpers equal upstream's scan from topic 0 (strict < for the
    start, not-< for the end)."""
    start, start_time = 0, values[0]
    end, end_time = 0, values[0]
    for k in range(1, len(values)):
        if values[k] < start_time:
            start, start_time = k, values[k]
        if not values[k] < end_time:
            end, end_time = k, values[k]
    assert start_boundary(values) == (start, start_time)
    assert end_boundary(values) == (end, end_time)


def test_at_r6_all_equal_fronts() -> None:
    """AT-R6: equal fronts -> start 0, end (pivot) N-1."""
    assert start_boundary((4, 4, 4)) == (0, 4)
    assert end_boundary((4, 4, 4)) == (2, 4)


@given(st.integers(-(10**18), 10**18), penalties)
def test_at_d23_scale_is_exact_truncation(d: int, penalty: float) -> None:
    """AT-D23: trunc toward zero of the exact product with the binary64 1.0 + penalty."""
    numerator, denominator = scale_factor(penalty)
    assert Fraction(numerator, denominator) == Fraction(1.0 + penalty)
    assert scale_ros2(d, numerator, denominator) == math.trunc(exact_scale(d, penalty))


def test_at_d23_float64_trap_and_small_durations() -> None:
    """AT-D23, AT-D8: age_penalty 0.7, d = 10 gives 16 (float64 would give 17); with 0.1,
    scale(d) == d for 0 <= d < 10; truncation toward zero for negative d."""
    numerator, denominator = scale_factor(0.7)
    assert scale_ros2(10, numerator, denominator) == 16
    assert int(10 * (1.0 + 0.7)) == 17
    scale = scaler(Config(2, 1))
    assert [scale(d) for d in range(10)] == list(range(10))
    assert scale(-15) == -16 and scale(15) == 16


def test_at_r16_ros1_rounds_half_away_from_zero() -> None:
    """AT-R16: d = 2 ns, age_penalty 0.25: ROS 2 gives 2, ROS 1 gives 3 (note §14)."""
    assert scaler(Config(2, 1, age_penalty=0.25))(2) == 2
    assert scaler(Config(2, 1, age_penalty=0.25, arithmetic="ros1"))(2) == 3
    assert scale_ros1(10, 1.7) == 17
    assert scale_ros1(-3, 1.0) == -3
    assert scale_ros1(1_999_999_999, 1.0) == 1_999_999_999  # carry handled
    assert scale_ros1(10**9, 1.5) == 1_500_000_000


@given(st.integers(-(10**12), 10**12), penalties)
def test_at_r16_ros1_is_within_a_nanosecond_below_10e12(d: int, penalty: float) -> None:
    """AT-R16: the ROS 1 result stays within rounding distance of the exact product."""
    exact = exact_scale(d, penalty)
    assert abs(scale_ros1(d, 1.0 + penalty) - exact) <= 1 + abs(exact) * Fraction(1, 10**12)


def test_at_h2_large_durations_use_exact_arithmetic() -> None:
    """AT-H2: beyond 10^12 ns the reference stays exact where float64 drifts; it never
    overflows (upstream would throw above INT64_MAX / s)."""
    numerator, denominator = scale_factor(0.1)
    d = 2**63 - 1
    assert scale_ros2(d, numerator, denominator) == math.trunc(Fraction(d) * Fraction(1.1))
    assert scale_ros2(d, numerator, denominator) > 2**63
    drifting = [x for x in range(10**15, 10**15 + 200)
                if int(x * 1.1) != scale_ros2(x, numerator, denominator)]
    assert drifting  # float64 differs for some of these; the reference does not use it
