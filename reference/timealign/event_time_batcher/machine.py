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

This reproduces the thin-edge.io batcher output for output; where upstream is silent the
reference emits ``Rejected``/``Dropped`` (EB-D8) and orders members by arrival (EB-D9).
"""

from __future__ import annotations

from operator import attrgetter
from typing import NoReturn

from timealign.errors import INT64_MAX, InvalidInput, foreign_state, wrong_object
from timealign.event_time_batcher.arithmetic import first_containing, new_window_end, split_point
from timealign.event_time_batcher.model import (
    DUPLICATE,
    OVERWRITTEN,
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
)
from timealign.rulebook import rule

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
    _require_forward(state, m.at)
    _require_id_free(state, m)
    now, t, batches = m.at, m.event_time, state.batches
    if t < now - config.max_message_delay:
        return _too_old(config, batches, m)
    if t > now + config.message_leap_limit:
        return _too_far_in_future(config, batches, m)
    _require_timeout_fits(config, t)
    member = Member(m.key, t, m.id)
    index = _lookup(batches, t)
    if index is None:
        return _open(config, batches, now, member)
    existing = next((x for x in batches[index].members if x.key == m.key), None)
    if existing is None:
        return _join(config, batches, index, now, member)
    if existing.event_time == t:
        return _duplicate(config, batches, m)
    cut = _split_point(t, existing.event_time)
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


@rule("EB-R5")
def _too_old(config: Config, batches: Batches, m: Message) -> Step:
    """EB-R5, when ``t < T - D``: rejected ``too_old``; only ``now`` moves."""
    return State(batches, m.at, config=config), (Rejected(m.id, TOO_OLD),)


@rule("EB-R6")
def _too_far_in_future(config: Config, batches: Batches, m: Message) -> Step:
    """EB-R6, when ``t > T + L``: rejected ``too_far_in_future``; only ``now`` moves."""
    return State(batches, m.at, config=config), (Rejected(m.id, TOO_FAR_IN_FUTURE),)


@rule("EB-R7")
def _lookup(batches: Batches, t: int) -> int | None:
    """EB-R7: the index of the first batch in creation order whose window holds ``t``."""
    return first_containing(tuple((b.start, b.end) for b in batches), t)


@rule("EB-R8")
def _open(config: Config, batches: Batches, now: int, member: Member) -> Step:
    """EB-R8, when no batch holds ``t``: a batch ``[t, t + W]`` clipped at the next start
    is appended, then EB-R13 with its end."""
    t = member.event_time
    end = new_window_end(tuple(b.start for b in batches), t, config.batching_window)
    return _timer_or_close(config, (*batches, OpenBatch(t, end, (member,))), now, end, ())


@rule("EB-R9")
def _join(config: Config, batches: Batches, index: int, now: int, member: Member) -> Step:
    """EB-R9, when the target has no member with the key: the message joins; no output."""
    target = batches[index]
    joined = OpenBatch(target.start, target.end, (*target.members, member))
    return State(_replace(batches, index, joined), now, config=config), ()


@rule("EB-R10")
def _duplicate(config: Config, batches: Batches, m: Message) -> Step:
    """EB-R10, when the target's member with the key has exactly ``t``: rejected
    ``duplicate``; the first copy stays."""
    return State(batches, m.at, config=config), (Rejected(m.id, DUPLICATE),)


@rule("EB-R11")
def _split_point(t: int, existing: int) -> int:
    """EB-R11, when that member has another event time: the midpoint, rounded toward ``t``."""
    return split_point(t, existing)


@rule("EB-R12")
def _split(config: Config, batches: Batches, index: int, now: int, member: Member,
           cut: int) -> Step:
    """EB-R12: the target becomes ``[start, cut]`` in place, ``[cut, end]`` is appended,
    every member then the message re-homed; then EB-R13 with the lower part's end."""
    target = batches[index]
    lower, upper, lost = _rehome((*target.members, member), cut)
    batches = (*_replace(batches, index, OpenBatch(target.start, cut, lower)),
               OpenBatch(cut, target.end, upper))
    return _timer_or_close(config, batches, now, cut, lost)


@rule("EB-R2")
def _require_timeout_fits(config: Config, t: int) -> None:
    """EB-R2, DRV-D9: a message taken into a batch gets a timeout up to ``t + W + D``, an
    instant the machine emits; one that would pass int64 is refused (rejected messages
    have no timeout, so they are not). A guard registered as EB-R2, as every refusal is
    raised inside the rule function of the rule it names (issue 40)."""
    if t > INT64_MAX - config.batching_window - config.max_message_delay:
        raise InvalidInput("event_time", "EB-R2", "event_time + batching_window + "
                           "max_message_delay (its batch's timeout) must fit in int64 ns", t)


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


def _replace(batches: Batches, index: int, batch: OpenBatch) -> Batches:
    return (*batches[:index], batch, *batches[index + 1:])


@rule("EB-R13")
def _timer_or_close(
    config: Config, batches: Batches, now: int, end: int, before: tuple[Output, ...]
) -> Step:
    """EB-R13: ask for a tick at ``end + D``, or close every expired batch if it has passed."""
    timeout = end + config.max_message_delay
    if now < timeout:
        return State(batches, now, config=config), (*before, Timer(timeout))
    kept, closed = _close_expired(config, batches, now)
    return State(kept, now, config=config), (*before, *closed)


@rule("EB-R14")
def _tick(config: Config, state: State, item: Tick) -> Step:
    """EB-R14: a tick (EB-R3 first) closes every expired batch, in creation order."""
    _require_forward(state, item.at)
    kept, closed = _close_expired(config, state.batches, item.at)
    return State(kept, item.at, config=config), closed


@rule("EB-R15")
def _flush(config: Config, state: State) -> Step:
    """EB-R15: flush closes every open batch, newest first (upstream ``Vec::pop``)."""
    flushed = tuple(b.closed() for b in reversed(state.batches))
    return State((), state.now, config=config), flushed


def _close_expired(config: Config, batches: Batches, now: int) -> tuple[Batches, tuple[Batch, ...]]:
    """The expiry EB-R13 and EB-R14 close by: batches with ``end + D <= now`` close, in
    creation order."""
    delay = config.max_message_delay
    kept = tuple(b for b in batches if b.end + delay > now)
    closed = tuple(b.closed() for b in batches if b.end + delay <= now)
    return kept, closed
