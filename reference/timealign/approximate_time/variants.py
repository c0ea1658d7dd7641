"""The catalogue of ApproximateTime's rule variants (CF-R41): plausible misreadings of its rules.

Each variant replaces one slot of the rule text (``@BOOK.slot`` in ``machine.py`` and
``arithmetic.py``) by a function registered with the rule it misreads; its docstring says
what it does, and spec/approximate_time.md names and describes it under that rule. A
variant runs only when swapped in (``BOOK.swapped(name)``,
``timealign.conformance.catalogue.run_variants``): the harness tries them to say which rule
a port gets wrong and how, and the mutation study plants some of them. Every variant is
told apart from the rule by the shipped suite or the default explore
(``tests/approximate_time/test_at_variants.py``).
"""

from __future__ import annotations

from attrs import evolve

from timealign.approximate_time.arithmetic import BOOK, end_boundary, scale_ros2, start_boundary
from timealign.approximate_time.machine import (
    _bound_warning as _bound_warning_base,
)
from timealign.approximate_time.machine import (
    _clear_drop_flags,
    _clear_pivot,
    _delete_front,
    _end,
    _improve,
    _looks_further,
    _make_candidate,
    _may_be_pivot,
    _move_to_past,
    _overflow,
    _overflows,
    _process,
    _proved_optimal,
    _publish,
    _recover_all,
    _refuse_pivot,
    _refuse_too_wide,
    _Sync,
    _too_wide,
    _undo_virtual_moves,
    _virtual_time,
)
from timealign.approximate_time.model import (
    CLOSER_THAN_BOUND,
    INTERVAL_TOO_WIDE,
    NO_PIVOT,
    OUT_OF_ORDER,
    PIVOT_REFUSED,
    QUEUE_OVERFLOW,
    Config,
    Dropped,
    Message,
    Output,
    Pending,
    Published,
    State,
    Warned,
)
from timealign.rulebook import rule

#: Registered rules with no catalogued variant, and why no plausible misreading of them is
#: catalogued (CF-R41).
WITHOUT_VARIANTS: dict[str, str] = {
    "AT-R1": "a refusal of a bad config: its misreadings are inputs the reference refuses, "
             "which the targets keep out of every compared trace (REFUSED in traces.py) and "
             "the malformed-input checks of the harness cover; it decides nothing a port "
             "publishes",
    "AT-R2": "a refusal of a bad message (topic, stamp, id): as for AT-R1, what a port does "
             "with such an input is the malformed-input checks' business, never a set",
    "AT-R20": "a refusal of a stamp whose virtual time would pass int64 (upstream throws): "
              "every target keeps such stamps out of its traces, so no variant can be seen",
    "AT-R19": "ROS 1's 32-bit time refusals (config and message): upstream throws and may "
              "stay stuck, so the ros1 target keeps these traces out; nothing to compare",
    "AT-R3": "when process() runs is unobservable: process() loops only while every deque "
             "is non-empty and stops with one empty, so running it on every message, or "
             "counting past buffers in the trigger, publishes the same sets at the same "
             "input (a message landing behind others leaves an empty deque empty)",
    "AT-R18": "the Dropped report of a discarded message is the reference's own addition "
              "(AT-D18; upstream discards silently): which message is discarded, and why, "
              "is decided and catalogued under the rule that discards it (AT-R5, AT-R8, "
              "AT-R9, AT-D1)",
    "AT-R16": "ROS 1's scaling is a profile's replacement, not a slot of its own: a variant "
              "swaps a slot over every profile, so a misread ROS 1 rounding would change "
              "ros2 runs too; the misreadings of the scaling (rounding, floor, a float "
              "product) are catalogued under AT-D23 and run under ros1 as well",
}


# --- AT-R4: the warning check -------------------------------------------------------------

@rule("AT-R4")
def _warn_equal_out_of_order(config: Config, message: Message, previous: Message,
                             warned: bool) -> Warned | None:
    """Warns ``out_of_order`` also when the new stamp equals the previous one (``<=`` for
    ``<``)."""
    if not warned and message.stamp == previous.stamp:
        return Warned(message.topic, OUT_OF_ORDER)
    return _bound_warning_base(config, message, previous, warned)


