"""The fast path of the rate-aware batcher: ``machine.py`` transcribed for throughput.

It computes exactly what the rule text (``machine.py``) computes, on a private state form
(:class:`FastState`, named tuples; a stream's timestamps routed since the last refresh kept
in ``seen`` and folded into the estimator only when it is read), converted to and from the
spec's :class:`~timealign.rate_aware_batcher.model.State` by :func:`to_spec` and
:func:`from_spec`. The bounded explorer steps both in lockstep (``proofs/``) and the
differential tests compare them on random traces; the Spark adapter and the benchmarks run
this one (``ALGORITHM.machine.fast``).

The rules it follows, and the order in which a poll applies them, are the rule text's:
see the theory of operation of :mod:`timealign.rate_aware_batcher.machine` and
spec/rate_aware_batcher.md (RB-R1 to RB-R27). Only the mechanics differ.

``step`` is pure: it copies what it changes into a private scratch object (:class:`_Run`)
and returns a new :class:`FastState`; the given state is never modified.

The grid and estimator helpers it needs are transcribed at the end of this module (the
"fast helpers", e.g. :func:`_integer_rate_hz` for ``estimator.integer_rate_hz``) so that the
compiled build is compiled end to end: the rule text's helpers in ``grid.py`` and
``estimator.py`` carry CrossHair contracts and are never compiled. Each fast helper computes
exactly what its rule-text helper computes (same float operations in the same order), and
``tests/rate_aware_batcher/test_rb_fast_helpers.py`` checks them against each other in
lockstep, like the step itself. The input checks shared with the rule text (RB-R18's clock,
RB-R27's kinds) run inline and call ``machine.py`` only to raise: every refusal is raised by
the rule function of the rule it names.

Profiles. The fast path reads no profile flag of the config: the profile's table
(``machine.HEAD_TABLE``, :data:`timealign.rate_aware_batcher.model.BOOK`) is resolved and
each slot's function mapped to the fast form that enacts it (:data:`FORMS`, a
:class:`Mode` of flags built once per table, :func:`mode_of`). A table naming a function
with no fast form (a variant swapped in) is refused rather than run as something else;
``tests/rate_aware_batcher/test_rb_fast_profiles.py`` checks :data:`FORMS` against every
slot and every table.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any, Final, NamedTuple, NoReturn

from timealign.errors import INT64_MAX, foreign_state, wrong_object
from timealign.rate_aware_batcher import estimator
from timealign.rate_aware_batcher.estimator import (
    DIFF_BUFFER_SIZE,
    MIN_DIFFS_FOR_GATE,
    SNAP_ABSOLUTE_TOLERANCE_HZ,
    SNAP_RELATIVE_TOLERANCE,
)
from timealign.rate_aware_batcher.grid import (
    DRIFT_TOLERANCE_NS,
    MAX_AHEAD_BATCHES,
    MAX_ORIGIN_OFFSET_BATCHES,
    STALL_THRESHOLD_BATCHES,
    Grid,
)
from timealign.rate_aware_batcher.machine import (
    _accept_head_only_kinds,
    _admit,
    _arm_clock,
    _backstop,
    _bootstrap_at_anchor,
    _bootstrap_at_newest,
    _bump,
    _bump_near,
    _close_without_gating,
    _end_at_window,
    _keep_last_close,
    _no_backstop,
    _route_head,
    _route_message,
    advance_clock,
    check_batch_end,
    refuse_after_end,
    refuse_head_only_kinds,
    refuse_unknown_input,
    require_length_timeout_fits,
)
from timealign.rate_aware_batcher.model import (
    ABSENT_BATCHES_FOR_EVICTION,
    BOOK,
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


class FastStream(NamedTuple):
    """One registered gated stream. A named tuple because one is rebuilt per routed pulse.

    ``last``/``diffs`` are the period estimator (RB-R2) up to the timestamps in ``seen``,
    routed since and folded in, in order, before the estimator is read (at a close): the
    same result as observing each at once, without copying the ring per message. ``grid``
    is ``None`` while the stream does not gate, ``bucket`` holds its messages of the active
    window in routing order, ``max_slot`` is the highest slot seen in the window (-1 after
    a drain) and ``absent`` counts consecutive closes with an empty bucket (RB-R14).
    """

    kind: str
    name: str
    last: int | None
    diffs: tuple[int, ...]
    seen: tuple[int, ...]
    grid: Grid | None
    bucket: tuple[Polled, ...]
    max_slot: int
    absent: int


def new_stream(kind: str, name: str) -> FastStream:
    """A freshly registered stream: no estimate, no grid, nothing buffered."""
    return FastStream(kind, name, None, (), (), None, (), -1, 0)


class FastState(NamedTuple):
    """Immutable batcher state; ``window`` is the active window's start (``None`` before
    the first non-empty poll); its end is always ``window + batch_length``.

    ``timeout`` caches the integer timeout distance of the current batch length, so no
    float is computed per poll (``None``: none, RB-R19); ``ended`` is set by the end input;
    ``clock``/``last_close`` as in the spec's state (RB-R18, RB-R26); ``config`` the config
    it was built under (DRV-R10). A named tuple, not an
    attrs class: one is built per poll, and a frozen attrs ``__init__`` (one
    ``object.__setattr__`` per field) measured five times slower here.
    """

    batch_length: int
    timeout: int | None
    pending_length: int | None
    window: int | None
    hwm: int | None
    streams: tuple[FastStream, ...]
    non_gated: tuple[Polled, ...]
    overflow: tuple[Polled, ...]
    future: tuple[Polled, ...]
    held: frozenset[str]
    ended: bool
    clock: int | None
    last_close: int | None
    config: Config


class Mode(NamedTuple):
    """How the fast path enacts one profile's table: per slot of the rule text, whether the
    table puts the replacement this fast path knows in it (built by :func:`mode_of`)."""

    head_kinds: bool  # RB-R27 accepts head's kinds (else RB-D3 refuses them)
    bootstrap_anchor: bool  # RB-R21 (else RB-R8's newest stamp)
    ride_along: bool  # RB-R22 routes a disjoint epoch to non_gated first
    bump_near: bool  # RB-R23 bumps only near the window (else RB-D8)
    arm_clock: bool  # RB-R24 arms the clock at every close
    end_at_anchor: bool  # RB-R25 ends a close without a gating stream at the anchor
    backstop: bool  # RB-R26 the stall backstop (else none, RB-H5)


#: Per slot (by its base's name): each function a table may put in it -> whether it is the
#: one the fast form of that :class:`Mode` field enacts (``True``) or the base (``False``).
#: The model's factor check (``_check_factor``) runs in ``Config``, shared by both paths.
FORMS: dict[str, tuple[str | None, dict[Any, bool]]] = {
    "_check_factor": (None, {}),
    "refuse_head_only_kinds": ("head_kinds", {refuse_head_only_kinds: False,
                                              _accept_head_only_kinds: True}),
    "_bootstrap_at_newest": ("bootstrap_anchor", {_bootstrap_at_newest: False,
                                                  _bootstrap_at_anchor: True}),
    "_route_message": ("ride_along", {_route_message: False, _route_head: True}),
    "_bump": ("bump_near", {_bump: False, _bump_near: True}),
    "_keep_last_close": ("arm_clock", {_keep_last_close: False, _arm_clock: True}),
    "_end_at_window": ("end_at_anchor", {_end_at_window: False, _close_without_gating: True}),
    "_no_backstop": ("backstop", {_no_backstop: False, _backstop: True}),
    # Every other slot (the arithmetic and the decisions no profile replaces, which a
    # catalogued variant may, CF-R41): the fast path enacts its base alone.
    **{name: (None, {base: False}) for name, base in BOOK.slots.items()
       if name not in ("_check_factor", "refuse_head_only_kinds", "_bootstrap_at_newest",
                       "_route_message", "_bump", "_keep_last_close", "_end_at_window",
                       "_no_backstop")},
}
_MODES: dict[Any, Mode] = {}
#: The book's cache of resolved profiles (a dict emptied on every swap, never replaced):
#: read directly, a poll finds its mode with two dictionary lookups.
_RESOLVED: Final = BOOK.resolved


def mode_of(profile: str) -> Mode:
    """The fast form of ``profile``'s table (with any table swapped in); ``LookupError``
    for a function the fast path has no form of."""
    rules = BOOK.rules(profile)
    found = _MODES.get(rules)
    if found is None:
        flags: dict[str, bool] = {}
        for slot, (field, forms) in FORMS.items():
            chosen = rules.of(BOOK.slots[slot])
            if not forms:
                continue  # run by the model, not by the step
            if chosen not in forms:
                raise LookupError(f"the fast path has no form of {chosen.__qualname__} "
                                  f"(slot {slot}): run the rule text")
            if field is not None:
                flags[field] = forms[chosen]
        if len(_MODES) > 16:  # a swap resolves anew: keep only the recent tables
            _MODES.clear()
        found = _MODES[rules] = Mode(**flags)
    return found


#: Head bumps the gate only for overflow within this many windows' slots (RB-R23).
_BUMP_WINDOWS = 1 + MAX_AHEAD_BATCHES
#: What a named tuple's generated ``__new__`` does, without its extra Python frame; used
#: on the two per-poll constructions (measured ~5 % of a poll).
_build = tuple.__new__


def initial(config: Config) -> FastState:
    """Before the first poll: no window, no streams, the configured batch length."""
    return FastState(config.batch_length,
                     _timeout_distance(config.factor, config.batch_length), None, None, None,
                     (), (), (), (), frozenset(), False, None, None, config)


def step(config: object, state: object,
         item: Input) -> tuple[FastState, tuple[Output, ...]]:
    """Apply one input; :class:`InvalidInput` (state untouched) on a refused one."""
    # config and state are declared ``object`` so that, compiled, a wrong one still reaches
    # this check (a typed parameter would be refused by mypyc with its own TypeError first).
    if type(state) is not FastState or type(config) is not Config:
        raise wrong_object("rate_aware_batcher.fast.step", config, state, Config, FastState)
    if state.config is not config and state.config != config:
        raise foreign_state(state.config)  # DRV-R10, before anything changes
    if state.ended:
        refuse_after_end(item)
    if isinstance(item, Poll):
        clock, last_close = state.clock, state.last_close
        now = item.now
        if now is not None:  # RB-R18: ``advance_clock`` inline; it raises on a step back
            if clock is not None and now < clock:
                advance_clock(clock, last_close, now)
            clock = now
            if last_close is None:
                last_close = now
        return _poll(config, state, item.messages, clock, last_close)
    if isinstance(item, SetBatchLength):
        if not timeout_fits(config.factor, item.length):
            require_length_timeout_fits(config, item)  # raises RB-D1
        return state._replace(pending_length=item.length), ()
    if isinstance(item, End):
        pending = tuple(Pending(m.id) for m in to_spec(state).buffered())
        emptied = FastState(state.batch_length, state.timeout, state.pending_length,
                            state.window, state.hwm,
                            tuple(s._replace(bucket=()) for s in state.streams), (), (), (),
                            frozenset(), True, state.clock, state.last_close, state.config)
        return emptied, pending
    refuse_unknown_input(item)


def refresh_grid(stream: FastStream, start: int, length: int) -> FastStream:
    """RB-R7: rebuild the stream's grid from its current rate at a close or bootstrap.

    No rate keeps the existing grid (RB-D7); a sub-rate stream loses it; an origin within
    1000 batch lengths of ``start`` is preserved, otherwise a new origin is picked from the
    bucket (first message at or after ``start``, else the first) or the newest timestamp,
    and refused when implausibly far (the 43-year guard).
    """
    kind, name, last, diffs, seen, grid, bucket, max_slot, absent = stream
    last, diffs, grid = _refreshed(last, diffs, seen, grid, bucket, start, length)
    return _build(FastStream, (kind, name, last, diffs, (), grid, bucket, max_slot, absent))


def _refreshed(
    last: int | None, diffs: tuple[int, ...], seen: tuple[int, ...], grid: Grid | None,
    bucket: tuple[Polled, ...], start: int, length: int,
) -> tuple[int | None, tuple[int, ...], Grid | None]:
    """``refresh_grid`` on a stream's fields: its new ``last``, ``diffs`` and ``grid``."""
    if seen:
        last, diffs = _observe_all(last, diffs, seen)
    rate = _integer_rate_hz(diffs)
    if rate is not None:
        grid = _regrid(grid, rate, bucket, last, start, length)
    return last, diffs, grid


