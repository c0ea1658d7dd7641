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

The ``esslivedata-head`` profile (RB-R17) is the card's rule functions with a few
overridden, in the manner of a fork of a spec: the slots (``@BOOK.slot``) are the functions
a profile may replace, the card's table is empty and head's (:data:`HEAD_TABLE`, at the
end of this module) names each replacement, so what head changes is that one table; the
rule text calls a slot through its config's table (``_the(config).of(slot)``) and reads no
profile flag. Head's bootstrap anchors at the plausible anchor (RB-R21), its routing sends
disjoint-epoch stamps to ``non_gated`` (RB-R22) and bumps only near the window (RB-R23),
its closes arm the clock (RB-R24) and a close without a gating stream ends at its
messages' anchor (RB-R25), a poll that closes nothing while traffic is buffered and the
caller's clock (RB-R18) is ``10·L`` past the last close re-places the window (RB-R26), and
it accepts two more stream kinds (RB-R27).

The public surface is ``initial``, ``step`` and the input checks ``fast.py`` shares
(RB-R18, RB-R27); below them the rule functions, each registered with its rule id and
its profiles (``@rule``, :mod:`timealign.rulebook`), over the spec's state
(:class:`~timealign.rate_aware_batcher.model.State`), each message routed on its own; the
arithmetic is the contract-checked helpers of ``grid.py`` and ``estimator.py``.
``timealign.registry`` runs this module; ``fast.py`` is the same machine transcribed for
throughput and checked against it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NoReturn

from attrs import evolve

from timealign.errors import INT64_MAX, InvalidInput, foreign_state, wrong_object
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
    BOOK,
    CARD,
    GATED_KINDS,
    HEAD,
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
    _check_factor,
    _head_factor,
    timeout_fits,
)
from timealign.rulebook import Resolved, rule


def initial(config: Config) -> State:
    """Before the first poll: no window, no streams, the configured batch length; bound to
    ``config`` (DRV-R10)."""
    return State(config.batch_length, timeout_distance(config.factor, config.batch_length),
                 config=config)


@BOOK.slot
@rule("RB-R18")
def advance_clock(clock: int | None, last_close: int | None, now: int) -> tuple[int, int]:
    """RB-R18: the clock and ``last_close`` after a reading ``now``; a reading below the
    clock is refused. ``last_close`` armed before any reading is armed at the first one
    (RB-D17)."""
    if clock is not None and now < clock:
        raise InvalidInput("now", "RB-R18", f"goes back from {clock}", now)
    return now, now if last_close is None else last_close


@rule("RB-R28")
def check_batch_end(end: int) -> None:
    """RB-R28: a batch ends at its window's start + L (or head's anchor), an instant the
    machine emits; a poll that would close one past int64 is refused (DRV-D9)."""
    if end > INT64_MAX:
        raise InvalidInput("messages", "RB-R28", "the batch this poll closes would end "
                           "past int64 ns (its window's start + batch length > 2**63 - 1)",
                           end)


def _the(config: Config) -> Resolved:
    """The rule functions of the config's profile (its table over the card's)."""
    return BOOK.rules(config.profile)


# The arithmetic the rule text decides with is slots too (no profile replaces them): a
# catalogued variant (CF-R41, ``variants.py``) swaps one in to enact a misreading of its
# rule. The fast path keeps its own forms and enacts the bases only (``fast.FORMS``).
for _decision in (observe, integer_rate_hz, slots_per_batch, period_of, slot_in_batch,
                  advance_hwm, gap_steps, plausible_anchor):
    BOOK.slot(_decision)