@rule("AT-R4")
def _warn_bound_inclusive(config: Config, message: Message, previous: Message,
                          warned: bool) -> Warned | None:
    """Warns ``closer_than_bound`` also when the gap equals the lower bound (``<=`` for
    ``<``)."""
    found = _bound_warning_base(config, message, previous, warned)
    if not warned and found is None and (message.stamp - previous.stamp
                          == config.inter_message_lower_bounds[message.topic]):
        return Warned(message.topic, CLOSER_THAN_BOUND)
    return found


@rule("AT-R4")
def _warn_every_time(config: Config, message: Message, previous: Message, warned: bool
                     ) -> Warned | None:
    """Warns at every out-of-order or too close message, not once per topic per run."""
    del warned
    return _bound_warning_base(config, message, previous, False)


BOOK.variant("warn-every-time", {_bound_warning_base: _warn_every_time}, rule="AT-R4")
BOOK.variant("warn-equal-out-of-order", {_bound_warning_base: _warn_equal_out_of_order},
             rule="AT-R4")
BOOK.variant("warn-bound-inclusive", {_bound_warning_base: _warn_bound_inclusive},
             rule="AT-R4")


# --- AT-R5: the overflow ------------------------------------------------------------------

@rule("AT-R5")
def _overflows_at_queue_size(config: Config, deque: tuple[Message, ...],
                             past: tuple[Message, ...]) -> bool:
    """Overflows when the topic holds ``queue_size`` messages, not more (``>=`` for
    ``>``)."""
    return len(deque) + len(past) >= config.queue_size


@rule("AT-R5")
def _overflows_one_more(config: Config, deque: tuple[Message, ...],
                        past: tuple[Message, ...]) -> bool:
    """Holds ``queue_size + 1`` messages before it overflows (a head plus ``queue_size``)."""
    return len(deque) + len(past) > config.queue_size + 1


@rule("AT-R5")
def _overflows_deque_only(config: Config, deque: tuple[Message, ...],
                          past: tuple[Message, ...]) -> bool:
    """Counts only the deque, not the past buffer, against ``queue_size``."""
    del past
    return len(deque) > config.queue_size


@rule("AT-R5")
def _overflow_drops_newest(sync: _Sync, i: int) -> None:
    """Drops the newest message of the overflowing topic instead of its oldest."""
    _recover_all(sync)
    sync.outputs.append(Dropped(sync.held[i].pop().id, QUEUE_OVERFLOW))
    sync.dropped[i] = True
    if sync.pivot != NO_PIVOT:
        _clear_pivot(sync)
        _process(sync)


@rule("AT-R5")
def _overflow_sets_no_flag(sync: _Sync, i: int) -> None:
    """Drops the oldest message of the topic but never sets its drop flag."""
    _recover_all(sync)
    sync.outputs.append(Dropped(sync.held[i].pop(0).id, QUEUE_OVERFLOW))
    if sync.pivot != NO_PIVOT:
        _clear_pivot(sync)
        _process(sync)


BOOK.variant("overflow-drops-newest", {_overflow: _overflow_drops_newest}, rule="AT-R5")
BOOK.variant("overflow-at-queue-size", {_overflows: _overflows_at_queue_size}, rule="AT-R5")
BOOK.variant("overflow-holds-one-more", {_overflows: _overflows_one_more}, rule="AT-R5")
BOOK.variant("overflow-counts-deque-only", {_overflows: _overflows_deque_only},
             rule="AT-R5")
BOOK.variant("overflow-sets-no-flag", {_overflow: _overflow_sets_no_flag}, rule="AT-R5")


# --- AT-R6: the boundaries and their ties -------------------------------------------------

@rule("AT-R6")
def _start_tie_highest(stamps: tuple[int, ...]) -> tuple[int, int]:
    """The start is the highest index among the earliest fronts, not the lowest."""
    time = min(stamps)
    return max(k for k, stamp in enumerate(stamps) if stamp == time), time


@rule("AT-R6")
def _end_tie_lowest(stamps: tuple[int, ...]) -> tuple[int, int]:
    """The end (the pivot) is the lowest index among the latest fronts, not the highest."""
    time = max(stamps)
    return stamps.index(time), time


BOOK.variant("tie-start-highest", {start_boundary: _start_tie_highest}, rule="AT-R6")
BOOK.variant("tie-end-lowest", {end_boundary: _end_tie_lowest}, rule="AT-R6")


@rule("AT-R6")
def _ties_flipped_start(stamps: tuple[int, ...]) -> tuple[int, int]:
    """Both ties flipped, as one non-strict comparison in a scan shared by the start and
    the end gives: the start is the highest index among the earliest fronts and the end the
    lowest among the latest."""
    return _start_tie_highest(stamps)