def _regrid(grid: Grid | None, rate: int, bucket: tuple[Polled, ...], last: int | None,
            start: int, length: int) -> Grid | None:
    """RB-R7 for a stream with an integer rate: its new grid (``refresh_grid``)."""
    if _sub_rate(rate, length):
        return None
    if grid is not None and _origin_plausible(grid.origin, start, length):
        origin = grid.origin
    else:
        if bucket:
            candidate: int | None = next(
                (m.timestamp for m in bucket if m.timestamp >= start), bucket[0].timestamp
            )
        else:
            candidate = last
        if candidate is None or not _origin_plausible(candidate, start, length):
            return None
        origin = candidate
    shape = _shape(rate, length)
    if grid is not None and grid.origin == origin and grid[1:] == shape:
        return grid  # unchanged: the common case, no new object
    return Grid(origin, *shape)


@functools.lru_cache(maxsize=256)
def _shape(rate: int, length: int) -> tuple[int, int]:
    """Period and slots per batch of a grid at ``rate`` for batch length ``length``."""
    return _period_of(rate), _slots_per_batch(rate, length)


class _Run:
    """Scratch copy of the parts of a state one poll changes (private to ``step``).

    Buffers stay tuples (appending to them is rare); streams become a list, rebuilt per
    routed message as a new :class:`FastStream`. Lookup is a linear scan: beam lines have a
    handful of gated streams, and a scan beats building a dict per poll.
    """

    __slots__ = ("future", "length", "mode", "non_gated", "overflow", "streams")

    def __init__(self, state: FastState, mode: Mode) -> None:
        (self.length, _, _, _, _, streams, self.non_gated, self.overflow, self.future, _, _,
         _, _, _) = state
        self.streams = list(streams)
        self.mode = mode

    def _register(self, kind: str, name: str) -> None:
        """Register a gated stream unless it is known (head's disjoint-epoch path)."""
        if not any(s.kind == kind and s.name == name for s in self.streams):
            self.streams.append(new_stream(kind, name))

    def route(self, messages: Iterable[Polled], start: int) -> None:
        """RB-R11/RB-R12: route messages, in order, against the window starting at ``start``.

        The hot path: per message one stream scan, one slot computation and one new
        :class:`FastStream`; the window bounds are computed once per call.
        """
        length = self.length
        end = start + length
        ahead = end + MAX_AHEAD_BATCHES * length
        mode = self.mode
        near = mode.bump_near
        far = end + MAX_ORIGIN_OFFSET_BATCHES * length if mode.ride_along else None
        streams = self.streams
        for message in messages:
            t = message.timestamp
            kind = message.kind
            if far is not None and t > far:  # RB-R22: a disjoint epoch rides along, unseen
                if kind in GATED_KINDS:
                    self._register(kind, message.name)
                self.non_gated = (*self.non_gated, message)
                continue
            if kind not in GATED_KINDS:
                if end < t <= ahead:
                    self.future = (*self.future, message)  # RB-R12 hold-back
                else:
                    self.non_gated = (*self.non_gated, message)
                continue
            name = message.name
            for position, stream in enumerate(streams):  # noqa: B007 - used after the loop
                if stream[1] == name and stream[0] == kind:
                    break
            else:
                position, stream = len(streams), new_stream(kind, name)
                streams.append(stream)  # registration, even when held back below
            _, _, last, diffs, seen, grid, bucket, max_slot, absent = stream
            if grid is None:
                if end < t <= ahead:
                    self.future = (*self.future, message)  # held back, not observed
                    continue
                bucket = (*bucket, message)
            else:
                origin, period, slots = grid  # ``slot_in_batch`` (RB-R6), inlined
                base, rest = divmod(start - origin, period)
                half = period // 2  # the drift tolerance is min(1 ms, half a period)
                if rest > (half if half < DRIFT_TOLERANCE_NS else DRIFT_TOLERANCE_NS):
                    base += 1
                slot = round((t - origin) / period) - base
                if slot >= slots:
                    # the overflow bump; at head only near the window (RB-R23)
                    if max_slot < slots - 1 and (not near or slot < slots * _BUMP_WINDOWS):
                        max_slot = slots - 1
                    self.overflow = (*self.overflow, message)
                else:
                    bucket = (*bucket, message)
                    if slot > max_slot:
                        max_slot = slot
            # observed (RB-R2): ``seen`` is folded into the estimator at the next refresh
            streams[position] = _build(FastStream, (kind, name, last, diffs, (*seen, t), grid,
                                                bucket, max_slot, absent))

    def drain(self) -> list[Polled]:
        """Take the batch contents: non-gated first, then each bucket in stream order."""
        drained = list(self.non_gated)
        self.non_gated = ()
        for i, stream in enumerate(self.streams):
            if stream.bucket or stream.max_slot != -1:
                drained.extend(stream.bucket)
                self.streams[i] = stream._replace(bucket=(), max_slot=-1)
        return drained

    def gap_blocked(self) -> bool:
        """RB-R13 veto: some gridded stream has a message in the active window."""
        return any(s.grid is not None and s.bucket for s in self.streams)

    def recover_from_gap(self, start: int) -> int:
        """RB-R13: jump the window whole batch lengths towards the earliest overflow."""
        stashed = self.drain()
        pending, self.overflow = self.overflow, ()
        held, self.future = self.future, ()
        start += _gap_steps(min(m.timestamp for m in pending), start, self.length) * self.length
        self.route((*stashed, *pending, *held), start)
        return start

    def complete(self, hwm: int, start: int, timeout: int | None) -> bool:
        """RB-R10: timeout first (inclusive; none at head's infinite factor, RB-R19), else
        every gridded stream in its last slot."""
        if timeout is not None and hwm >= start + timeout:
            return True
        gating = False
        for stream in self.streams:
            grid = stream.grid
            if grid is not None:
                if stream.max_slot < grid.slots - 1:
                    return False
                gating = True
        return gating

    def close(self, start: int, pending_length: int | None) -> tuple[Batch, int]:
        """RB-R14/RB-R15: refresh, evict, apply a pending length, drain, re-route."""
        length = self.length
        drained = list(self.non_gated)
        self.non_gated = ()
        kept: list[FastStream] = []
        for kind, name, last, diffs, seen, grid, bucket, _, absent in self.streams:
            if bucket:
                drained.extend(bucket)
                absent = 0
                last, diffs, grid = _refreshed(last, diffs, seen, grid, bucket, start, length)
                seen = ()
            elif absent + 1 < ABSENT_BATCHES_FOR_EVICTION:
                absent += 1
            else:
                continue  # evicted
            if pending_length is not None:  # refreshed again, bucket not yet drained
                last, diffs, grid = _refreshed(last, diffs, seen, grid, bucket, start,
                                               pending_length)
                seen = ()
            kept.append(_build(FastStream, (kind, name, last, diffs, seen, grid, (), -1, absent)))
        if pending_length is not None:
            self.length = pending_length
        self.streams = kept
        end = start + length
        if self.mode.end_at_anchor and not any(s.grid is not None for s in kept):  # RB-R25
            drained += (*self.future, *self.overflow)
            self.future = self.overflow = ()
            if drained:
                end = max(_plausible_anchor([m.timestamp for m in drained], self.length), end)
        if end > INT64_MAX:
            check_batch_end(end)  # RB-R28: refused; the state stepped is untouched
        batch = Batch(start, end, tuple([m.id for m in drained]))
        start = end
        overflow, self.overflow = self.overflow, ()
        if overflow:
            self.route(overflow, start)
        held, self.future = self.future, ()  # including overflow held back just now
        if held:
            self.route(held, start)
        return batch, start

    def buffered_stamps(self) -> list[int]:
        """Timestamps of ``non_gated`` then every bucket: what the backstop weighs (RB-R26)."""
        stamps = [m.timestamp for m in self.non_gated]
        for stream in self.streams:
            stamps.extend(m.timestamp for m in stream.bucket)
        return stamps

    def replace(self, anchor: int) -> int:
        """RB-R26: re-place the window at ``anchor``; every held message is placed anew."""
        taken = [*self.drain(), *self.overflow, *self.future]
        self.overflow = self.future = ()
        beyond = anchor + self.length + MAX_AHEAD_BATCHES * self.length
        for message in taken:
            if message.timestamp > beyond:
                self.non_gated = (*self.non_gated, message)
            else:
                self.route((message,), anchor)
        return anchor


