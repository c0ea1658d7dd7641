"""The per-stream period estimator of the rate-aware batcher (spec RB-R2, RB-R3).

A gated stream keeps its newest timestamp and a ring of at most 32 positive inter-arrival
diffs. The integer rate is recomputed from the ring whenever a grid is refreshed: median
seed, per-pulse refinement (a diff spanning k pulses counts as diff/k), median again, then
a snap to an integer number of hertz within 10 %. The float operations, their order and
Python's half-to-even ``round`` are upstream's, so the same ring gives the same rate.
"""

from __future__ import annotations

from collections.abc import Sequence

from timealign.rulebook import rule

DIFF_BUFFER_SIZE = 32
MIN_DIFFS_FOR_GATE = 4
SNAP_RELATIVE_TOLERANCE = 0.1
SNAP_ABSOLUTE_TOLERANCE_HZ = 0.1
_EXACT_PAIR_SUM = 2**52


@rule("RB-R2")
def observe(last: int | None, diffs: tuple[int, ...], t: int) -> tuple[int | None, tuple[int, ...]]:
    """Record one timestamp (RB-R2): only a positive diff enters the ring; ``last`` never
    moves backwards, so an out-of-order or duplicate timestamp changes nothing.

    pre: len(diffs) <= DIFF_BUFFER_SIZE
    pre: -2**63 <= t < 2**63 and (last is None or -2**63 <= last < 2**63)
    post: len(__return__[1]) <= DIFF_BUFFER_SIZE and __return__[0] is not None
    post: __return__[1] == diffs or 0 < __return__[1][-1] < 2**64
    post: last is None or __return__[0] >= last
    post: __return__[1] == diffs or __return__[1][-1] > 0
    """
    if last is None:
        return t, diffs
    if t <= last:
        return last, diffs
    if len(diffs) >= DIFF_BUFFER_SIZE:
        return t, (*diffs[len(diffs) - DIFF_BUFFER_SIZE + 1 :], t - last)
    return t, (*diffs, t - last)


def observe_all(
    last: int | None, diffs: tuple[int, ...], stamps: Sequence[int]
) -> tuple[int | None, tuple[int, ...]]:
    """``observe`` each of ``stamps`` in order (RB-R2), building the ring once."""
    if not stamps:
        return last, diffs
    ring = list(diffs)
    for t in stamps:
        if last is None:
            last = t
        elif t > last:
            ring.append(t - last)
            last = t
    return last, tuple(ring[-DIFF_BUFFER_SIZE:])


def median(values: Sequence[float]) -> float:
    """``statistics.median``: the middle value, or the float mean of the two middle ones.

    pre: len(values) > 0
    pre: all(0 < v < 1e18 for v in values)
    post: min(values) <= __return__ <= max(values)
    """
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def per_pulse_periods(diffs: Sequence[int], seed: float) -> list[float]:
    """Each diff divided by the number of pulses it spans, ``k = round(d / seed)`` (RB-R3).

    Diffs shorter than half the seed (k = 0) are dropped.

    pre: seed > 0
    pre: all(0 < d < 2**40 for d in diffs)
    post: len(__return__) <= len(diffs) and all(p > 0 for p in __return__)
    """
    return [d / k for d in diffs if (k := round(d / seed)) >= 1]


def snap_rate(raw: float) -> int | None:
    """Snap a raw rate in hertz to an integer (RB-R3): half to even, within
    ``max(10 % of the rate, 0.1 Hz)``; below 0.5 Hz there is no rate.

    pre: 0 < raw < 1e10
    post: __return__ is None or (__return__ >= 1 and abs(raw - __return__) <= 0.1 * __return__)
    """
    rate = round(raw)
    if rate < 1:
        return None
    tolerance = max(SNAP_RELATIVE_TOLERANCE * rate, SNAP_ABSOLUTE_TOLERANCE_HZ)
    if abs(raw - rate) > tolerance:
        return None
    return rate


@rule("RB-R3")
def integer_rate_hz(diffs: Sequence[int]) -> int | None:
    """The stream's integer rate, or ``None`` before 4 diffs or when it does not snap."""
    if len(diffs) < MIN_DIFFS_FOR_GATE:
        return None
    seed = median(diffs)
    low, high = min(diffs), max(diffs)
    if high < _EXACT_PAIR_SUM and round(low / seed) == 1 == round(high / seed):
        # Every diff spans one pulse (``round`` is monotonic, so the extremes decide): the
        # refined periods are the diffs as floats and their median is the seed (the pair
        # sum of an even median is exact below 2**53). The common case, one sort not two.
        period = seed
    else:
        periods = per_pulse_periods(diffs, seed)
        period = median(periods) if periods else seed
    return snap_rate(1e9 / period)