BOOK.variant("ties-flipped", {start_boundary: _ties_flipped_start,
                              end_boundary: _end_tie_lowest}, rule="AT-R6")


# --- AT-R7: the drop flags ----------------------------------------------------------------

@rule("AT-R7")
def _clear_end_flag_too(sync: _Sync, e: int) -> None:
    """Clears every drop flag, the end topic's included."""
    del e
    sync.dropped = [False] * sync.n


@rule("AT-R7")
def _flags_never_cleared(sync: _Sync, e: int) -> None:
    """Never clears a drop flag: a topic that overflowed refuses to be the pivot for the
    rest of the run."""
    del sync, e


BOOK.variant("clear-end-flag-too", {_clear_drop_flags: _clear_end_flag_too}, rule="AT-R7")
BOOK.variant("flags-never-cleared", {_clear_drop_flags: _flags_never_cleared},
             rule="AT-R7")


# --- AT-R8: the maximum interval ----------------------------------------------------------

@rule("AT-R8")
def _too_wide_not_strict(spread: int, max_interval: int) -> bool:
    """Refuses a first candidate whose spread equals the maximum interval (``>=`` for
    ``>``)."""
    return spread >= max_interval


@rule("AT-R8")
def _refuse_too_wide_end(sync: _Sync, s: int, e: int) -> None:
    """Drops the end's front of a too wide first candidate instead of the start's."""
    del s
    _delete_front(sync, e, INTERVAL_TOO_WIDE)


BOOK.variant("interval-not-strict", {_too_wide: _too_wide_not_strict}, rule="AT-R8")
BOOK.variant("interval-drops-end", {_refuse_too_wide: _refuse_too_wide_end}, rule="AT-R8")


# --- AT-R9: a pivot refused ---------------------------------------------------------------

@rule("AT-R9")
def _refuse_pivot_end(sync: _Sync, s: int, e: int) -> None:
    """Drops the front of the end topic (the one that overflowed) instead of the start's."""
    del s
    _delete_front(sync, e, PIVOT_REFUSED)


BOOK.variant("refusal-drops-end", {_refuse_pivot: _refuse_pivot_end}, rule="AT-R9")


# --- AT-R10: the first candidate ----------------------------------------------------------

@rule("AT-R10")
def _zero_never_pivot(end_time: int) -> bool:
    """Never takes an end stamped 0 as the pivot (0 read as "unset"): fronts all at 0 wait
    forever."""
    return end_time > 0


BOOK.variant("zero-stamp-never-pivot", {_may_be_pivot: _zero_never_pivot}, rule="AT-R10")


# --- AT-R11 and AT-D1: a better candidate -------------------------------------------------

@rule("AT-R11")
def _improve_on_tie(sync: _Sync, s: int, start_time: int, end_time: int) -> None:
    """Takes fronts that tie with the candidate as better (``<=`` for ``<``): a tie
    supersedes the older candidate."""
    if sync.scale(end_time - sync.candidate_end) <= start_time - sync.candidate_start:
        sync.rules.of(_make_candidate)(sync, start_time, end_time)
    _move_to_past(sync, s)


@rule("AT-R11")
def _improve_moves_pivot_time(sync: _Sync, s: int, start_time: int, end_time: int) -> None:
    """A better candidate also moves the pivot time to its own end."""
    if sync.scale(end_time - sync.candidate_end) < start_time - sync.candidate_start:
        sync.rules.of(_make_candidate)(sync, start_time, end_time)
        sync.pivot_time = end_time
    _move_to_past(sync, s)


@rule("AT-D1")
def _candidate_keeps_past(sync: _Sync, start_time: int, end_time: int) -> None:
    """A better candidate leaves the past buffers alone (restored at the next publication)
    instead of destroying them."""
    sync.candidate = tuple(sync.held[k][sync.split[k]] for k in range(sync.n))
    sync.candidate_start, sync.candidate_end = start_time, end_time


BOOK.variant("tie-supersedes", {_improve: _improve_on_tie}, rule="AT-R11")
BOOK.variant("pivot-time-follows", {_improve: _improve_moves_pivot_time}, rule="AT-R11")
BOOK.variant("past-kept", {_make_candidate: _candidate_keeps_past}, rule="AT-D1")


# --- AT-R12: the publish checks -----------------------------------------------------------

