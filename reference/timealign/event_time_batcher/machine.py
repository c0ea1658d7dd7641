"""Every transition of the event-time batcher lives here: ``initial`` and ``step``.

Theory of operation (spec/event_time_batcher.md; W, D, L are the three config values).
The state is the list of open batches in creation order, each a closed event-time window
``[start, end]`` holding at most one message per key, and the last processing time seen.

* A message received at ``T`` with event time ``t`` is rejected when ``t < T - D`` or
  ``t > T + L`` (EB-R5, EB-R6). Otherwise it goes to the first batch whose window holds
  ``t`` (EB-R7): it joins when its key is free there (EB-R9), is a duplicate when that key
  has exactly ``t`` (EB-R10), and otherwise splits the batch at the midpoint of the two event
  times; every member is re-homed by that point and the upper part is appended as a new
  batch (EB-R11, EB-R12). With no batch holding ``t``, a batch ``[t, t + W]`` is created,
  clipped at the next batch's start (EB-R8).
* A created batch, or the shrunk lower part of a split, times out at ``end + D``: a timer is
  requested, or, when that instant has already passed, every expired batch closes inside
  the message step (EB-R13). Ticks close expired batches (EB-R14); flush closes all, newest
  first (EB-R15).

Each rule is one function registered with ``@rule`` (:mod:`timealign.rulebook`): a call is
that rule firing, which is how ``timealign diff`` and the spec index know what ran; ``step``
and ``_message`` only dispatch, testing the conditions in the order the spec states them.
EB-R1, EB-R2 (the inputs' checks) and EB-R16 are functions of ``model.py``.

Each decision a porter could misread (a comparison, a rounding, an order, which end times
out) is a small *slot* (``@BOOK.slot``, :data:`~timealign.event_time_batcher.model.BOOK`),
called through the one profile's table (``_rules().of(slot)``): the catalogued variants
(CF-R41, :mod:`.variants`) replace one slot each, and the conformance harness runs them to
name the rule a port misreads. The profile's table is empty: the slots' bases are the
rules.

This reproduces the thin-edge.io batcher output for output; where upstream is silent the
reference emits ``Rejected``/``Dropped`` (EB-D8) and orders members by arrival (EB-D9).
"""

from __future__ import annotations

from operator import attrgetter
from typing import NoReturn

from timealign.errors import INT64_MAX, InvalidInput, foreign_state, wrong_object
from timealign.event_time_batcher.arithmetic import first_containing, new_window_end, split_point
from timealign.event_time_batcher.model import (
    BOOK,
    DUPLICATE,
    OVERWRITTEN,
    PROFILE,
    TOO_FAR_IN_FUTURE,
    TOO_OLD,
    Batch,
    Config,
    Dropped,
    Flush,
    Input,
    Member,
    Message,
    OpenBatch,
    Output,
    Rejected,
    State,
    Tick,
    Timer,
    emitted,
)
from timealign.rulebook import Resolved, rule

_ID = attrgetter("id")
Batches = tuple[OpenBatch, ...]
Members = tuple[Member, ...]
Step = tuple[State, tuple[Output, ...]]


def initial(config: Config) -> State:
    """No open batch and no processing time yet, bound to ``config`` (DRV-R10)."""
    return State(config=config)


def step(config: Config, state: State, item: Input) -> Step:
    """Apply one input; raise :class:`InvalidInput` (state untouched) on bad input."""
    if type(state) is not State or type(config) is not Config:
        raise wrong_object("event_time_batcher.step", config, state, Config, State)
    if state.config is not config and state.config != config:
        raise foreign_state(state.config)  # DRV-R10, before anything changes
    if isinstance(item, Message):
        return _message(config, state, item)
    if isinstance(item, Tick):
        return _tick(config, state, item)
    if isinstance(item, Flush):
        return _flush(config, state)
    refuse_unknown_input(item)


