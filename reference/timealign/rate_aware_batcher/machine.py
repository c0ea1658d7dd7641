"""The rate-aware batcher as the spec states it (RB-R1 to RB-R27): the rule text.

Theory of operation. A poll (one upstream ``batch(messages)`` call) first raises the
high-water mark, clamped to three batch lengths past the window (RB-R9). The first
non-empty poll bootstraps: all its messages form the first batch and the window starts at
its newest timestamp (RB-R8). Later polls route each message (RB-R11, RB-R12): gated kinds
register a stream and feed its period estimator; a gridded stream's message lands in a
pulse slot of the window, or in ``overflow`` beyond the last slot (bumping the gate);
ungridded and non-gated messages ahead of the window (up to 3L) are held in ``future``;
anything else joins the active batch. Overflow with no gridded bucket triggers gap recovery
(RB-R13). The window closes (at most once per poll) when the timeout fires or every
gridded stream reached its last slot (RB-R10); the close refreshes grids, evicts absent
streams (RB-R14), applies a pending batch length (RB-R15), drains the batch and re-routes
overflow and future into the next window.

The ``esslivedata-head`` profile (RB-R17) switches a few of these places and adds one
rule: the bootstrap anchors at the plausible anchor (RB-R21), routing sends
disjoint-epoch stamps to ``non_gated`` (RB-R22) and bumps only near the window (RB-R23), a
close without a gating stream ends at its messages' anchor (RB-R25), and a poll that
closes nothing while traffic is buffered and the caller's clock (RB-R18) is ``10·L`` past
the last close re-places the window (RB-R26).

The public surface is ``initial``, ``step`` and the input checks ``fast.py`` shares
(RB-R18, RB-R27); below them one private function per rule, over the spec's state
(:class:`~timealign.rate_aware_batcher.model.State`), each message routed on its own; the
arithmetic is the contract-checked helpers of ``grid.py`` and ``estimator.py``.
``timealign.registry`` runs this module; ``fast.py`` is the same machine transcribed for
throughput and checked against it.
"""

from __future__ import annotations

from collections.abc import Iterable

from attrs import evolve

from timealign.errors import InvalidInput, wrong_object
from timealign.rate_aware_batcher.estimator import integer_rate_hz, observe
from timealign.rate_aware_batcher.grid import (
    MAX_AHEAD_BATCHES,
    MAX_ORIGIN_OFFSET_BATCHES,
    STALL_THRESHOLD_BATCHES,
    Grid,
    advance_hwm,
    gap_steps,
    origin_plausible,
    period_of,
    plausible_anchor,
    slot_in_batch,
    slots_per_batch,
    sub_rate,
    timeout_distance,
)
from timealign.rate_aware_batcher.model import (
    ABSENT_BATCHES_FOR_EVICTION,
    GATED_KINDS,
    HEAD_ONLY_KINDS,
    Batch,
    Config,
    End,
    Input,
    Output,
    Pending,
    Poll,
    Polled,
    SetBatchLength,
    State,
    Stream,
    timeout_fits,
)


def initial(config: Config) -> State:
    """Before the first poll: no window, no streams, the configured batch length."""
    return State(config.batch_length, timeout_distance(config.factor, config.batch_length))


def advance_clock(clock: int | None, last_close: int | None, now: int) -> tuple[int, int]:
    """RB-R18: the clock and ``last_close`` after a reading ``now``; a reading below the
    clock is refused. ``last_close`` armed before any reading is armed at the first one
    (RB-D17)."""
    if clock is not None and now < clock:
        raise InvalidInput("now", "RB-R18", f"goes back from {clock}", now)
    return now, now if last_close is None else last_close


def refuse_head_only_kinds(messages: tuple[Polled, ...]) -> None:
    """The card profile knows the card revision's stream kinds only (the rules are named
    where it refuses, so that a tracer reading citations credits them to refusals only)."""
    if HEAD_ONLY_KINDS.isdisjoint([m.kind for m in messages]):
        return
    for index, message in enumerate(messages):
        if message.kind in HEAD_ONLY_KINDS:
            raise InvalidInput(f"messages[{index}].kind", "RB-D3",
                               "is an upstream StreamKind of the head profile only (RB-R27)",
                               message.kind)


