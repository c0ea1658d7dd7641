"""The catalogue of the rate-aware batcher's rule variants (CF-R41): each a plausible
misreading of one rule, swapped into the rule text in place of one slot of :data:`BOOK`
(``machine.py`` makes the decision points slots), over either profile.

A replacement takes its slot's parameters, enacts the rule it misreads and says in its
docstring's first sentence what it does; the spec lists it under that rule
(``Variants (CF-R41):``). It runs under no profile of its own (``profiles=()``): only
while swapped in (``timealign.conformance.catalogue.run_variants``).
``WITHOUT_VARIANTS`` names each registered rule with no variant, and why.
``tests/rate_aware_batcher/test_rb_variants.py`` checks that the shipped suite or the
default explore tells each variant from the rule.
"""

from __future__ import annotations

import math

from attrs import evolve

from timealign.errors import InvalidInput
from timealign.rate_aware_batcher.estimator import (
    integer_rate_hz,
    median,
    observe,
    per_pulse_periods,
    snap_rate,
)
from timealign.rate_aware_batcher.grid import (
    MAX_AHEAD_BATCHES,
    MAX_ORIGIN_OFFSET_BATCHES,
    STALL_THRESHOLD_BATCHES,
    Grid,
    advance_hwm,
    batch_base_index,
    drift_tolerance,
    gap_steps,
    plausible_anchor,
    pulse_index,
    slot_in_batch,
    slots_per_batch,
    timeout_distance,
)
from timealign.rate_aware_batcher.machine import (
    _ahead,
    _anchored_end,
    _batch_order,
    _bump,
    _disjoint,
    _evicted,
    _gap_due,
    _gates_met,
    _hwm,
    _hwm_after_check,
    _keep_last_close,
    _max_slot,
    _near,
    _observed_at_bootstrap,
    _origin_candidate,
    _overflows,
    _raise_hwm,
    _register,
    _set_batch_length,
    _stall_due,
    _timed_out,
    advance_clock,
    require_length_timeout_fits,
)
from timealign.rate_aware_batcher.model import (
    ABSENT_BATCHES_FOR_EVICTION,
    BOOK,
    Config,
    Polled,
    SetBatchLength,
    State,
    Stream,
)
from timealign.rulebook import rule

NONE: tuple[str, ...] = ()  # a replacement runs under no profile unless swapped in

# --- RB-R1 stream identity -----------------------------------------------------------------


@rule("RB-R1", profiles=NONE)
def register_by_name(streams: tuple[Stream, ...], kind: str, name: str
                     ) -> tuple[tuple[Stream, ...], int]:
    """Names a stream by its name alone: the same name with another gated kind is the same
    stream."""
    for position, stream in enumerate(streams):
        if stream.name == name:
            return streams, position
    return (*streams, Stream(kind, name)), len(streams)


BOOK.variant("stream-by-name", {_register: register_by_name}, rule="RB-R1")

# --- RB-R2 the estimator -------------------------------------------------------------------


@rule("RB-R2", profiles=NONE)
def observe_older_moves_last(last: int | None, diffs: tuple[int, ...], t: int
                             ) -> tuple[int | None, tuple[int, ...]]:
    """Moves ``last`` back to an older timestamp (without a diff), so the next diff is
    measured from it."""
    if last is not None and t < last:
        return t, diffs
    return observe(last, diffs, t)


BOOK.variant("older-moves-last", {observe: observe_older_moves_last}, rule="RB-R2")

# --- RB-R3 the integer rate ----------------------------------------------------------------


@rule("RB-R3", profiles=NONE)
def rate_from_three_diffs(diffs: tuple[int, ...]) -> int | None:
    """Gives a rate from 3 diffs, one fewer than the rule's 4 (a count off by one)."""
    if len(diffs) != 3:
        return integer_rate_hz(diffs)
    seed = median(diffs)
    periods = per_pulse_periods(diffs, seed)
    return snap_rate(1e9 / (median(periods) if periods else seed))


@rule("RB-R3", profiles=NONE)
def rate_from_mean(diffs: tuple[int, ...]) -> int | None:
    """Takes the period as the mean of the diffs instead of the median of the per-pulse
    periods."""
    if len(diffs) < 4:
        return None
    return snap_rate(1e9 / (sum(diffs) / len(diffs)))