@rule("EB-R2")
def refuse_unknown_input(item: object) -> NoReturn:
    """EB-R2: an input is a message, a tick or a flush."""
    raise InvalidInput("input", "EB-R2", "expected a Message, Tick or Flush", item)


def _rules() -> Resolved:
    """The rule functions that run: the slots' bases, or the variants swapped in."""
    return BOOK.rules(PROFILE)


@BOOK.slot
@rule("EB-R3")
def _require_forward(state: State, at: int) -> None:
    """EB-R3: processing time never goes backwards."""
    if state.now is not None and at < state.now:
        refuse_backwards(state.now, at)


@rule("EB-R3")
def refuse_backwards(now: int, at: int) -> NoReturn:
    """EB-R3: a processing time below the last one is refused."""
    raise InvalidInput("at", "EB-R3", f"processing time must not go backwards (last at = "
                       f"{now})", at)


def _message(config: Config, state: State, m: Message) -> Step:
    """A message: the first rule below whose condition holds decides it (EB-R3..EB-R12)."""
    rules = _rules()
    rules.of(_require_forward)(state, m.at)
    _require_id_free(state, m)
    now, t, batches = m.at, m.event_time, state.batches
    if rules.of(_is_too_old)(t, now, config.max_message_delay):
        return _too_old(config, batches, m)
    if rules.of(_is_too_far)(t, now, config.message_leap_limit):
        return _too_far_in_future(config, batches, m)
    _require_timeout_fits(config, t)
    member = Member(m.key, t, m.id)
    index = rules.of(_lookup)(batches, t)
    if index is None:
        return _open(config, batches, now, member)
    existing = next((x for x in batches[index].members if x.key == m.key), None)
    if existing is None:
        return _join(config, batches, index, now, member)
    if rules.of(_is_duplicate)(existing.event_time, t):
        return rules.of(_duplicate)(config, batches, index, m)
    cut = rules.of(_split_point)(t, existing.event_time)
    return _split(config, batches, index, now, member, cut)


@rule("EB-R4")
def _require_id_free(state: State, m: Message) -> None:
    """EB-R4: an id still held by an open batch is refused."""
    if any(m.id in map(_ID, b.members) for b in state.batches):
        refuse_held_id(m.id)


@rule("EB-R4")
def refuse_held_id(identity: str) -> NoReturn:
    """EB-R4: the refusal of an id still held by an open batch."""
    raise InvalidInput("id", "EB-R4", "id is already held by an open batch", identity)


@BOOK.slot
@rule("EB-R5")
def _is_too_old(t: int, now: int, delay: int) -> bool:
    """EB-R5: too old when ``t < T - D`` (a delay of exactly ``D`` is accepted)."""
    return t < now - delay


@rule("EB-R5")
def _too_old(config: Config, batches: Batches, m: Message) -> Step:
    """EB-R5, when ``t < T - D``: rejected ``too_old``; only ``now`` moves."""
    return State(batches, m.at, config=config), (Rejected(m.id, TOO_OLD),)


@BOOK.slot
@rule("EB-R6")
def _is_too_far(t: int, now: int, leap: int) -> bool:
    """EB-R6: too far in the future when ``t > T + L`` (``t = T + L`` is accepted)."""
    return t > now + leap


@rule("EB-R6")
def _too_far_in_future(config: Config, batches: Batches, m: Message) -> Step:
    """EB-R6, when ``t > T + L``: rejected ``too_far_in_future``; only ``now`` moves."""
    return State(batches, m.at, config=config), (Rejected(m.id, TOO_FAR_IN_FUTURE),)


@BOOK.slot
@rule("EB-R7")
def _lookup(batches: Batches, t: int) -> int | None:
    """EB-R7: the index of the first batch in creation order whose window holds ``t``."""
    return first_containing(tuple((b.start, b.end) for b in batches), t)