def step(config: Config, state: State, item: Input) -> tuple[State, tuple[Output, ...]]:
    """Apply one input; :class:`InvalidInput` (state untouched) on a refused one."""
    if type(state) is not State or type(config) is not Config:
        raise wrong_object("rate_aware_batcher.step", config, state, Config, State)
    if state.ended:
        raise InvalidInput("op", "RB-R16", "no input may follow the end of input", item)
    if isinstance(item, Poll):
        if item.now is not None:  # RB-R18
            clock, last_close = advance_clock(state.clock, state.last_close, item.now)
            state = evolve(state, clock=clock, last_close=last_close)
        if not config.head:  # RB-R27
            refuse_head_only_kinds(item.messages)
        return _poll(config, state, item.messages)
    if isinstance(item, SetBatchLength):  # RB-R15
        if not timeout_fits(config.factor, item.length):
            raise InvalidInput("seconds", "RB-D1", "gives an infinite timeout", item.seconds)
        return evolve(state, pending_length=item.length), ()
    if isinstance(item, End):  # RB-R16
        pending = tuple(Pending(m.id) for m in state.buffered())
        streams = tuple(evolve(s, bucket=()) for s in state.streams)
        return evolve(state, streams=streams, non_gated=(), overflow=(), future=(),
                      held=frozenset(), ended=True), pending
    raise InvalidInput("op", "RB-D3", "unknown input", item)


def _refresh_grid(stream: Stream, start: int, length: int) -> Stream:
    """RB-R7: rebuild the stream's grid from its current rate at ``start`` for length L.

    No rate keeps the existing grid (RB-D7); a sub-rate stream loses it; an origin within
    1000 batch lengths of ``start`` is preserved, otherwise a new origin is picked from the
    bucket (first message at or after ``start``, else the first) or the newest timestamp,
    and refused when implausibly far (the 43-year guard).
    """
    rate = integer_rate_hz(stream.diffs)
    if rate is None:
        return stream
    if sub_rate(rate, length):
        return evolve(stream, grid=None)
    if stream.grid is not None and origin_plausible(stream.grid.origin, start, length):
        origin = stream.grid.origin
    else:
        bucket = stream.bucket
        candidate = (next((m.timestamp for m in bucket if m.timestamp >= start),
                          bucket[0].timestamp) if bucket else stream.last)
        if candidate is None or not origin_plausible(candidate, start, length):
            return evolve(stream, grid=None)
        origin = candidate
    return evolve(stream, grid=Grid(origin, period_of(rate), slots_per_batch(rate, length)))


def _window(state: State) -> int:
    """The active window's start; only asked for after the bootstrap (RB-R8) set it."""
    if state.window is None:
        raise ValueError("the rate-aware batcher has no window before its first batch")
    return state.window


def _register(streams: tuple[Stream, ...], kind: str, name: str) -> tuple[tuple[Stream, ...], int]:
    """RB-R1/RB-R11: the streams with ``(kind, name)`` registered, and its position."""
    for position, stream in enumerate(streams):
        if stream.kind == kind and stream.name == name:
            return streams, position
    return (*streams, Stream(kind, name)), len(streams)