def _refuse_reused_id(held: frozenset[str], messages: tuple[Polled, ...]) -> NoReturn:
    """RB-D4: the rule text's ``_admit`` names the first id of a poll repeated within it or
    among those still held."""
    _admit(held, messages)
    raise AssertionError("unreachable")  # pragma: no cover


def _bootstrap(mode: Mode, state: FastState, messages: tuple[Polled, ...],
               clock: int | None) -> tuple[FastState, tuple[Output, ...]]:
    """RB-R8: the first non-empty poll is the first batch; the window starts at its max
    (head: at its plausible anchor, observing only gated stamps up to it, RB-R21)."""
    stamps = [m.timestamp for m in messages]
    end = _plausible_anchor(stamps, state.batch_length) if mode.bootstrap_anchor \
        else max(stamps)
    streams: dict[tuple[str, str], FastStream] = {}
    for message in messages:
        if message.kind in GATED_KINDS and message.timestamp <= end:
            key = (message.kind, message.name)
            stream = streams.get(key) or new_stream(*key)
            last, diffs = _observe(stream.last, stream.diffs, message.timestamp)
            streams[key] = stream._replace(last=last, diffs=diffs)
    refreshed = tuple(refresh_grid(s, end, state.batch_length) for s in streams.values())
    after = FastState(state.batch_length, state.timeout, state.pending_length, end, end,
                      refreshed, (), (), (), frozenset(), False, clock, clock, state.config)
    return after, (Batch(min(stamps), end, tuple(m.id for m in messages)),)


