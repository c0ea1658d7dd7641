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

This reproduces the thin-edge.io batcher output for output; where upstream is silent the
reference emits ``Rejected``/``Dropped`` (EB-D8) and orders members by arrival (EB-D9).
"""

from __future__ import annotations

from operator import attrgetter

from timealign.errors import INT64_MAX, InvalidInput, foreign_state, require, wrong_object
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
        _require_forward(state, item.at)
        kept, closed = _close_expired(config, state.batches, item.at)
        return State(kept, item.at, config=config), closed
    if isinstance(item, Flush):
        flushed = tuple(b.closed() for b in reversed(state.batches))
        return State((), state.now, config=config), flushed
    raise InvalidInput("input", "EB-R2", "expected a Message, Tick or Flush", item)


def _require_forward(state: State, at: int) -> None:
    """EB-R3: processing time never goes backwards."""
    require(state.now is None or at >= state.now, "at", "EB-R3",
            f"processing time must not go backwards (last at = {state.now})", at)


def _message(config: Config, state: State, m: Message) -> Step:
    _require_forward(state, m.at)
    require(not any(m.id in map(_ID, b.members) for b in state.batches), "id", "EB-R4",
            "id is already held by an open batch", m.id)
    now, t, batches = m.at, m.event_time, state.batches
    if t < now - config.max_message_delay:
        return State(batches, now, config=config), (Rejected(m.id, TOO_OLD),)
    if t > now + config.message_leap_limit:
        return State(batches, now, config=config), (Rejected(m.id, TOO_FAR_IN_FUTURE),)
    _require_timeout_fits(config, t)
    member = Member(m.key, t, m.id)
    index = first_containing(tuple((b.start, b.end) for b in batches), t)
    if index is None:
        end = new_window_end(tuple(b.start for b in batches), t, config.batching_window)
        return _timer_or_close(config, (*batches, OpenBatch(t, end, (member,))), now, end, ())
    target = batches[index]
    existing = next((x for x in target.members if x.key == m.key), None)
    if existing is None:
        joined = OpenBatch(target.start, target.end, (*target.members, member))
        return State(_replace(batches, index, joined), now, config=config), ()
    if existing.event_time == t:
        return State(batches, now, config=config), (Rejected(m.id, DUPLICATE),)
    cut = split_point(t, existing.event_time)
    lower, upper, lost = _rehome((*target.members, member), cut)
    batches = (*_replace(batches, index, OpenBatch(target.start, cut, lower)),
               OpenBatch(cut, target.end, upper))
    return _timer_or_close(config, batches, now, cut, lost)


def _require_timeout_fits(config: Config, t: int) -> None:
    """EB-R2, DRV-D9: a message taken into a batch gets a timeout up to ``t + W + D``, an
    instant the machine emits; one that would pass int64 is refused (rejected messages
    have no timeout, so they are not)."""
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


def _timer_or_close(
    config: Config, batches: Batches, now: int, end: int, before: tuple[Output, ...]
) -> Step:
    """EB-R13: ask for a tick at ``end + D``, or close every expired batch if it has passed."""
    timeout = end + config.max_message_delay
    if now < timeout:
        return State(batches, now, config=config), (*before, Timer(timeout))
    kept, closed = _close_expired(config, batches, now)
    return State(kept, now, config=config), (*before, *closed)


def _close_expired(config: Config, batches: Batches, now: int) -> tuple[Batches, tuple[Batch, ...]]:
    """EB-R13, EB-R14: batches with ``end + D <= now`` close, in creation order."""
    delay = config.max_message_delay
    kept = tuple(b for b in batches if b.end + delay > now)
    closed = tuple(b.closed() for b in batches if b.end + delay <= now)
    return kept, closed