@rule("AT-R12")
def _equal_stamps_end_search(sync: _Sync, s: int, end_time: int) -> bool:
    """Also publishes when the start topic's next message has the stamp of the start just
    set aside: the search looks for a strictly later start, so equal stamps end it."""
    held, split = sync.held[s], sync.split[s]
    return _proved_optimal(sync, s, end_time) or (
        split < len(held) and held[split].stamp == held[split - 1].stamp)


BOOK.variant("equal-stamps-end-search", {_proved_optimal: _equal_stamps_end_search},
             rule="AT-R12")


# --- AT-R13: the virtual search -----------------------------------------------------------

@rule("AT-R13")
def _virtual_time_without_bound(sync: _Sync, k: int) -> int:
    """The virtual time of an emptied deque is the pivot time: the topic's lower bound is
    never added to the back of ``P[k]``."""
    del k
    return sync.pivot_time


@rule("AT-R13")
def _looks_ahead_per_topic(moves: list[int]) -> bool:
    """Looks ahead one emptied topic at a time: only the first virtual set is tried, never
    the later ones the joint search reaches by setting the virtual start aside."""
    del moves
    return False


BOOK.variant("virtual-ignores-bound", {_virtual_time: _virtual_time_without_bound},
             rule="AT-R13")
@rule("AT-R13")
def _virtual_moves_kept(sync: _Sync, moves: list[int]) -> None:
    """Leaves the virtual moves in place when the search cannot prove the candidate: the
    fronts it set aside stay in the past buffers."""
    del sync, moves


BOOK.variant("virtual-moves-kept", {_undo_virtual_moves: _virtual_moves_kept},
             rule="AT-R13")
BOOK.variant("per-topic-look-ahead", {_looks_further: _looks_ahead_per_topic},
             rule="AT-R13")


# --- AT-R14: publishing -------------------------------------------------------------------

@rule("AT-R14")
def _publish_forgets_past(sync: _Sync) -> None:
    """Publishes without putting the past buffers back: the messages set aside since the
    last candidate stay aside (until a better candidate destroys them)."""
    sync.outputs.append(Published(sync.candidate))
    _clear_pivot(sync)
    for k in range(sync.n):
        del sync.held[k][0]
        sync.split[k] = max(sync.split[k] - 1, 0)


BOOK.variant("publish-forgets-past", {_publish: _publish_forgets_past}, rule="AT-R14")


# --- AT-R17: the end ----------------------------------------------------------------------

@rule("AT-R17")
def _end_deque_first(config: Config, state: State) -> tuple[State, tuple[Output, ...]]:
    """Reports each topic's deque before its past buffer, not in arrival order."""
    pending = tuple(Pending(m.id) for k in range(config.topics)
                    for m in (*state.deques[k], *state.pasts[k]))
    return _end(config, state)[0], pending


@rule("AT-R17")
def _end_keeps_warned(config: Config, state: State) -> tuple[State, tuple[Output, ...]]:
    """Starts afresh at the end but keeps the warned flags: a topic that warned never warns
    again in a later run."""
    fresh, pending = _end(config, state)
    return evolve(fresh, warned=state.warned), pending


BOOK.variant("pending-deque-first", {_end: _end_deque_first}, rule="AT-R17")
BOOK.variant("end-keeps-warned", {_end: _end_keeps_warned}, rule="AT-R17")


# --- AT-D23: the age-penalty product ------------------------------------------------------

@rule("AT-D23")
def _scale_rounded(d: int, numerator: int, denominator: int) -> int:
    """Rounds the age-penalty product half up instead of truncating it toward zero."""
    return (2 * d * numerator + denominator) // (2 * denominator)


@rule("AT-D23")
def _scale_floored(d: int, numerator: int, denominator: int) -> int:
    """Floors the age-penalty product (toward minus infinity) instead of truncating it
    toward zero: a negative age comes out one lower."""
    return d * numerator // denominator


@rule("AT-D23")
def _scale_float(d: int, numerator: int, denominator: int) -> int:
    """Multiplies in binary64 (``int(d * (1.0 + age_penalty))``) instead of exactly."""
    return int(d * (numerator / denominator))


BOOK.variant("round-not-trunc", {scale_ros2: _scale_rounded}, rule="AT-D23")
BOOK.variant("floor-not-trunc", {scale_ros2: _scale_floored}, rule="AT-D23")
BOOK.variant("float-product", {scale_ros2: _scale_float}, rule="AT-D23")

