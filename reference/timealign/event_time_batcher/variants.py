"""The catalogue of the event-time batcher's rule variants (CF-R41): for each rule that makes
a decision, the plausible misreadings of it a porter makes, each one slot of the rule text
(``machine.py``, ``model.py``) replaced by a function that decides otherwise and does
nothing else. ``timealign.conformance.catalogue`` runs them as stand-in ports; the spec
names and describes each under its rule (``spec/event_time_batcher.md``); a test shows each
is told apart from the rule by the shipped suite or the default explore
(``tests/event_time_batcher/test_eb_variants.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from timealign.event_time_batcher import machine
from timealign.event_time_batcher.arithmetic import first_containing
from timealign.event_time_batcher.machine import Batches, Members, Step
from timealign.event_time_batcher.model import (
    BOOK,
    OVERWRITTEN,
    Batch,
    Config,
    Dropped,
    Member,
    Message,
    OpenBatch,
    Output,
    State,
    emitted,
)
from timealign.rulebook import rule

if TYPE_CHECKING:
    from collections.abc import Callable

#: The rules with no catalogued variant, and why no plausible misreading of them exists.
WITHOUT_VARIANTS: dict[str, str] = {
    "EB-R1": "a refusal of a bad configuration: what a port accepts or refuses is the "
             "config fuzz's business (conformance fuzzes configs at the bounds), and every "
             "accepted config runs the same rules",
    "EB-R2": "a refusal of a malformed input (types, ranges, the int64 timeout): the input "
             "fuzz's business; a port that refuses differently differs on an error output, "
             "with no decision of the batcher's to misread",
    "EB-R4": "ids do not exist upstream (EB-D13): the refusal of an id still held guards the "
             "run's bookkeeping, and the thin-edge target declares it refused (upstream batches "
             "both), so no port's batching decision hangs on it",
}


def _declare(rule_id: str, slot: Callable[..., Any],
             replacements: dict[str, Callable[..., Any]]) -> None:
    """Catalogue each replacement of ``slot`` as a variant of ``rule_id``, by name."""
    for name, replacement in replacements.items():
        BOOK.variant(name, {slot: replacement}, rule=rule_id)


# --- EB-R3 ------------------------------------------------------------------------------

@rule("EB-R3")
def _equal_time_refused(state: State, at: int) -> None:
    """Refuses a processing time equal to the last one, not only a lower one (time must
    strictly advance)."""
    if state.now is not None and at <= state.now:
        machine.refuse_backwards(state.now, at)


_declare("EB-R3", machine._require_forward, {
    "equal-time-refused": _equal_time_refused,
})


# --- EB-R5, EB-R6 -----------------------------------------------------------------------

@rule("EB-R5")
def _too_old_inclusive(t: int, now: int, delay: int) -> bool:
    """Rejects a message delayed by exactly D as too old (t <= T - D)."""
    return t <= now - delay


_declare("EB-R5", machine._is_too_old, {
    "too-old-inclusive": _too_old_inclusive,
})


@rule("EB-R6")
def _too_far_inclusive(t: int, now: int, leap: int) -> bool:
    """Rejects an event time exactly at the leap limit as too far in the future
    (t >= T + L)."""
    return t >= now + leap


@rule("EB-R6")
def _leap_limit_ignored(t: int, now: int, leap: int) -> bool:
    """Rejects every event time ahead of processing time, ignoring the leap limit
    (t > T)."""
    return t > now


_declare("EB-R6", machine._is_too_far, {
    "too-far-inclusive": _too_far_inclusive,
    "leap-limit-ignored": _leap_limit_ignored,
})


# --- EB-R7 ------------------------------------------------------------------------------

@rule("EB-R7")
def _window_end_exclusive(batches: Batches, t: int) -> int | None:
    """Looks up the first batch with start <= t < end: the window's end excluded."""
    return next((k for k, b in enumerate(batches) if b.start <= t < b.end), None)


@rule("EB-R7")
def _window_start_exclusive(batches: Batches, t: int) -> int | None:
    """Looks up the first batch with start < t <= end: the window's start excluded."""
    return next((k for k, b in enumerate(batches) if b.start < t <= b.end), None)