def _poll(
    config: Config, state: FastState, messages: tuple[Polled, ...], clock: int | None,
    last_close: int | None,
) -> tuple[FastState, tuple[Output, ...]]:
    """One upstream ``batch(messages)`` call (RB-R8 to RB-R15; head: RB-R19 to RB-R26),
    with the clock reading already applied (``clock``, ``last_close``: RB-R18)."""
    pending_length: int | None  # declared: mypyc infers None from the reset below
    _, timeout, pending_length, start, hwm, _, _, _, _, held, _, _, _, bound = state
    mode = _MODES.get(_RESOLVED.get(config.profile)) or mode_of(config.profile)
    latest = 0
    if messages:  # one pass: the ids, the newest stamp and RB-R27's kinds
        ids: list[str] = []
        foreign = False
        latest = messages[0].timestamp
        for message in messages:
            ids.append(message.id)
            t = message.timestamp
            if t > latest:
                latest = t
            if message.kind in HEAD_ONLY_KINDS:
                foreign = True
        if foreign and not mode.head_kinds:
            refuse_head_only_kinds(messages)  # raises RB-D3 (RB-R27)
        grown = held.union(ids)  # RB-D4: ids unique within the poll and among those held
        if len(grown) != len(held) + len(ids):
            _refuse_reused_id(held, messages)
        held = grown
    if start is None or hwm is None:
        if messages:
            return _bootstrap(mode, state, messages, clock)
        if clock == state.clock and last_close == state.last_close:
            return state, ()
        return state._replace(clock=clock, last_close=last_close), ()
    run = _Run(state, mode)
    if messages:  # RB-R9: ``grid.advance_hwm`` inline
        ceiling = start + MAX_AHEAD_BATCHES * run.length
        if latest > ceiling:
            latest = ceiling
        if latest > hwm:
            hwm = latest
        run.route(messages, start)
    if run.overflow and not run.gap_blocked():  # also overflow a close left (empty poll)
        start = run.recover_from_gap(start)
    complete = run.complete(hwm, start, timeout)
    if (not complete and mode.backstop and clock is not None and last_close is not None
            and clock - last_close >= STALL_THRESHOLD_BATCHES * run.length):
        stamps = run.buffered_stamps()
        if stamps:  # RB-R26: the stall backstop; overflow and future do not count
            anchor = _plausible_anchor(stamps, run.length)
            last_close = clock
            if not start <= anchor < start + run.length:
                start = hwm = run.replace(anchor)
                complete = run.complete(hwm, start, timeout)
    if not complete:
        return _build(FastState, (run.length, timeout, pending_length, start, hwm,
                              tuple(run.streams), run.non_gated, run.overflow, run.future,
                              held, False, clock, last_close, bound)), ()
    batch, start = run.close(start, pending_length)
    if pending_length is not None:
        timeout = _timeout_distance(config.factor, pending_length)
        pending_length = None
    if mode.arm_clock:
        last_close = clock  # RB-R24
    # Nothing but the batch left the buffers (re-routing only moves messages between them).
    after = _build(FastState, (run.length, timeout, pending_length, start, hwm,
                               tuple(run.streams), run.non_gated, run.overflow, run.future,
                               held.difference(batch.ids), False, clock, last_close, bound))
    return after, (batch,)