@BOOK.slot
@rule("RB-D3")
def refuse_head_only_kinds(messages: tuple[Polled, ...]) -> None:
    """The card profile knows the card revision's stream kinds only: a head-only kind
    (RB-R27) is refused as unknown (RB-D3)."""
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
    if state.config is not config and state.config != config:
        raise foreign_state(state.config)  # DRV-R10, before anything changes
    if state.ended:
        refuse_after_end(item)
    if isinstance(item, Poll):
        if item.now is not None:
            clock, last_close = _the(config).of(advance_clock)(state.clock,
                                                               state.last_close, item.now)
            state = evolve(state, clock=clock, last_close=last_close)
        if not HEAD_ONLY_KINDS.isdisjoint([m.kind for m in item.messages]):
            _the(config).of(refuse_head_only_kinds)(item.messages)
        return _poll(config, state, item.messages)
    if isinstance(item, SetBatchLength):
        return _the(config).of(_set_batch_length)(config, state, item), ()
    if isinstance(item, End):
        return _end(state)
    return refuse_unknown_input(item)


@rule("RB-R16")
def refuse_after_end(item: object) -> NoReturn:
    """No input may follow the end of input."""
    raise InvalidInput("op", "RB-R16", "no input may follow the end of input", item)


@rule("RB-D3")
def refuse_unknown_input(item: object) -> NoReturn:
    """An input is a poll, a batch length or the end."""
    raise InvalidInput("op", "RB-D3", "unknown input", item)


@rule("RB-R27")
def _accept_head_only_kinds(messages: tuple[Polled, ...]) -> None:
    """Head knows ``device`` and ``livedata_nicos_data``: non-gated like any other kind."""
    del messages


@BOOK.slot
@rule("RB-R15")
def _set_batch_length(config: Config, state: State, item: SetBatchLength) -> State:
    """A new length waits for the next close (its timeout checked first, RB-D1)."""
    require_length_timeout_fits(config, item)
    return evolve(state, pending_length=item.length)


@rule("RB-D1")
def require_length_timeout_fits(config: Config, item: SetBatchLength) -> None:
    """A new length whose timeout distance is infinite or beyond int64 is refused."""
    if not timeout_fits(config.factor, item.length):
        raise InvalidInput("seconds", "RB-D1", "gives an infinite timeout or one beyond "
                           "int64 ns", item.seconds)


@rule("RB-R16")
def _end(state: State) -> tuple[State, tuple[Output, ...]]:
    """Everything still held is reported pending, and no input may follow."""
    pending = tuple(Pending(m.id) for m in state.buffered())
    streams = tuple(evolve(s, bucket=()) for s in state.streams)
    return evolve(state, streams=streams, non_gated=(), overflow=(), future=(),
                  held=frozenset(), ended=True), pending


@rule("RB-R7")
def _refresh_grid(config: Config, stream: Stream, start: int, length: int) -> Stream:
    """Rebuild the stream's grid from its current rate at ``start`` for length L.

    No rate keeps the existing grid (RB-D7); a sub-rate stream loses it; an origin within
    1000 batch lengths of ``start`` is preserved, otherwise a new origin is picked from the
    bucket (first message at or after ``start``, else the first) or the newest timestamp,
    and refused when implausibly far (the 43-year guard).
    """
    rules = _the(config)
    rate = rules.of(integer_rate_hz)(stream.diffs)
    if rate is None:
        return stream
    if sub_rate(rate, length):
        return evolve(stream, grid=None)
    if stream.grid is not None and origin_plausible(stream.grid.origin, start, length):
        origin = stream.grid.origin
    else:
        candidate = rules.of(_origin_candidate)(stream.bucket, start, stream.last)
        if candidate is None or not origin_plausible(candidate, start, length):
            return evolve(stream, grid=None)
        origin = candidate
    return evolve(stream, grid=Grid(origin, rules.of(period_of)(rate),
                                    rules.of(slots_per_batch)(rate, length)))


@BOOK.slot
@rule("RB-R7")
def _origin_candidate(bucket: tuple[Polled, ...], start: int, last: int | None
                      ) -> int | None:
    """A new origin: the first bucket message at or after ``start``, else the bucket's
    first, else the newest stamp observed."""
    if not bucket:
        return last
    return next((m.timestamp for m in bucket if m.timestamp >= start), bucket[0].timestamp)


def _window(state: State) -> int:
    """The active window's start; only asked for after the bootstrap (RB-R8) set it."""
    if state.window is None:
        raise ValueError("the rate-aware batcher has no window before its first batch")
    return state.window


