"""Pulse-grid and window arithmetic of the rate-aware batcher (spec RB-R4 to RB-R8).

Every function here is a small total function over integers (nanoseconds) or the few
floats upstream uses, written so CrossHair can check its PEP 316 contract. The float
expressions are exactly upstream's (spec section "Arithmetic"): Python's ``round`` is
half to even, ``divmod`` is floor-based and ``int()`` truncates toward zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from timealign.rulebook import rule

DRIFT_TOLERANCE_NS = 1_000_000
MAX_ORIGIN_OFFSET_BATCHES = 1000
MAX_AHEAD_BATCHES = 3
#: Head: the backstop is due after this many batch lengths of clock without a close (RB-R26).
STALL_THRESHOLD_BATCHES = 10


class Grid(NamedTuple):
    """A stream's pulse grid (RB-R4): origin instant, pulse period and slots per batch.

    A named tuple rather than an attrs class: it is built at every close of every gated
    stream and read on every routed pulse, so construction and field access are hot.
    """

    origin: int
    period: int
    slots: int


@rule("RB-R1")
def from_seconds(seconds: float) -> int:
    """Upstream ``Duration.from_seconds``: float product, truncated toward zero (RB-R1).

    pre: -1e12 < seconds < 1e12
    post: abs(__return__) <= abs(seconds) * 1_000_000_000
    """
    return int(seconds * 1_000_000_000)


def timeout_offset(factor: float, length: int) -> int:
    """Distance from the window start at which the timeout fires (RB-R10).

    ``from_seconds(factor * L_s)`` with ``L_s = L_ns / 1e9``: three float operations left
    to right, then truncation toward zero.
    """
    return int(factor * (length / 1e9) * 1_000_000_000)


def timeout_distance(factor: float, length: int) -> int | None:
    """``timeout_offset``, or ``None`` for head's ``+inf`` factor: no timeout (RB-R19)."""
    return None if factor == float("inf") else timeout_offset(factor, length)


@rule("RB-R5")
def pulse_index(t: int, origin: int, period: int) -> int:
    """Nearest pulse of ``t`` (RB-R5): int/int true division, then half-to-even round.

    Exact as long as the quotient is far below 2**52; the contract states the jitter budget
    of +-period/2 on that domain.

    pre: 0 < period < 2**40
    pre: -2**63 <= t < 2**63 and -2**63 <= origin < 2**63
    pre: abs(t - origin) < 2**45
    post: 2 * abs((t - origin) - __return__ * period) <= period
    """
    return round((t - origin) / period)