def to_spec(state: FastState) -> State:
    """The spec form of a fast state: ``seen`` folded into each estimator (RB-R2)."""
    streams = []
    for kind, name, last, diffs, seen, grid, bucket, max_slot, absent in state.streams:
        last, diffs = _observe_all(last, diffs, seen)
        streams.append(Stream(kind, name, last, diffs, grid, bucket, max_slot, absent))
    return State(state.batch_length, state.timeout, state.pending_length, state.window,
                 state.hwm, tuple(streams), state.non_gated, state.overflow, state.future,
                 state.held, state.ended, state.clock, state.last_close, config=state.config)


def from_spec(state: State) -> FastState:
    """The fast form of a spec state (nothing routed since the last refresh)."""
    streams = tuple(
        FastStream(s.kind, s.name, s.last, s.diffs, (), s.grid, s.bucket, s.max_slot, s.absent)
        for s in state.streams
    )
    return FastState(state.batch_length, state.timeout, state.pending_length, state.window,
                     state.hwm, streams, state.non_gated, state.overflow, state.future,
                     state.held, state.ended, state.clock, state.last_close, state.config)


# The fast helpers: ``grid.py`` and ``estimator.py`` transcribed with the same operations,
# typed for the compiler (see the module docstring; checked in lockstep by
# tests/rate_aware_batcher/test_rb_fast_helpers.py).