BOOK.variant("three-diffs", {integer_rate_hz: rate_from_three_diffs}, rule="RB-R3")
BOOK.variant("mean-period", {integer_rate_hz: rate_from_mean}, rule="RB-R3")

# --- RB-R4 the grid's slot count -----------------------------------------------------------


@rule("RB-R4", profiles=NONE)
def slots_one_fewer(rate: int, length: int) -> int:
    """Counts one slot fewer per batch: ``round(rate · L_s) − 1``."""
    return slots_per_batch(rate, length) - 1


@rule("RB-R4", profiles=NONE)
def slots_half_up(rate: int, length: int) -> int:
    """Rounds the slot count half away from zero (C's ``lround``, Rust's ``f64::round``):
    14 Hz × 0.75 s gives 11, not 10."""
    return math.floor(rate * (length / 1e9) + 0.5)


@rule("RB-R4", profiles=NONE)
def slots_truncated(rate: int, length: int) -> int:
    """Truncates the slot count toward zero (``int()``) instead of rounding it."""
    return int(rate * (length / 1e9))


BOOK.variant("slots-minus-one", {slots_per_batch: slots_one_fewer}, rule="RB-R4")
BOOK.variant("slots-half-up", {slots_per_batch: slots_half_up}, rule="RB-R4")
BOOK.variant("slots-truncated", {slots_per_batch: slots_truncated}, rule="RB-R4")

# --- RB-R5 pulse index and batch base ------------------------------------------------------


def _base(start: int, grid: Grid) -> int:
    return batch_base_index(start, grid.origin, grid.period)


@rule("RB-R5", profiles=NONE)
def pulse_floor(t: int, start: int, grid: Grid) -> int:
    """Takes a timestamp's pulse as the one at or before it (floor division) instead of
    the nearest."""
    return (t - grid.origin) // grid.period - _base(start, grid)