@BOOK.slot
@rule("EB-R8")
def _window_end(batches: Batches, t: int, window: int) -> int:
    """EB-R8: a new batch's end, ``t + W`` clipped at the smallest start after ``t``."""
    return new_window_end(tuple(b.start for b in batches), t, window)


@rule("EB-R8")
def _open(config: Config, batches: Batches, now: int, member: Member) -> Step:
    """EB-R8, when no batch holds ``t``: a batch ``[t, t + W]`` clipped at the next start
    is appended, then EB-R13 with its end."""
    t = member.event_time
    made = OpenBatch(t, _rules().of(_window_end)(batches, t, config.batching_window),
                     (member,))
    return _timer_or_close(config, (*batches, made), now, made, ())


@rule("EB-R9")
def _join(config: Config, batches: Batches, index: int, now: int, member: Member) -> Step:
    """EB-R9, when the target has no member with the key: the message joins; no output."""
    target = batches[index]
    joined = OpenBatch(target.start, target.end, (*target.members, member))
    return _rules().of(_after_join)(config, _replace(batches, index, joined), now, joined)


@BOOK.slot
@rule("EB-R9")
def _after_join(config: Config, batches: Batches, now: int, joined: OpenBatch) -> Step:
    """EB-R9: a join emits nothing: neither a timer nor a closed batch (EB-R13)."""
    return State(batches, now, config=config), ()


@BOOK.slot
@rule("EB-R10")
def _is_duplicate(existing: int, t: int) -> bool:
    """EB-R10: the target's member with the key is a duplicate's first copy when its event
    time is exactly ``t``."""
    return existing == t


@BOOK.slot
@rule("EB-R10")
def _duplicate(config: Config, batches: Batches, index: int, m: Message) -> Step:
    """EB-R10, when the target's member with the key has exactly ``t``: rejected
    ``duplicate``; the first copy stays."""
    return State(batches, m.at, config=config), (Rejected(m.id, DUPLICATE),)


@BOOK.slot
@rule("EB-R11")
def _split_point(t: int, existing: int) -> int:
    """EB-R11, when that member has another event time: the midpoint, rounded toward ``t``."""
    return split_point(t, existing)


@rule("EB-R12")
def _split(config: Config, batches: Batches, index: int, now: int, member: Member,
           cut: int) -> Step:
    """EB-R12: the target becomes ``[start, cut]`` in place, ``[cut, end]`` is appended,
    every member then the message re-homed; then EB-R13 with the lower part's end."""
    rules = _rules()
    target = batches[index]
    lower, upper, lost = rules.of(_rehome)((*target.members, member), cut)
    parts = OpenBatch(target.start, cut, lower), OpenBatch(cut, target.end, upper)
    placed = rules.of(_placed)(batches, index, *parts)
    return _timer_or_close(config, placed, now, rules.of(_timed_part)(*parts), lost)


@rule("EB-R2")
def _require_timeout_fits(config: Config, t: int) -> None:
    """EB-R2, DRV-D9: a message taken into a batch gets a timeout up to ``t + W + D``, an
    instant the machine emits; one that would pass int64 is refused (rejected messages
    have no timeout, so they are not). A guard registered as EB-R2, as every refusal is
    raised inside the rule function of the rule it names (issue 40)."""
    if t > INT64_MAX - config.batching_window - config.max_message_delay:
        raise InvalidInput("event_time", "EB-R2", "event_time + batching_window + "
                           "max_message_delay (its batch's timeout) must fit in int64 ns", t)


@BOOK.slot
@rule("EB-R12")
def _rehome(members: Members, cut: int) -> tuple[Members, Members, tuple[Output, ...]]:
    """EB-R12: members below ``cut`` stay, the others move up; a later same-key member on
    the same side replaces the earlier one (upstream's map insert), which is ``Dropped``."""
    sides: tuple[list[Member], list[Member]] = ([], [])
    lost: list[Output] = []
    for x in members:
        side = sides[1] if x.event_time >= cut else sides[0]
        for clash in [y for y in side if y.key == x.key]:
            side.remove(clash)
            lost.append(Dropped(clash.id, OVERWRITTEN))
        side.append(x)
    return tuple(sides[0]), tuple(sides[1]), tuple(lost)