@BOOK.slot
@rule("RB-R1")
def _register(streams: tuple[Stream, ...], kind: str, name: str) -> tuple[tuple[Stream, ...], int]:
    """The streams with ``(kind, name)`` registered (a stream is its kind and name), and
    its position."""
    for position, stream in enumerate(streams):
        if stream.kind == kind and stream.name == name:
            return streams, position
    return (*streams, Stream(kind, name)), len(streams)


def _route(config: Config, state: State, message: Polled) -> State:
    """Route one message with the profile's routing (card: RB-R11/RB-R12; head: RB-R22
    first)."""
    return _the(config).of(_route_message)(config, state, message)


@BOOK.slot
@rule("RB-R12")
def _ahead(end: int, t: int, length: int) -> bool:
    """Whether ``t`` lies in the hold-back range past the window end: ``end < t <= end +
    3L``."""
    return end < t <= end + MAX_AHEAD_BATCHES * length


@BOOK.slot
@rule("RB-R11")
def _route_message(config: Config, state: State, message: Polled) -> State:
    """The card routes every message against the active window."""
    return _route_in_window(config, state, message)


@rule("RB-R11")
def _route_in_window(config: Config, state: State, message: Polled) -> State:
    """Route one message against the active window: non-gated and ungridded messages by
    RB-R12, gridded ones by RB-R11."""
    end = _window(state) + state.batch_length
    held_back = _the(config).of(_ahead)(end, message.timestamp, state.batch_length)
    if message.kind not in GATED_KINDS:
        return _route_non_gated(state, message, held_back)
    streams, position = _the(config).of(_register)(state.streams, message.kind, message.name)
    if streams[position].grid is None and held_back:
        return _hold_ungridded(state, streams, message)
    return _route_gated(config, evolve(state, streams=streams), position, message)


@rule("RB-R12")
def _route_non_gated(state: State, message: Polled, held_back: bool) -> State:
    """A non-gated message waits in ``future`` while ahead of the window (up to 3L), else
    rides along with the window."""
    if held_back:
        return evolve(state, future=(*state.future, message))
    return evolve(state, non_gated=(*state.non_gated, message))


@rule("RB-R12")
def _hold_ungridded(state: State, streams: tuple[Stream, ...], message: Polled) -> State:
    """An ungridded gated message ahead of the window (up to 3L) waits in ``future``,
    unobserved (its stream registered)."""
    return evolve(state, streams=streams, future=(*state.future, message))


@rule("RB-R11")
def _route_gated(config: Config, state: State, position: int, message: Polled) -> State:
    """Observe the stamp; an ungridded stream buckets it, a gridded one slots it, or sends
    it to overflow beyond the last slot (with the profile's bump)."""
    t = message.timestamp
    rules = _the(config)
    streams, overflow = state.streams, state.overflow
    stream = streams[position]
    last, diffs = rules.of(observe)(stream.last, stream.diffs, t)
    stream = evolve(stream, last=last, diffs=diffs)
    if stream.grid is None:
        stream = evolve(stream, bucket=(*stream.bucket, message))
    else:
        slot = rules.of(slot_in_batch)(t, _window(state), stream.grid)
        if rules.of(_overflows)(slot, stream.grid.slots):
            stream = rules.of(_bump)(config, stream, slot)
            overflow = (*overflow, message)
        else:
            stream = evolve(stream, bucket=(*stream.bucket, message),
                            max_slot=rules.of(_max_slot)(stream.max_slot, slot))
    streams = (*streams[:position], stream, *streams[position + 1 :])
    return evolve(state, streams=streams, overflow=overflow)


@BOOK.slot
@rule("RB-R11")
def _overflows(slot: int, slots: int) -> bool:
    """A slot at or past the window's slot count is overflow."""
    return slot >= slots


@BOOK.slot
@rule("RB-R11")
def _max_slot(max_slot: int, slot: int) -> int:
    """The highest slot seen in the window: a late (lower) slot changes nothing."""
    return max(max_slot, slot)