def drift_tolerance(period: int) -> int:
    """How far past a pulse a batch start may lie and still start on it (RB-R5).

    pre: period > 0
    post: 0 <= __return__ <= DRIFT_TOLERANCE_NS and 2 * __return__ <= period
    """
    return min(DRIFT_TOLERANCE_NS, period // 2)


@rule("RB-R5")
def batch_base_index(start: int, origin: int, period: int) -> int:
    """Index of the first pulse of the batch starting at ``start`` (RB-R5).

    Floor divmod; a start at most the drift tolerance past a pulse starts on that pulse,
    otherwise on the next one.

    pre: period > 0
    pre: -2**63 <= start < 2**63 and -2**63 <= origin < 2**63
    post: 0 <= origin + __return__ * period - start + drift_tolerance(period) < period
    """
    base, rest = divmod(start - origin, period)
    return base if rest <= drift_tolerance(period) else base + 1


@rule("RB-R6")
def slot_in_batch(t: int, start: int, grid: Grid) -> int:
    """Slot of ``t`` in the batch starting at ``start`` (RB-R6); negative means late."""
    return pulse_index(t, grid.origin, grid.period) - batch_base_index(start, grid.origin,
                                                                       grid.period)


def slot_instants(start: int, grid: Grid) -> tuple[int, ...]:
    """The pulse instants of slots ``0 .. slots - 1`` of the batch starting at ``start``
    (RB-R5, RB-R6): slot ``k`` is pulse ``base + k`` of the grid. For pictures.
    """
    base = batch_base_index(start, grid.origin, grid.period)
    return tuple(grid.origin + (base + k) * grid.period for k in range(grid.slots))



@rule("RB-R4")
def slots_per_batch(rate: int, length: int) -> int:
    """Slots of one batch: ``round(rate * L_s)``, half to even (14 Hz x 0.75 s -> 10).

    pre: 0 < rate < 10**6
    pre: 0 < length < 10**15
    post: abs(__return__ - rate * length / 1e9) <= 0.5 + 1e-6
    """
    return round(rate * (length / 1e9))


def sub_rate(rate: int, length: int) -> bool:
    """True when fewer than one pulse fits a batch: ``rate * L_s < 1.0`` (RB-R7)."""
    return rate * (length / 1e9) < 1.0


@rule("RB-R4")
def period_of(rate: int) -> int:
    """Grid period: ``round(1e9 / rate)`` ns, half to even (14 Hz -> 71 428 571 ns).

    pre: 0 < rate < 10**6
    post: __return__ > 0 and abs(__return__ * rate - 1_000_000_000) <= rate
    """
    return round(1e9 / rate)


def origin_plausible(origin: int, start: int, length: int) -> bool:
    """An origin within 1000 batch lengths of the batch start (RB-R7, the 43-year guard);
    it depends on their difference only (RB-D18: a shifted trace is judged alike).

    pre: length > 0
    pre: -2**63 <= origin < 2**63 and -2**63 <= start < 2**63
    post: __return__ == origin_plausible(origin - start, 0, length)
    """
    return abs(origin - start) <= MAX_ORIGIN_OFFSET_BATCHES * length


@rule("RB-R9")
def advance_hwm(hwm: int, latest: int, start: int, length: int) -> int:
    """The clamped high-water mark after a poll whose newest timestamp is ``latest`` (RB-R9).

    pre: length >= 0
    pre: all(-2**63 <= v < 2**63 for v in (hwm, latest, start))
    post: hwm <= __return__ <= max(hwm, min(latest, start + MAX_AHEAD_BATCHES * length))
    post: __return__ <= max(hwm, latest)
    """
    ceiling = start + MAX_AHEAD_BATCHES * length
    return max(hwm, latest if latest < ceiling else ceiling)


@rule("RB-R20", profiles=("esslivedata-head",))
def plausible_anchor(stamps: Sequence[int], length: int) -> int:
    """Head's anchor (RB-R20): the newest stamp of the biggest cluster, where the sorted
    stamps split wherever neighbours lie more than ``3L`` apart; a tie goes to the later
    cluster. One stray far from the bulk, ahead or behind, cannot move the anchor.

    pre: 0 < len(stamps) <= 8 and length > 0
    pre: all(-2**63 <= t < 2**63 for t in stamps)
    post: __return__ in stamps
    post: min(stamps) <= __return__ <= max(stamps)
    post: not any(__return__ < t <= __return__ + MAX_AHEAD_BATCHES * length for t in stamps)
    """
    ordered = sorted(stamps)
    horizon = MAX_AHEAD_BATCHES * length
    best_size, best_end = 0, ordered[0]
    size = 0
    previous = ordered[0]
    for t in ordered:
        if t - previous > horizon:
            size = 0
        size += 1
        previous = t
        if size >= best_size:  # >=: a later cluster of equal size wins the tie
            best_size, best_end = size, t
    return best_end


@rule("RB-R13")
def gap_steps(earliest: int, start: int, length: int) -> int:
    """Whole batch lengths the window jumps in gap recovery (RB-R13): floor, at least 0.

    pre: length > 0
    pre: -2**63 <= earliest < 2**63 and -2**63 <= start < 2**63
    post: __return__ >= 0 and start + __return__ * length <= max(earliest, start)
    post: __return__ == 0 or earliest < start + (__return__ + 1) * length
    """
    return max((earliest - start) // length, 0)
