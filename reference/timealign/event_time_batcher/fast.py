"""The fast path of the event-time batcher: ``machine.py`` transcribed for throughput.

It computes exactly what the rule text (:mod:`timealign.event_time_batcher.machine`)
computes, on a private state form (:class:`FastState`, named tuples) converted to and from
the spec's :class:`~timealign.event_time_batcher.model.State` by :func:`to_spec` and
:func:`from_spec`. The differences are mechanical:

- the state also keeps ``held``, the ids of every member of an open batch, so the EB-R4
  check is one set lookup instead of a scan of every member of every batch (the rule
  text's cost grows with what is held);
- batches are named tuples (a frozen attrs instance costs several times as much to build,
  and one is built per accepted message); members are the spec's :class:`Member`;
- the lookup (EB-R7) and the clipping (EB-R8) are written as plain loops over the batches
  instead of building the tuples of windows and starts the contract-checked helpers take.

The rare split path (EB-R11, EB-R12) calls the rule text's own helpers. The bounded
explorer and the stateful test step this in lockstep with the rule text (equal states
through :func:`to_spec`, equal outputs, equal refusals); it is also what the compiled
build compiles (``timealign.native``).
"""

from __future__ import annotations

from typing import NamedTuple

from timealign.errors import INT64_MAX, InvalidInput, foreign_state, wrong_object
from timealign.event_time_batcher.arithmetic import split_point
from timealign.event_time_batcher.machine import _rehome
from timealign.event_time_batcher.model import (
    DUPLICATE,
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


class FastBatch(NamedTuple):
    """An open batch: closed window ``[start, end]``, members in arrival order."""

    start: int
    end: int
    members: tuple[Member, ...]


class FastState(NamedTuple):
    """The spec's state plus ``held``: the ids of every member of ``batches``; ``config``
    is the config it was built under (DRV-R10)."""

    batches: tuple[FastBatch, ...]
    now: int | None
    held: frozenset[str]
    config: Config


Step = tuple[FastState, tuple[Output, ...]]


def initial(config: Config) -> FastState:
    """No open batch and no processing time yet, bound to ``config`` (DRV-R10)."""
    return FastState((), None, frozenset(), config)


def step(config: object, state: object, item: Input) -> Step:
    """Equivalent to ``machine.step``; :class:`InvalidInput` (state untouched) on bad input.

    ``config`` and ``state`` are declared ``object`` so that, compiled, a wrong one still
    reaches the check below (a typed parameter would be refused by mypyc first).
    """
    if type(state) is not FastState or type(config) is not Config:
        raise wrong_object("event_time_batcher.fast.step", config, state, Config, FastState)
    if state.config is not config and state.config != config:
        raise foreign_state(state.config)  # DRV-R10, before anything changes
    if isinstance(item, Message):
        return _message(config, state, item)
    if isinstance(item, Tick):
        at = item.at
        _require_forward(state.now, at)
        batches, closed, held = _close_expired(config, state.batches, at, state.held)
        return FastState(batches, at, held, config), closed
    if isinstance(item, Flush):
        flushed = tuple(_closed(b) for b in reversed(state.batches))
        return FastState((), state.now, frozenset(), config), flushed
    raise InvalidInput("input", "EB-R2", "expected a Message, Tick or Flush", item)


def _require_forward(now: int | None, at: int) -> None:
    """EB-R3, with the rule text's message."""
    if now is not None and at < now:
        raise InvalidInput("at", "EB-R3",
                           f"processing time must not go backwards (last at = {now})", at)


def _closed(batch: FastBatch) -> Batch:
    return Batch(batch.start, batch.end, tuple([m.id for m in batch.members]))


def _message(config: Config, state: FastState, m: Message) -> Step:
    batches, last, held, _ = state
    now, t, key, identity = m.at, m.event_time, m.key, m.id
    _require_forward(last, now)
    if identity in held:
        raise InvalidInput("id", "EB-R4", "id is already held by an open batch", identity)
    if t < now - config.max_message_delay:  # EB-R5
        return FastState(batches, now, held, config), (Rejected(identity, TOO_OLD),)
    if t > now + config.message_leap_limit:  # EB-R6
        return FastState(batches, now, held, config), (Rejected(identity, TOO_FAR_IN_FUTURE),)
    if t > INT64_MAX - config.batching_window - config.max_message_delay:  # EB-R2, DRV-D9
        raise InvalidInput("event_time", "EB-R2", "event_time + batching_window + "
                           "max_message_delay (its batch's timeout) must fit in int64 ns", t)
    member = Member(key, t, identity)
    for index, target in enumerate(batches):  # noqa: B007 - EB-R7: the first batch holding t
        if target.start <= t <= target.end:
            break
    else:  # EB-R8: a new batch [t, t + W], clipped at the next batch's start
        end = t + config.batching_window
        for batch in batches:
            if t < batch.start < end:
                end = batch.start
        return _timer_or_close(config, (*batches, FastBatch(t, end, (member,))), now, end, (),
                               held | {identity})
    existing: Member | None = None
    for x in target.members:
        if x.key == key:
            existing = x
            break
    if existing is None:  # EB-R9: joins
        joined = FastBatch(target.start, target.end, (*target.members, member))
        return FastState((*batches[:index], joined, *batches[index + 1:]), now,
                         held | {identity}, config), ()
    if existing.event_time == t:  # EB-R10
        return FastState(batches, now, held, config), (Rejected(identity, DUPLICATE),)
    cut = split_point(t, existing.event_time)  # EB-R11, EB-R12
    lower, upper, lost = _rehome((*target.members, member), cut)
    gone = {output.id for output in lost if isinstance(output, Dropped)}
    batches = (*batches[:index], FastBatch(target.start, cut, lower), *batches[index + 1:],
               FastBatch(cut, target.end, upper))
    return _timer_or_close(config, batches, now, cut, lost, (held | {identity}) - gone)


def _timer_or_close(config: Config, batches: tuple[FastBatch, ...], now: int, end: int,
                    before: tuple[Output, ...], held: frozenset[str]) -> Step:
    """EB-R13: ask for a tick at ``end + D``, or close every expired batch if it has passed."""
    timeout = end + config.max_message_delay
    if now < timeout:
        return FastState(batches, now, held, config), (*before, Timer(timeout))
    kept, closed, held = _close_expired(config, batches, now, held)
    return FastState(kept, now, held, config), (*before, *closed)


def _close_expired(config: Config, batches: tuple[FastBatch, ...], now: int,
                   held: frozenset[str]) -> tuple[tuple[FastBatch, ...], tuple[Batch, ...],
                                                  frozenset[str]]:
    """EB-R13, EB-R14: batches with ``end + D <= now`` close, in creation order."""
    delay = config.max_message_delay
    kept: list[FastBatch] = []
    closed: list[Batch] = []
    for batch in batches:
        if batch.end + delay > now:
            kept.append(batch)
        else:
            closed.append(_closed(batch))
    if not closed:
        return batches, (), held
    return tuple(kept), tuple(closed), held.difference(*[b.ids for b in closed])


def to_spec(state: FastState) -> State:
    """The spec's state: the batches as :class:`OpenBatch`, without ``held``."""
    return State(tuple(OpenBatch(b.start, b.end, b.members) for b in state.batches), state.now,
                 config=state.config)


def from_spec(state: State) -> FastState:
    """The fast form of a spec state: ``held`` collected from the batches."""
    return FastState(tuple(FastBatch(b.start, b.end, b.members) for b in state.batches),
                     state.now, frozenset(m.id for b in state.batches for m in b.members),
                     state.config)