@BOOK.slot
@rule("RB-D8")
def _bump(config: Config, stream: Stream, slot: int) -> Stream:
    """An overflowing message still raises ``max_slot`` to the last slot, at any
    distance."""
    del config, slot
    assert stream.grid is not None
    return evolve(stream, max_slot=max(stream.max_slot, stream.grid.slots - 1))


@rule("RB-R23")
def _bump_near(config: Config, stream: Stream, slot: int) -> Stream:
    """Head's bump: as the card's below ``slots · (1 + 3)``; an overflowing message far
    beyond the window leaves the gate as it is."""
    assert stream.grid is not None
    if _the(config).of(_near)(slot, stream.grid.slots):
        return evolve(stream, max_slot=max(stream.max_slot, stream.grid.slots - 1))
    return stream


@BOOK.slot
@rule("RB-R23", profiles=(HEAD,))
def _near(slot: int, slots: int) -> bool:
    """Head bumps for an overflowing slot below ``slots · (1 + 3)``."""
    return slot < slots * (1 + MAX_AHEAD_BATCHES)


@rule("RB-R22")
def _route_head(config: Config, state: State, message: Polled) -> State:
    """Head's routing: a stamp more than 1000·L past the window end joins ``non_gated``,
    unobserved, whatever its kind (a gated one still registers its stream); anything else
    is routed as in the card."""
    end = _window(state) + state.batch_length
    if not _the(config).of(_disjoint)(message.timestamp, end, state.batch_length):
        return _route_in_window(config, state, message)
    streams = state.streams
    if message.kind in GATED_KINDS:
        streams, _ = _the(config).of(_register)(streams, message.kind, message.name)
    return evolve(state, streams=streams, non_gated=(*state.non_gated, message))


@BOOK.slot
@rule("RB-R22", profiles=(HEAD,))
def _disjoint(t: int, end: int, length: int) -> bool:
    """A disjoint epoch: more than ``1000·L`` past the window end."""
    return t - end > MAX_ORIGIN_OFFSET_BATCHES * length


def _route_all(config: Config, state: State, messages: Iterable[Polled]) -> State:
    """Route ``messages`` in order (RB-R11, RB-R12)."""
    for message in messages:
        state = _route(config, state, message)
    return state


def _drain(state: State) -> tuple[tuple[Polled, ...], State]:
    """The batch contents in the table's order (RB-R14), and the state with them taken
    and every ``max_slot`` reset."""
    drained = _the(state.config).of(_batch_order)(state.non_gated, state.streams)
    streams = tuple(evolve(s, bucket=(), max_slot=-1) for s in state.streams)
    return drained, evolve(state, non_gated=(), streams=streams)


@BOOK.slot
@rule("RB-R14")
def _batch_order(non_gated: tuple[Polled, ...], streams: tuple[Stream, ...]
                 ) -> tuple[Polled, ...]:
    """A batch holds the non-gated messages, then each bucket in stream order."""
    return (*non_gated, *(m for s in streams for m in s.bucket))


@rule("RB-R13")
def _recover_from_gap(config: Config, state: State) -> State:
    """Jump the window whole batch lengths towards the earliest overflow and re-route
    drained, overflow and future messages, in that order."""
    stashed, state = _drain(state)
    overflow, future = state.overflow, state.future
    start, length = _window(state), state.batch_length
    steps = _the(config).of(gap_steps)(min(m.timestamp for m in overflow), start, length)
    start += steps * length
    state = evolve(state, window=start, overflow=(), future=())
    return _route_all(config, state, (*stashed, *overflow, *future))


@rule("RB-R10")
def _complete(state: State) -> bool:
    """Timeout first (none at head's infinite factor, RB-R19), else every gridded stream
    in its last slot."""
    rules = _the(state.config)
    if (state.hwm is not None and state.timeout is not None
            and rules.of(_timed_out)(state.hwm, _window(state) + state.timeout)):
        return True
    return rules.of(_gates_met)(tuple(s for s in state.streams if s.grid is not None))