@rule("EB-R7")
def _last_batch_wins(batches: Batches, t: int) -> int | None:
    """Looks up the last created batch whose window holds t, so a shared endpoint goes
    to the later batch."""
    found = first_containing(tuple((b.start, b.end) for b in reversed(batches)), t)
    return None if found is None else len(batches) - 1 - found


_declare("EB-R7", machine._lookup, {
    "window-end-exclusive": _window_end_exclusive,
    "window-start-exclusive": _window_start_exclusive,
    "last-batch-wins": _last_batch_wins,
})


# --- EB-R8 ------------------------------------------------------------------------------

@rule("EB-R8")
def _no_clipping(batches: Batches, t: int, window: int) -> int:
    """Gives a new batch the full window t + W even when a later batch starts inside
    it."""
    return t + window


@rule("EB-R8")
def _clip_before_next_start(batches: Batches, t: int, window: int) -> int:
    """Clips a new batch 1 ns before the next batch's start instead of at it."""
    end = machine._window_end(batches, t, window)
    return end - 1 if end < t + window else end


_declare("EB-R8", machine._window_end, {
    "no-clipping": _no_clipping,
    "clip-before-next-start": _clip_before_next_start,
})


# --- EB-R9 ------------------------------------------------------------------------------

@rule("EB-R9")
def _join_requests_timer(config: Config, batches: Batches, now: int, joined: OpenBatch
                         ) -> Step:
    """Treats a join like a new batch: requests a timer at the target's end + D, or
    closes the expired batches when that has passed."""
    return machine._timer_or_close(config, batches, now, joined, ())


_declare("EB-R9", machine._after_join, {
    "join-requests-timer": _join_requests_timer,
})


# --- EB-R10 -----------------------------------------------------------------------------

@rule("EB-R10")
def _no_duplicate_check(existing: int, t: int) -> bool:
    """Never sees a duplicate: a same-key message at the same event time splits the batch
    like any conflict."""
    return False


@rule("EB-R10")
def _duplicate_replaces_held(config: Config, batches: Batches, index: int, m: Message
                             ) -> Step:
    """Lets the new copy replace the held one (a map insert), which is dropped as
    overwritten, instead of rejecting the new copy."""
    target = batches[index]
    held = next(x for x in target.members if x.key == m.key)
    members = (*(x for x in target.members if x is not held),
               Member(m.key, m.event_time, m.id))
    batch = OpenBatch(target.start, target.end, members)
    return (State(machine._replace(batches, index, batch), m.at, config=config),
            (Dropped(held.id, OVERWRITTEN),))


_declare("EB-R10", machine._is_duplicate, {
    "no-duplicate-check": _no_duplicate_check,
})
_declare("EB-R10", machine._duplicate, {
    "duplicate-replaces-held": _duplicate_replaces_held,
})


# --- EB-R11 -----------------------------------------------------------------------------

@rule("EB-R11")
def _split_toward_existing(t: int, existing: int) -> int:
    """Rounds the midpoint toward the existing member's event time, not the new one's."""
    return machine._split_point(existing, t)


@rule("EB-R11")
def _split_floor_midpoint(t: int, existing: int) -> int:
    """Takes the midpoint rounded down ((t + e) // 2), not toward the new event time."""
    return (t + existing) // 2


@rule("EB-R11")
def _split_at_new_event(t: int, existing: int) -> int:
    """Splits at the new message's event time (the design document's UC3), not at the
    midpoint."""
    return t


_declare("EB-R11", machine._split_point, {
    "split-toward-existing": _split_toward_existing,
    "split-floor-midpoint": _split_floor_midpoint,
    "split-at-new-event": _split_at_new_event,
})


# --- EB-R12 -----------------------------------------------------------------------------

@rule("EB-R12")
def _rehome_equal_to_lower(members: Members, cut: int
                           ) -> tuple[Members, Members, tuple[Output, ...]]:
    """Re-homes a member whose event time equals the split point to the lower part (<=
    goes down), not the upper."""
    return machine._rehome(members, cut + 1)


