"""The small total functions of ApproximateTime, with PEP 316 contracts for CrossHair.

Everything the machine decides by comparing stamps goes through these functions: the
boundary selection with its tie rule (AT-R6, AT-D2), the age-penalty scaling in ROS 2
(AT-D23) and ROS 1 (AT-R16) arithmetic used by the improvement and optimality comparisons
(AT-R11, AT-R12). They take plain ints, floats and tuples
so that CrossHair can build their arguments; ``proofs/crosshair_pass.py`` checks every
``post:`` line below. The boundary contracts are stated for up to 4 topics, the size
CrossHair confirms over all paths.
"""

from __future__ import annotations

import math
from fractions import Fraction

from timealign.rulebook import Book, rule

NS_PER_S = 1_000_000_000
#: The arithmetics, ApproximateTime's profiles (AT-R1): ROS 2's (the default) and ROS 1's.
ARITHMETICS = ("ros2", "ros1")
#: The rule functions an arithmetic may replace and each one's table (AT-R16, AT-R19):
#: ros2's is empty, ros1's is declared at the end of ``machine.py``.
BOOK = Book(__name__, "arithmetic", ARITHMETICS)


@BOOK.slot
@rule("AT-R6")
def start_boundary(stamps: tuple[int, ...]) -> tuple[int, int]:
    """``(index, stamp)`` of the earliest front; ties go to the LOWEST index (AT-R6).

    Upstream scans from topic 0 and replaces the running value only when strictly earlier,
    which keeps the first (lowest-index) minimum.

    pre: 0 < len(stamps) <= 4
    post: __return__[1] == min(stamps)
    post: stamps[__return__[0]] == __return__[1]
    post: all(s > __return__[1] for s in stamps[: __return__[0]])
    """
    time = min(stamps)  # the first occurrence is the lowest index
    return stamps.index(time), time


@BOOK.slot
@rule("AT-R6")
def end_boundary(stamps: tuple[int, ...]) -> tuple[int, int]:
    """``(index, stamp)`` of the latest front; ties go to the HIGHEST index (AT-R6).

    Upstream replaces the running value when ``not (t < time)``, i.e. also on a tie, which
    keeps the last (highest-index) maximum.

    pre: 0 < len(stamps) <= 4
    post: __return__[1] == max(stamps)
    post: stamps[__return__[0]] == __return__[1]
    post: all(s < __return__[1] for s in stamps[__return__[0] + 1 :])
    """
    time = max(stamps)
    index = len(stamps) - 1
    while stamps[index] != time:  # the last occurrence is the highest index
        index -= 1
    return index, time


def scale_factor(age_penalty: float) -> tuple[int, int]:
    """The exact value of the binary64 sum ``1.0 + age_penalty`` as ``(num, den)`` (AT-D23).

    The sum is rounded to binary64 first, as upstream computes it in double; the ratio is
    then exact, so no decimal ``1 + age_penalty`` ever enters the arithmetic.

    pre: 0.0 <= age_penalty <= 1e6
    post: __return__[1] > 0 and __return__[0] >= __return__[1]
    post: __return__[0] / __return__[1] == 1.0 + age_penalty
    """
    numerator, denominator = (1.0 + age_penalty).as_integer_ratio()
    return numerator, denominator


@BOOK.slot
@rule("AT-D23")
def scale_ros2(d: int, numerator: int, denominator: int) -> int:
    """ROS 2 ``Duration * double``: ``trunc(d * num / den)`` computed exactly (AT-D23).

    Truncation is toward zero, also for a negative ``d`` (C cast semantics, never floor).

    pre: denominator > 0 and numerator >= denominator
    post: abs(__return__) * denominator <= abs(d) * numerator
    post: abs(d) * numerator < (abs(__return__) + 1) * denominator
    post: __return__ == 0 or (__return__ > 0) == (d > 0)
    post: d < 0 or __return__ >= d
    """
    magnitude = abs(d) * numerator // denominator
    return magnitude if d >= 0 else -magnitude


@rule("AT-R16", profiles=("ros1",))
def scale_ros1(d: int, factor: float) -> int:
    """ROS 1 ``ros::Duration * double``: through seconds in double, rounded (AT-R16).

    ``toSec()`` is ``sec + 1e-9 * nsec`` with a floor split; ``fromSec`` floors the
    seconds and rounds the nanoseconds half away from zero, normalising a carry.

    pre: 1.0 <= factor <= 4.0
    pre: -(10**12) <= d <= 10**12
    post: d != 0 or __return__ == 0
    post: abs(__return__ - d * factor) <= 1 + abs(d) * factor * 1e-12
    """
    seconds, nanoseconds = divmod(d, NS_PER_S)
    scaled = (float(seconds) + 1e-9 * float(nanoseconds)) * factor
    whole = math.floor(scaled)
    fraction = (scaled - whole) * 1e9  # in [0, 1e9]: half away from zero is half up
    rounded = math.floor(fraction)
    if fraction - rounded >= 0.5:
        rounded += 1
    return whole * NS_PER_S + rounded  # a carry of 1e9 ns normalises into the seconds


@rule("AT-R16")
def scale_ros1_ratio(d: int, numerator: int, denominator: int) -> int:
    """ROS 1's scaling in the place of ROS 2's: the factor is the binary64 ``1.0 +
    age_penalty`` that ``numerator / denominator`` holds exactly."""
    return scale_ros1(d, numerator / denominator)


def exact_scale(d: int, age_penalty: float) -> Fraction:
    """The exact rational ``d * (1.0 + age_penalty)`` before truncation (for tests)."""
    return Fraction(d) * Fraction(1.0 + age_penalty)