@BOOK.slot
@rule("RB-R10")
def _timed_out(hwm: int, due: int) -> bool:
    """The timeout is inclusive: it fires when the HWM reaches the window start +
    timeout."""
    return hwm >= due


@BOOK.slot
@rule("RB-R10")
def _gates_met(gridded: tuple[Stream, ...]) -> bool:
    """At least one gridded stream, and every one of them in its last slot."""
    return bool(gridded) and all(
        s.max_slot >= s.grid.slots - 1 for s in gridded if s.grid is not None)


@rule("RB-R14")
def _refresh_registry(state: State) -> State:
    """Refresh the grids of the streams that delivered, count the absence of the others
    and evict those absent for 5 closes (RB-D9); a pending length refreshes them again
    with the new length, the bucket not yet drained (RB-R15)."""
    start, length, pending = _window(state), state.batch_length, state.pending_length
    config, evicted = state.config, _the(state.config).of(_evicted)
    kept: list[Stream] = []
    for stream in state.streams:
        if stream.bucket:
            stream = _refresh_grid(config, evolve(stream, absent=0), start, length)
        elif not evicted(stream.absent + 1):
            stream = evolve(stream, absent=stream.absent + 1)
        else:
            continue  # evicted
        if pending is not None:
            stream = _refresh_grid(config, stream, start, pending)
        kept.append(stream)
    return evolve(state, streams=tuple(kept))


@BOOK.slot
@rule("RB-R14")
def _evicted(absent: int) -> bool:
    """A stream is evicted at its 5th consecutive close with an empty bucket (RB-D9)."""
    return absent >= ABSENT_BATCHES_FOR_EVICTION


@rule("RB-R15")
def _apply_pending_length(config: Config, state: State) -> State:
    """A pending batch length takes effect at the close (and with it its timeout)."""
    pending = state.pending_length
    if pending is None:
        return state
    return evolve(state, batch_length=pending, pending_length=None,
                  timeout=timeout_distance(config.factor, pending))


def _close(config: Config, state: State) -> tuple[State, Batch]:
    """Close the window (RB-R14, RB-R15): refresh and evict, drain, apply a pending length,
    let the profile arm the clock (head: RB-R24) and end the batch (head: RB-R25), then
    re-route overflow and future into the next window."""
    start, length = _window(state), state.batch_length
    drained, state = _drain(_refresh_registry(state))
    state = _apply_pending_length(config, state)
    rules = _the(config)
    state = rules.of(_keep_last_close)(state)
    state, drained, end = rules.of(_end_at_window)(state, drained, start + length)
    check_batch_end(end)  # RB-R28: before the batch is emitted; the state is untouched
    return _next_window(config, state, Batch(start, end, tuple(m.id for m in drained)))


@rule("RB-R14")
def _next_window(config: Config, state: State, batch: Batch) -> tuple[State, Batch]:
    """The next window starts at the batch end; overflow, then future, are routed into
    it."""
    overflow = state.overflow
    state = evolve(state, window=batch.end, overflow=(),
                   held=state.held.difference(batch.ids))
    state = _route_all(config, state, overflow)  # may hold some back in future
    future = state.future
    return _route_all(config, evolve(state, future=()), future), batch


@BOOK.slot
@rule("RB-R14")
def _end_at_window(state: State, drained: tuple[Polled, ...], end: int
                   ) -> tuple[State, tuple[Polled, ...], int]:
    """The card's batch: what the window drained, ending at the window's end."""
    return state, drained, end


@BOOK.slot
@rule("RB-R14")
def _keep_last_close(state: State) -> State:
    """The card's close leaves ``last_close`` where the bootstrap put it (the card has no
    backstop, RB-H5)."""
    return state


@rule("RB-R24")
def _arm_clock(state: State) -> State:
    """Every close sets ``last_close`` to the clock."""
    return evolve(state, last_close=state.clock)