@rule("EB-R12")
def _rehome_keeps_earlier(members: Members, cut: int
                          ) -> tuple[Members, Members, tuple[Output, ...]]:
    """On a same-key clash of re-homed members keeps the earlier one and drops the later,
    instead of the later replacing the earlier."""
    lower, upper, lost = machine._rehome(members[::-1], cut)
    return lower[::-1], upper[::-1], lost


@rule("EB-R12")
def _upper_part_in_place(batches: Batches, index: int, lower: OpenBatch, upper: OpenBatch
                         ) -> Batches:
    """Keeps the upper part in the target's place and appends the lower part."""
    return machine._placed(batches, index, upper, lower)


@rule("EB-R12")
def _timer_for_upper_part(lower: OpenBatch, upper: OpenBatch) -> OpenBatch:
    """Runs EB-R13 for the upper part's (the old) end instead of the lower part's."""
    return upper


_declare("EB-R12", machine._rehome, {
    "rehome-equal-to-lower": _rehome_equal_to_lower,
    "rehome-keeps-earlier": _rehome_keeps_earlier,
})
_declare("EB-R12", machine._placed, {
    "upper-part-in-place": _upper_part_in_place,
})
_declare("EB-R12", machine._timed_part, {
    "timer-for-upper-part": _timer_for_upper_part,
})


# --- EB-R13 -----------------------------------------------------------------------------

@rule("EB-R13")
def _timer_when_due(now: int, timeout: int) -> bool:
    """Requests a timer also when T equals the new batch's end + D, instead of
    closing it in the message's step."""
    return now <= timeout


@rule("EB-R13")
def _close_only_new(config: Config, batches: Batches, now: int, made: OpenBatch
                    ) -> tuple[Batches, tuple[Batch, ...]]:
    """Closes only the batch just made when it is born expired, leaving the other expired
    batches open."""
    return (tuple(b for b in batches if b is not made),
            machine._rules().of(emitted)((made,)))


_declare("EB-R13", machine._wants_timer, {
    "timer-when-due": _timer_when_due,
})
_declare("EB-R13", machine._closed_by_message, {
    "close-only-new": _close_only_new,
})


# --- EB-R14 -----------------------------------------------------------------------------

@rule("EB-R14")
def _tick_closes_strictly(config: Config, batches: Batches, at: int
                          ) -> tuple[Batches, tuple[Batch, ...]]:
    """Closes on a tick only the batches with end + D < at: a batch waits one tick past
    its timeout."""
    return machine._close_expired(config, batches, at - 1)


@rule("EB-R14")
def _close_by_end(config: Config, batches: Batches, at: int
                  ) -> tuple[Batches, tuple[Batch, ...]]:
    """Emits the batches a tick closes in the order of their ends (a timer queue), not in
    creation order."""
    kept, closed = machine._close_expired(config, batches, at)
    return kept, tuple(sorted(closed, key=lambda b: b.end))


_declare("EB-R14", machine._closed_by_tick, {
    "tick-closes-strictly": _tick_closes_strictly,
    "close-by-end": _close_by_end,
})


# --- EB-R15 -----------------------------------------------------------------------------

@rule("EB-R15")
def _flush_in_creation_order(batches: Batches) -> Batches:
    """Flushes the open batches oldest first instead of newest first."""
    return batches


_declare("EB-R15", machine._flush_order, {
    "flush-in-creation-order": _flush_in_creation_order,
})


# --- EB-R16 -----------------------------------------------------------------------------

@rule("EB-R16")
def _ids_by_event_time(batches: tuple[OpenBatch, ...]) -> tuple[Batch, ...]:
    """Lists a batch's member ids by event time instead of by arrival."""
    return tuple(Batch(b.start, b.end, tuple(
        m.id for m in sorted(b.members, key=lambda m: m.event_time))) for b in batches)


@rule("EB-R16")
def _empty_batch_dropped(batches: tuple[OpenBatch, ...]) -> tuple[Batch, ...]:
    """Emits nothing for a batch with no member (left by a 1 ns split) instead of an empty
    batch."""
    return emitted(tuple(b for b in batches if b.members))


_declare("EB-R16", emitted, {
    "ids-by-event-time": _ids_by_event_time,
    "empty-batch-dropped": _empty_batch_dropped,
})