#: Below this every diff, and the sum of two, is exact as a double, so int/int and
#: int/float divisions give the same double (the compiled build divides in doubles).
_EXACT = 2**52


def _observe(last: int | None, diffs: tuple[int, ...],
             t: int) -> tuple[int | None, tuple[int, ...]]:
    """``estimator.observe`` (RB-R2)."""
    if last is None:
        return t, diffs
    if t <= last:
        return last, diffs
    if len(diffs) >= DIFF_BUFFER_SIZE:
        return t, (*diffs[len(diffs) - DIFF_BUFFER_SIZE + 1:], t - last)
    return t, (*diffs, t - last)


def _observe_all(last: int | None, diffs: tuple[int, ...],
                 stamps: tuple[int, ...]) -> tuple[int | None, tuple[int, ...]]:
    """``estimator.observe_all`` (RB-R2)."""
    if not stamps:
        return last, diffs
    ring = list(diffs)
    for t in stamps:
        if last is None:
            last = t
        elif t > last:
            ring.append(t - last)
            last = t
    return last, tuple(ring[-DIFF_BUFFER_SIZE:])


def _integer_rate_hz(diffs: tuple[int, ...]) -> int | None:
    """``estimator.integer_rate_hz`` (RB-R3) in doubles: one sort serves both the seed and
    the extremes. A ring holding a diff of 2**52 ns or more (52 days between two pulses)
    takes the rule text's, whose int/int divisions are exact where doubles are not."""
    n = len(diffs)
    if n < MIN_DIFFS_FOR_GATE:
        return None
    ordered = sorted(diffs)
    high = ordered[n - 1]
    if high >= _EXACT:
        return estimator.integer_rate_hz(diffs)
    middle = n // 2
    seed: float = ordered[middle] if n % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    period = seed
    if round(ordered[0] / seed) != 1 or round(high / seed) != 1:
        periods: list[float] = []
        for d in diffs:  # RB-R3's refinement: a diff spanning k pulses counts as d / k
            k = round(d / seed)
            if k >= 1:
                periods.append(d / k)
        if periods:
            periods.sort()
            middle = len(periods) // 2
            period = periods[middle] if len(periods) % 2 \
                else (periods[middle - 1] + periods[middle]) / 2
    raw = 1e9 / period
    rate = round(raw)  # RB-R3's snap, ``estimator.snap_rate``
    if rate < 1:
        return None
    tolerance = SNAP_RELATIVE_TOLERANCE * rate
    if tolerance < SNAP_ABSOLUTE_TOLERANCE_HZ:
        tolerance = SNAP_ABSOLUTE_TOLERANCE_HZ
    if abs(raw - rate) > tolerance:
        return None
    return rate