@rule("RB-R25")
def _close_without_gating(state: State, drained: tuple[Polled, ...], end: int
                          ) -> tuple[State, tuple[Polled, ...], int]:
    """With a gating stream, the card's batch; with none, the batch takes the drained
    messages, then future, then overflow, and ends at their anchor when that lies past the
    window end."""
    if any(s.grid is not None for s in state.streams):
        return state, drained, end
    drained = (*drained, *state.future, *state.overflow)
    state = evolve(state, future=(), overflow=())
    if drained:
        rules = _the(state.config)
        anchor = rules.of(plausible_anchor)([m.timestamp for m in drained], state.batch_length)
        end = rules.of(_anchored_end)(anchor, end)
    return state, drained, end


@BOOK.slot
@rule("RB-R25", profiles=(HEAD,))
def _anchored_end(anchor: int, end: int) -> int:
    """A close without a gating stream ends at its messages' anchor when that lies past
    the window end, else at the window end."""
    return max(anchor, end)


@rule("RB-D4")
def _admit(held: frozenset[str], messages: tuple[Polled, ...]) -> frozenset[str]:
    """The held ids with the poll's added; refused when one repeats within the poll or
    among the messages still held."""
    for index, message in enumerate(messages):
        if message.id in held:
            raise InvalidInput(f"messages[{index}].id", "RB-D4",
                               "re-uses the id of a message still held", message.id)
        held = held | {message.id}
    return held


@rule("RB-R8")
def _bootstrap(config: Config, state: State,
               messages: tuple[Polled, ...]) -> tuple[State, tuple[Output, ...]]:
    """The first non-empty poll is the first batch, whole; the window starts at the
    profile's bootstrap end, observing only the gated stamps up to it, and the clock is
    armed."""
    stamps = [m.timestamp for m in messages]
    rules = _the(config)
    end = rules.of(_bootstrap_at_newest)(config, stamps, state.batch_length)
    streams = state.streams
    for message in messages:
        if message.kind in GATED_KINDS and rules.of(_observed_at_bootstrap)(
                message.timestamp, end):
            streams, position = rules.of(_register)(streams, message.kind, message.name)
            stream = streams[position]
            last, diffs = rules.of(observe)(stream.last, stream.diffs, message.timestamp)
            streams = (*streams[:position], evolve(stream, last=last, diffs=diffs),
                       *streams[position + 1 :])
    refreshed = tuple(_refresh_grid(config, s, end, state.batch_length) for s in streams)
    after = evolve(state, window=end, hwm=end, streams=refreshed, last_close=state.clock)
    return after, (Batch(min(stamps), end, tuple(m.id for m in messages)),)


@BOOK.slot
@rule("RB-R8")
def _observed_at_bootstrap(t: int, end: int) -> bool:
    """A gated stamp of the first poll is observed when it lies at or before the first
    window's start."""
    return t <= end


@BOOK.slot
@rule("RB-R8")
def _bootstrap_at_newest(config: Config, stamps: list[int], length: int) -> int:
    """The card's first window starts at the first poll's newest stamp."""
    del config, length
    return max(stamps)


@rule("RB-R21")
def _bootstrap_at_anchor(config: Config, stamps: list[int], length: int) -> int:
    """Head's first window starts at the first poll's plausible anchor (RB-R20)."""
    return _the(config).of(plausible_anchor)(stamps, length)


def _poll(config: Config, state: State, messages: tuple[Polled, ...]
          ) -> tuple[State, tuple[Output, ...]]:
    """One upstream ``batch(messages)`` call (RB-R8 to RB-R15, head: RB-R26)."""
    held = _admit(state.held, messages)
    if state.window is None or state.hwm is None:
        return (state, ()) if not messages else _bootstrap(config, state, messages)
    rules = _the(config)
    if messages:
        state = _route_all(config, rules.of(_raise_hwm)(evolve(state, held=held), messages),
                           messages)
    if state.overflow and rules.of(_gap_due)(state.streams):
        state = _recover_from_gap(config, state)  # also for overflow a close left
    if not _complete(state):
        state = rules.of(_no_backstop)(config, state)
    if not _complete(state):
        return rules.of(_hwm_after_check)(state, messages), ()
    state, batch = _close(config, state)
    return rules.of(_hwm_after_check)(state, messages), (batch,)