def _route(config: Config, state: State, message: Polled) -> State:
    """RB-R11/RB-R12 (head: RB-R22, RB-R23): route one message against the active window."""
    t = message.timestamp
    end = _window(state) + state.batch_length
    if config.head and t - end > MAX_ORIGIN_OFFSET_BATCHES * state.batch_length:
        streams = state.streams  # RB-R22: a disjoint epoch rides along, unobserved
        if message.kind in GATED_KINDS:
            streams, _ = _register(streams, message.kind, message.name)
        return evolve(state, streams=streams, non_gated=(*state.non_gated, message))
    held_back = end < t <= end + MAX_AHEAD_BATCHES * state.batch_length
    if message.kind not in GATED_KINDS:
        if held_back:
            return evolve(state, future=(*state.future, message))
        return evolve(state, non_gated=(*state.non_gated, message))
    streams, position = _register(state.streams, message.kind, message.name)
    stream = streams[position]
    overflow = state.overflow
    if stream.grid is None and held_back:
        return evolve(state, streams=streams, future=(*state.future, message))
    last, diffs = observe(stream.last, stream.diffs, t)
    stream = evolve(stream, last=last, diffs=diffs)
    if stream.grid is None:
        stream = evolve(stream, bucket=(*stream.bucket, message))
    else:
        slots = stream.grid.slots
        slot = slot_in_batch(t, _window(state), stream.grid)
        if slot >= slots:  # the overflow bump: at any distance (card), near (head, RB-R23)
            if not config.head or slot < slots * (1 + MAX_AHEAD_BATCHES):
                stream = evolve(stream, max_slot=max(stream.max_slot, slots - 1))
            overflow = (*overflow, message)
        else:
            stream = evolve(stream, bucket=(*stream.bucket, message),
                            max_slot=max(stream.max_slot, slot))
    streams = (*streams[:position], stream, *streams[position + 1 :])
    return evolve(state, streams=streams, overflow=overflow)


def _route_all(config: Config, state: State, messages: Iterable[Polled]) -> State:
    """Route ``messages`` in order (RB-R11, RB-R12)."""
    for message in messages:
        state = _route(config, state, message)
    return state


def _drain(state: State) -> tuple[tuple[Polled, ...], State]:
    """The batch contents (non-gated, then each bucket in stream order), and the state
    with them taken and every ``max_slot`` reset."""
    drained = (*state.non_gated, *(m for s in state.streams for m in s.bucket))
    streams = tuple(evolve(s, bucket=(), max_slot=-1) for s in state.streams)
    return drained, evolve(state, non_gated=(), streams=streams)


def _recover_from_gap(config: Config, state: State) -> State:
    """RB-R13: jump the window whole batch lengths towards the earliest overflow and
    re-route drained, overflow and future messages, in that order."""
    stashed, state = _drain(state)
    overflow, future = state.overflow, state.future
    start, length = _window(state), state.batch_length
    start += gap_steps(min(m.timestamp for m in overflow), start, length) * length
    state = evolve(state, window=start, overflow=(), future=())
    return _route_all(config, state, (*stashed, *overflow, *future))


def _complete(state: State) -> bool:
    """RB-R10: timeout first (inclusive; none at head's infinite factor, RB-R19), else
    every gridded stream in its last slot."""
    if (state.hwm is not None and state.timeout is not None
            and state.hwm >= _window(state) + state.timeout):
        return True
    gridded = [s for s in state.streams if s.grid is not None]
    return bool(gridded) and all(
        s.max_slot >= s.grid.slots - 1 for s in gridded if s.grid is not None
    )


def _close(config: Config, state: State) -> tuple[State, Batch]:
    """RB-R14/RB-R15: refresh, evict, apply a pending length, drain, re-route (head: the
    clock is armed, RB-R24, and a close with no gating stream ends at the anchor of all
    it holds, RB-R25)."""
    start, length, pending = _window(state), state.batch_length, state.pending_length
    kept: list[Stream] = []
    for stream in state.streams:
        if stream.bucket:
            stream = _refresh_grid(evolve(stream, absent=0), start, length)
        elif stream.absent + 1 < ABSENT_BATCHES_FOR_EVICTION:
            stream = evolve(stream, absent=stream.absent + 1)
        else:
            continue  # evicted
        if pending is not None:  # refreshed with the new length, bucket not yet drained
            stream = _refresh_grid(stream, start, pending)
        kept.append(stream)
    drained, state = _drain(evolve(state, streams=tuple(kept)))
    if pending is not None:
        state = evolve(state, batch_length=pending, pending_length=None,
                       timeout=timeout_distance(config.factor, pending))
    end = start + length
    if config.head:
        state = evolve(state, last_close=state.clock)  # RB-R24
        if not any(s.grid is not None for s in state.streams):
            drained = (*drained, *state.future, *state.overflow)  # RB-R25
            state = evolve(state, future=(), overflow=())
            if drained:
                anchor = plausible_anchor([m.timestamp for m in drained], state.batch_length)
                end = max(anchor, end)
    batch = Batch(start, end, tuple(m.id for m in drained))
    overflow = state.overflow
    state = evolve(state, window=end, overflow=(), held=state.held.difference(batch.ids))
    state = _route_all(config, state, overflow)  # may hold some back in future
    future = state.future
    return _route_all(config, evolve(state, future=()), future), batch