@BOOK.slot
@rule("EB-R12")
def _placed(batches: Batches, index: int, lower: OpenBatch, upper: OpenBatch) -> Batches:
    """EB-R12: the lower part keeps the target's place, the upper part is appended."""
    return (*_replace(batches, index, lower), upper)


@BOOK.slot
@rule("EB-R12")
def _timed_part(lower: OpenBatch, upper: OpenBatch) -> OpenBatch:
    """EB-R12: EB-R13 runs for the lower part's end; the upper part keeps the old end,
    whose timer was already requested."""
    return lower


def _replace(batches: Batches, index: int, batch: OpenBatch) -> Batches:
    return (*batches[:index], batch, *batches[index + 1:])


@rule("EB-R13")
def _timer_or_close(
    config: Config, batches: Batches, now: int, made: OpenBatch, before: tuple[Output, ...]
) -> Step:
    """EB-R13: ask for a tick at ``end + D`` of the batch just made (new, or a split's
    lower part), or close every expired batch if that instant has passed."""
    rules = _rules()
    timeout = made.end + config.max_message_delay
    if rules.of(_wants_timer)(now, timeout):
        return State(batches, now, config=config), (*before, Timer(timeout))
    kept, closed = rules.of(_closed_by_message)(config, batches, now, made)
    return State(kept, now, config=config), (*before, *closed)


@BOOK.slot
@rule("EB-R13")
def _wants_timer(now: int, timeout: int) -> bool:
    """EB-R13: a timer is requested while ``T < end + D``; at equality the batch closes."""
    return now < timeout


@BOOK.slot
@rule("EB-R13")
def _closed_by_message(config: Config, batches: Batches, now: int, made: OpenBatch
                       ) -> tuple[Batches, tuple[Batch, ...]]:
    """EB-R13: once the batch just made has expired, every expired batch closes, not just
    that one."""
    return _close_expired(config, batches, now)


@rule("EB-R14")
def _tick(config: Config, state: State, item: Tick) -> Step:
    """EB-R14: a tick (EB-R3 first) closes every expired batch, in creation order."""
    rules = _rules()
    rules.of(_require_forward)(state, item.at)
    kept, closed = rules.of(_closed_by_tick)(config, state.batches, item.at)
    return State(kept, item.at, config=config), closed


@BOOK.slot
@rule("EB-R14")
def _closed_by_tick(config: Config, batches: Batches, at: int
                    ) -> tuple[Batches, tuple[Batch, ...]]:
    """EB-R14: a tick at ``at`` closes the batches with ``end + D <= at``, in creation
    order."""
    return _close_expired(config, batches, at)


@rule("EB-R15")
def _flush(config: Config, state: State) -> Step:
    """EB-R15: flush closes every open batch, newest first (upstream ``Vec::pop``)."""
    rules = _rules()
    flushed = rules.of(emitted)(rules.of(_flush_order)(state.batches))
    return State((), state.now, config=config), flushed


@BOOK.slot
@rule("EB-R15")
def _flush_order(batches: Batches) -> Batches:
    """EB-R15: the order a flush emits the open batches in: reverse creation order."""
    return batches[::-1]


def _close_expired(config: Config, batches: Batches, now: int
                   ) -> tuple[Batches, tuple[Batch, ...]]:
    """The expiry EB-R13 and EB-R14 close by: batches with ``end + D <= now`` close, in
    creation order."""
    delay = config.max_message_delay
    kept = tuple(b for b in batches if b.end + delay > now)
    closed = tuple(b for b in batches if b.end + delay <= now)
    return kept, _rules().of(emitted)(closed)


#: The one profile's table: empty, the slots' bases are the rules (variants: ``variants.py``).
TABLE = BOOK.profile(PROFILE, {})