@BOOK.slot
@rule("RB-R13")
def _gap_due(streams: tuple[Stream, ...]) -> bool:
    """With overflow held, gap recovery is due when no gridded stream has a bucket
    message (a late one vetoes it)."""
    return not any(s.grid is not None and s.bucket for s in streams)


def _hwm(state: State, messages: tuple[Polled, ...]) -> int:
    """The HWM raised by the poll's newest stamp, clamped (RB-R9)."""
    assert state.hwm is not None
    return _the(state.config).of(advance_hwm)(state.hwm, max(m.timestamp for m in messages),
                                              _window(state), state.batch_length)


@BOOK.slot
@rule("RB-R9")
def _raise_hwm(state: State, messages: tuple[Polled, ...]) -> State:
    """A non-empty poll raises the HWM first, before routing and the completion check,
    with the window the call starts with."""
    return evolve(state, hwm=_hwm(state, messages))


@BOOK.slot
@rule("RB-R9")
def _hwm_after_check(state: State, messages: tuple[Polled, ...]) -> State:
    """Nothing more happens to the HWM after the completion check."""
    del messages
    return state


@BOOK.slot
@rule("RB-R10")
def _no_backstop(config: Config, state: State) -> State:
    """The card: a poll that closes nothing changes nothing more (no wall-clock backstop,
    RB-H5)."""
    del config
    return state


@rule("RB-R26")
def _backstop(config: Config, state: State) -> State:
    """Head: a poll that closes nothing recovers from a stall when one is due."""
    return _recover_from_stall(config, state) if _stalled(state) else state


@rule("RB-R26", profiles=(HEAD,))
def _stalled(state: State) -> bool:
    """RB-R26 trigger: ``10·L`` of clock since the last close with traffic in the window
    (``non_gated`` or a bucket; overflow and future do not count)."""
    clock, last_close = state.clock, state.last_close
    if clock is None or last_close is None:
        return False
    if not _the(state.config).of(_stall_due)(clock - last_close, state.batch_length):
        return False
    return bool(state.non_gated) or any(s.bucket for s in state.streams)


@BOOK.slot
@rule("RB-R26", profiles=(HEAD,))
def _stall_due(since: int, length: int) -> bool:
    """``10·L`` of clock since the last close makes a stall (inclusive)."""
    return since >= STALL_THRESHOLD_BATCHES * length


@rule("RB-R26", profiles=(HEAD,))
def _recover_from_stall(config: Config, state: State) -> State:
    """Re-arm; unless the buffered traffic's anchor lies in the window, re-place the
    window (and the HWM) at it and place every held message anew."""
    stamps = [*(m.timestamp for m in state.non_gated),
              *(m.timestamp for s in state.streams for m in s.bucket)]
    anchor = _the(config).of(plausible_anchor)(stamps, state.batch_length)
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


#: The card revision (RB-R1 to RB-R16): the base, nothing replaced.
CARD_TABLE = BOOK.profile(CARD, {})
#: The upstream head (RB-R19 to RB-R27): the card with these functions replaced.
HEAD_TABLE = BOOK.profile(HEAD, {
    _check_factor: _head_factor,  # RB-D2 -> RB-R19: a factor in (0, 3] or inf
    refuse_head_only_kinds: _accept_head_only_kinds,  # RB-D3 -> RB-R27
    _bootstrap_at_newest: _bootstrap_at_anchor,  # RB-R8 -> RB-R21
    _route_message: _route_head,  # RB-R11 -> RB-R22 first
    _bump: _bump_near,  # RB-D8 -> RB-R23
    _keep_last_close: _arm_clock,  # RB-R14 -> RB-R24
    _end_at_window: _close_without_gating,  # RB-R14 -> RB-R25
    _no_backstop: _backstop,  # RB-R10 -> RB-R26
})