def _timeout_distance(factor: float, length: int) -> int | None:
    """``grid.timeout_distance`` (RB-R10, RB-R19)."""
    if factor == float("inf"):
        return None
    return int(factor * (length / 1e9) * 1_000_000_000)


def _period_of(rate: int) -> int:
    """``grid.period_of`` (RB-R4)."""
    return round(1e9 / rate)


def _slots_per_batch(rate: int, length: int) -> int:
    """``grid.slots_per_batch`` (RB-R4)."""
    return round(rate * (length / 1e9))


def _sub_rate(rate: int, length: int) -> bool:
    """``grid.sub_rate`` (RB-R7)."""
    return rate * (length / 1e9) < 1.0


def _origin_plausible(origin: int, start: int, length: int) -> bool:
    """``grid.origin_plausible`` (RB-R7)."""
    return abs(origin - start) <= MAX_ORIGIN_OFFSET_BATCHES * length


def _plausible_anchor(stamps: list[int], length: int) -> int:
    """``grid.plausible_anchor`` (RB-R20)."""
    ordered = sorted(stamps)
    horizon = MAX_AHEAD_BATCHES * length
    best_size = 0
    best_end = previous = ordered[0]
    size = 0
    for t in ordered:
        if t - previous > horizon:
            size = 0
        size += 1
        previous = t
        if size >= best_size:
            best_size, best_end = size, t
    return best_end


def _gap_steps(earliest: int, start: int, length: int) -> int:
    """``grid.gap_steps`` (RB-R13)."""
    steps = (earliest - start) // length
    return steps if steps > 0 else 0