def _admit(held: frozenset[str], messages: tuple[Polled, ...]) -> frozenset[str]:
    """RB-D4: the held ids with the poll's added; refused when one repeats within the
    poll or among the messages still held."""
    for index, message in enumerate(messages):
        if message.id in held:
            raise InvalidInput(f"messages[{index}].id", "RB-D4",
                               "re-uses the id of a message still held", message.id)
        held = held | {message.id}
    return held


def _bootstrap(config: Config, state: State,
              messages: tuple[Polled, ...]) -> tuple[State, tuple[Output, ...]]:
    """RB-R8: the first non-empty poll is the first batch; the window starts at its max.
    Head (RB-R21): at the plausible anchor, observing only the gated stamps up to it, and
    the clock is armed."""
    stamps = [m.timestamp for m in messages]
    end = plausible_anchor(stamps, state.batch_length) if config.head else max(stamps)
    streams = state.streams
    for message in messages:
        if message.kind in GATED_KINDS and message.timestamp <= end:
            streams, position = _register(streams, message.kind, message.name)
            stream = streams[position]
            last, diffs = observe(stream.last, stream.diffs, message.timestamp)
            streams = (*streams[:position], evolve(stream, last=last, diffs=diffs),
                       *streams[position + 1 :])
    refreshed = tuple(_refresh_grid(s, end, state.batch_length) for s in streams)
    after = evolve(state, window=end, hwm=end, streams=refreshed, last_close=state.clock)
    return after, (Batch(min(stamps), end, tuple(m.id for m in messages)),)


def _poll(config: Config, state: State, messages: tuple[Polled, ...]
         ) -> tuple[State, tuple[Output, ...]]:
    """One upstream ``batch(messages)`` call (RB-R8 to RB-R15)."""
    held = _admit(state.held, messages)
    if state.window is None or state.hwm is None:
        return (state, ()) if not messages else _bootstrap(config, state, messages)
    if messages:
        hwm = advance_hwm(state.hwm, max(m.timestamp for m in messages), state.window,
                          state.batch_length)
        state = _route_all(config, evolve(state, hwm=hwm, held=held), messages)
    if state.overflow and not any(s.grid is not None and s.bucket for s in state.streams):
        state = _recover_from_gap(config, state)  # RB-R13, also for overflow a close left
    if not _complete(state) and config.head and _stalled(state):
        state = _recover_from_stall(config, state)
    if not _complete(state):
        return state, ()
    state, batch = _close(config, state)
    return state, (batch,)


def _stalled(state: State) -> bool:
    """RB-R26 trigger: ``10·L`` of clock since the last close with traffic in the window
    (``non_gated`` or a bucket; overflow and future do not count)."""
    clock, last_close = state.clock, state.last_close
    if clock is None or last_close is None:
        return False
    if clock - last_close < STALL_THRESHOLD_BATCHES * state.batch_length:
        return False
    return bool(state.non_gated) or any(s.bucket for s in state.streams)


def _recover_from_stall(config: Config, state: State) -> State:
    """RB-R26: re-arm; unless the buffered traffic's anchor lies in the window, re-place
    the window (and the HWM) at it and place every held message anew."""
    stamps = [*(m.timestamp for m in state.non_gated),
              *(m.timestamp for s in state.streams for m in s.bucket)]
    anchor = plausible_anchor(stamps, state.batch_length)
    start = _window(state)
    state = evolve(state, last_close=state.clock)
    if start <= anchor < start + state.batch_length:
        return state
    taken, state = _drain(state)
    taken = (*taken, *state.overflow, *state.future)
    state = evolve(state, window=anchor, hwm=anchor, overflow=(), future=())
    beyond = anchor + state.batch_length + MAX_AHEAD_BATCHES * state.batch_length
    for message in taken:
        if message.timestamp > beyond:
            state = evolve(state, non_gated=(*state.non_gated, message))
        else:
            state = _route(config, state, message)
    return state