@rule("RB-R5", profiles=NONE)
def pulse_ceil(t: int, start: int, grid: Grid) -> int:
    """Takes a timestamp's pulse as the one at or after it (ceiling division) instead of
    the nearest."""
    return -((grid.origin - t) // grid.period) - _base(start, grid)


@rule("RB-R5", profiles=NONE)
def pulse_truncated(t: int, start: int, grid: Grid) -> int:
    """Takes a timestamp's pulse by truncating the quotient toward zero (``int()``)."""
    return int((t - grid.origin) / grid.period) - _base(start, grid)


@rule("RB-R5", profiles=NONE)
def pulse_half_up(t: int, start: int, grid: Grid) -> int:
    """Rounds a timestamp's pulse half up instead of half to even."""
    return math.floor((t - grid.origin) / grid.period + 0.5) - _base(start, grid)


@rule("RB-R5", profiles=NONE)
def base_strict_tolerance(t: int, start: int, grid: Grid) -> int:
    """Starts a batch on the pulse before its start only when the start lies strictly
    less than the drift tolerance past it."""
    base, rest = divmod(start - grid.origin, grid.period)
    base += 0 if rest < drift_tolerance(grid.period) else 1
    return pulse_index(t, grid.origin, grid.period) - base


@rule("RB-R5", profiles=NONE)
def base_without_tolerance(t: int, start: int, grid: Grid) -> int:
    """Starts a batch on the first pulse at or after its start, with no drift tolerance."""
    base = -((grid.origin - start) // grid.period)
    return pulse_index(t, grid.origin, grid.period) - base


BOOK.variant("pulse-floor", {slot_in_batch: pulse_floor}, rule="RB-R5")
BOOK.variant("pulse-ceil", {slot_in_batch: pulse_ceil}, rule="RB-R5")
BOOK.variant("pulse-truncated", {slot_in_batch: pulse_truncated}, rule="RB-R5")
BOOK.variant("pulse-half-up", {slot_in_batch: pulse_half_up}, rule="RB-R5")
BOOK.variant("base-strict-tolerance", {slot_in_batch: base_strict_tolerance}, rule="RB-R5")
BOOK.variant("base-without-tolerance", {slot_in_batch: base_without_tolerance},
             rule="RB-R5")

# --- RB-R6 the slot ------------------------------------------------------------------------


@rule("RB-R6", profiles=NONE)
def slot_from_nearest_pulse(t: int, start: int, grid: Grid) -> int:
    """Counts slots from the pulse nearest the window start instead of the batch base
    index."""
    return (pulse_index(t, grid.origin, grid.period)
            - pulse_index(start, grid.origin, grid.period))


BOOK.variant("slot-from-nearest-pulse", {slot_in_batch: slot_from_nearest_pulse},
             rule="RB-R6")

# --- RB-R7 grid refresh --------------------------------------------------------------------


@rule("RB-R7", profiles=NONE)
def origin_first_in_bucket(bucket: tuple[Polled, ...], start: int, last: int | None
                           ) -> int | None:
    """Takes a new origin from the bucket's first message even when it lies before the
    window start."""
    del start
    return bucket[0].timestamp if bucket else last


@rule("RB-R7", profiles=NONE)
def origin_newest(bucket: tuple[Polled, ...], start: int, last: int | None) -> int | None:
    """Takes a new origin from the newest stamp observed, never from the bucket."""
    del bucket, start
    return last


BOOK.variant("origin-first-in-bucket", {_origin_candidate: origin_first_in_bucket},
             rule="RB-R7")
BOOK.variant("origin-newest", {_origin_candidate: origin_newest}, rule="RB-R7")

# --- RB-R8 bootstrap -----------------------------------------------------------------------


@rule("RB-R8", profiles=NONE)
def bootstrap_unobserved(t: int, end: int) -> bool:
    """Observes none of the first poll's stamps: the estimator starts with the second
    poll."""
    del t, end
    return False


BOOK.variant("bootstrap-unobserved", {_observed_at_bootstrap: bootstrap_unobserved},
             rule="RB-R8")

# --- RB-R9 the high-water mark -------------------------------------------------------------


@rule("RB-R9", profiles=NONE)
def hwm_unclamped(hwm: int, latest: int, start: int, length: int) -> int:
    """Raises the HWM to the poll's newest stamp with no clamp."""
    del start, length
    return max(hwm, latest)


@rule("RB-R9", profiles=NONE)
def hwm_clamped_at_2l(hwm: int, latest: int, start: int, length: int) -> int:
    """Clamps the HWM at the window start + 2L instead of 3L."""
    return max(hwm, min(latest, start + 2 * length))


@rule("RB-R9", profiles=NONE)
def hwm_not_before_routing(state: State, messages: tuple[Polled, ...]) -> State:
    """Leaves the HWM alone before routing: it is raised after the completion check
    (paired with :func:`hwm_after_the_check`)."""
    del messages
    return state


@rule("RB-R9", profiles=NONE)
def hwm_after_the_check(state: State, messages: tuple[Polled, ...]) -> State:
    """Raises the HWM after the completion check, with the window then in force."""
    return evolve(state, hwm=_hwm(state, messages)) if messages else state


BOOK.variant("hwm-unclamped", {advance_hwm: hwm_unclamped}, rule="RB-R9")
BOOK.variant("clamp-2l", {advance_hwm: hwm_clamped_at_2l}, rule="RB-R9")
BOOK.variant("hwm-after-check", {_raise_hwm: hwm_not_before_routing,
                                 _hwm_after_check: hwm_after_the_check}, rule="RB-R9")

# --- RB-R10 completion ---------------------------------------------------------------------


@rule("RB-R10", profiles=NONE)
def timed_out_strictly(hwm: int, due: int) -> bool:
    """Fires the timeout only once the HWM is past the window start + timeout (``>``)."""
    return hwm > due


@rule("RB-R10", profiles=NONE)
def gates_met_vacuously(gridded: tuple[Stream, ...]) -> bool:
    """Takes "every gridded stream in its last slot" as true when no stream is gridded."""
    return all(s.max_slot >= s.grid.slots - 1 for s in gridded if s.grid is not None)


@rule("RB-R10", profiles=NONE)
def gates_met_by_any(gridded: tuple[Stream, ...]) -> bool:
    """Closes when any gridded stream, not every one, is in its last slot."""
    return any(s.max_slot >= s.grid.slots - 1 for s in gridded if s.grid is not None)


@rule("RB-R10", profiles=NONE)
def gates_met_strictly(gridded: tuple[Stream, ...]) -> bool:
    """Requires ``max_slot > slots − 1``, a slot past the last one: only the timeout
    closes."""
    return bool(gridded) and all(
        s.max_slot > s.grid.slots - 1 for s in gridded if s.grid is not None)


BOOK.variant("timeout-exclusive", {_timed_out: timed_out_strictly}, rule="RB-R10")
BOOK.variant("gate-without-grid", {_gates_met: gates_met_vacuously}, rule="RB-R10")
BOOK.variant("gate-any-stream", {_gates_met: gates_met_by_any}, rule="RB-R10")
BOOK.variant("gate-strict", {_gates_met: gates_met_strictly}, rule="RB-R10")

# --- RB-R11 routing of a gridded message ---------------------------------------------------


@rule("RB-R11", profiles=NONE)
def overflows_past_last(slot: int, slots: int) -> bool:
    """Sends a message to overflow only past slot ``slots`` (``>``): slot ``slots`` joins
    the bucket."""
    return slot > slots


@rule("RB-R11", profiles=NONE)
def max_slot_latest(max_slot: int, slot: int) -> int:
    """Sets ``max_slot`` to the latest slot seen, so a late message lowers it."""
    del max_slot
    return slot


BOOK.variant("overflow-past-slots", {_overflows: overflows_past_last}, rule="RB-R11")
BOOK.variant("max-slot-latest", {_max_slot: max_slot_latest}, rule="RB-R11")

@rule("RB-D8", profiles=NONE)
def bump_none(config: Config, stream: Stream, slot: int) -> Stream:
    """Leaves the gate alone for an overflowing message: only a bucket message raises
    ``max_slot``."""
    del config, slot
    return stream


BOOK.variant("no-bump", {_bump: bump_none}, rule="RB-D8")

# --- RB-R12 the hold-back range ------------------------------------------------------------


@rule("RB-R12", profiles=NONE)
def ahead_from_end(end: int, t: int, length: int) -> bool:
    """Holds back a stamp equal to the window end too (``end <= t``)."""
    return end <= t <= end + MAX_AHEAD_BATCHES * length


@rule("RB-R12", profiles=NONE)
def ahead_uncapped(end: int, t: int, length: int) -> bool:
    """Holds back every stamp past the window end, with no ``3L`` cap."""
    del length
    return end < t


BOOK.variant("hold-back-at-end", {_ahead: ahead_from_end}, rule="RB-R12")
BOOK.variant("hold-back-uncapped", {_ahead: ahead_uncapped}, rule="RB-R12")

# --- RB-R13 gap recovery -------------------------------------------------------------------


@rule("RB-R13", profiles=NONE)
def gap_steps_ceil(earliest: int, start: int, length: int) -> int:
    """Jumps the window a whole number of lengths rounded up (past the earliest
    overflow's window start)."""
    return max(-((start - earliest) // length), 0)


@rule("RB-R13", profiles=NONE)
def gap_due_without_veto(streams: tuple[Stream, ...]) -> bool:
    """Recovers from a gap whenever overflow is held, even when a gridded stream has a
    (late) bucket message."""
    del streams
    return True


@rule("RB-R13", profiles=NONE)
def gap_vetoed_by_any_bucket(streams: tuple[Stream, ...]) -> bool:
    """Lets any stream's bucket message, gridded or not, veto gap recovery."""
    return not any(s.bucket for s in streams)


BOOK.variant("gap-steps-ceil", {gap_steps: gap_steps_ceil}, rule="RB-R13")
BOOK.variant("gap-without-veto", {_gap_due: gap_due_without_veto}, rule="RB-R13")
BOOK.variant("gap-vetoed-by-ungridded", {_gap_due: gap_vetoed_by_any_bucket},
             rule="RB-R13")

# --- RB-R14 close --------------------------------------------------------------------------


@rule("RB-R14", profiles=NONE)
def evicted_after_4(absent: int) -> bool:
    """Evicts a stream at its 4th consecutive absent close instead of its 5th."""
    return absent >= ABSENT_BATCHES_FOR_EVICTION - 1


@rule("RB-R14", profiles=NONE)
def evicted_after_6(absent: int) -> bool:
    """Evicts a stream at its 6th consecutive absent close instead of its 5th."""
    return absent >= ABSENT_BATCHES_FOR_EVICTION + 1


@rule("RB-R14", profiles=NONE)
def buckets_first(non_gated: tuple[Polled, ...], streams: tuple[Stream, ...]
                  ) -> tuple[Polled, ...]:
    """Puts each bucket, in stream order, before the non-gated messages in a batch."""
    return (*(m for s in streams for m in s.bucket), *non_gated)


BOOK.variant("evict-after-4", {_evicted: evicted_after_4}, rule="RB-R14")
BOOK.variant("evict-after-6", {_evicted: evicted_after_6}, rule="RB-R14")
BOOK.variant("buckets-first", {_batch_order: buckets_first}, rule="RB-R14")

# --- RB-R15 batch length change ------------------------------------------------------------


@rule("RB-R15", profiles=NONE)
def length_at_once(config: Config, state: State, item: SetBatchLength) -> State:
    """Applies a new batch length at once, to the window in progress, instead of at the
    next close."""
    require_length_timeout_fits(config, item)
    return evolve(state, batch_length=item.length, pending_length=None,
                  timeout=timeout_distance(config.factor, item.length))


@rule("RB-R15", profiles=NONE)
def first_length_wins(config: Config, state: State, item: SetBatchLength) -> State:
    """Keeps the first new length set before a close: a later call before it is
    ignored."""
    require_length_timeout_fits(config, item)
    if state.pending_length is not None:
        return state
    return evolve(state, pending_length=item.length)


BOOK.variant("length-at-once", {_set_batch_length: length_at_once}, rule="RB-R15")
BOOK.variant("first-length-wins", {_set_batch_length: first_length_wins}, rule="RB-R15")

# --- RB-R18 the clock ----------------------------------------------------------------------


@rule("RB-R18", profiles=NONE)
def clock_must_advance(clock: int | None, last_close: int | None, now: int
                       ) -> tuple[int, int]:
    """Refuses a reading equal to the clock as well as a lower one."""
    if clock is not None and now <= clock:
        raise InvalidInput("now", "RB-R18", f"does not advance from {clock}", now)
    return advance_clock(clock, last_close, now)


BOOK.variant("clock-equal-refused", {advance_clock: clock_must_advance}, rule="RB-R18")

# --- head: RB-R20 to RB-R26 ----------------------------------------------------------------


@rule("RB-R20", profiles=NONE)
def anchor_tie_earlier(stamps: list[int], length: int) -> int:
    """Gives a tie between clusters of equal size to the earlier one."""
    ordered = sorted(stamps)
    best_size, best_end, size, previous = 0, ordered[0], 0, ordered[0]
    for t in ordered:
        size = 1 if t - previous > MAX_AHEAD_BATCHES * length else size + 1
        previous = t
        if size > best_size:
            best_size, best_end = size, t
    return best_end


@rule("RB-R20", profiles=NONE)
def anchor_split_at_3l(stamps: list[int], length: int) -> int:
    """Cuts the clusters where neighbours lie ``3L`` or more apart (``>=``), not only
    more than ``3L``."""
    ordered = sorted(stamps)
    best_size, best_end, size, previous = 0, ordered[0], 0, ordered[0]
    for t in ordered:
        size = 1 if t - previous >= MAX_AHEAD_BATCHES * length else size + 1
        previous = t
        if size >= best_size:
            best_size, best_end = size, t
    return best_end


BOOK.variant("anchor-tie-earlier", {plausible_anchor: anchor_tie_earlier}, rule="RB-R20")
BOOK.variant("anchor-split-at-3l", {plausible_anchor: anchor_split_at_3l}, rule="RB-R20")


@rule("RB-R21", profiles=NONE)
def observed_past_anchor(t: int, end: int) -> bool:
    """Observes every gated stamp of the first poll, those past the anchor too."""
    del t, end
    return True


BOOK.variant("observe-past-anchor", {_observed_at_bootstrap: observed_past_anchor},
             rule="RB-R21")


@rule("RB-R22", profiles=NONE)
def disjoint_at_1000l(t: int, end: int, length: int) -> bool:
    """Takes a stamp exactly ``1000·L`` past the window end as a disjoint epoch too."""
    return t - end >= MAX_ORIGIN_OFFSET_BATCHES * length


@rule("RB-R22", profiles=NONE)
def disjoint_from_start(t: int, end: int, length: int) -> bool:
    """Measures the ``1000·L`` from the window start instead of its end."""
    return t - (end - length) > MAX_ORIGIN_OFFSET_BATCHES * length


BOOK.variant("disjoint-at-1000l", {_disjoint: disjoint_at_1000l}, rule="RB-R22")
BOOK.variant("disjoint-from-start", {_disjoint: disjoint_from_start}, rule="RB-R22")


@rule("RB-R23", profiles=NONE)
def near_inclusive(slot: int, slots: int) -> bool:
    """Bumps for an overflowing slot up to ``slots · (1 + 3)`` inclusive."""
    return slot <= slots * (1 + MAX_AHEAD_BATCHES)


@rule("RB-R23", profiles=NONE)
def near_one_window(slot: int, slots: int) -> bool:
    """Bumps only for an overflowing slot in the next window (below ``2·slots``)."""
    return slot < 2 * slots


BOOK.variant("bump-near-inclusive", {_near: near_inclusive}, rule="RB-R23")
BOOK.variant("bump-next-window-only", {_near: near_one_window}, rule="RB-R23")


@rule("RB-R24", profiles=NONE)
def close_leaves_clock(state: State) -> State:
    """Leaves ``last_close`` alone at a close, as the card does: only the bootstrap and a
    backstop re-arm the stall clock."""
    return state


BOOK.variant("close-keeps-last-close", {_keep_last_close: close_leaves_clock},
             rule="RB-R24")


@rule("RB-R25", profiles=NONE)
def end_at_anchor(anchor: int, end: int) -> int:
    """Ends a close without a gating stream at its messages' anchor even when that lies
    before the window end."""
    del end
    return anchor


BOOK.variant("end-at-anchor-always", {_anchored_end: end_at_anchor}, rule="RB-R25")


@rule("RB-R26", profiles=NONE)
def stall_due_strictly(since: int, length: int) -> bool:
    """Takes a stall only once more than ``10·L`` of clock has passed (``>``)."""
    return since > STALL_THRESHOLD_BATCHES * length


BOOK.variant("stall-strict", {_stall_due: stall_due_strictly}, rule="RB-R26")

#: The registered rules with no catalogued variant, and why none is plausible.
WITHOUT_VARIANTS: dict[str, str] = {
    "RB-D1": "refusals of batch lengths the reference's contract adds (upstream takes 0 and "
             "crashes on others): both targets leave refused traces out, so a port's "
             "reading of them is never compared, and the input fuzz exercises them",
    "RB-D2": "refusals of the timeout config (both given, not a number, beyond int64): a "
             "config check, outside both targets' domains (a refused trace is outside), "
             "left to the input fuzz",
    "RB-D3": "refusals of malformed messages and unknown kinds: a port's decoder decides "
             "them, outside both targets' domains, left to the input fuzz",
    "RB-D4": "the refusal of a repeated id: upstream takes both messages, so both targets "
             "leave such traces out; no decision of the batcher to misread",
    "RB-R16": "the end input is the harness's own device (upstream has no end): it reports "
              "what the port still holds, in RB-D15's order, written by the port's adapter "
              "rather than read from a rule of the batcher",
    "RB-R17": "the choice of a profile by name: a config check, and a port implements one "
              "profile; what differs between the profiles is the head table, whose rules "
              "have their own variants",
    "RB-R19": "the head profile's timeout-factor refusal (a factor in (0, 3] or inf): a "
              "config check; refused configs lie outside the head target, and a port's "
              "wrong bound shows as a refusal the input fuzz finds",
    "RB-R27": "two names added to the stream-kind enumeration, both non-gated: a port "
              "without one refuses it (RB-D3), with no decision of the batcher to misread",
    "RB-R28": "the refusal of a batch end past int64: upstream emits it on Python "
              "integers, so both targets leave such traces out; the boundary is the int64 "
              "range itself, with no plausible other reading",
}
