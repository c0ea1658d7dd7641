"""The fast path of the event-time batcher: ``machine.py`` transcribed for throughput.

It computes exactly what the rule text (:mod:`timealign.event_time_batcher.machine`)
computes, on a private state form (:class:`FastState`) converted to and from the spec's
:class:`~timealign.event_time_batcher.model.State` by :func:`to_spec` and
:func:`from_spec`. The differences are mechanical (profiled on the benchmark trace, issue
35: the old form spent most of a step copying a frozenset of every held id and the tuples
of members and batches, and building a frozen attrs ``Member`` per message):

- states and batches are plain classes that mypyc compiles to native classes (fields are
  struct slots); a batch keeps its members as three parallel lists (keys, event times,
  ids) of which its first ``count`` items are its own, plus ``place``, the position of
  each key in those lists (the EB-R9/R10 key lookup is one dict lookup instead of a scan).
  Joining appends to the lists in place when the batch's prefix is the whole list, and
  copies the prefix first otherwise (a state stepped twice): items are only ever appended,
  so a key appears at most once in a batch's lists and every state sharing them still
  sees its own prefix unchanged. ``Member`` objects are built only by :func:`to_spec`
  and for the ``members`` the tests read;
- the EB-R4 check is one set lookup in a :class:`_Ledger`, the ids of every member of an
  open batch, changed in place: a ledger is shared along a chain of states, and a state
  owns it (may read and change it) only while its ``version`` is the ledger's; a step
  that changes the ledger gives the new state the next version, so the older states no
  longer own it and rebuild their own from their batches if stepped again (the explorer
  and the stateful test do; a replay never does). Nothing is changed before every check
  of the input has passed, so a refused input leaves the state as it was;
- the lookup (EB-R7) and the clipping (EB-R8) are plain loops over the batches.

The split (EB-R11, EB-R12; about one message in 25 on the benchmark trace) uses the rule
text's split point and re-homes the members on the lists (building a ``Member`` each took
more than the rest of the step). The bounded
explorer and the stateful test step this in lockstep with the rule text (equal states
through :func:`to_spec`, equal outputs, equal refusals); it is also what the compiled
build compiles (``timealign.native``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, final

import attrs

from timealign.errors import INT64_MAX, foreign_state, wrong_object
from timealign.event_time_batcher.arithmetic import split_point
from timealign.event_time_batcher.machine import (
    _require_timeout_fits,
    refuse_backwards,
    refuse_held_id,
    refuse_unknown_input,
)
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


@final
class FastBatch:
    """An open batch: closed window ``[start, end]``, its members the first ``count`` items
    of ``keys``/``times``/``ids`` (arrival order); ``place[key]`` is the position of
    ``key`` in those lists (a member of this batch when below ``count``). The lists and
    the dict may be longer and shared with later batches; what lies below ``count`` never
    changes. Never changed once built."""

    __slots__ = ("count", "end", "ids", "keys", "place", "start", "times")

    def __init__(self, start: int, end: int, keys: list[str], times: list[int],
                 ids: list[str], place: dict[str, int], count: int) -> None:
        self.start = start
        self.end = end
        self.keys = keys
        self.times = times
        self.ids = ids
        self.place = place
        self.count = count

    @property
    def members(self) -> tuple[Member, ...]:
        """The spec's members, in arrival order."""
        keys, times, ids = self.keys, self.times, self.ids
        return tuple([Member(keys[i], times[i], ids[i]) for i in range(self.count)])


def _batch(start: int, end: int, members: Sequence[Member]) -> FastBatch:
    """A batch holding ``members`` in its own lists."""
    keys = [m.key for m in members]
    place: dict[str, int] = {}
    for i in range(len(keys)):
        place.setdefault(keys[i], i)  # the first, as the rule text's lookup finds it
    return FastBatch(start, end, keys, [m.event_time for m in members],
                     [m.id for m in members], place, len(keys))


@final
class _Params:
    """The config's fields the step reads, read once per config object (a generic
    attribute read of the attrs ``Config`` costs several native slot reads), and the
    EB-R2 limit of an event time, ``INT64_MAX - W - D``, with ``guard``, that limit capped
    at 2**61 so the common test compares small integers (mypyc's fast path; INT64_MAX
    itself is a boxed integer there)."""

    __slots__ = ("config", "delay", "guard", "leap", "limit", "window")

    def __init__(self, config: Config) -> None:
        self.config = config
        self.window: int = config.batching_window
        self.delay: int = config.max_message_delay
        self.leap: int = config.message_leap_limit
        self.limit: int = INT64_MAX - self.window - self.delay
        self.guard: int = min(self.limit, 2**61)


def _params(config: Config, state: FastState) -> _Params:
    params = state.params
    if params.config is not config:
        params = _Params(config)  # an equal config (DRV-R10 checked it), another object
    return params


@final
class _Ledger:
    """The ids of every member of the open batches of the state that owns it (EB-R4)."""

    __slots__ = ("ids", "version")

    def __init__(self, ids: set[str]) -> None:
        self.ids = ids
        self.version = 0


@final
class FastState:
    """The spec's state (open batches in creation order, the last ``at``) plus the EB-R4
    ledger, read only while ``version`` is the ledger's (see the module docstring);
    ``params.config`` is the config the state was built under (DRV-R10)."""

    __slots__ = ("batches", "ledger", "now", "params", "version")

    def __init__(self, batches: list[FastBatch], now: int, ledger: _Ledger,
                 version: int, params: _Params) -> None:
        self.batches = batches  # never changed once built, like the state
        self.now = now  # NO_TIME until the first message or tick: a native int field
        self.ledger = ledger
        self.version = version
        self.params = params

    @property
    def config(self) -> Config:
        """The config this state was built under (DRV-R10)."""
        return self.params.config

    @property
    def held(self) -> frozenset[str]:
        """The ids held by open batches, as this state's ledger records them."""
        return frozenset(_own(self).ids)

    def __repr__(self) -> str:
        return f"FastState({to_spec(self)!r})"


def _own(state: FastState) -> _Ledger:
    """The ledger ``state`` may read and change: its own, or a new one built from its
    batches when a later state has changed the shared one."""
    ledger = state.ledger
    if state.version == ledger.version:
        return ledger
    return _Ledger({b.ids[i] for b in state.batches for i in range(b.count)})


def _state(batches: list[FastBatch], now: int, ledger: _Ledger,
           params: _Params) -> FastState:
    return FastState(batches, now, ledger, ledger.version, params)


Step = tuple[FastState, tuple[Output, ...]]

#: The state's ``now`` before the first message or tick (the spec's ``None``): below every
#: time EB-R2 accepts, so EB-R3's test needs no case of its own, and a native integer
#: field (compiled, an ``int | None`` field boxes each processing time in a new object).
NO_TIME: Final = -1

# Compiled (mypyc), a module-level name that is not ``Final`` is looked up in the module's
# dict at every use; these aliases of what the hot path names are C statics instead.
_FAST_STATE: Final = FastState
_CONFIG: Final = Config
_MESSAGE: Final = Message
_TICK: Final = Tick
_FLUSH: Final = Flush

# Outputs are built by filling their slots, as approximate_time/fast.py does: the attrs
# ``__init__`` of a frozen class goes through ``object.__setattr__`` per field (a Timer
# took longer than the rest of a step that creates a batch). Same instances; the check
# below keeps this in step with the classes (no other field, no converter, no validator).
if ([(f.name, f.converter, f.validator) for f in attrs.fields(Timer)] != [("at", None, None)]
        or [(f.name, f.converter, f.validator) for f in attrs.fields(Batch)]
        != [("start", None, None), ("end", None, None), ("ids", None, None)]
        or any([(f.name, f.converter, f.validator) for f in attrs.fields(kind)]
               != [("id", None, None), ("reason", None, None)]
               for kind in (Rejected, Dropped))):
    raise TypeError("fast.py fills Timer, Batch, Rejected, Dropped by slot: fields changed")
_instance: Final = object.__new__
_TIMER: Final = Timer
_BATCH: Final = Batch
_REJECTED: Final = Rejected
_DROPPED: Final = Dropped
_set_at: Final[Any] = Timer.__dict__["at"].__set__
_set_start: Final[Any] = Batch.__dict__["start"].__set__
_set_end: Final[Any] = Batch.__dict__["end"].__set__
_set_ids: Final[Any] = Batch.__dict__["ids"].__set__
_set_rejected_id: Final[Any] = Rejected.__dict__["id"].__set__
_set_rejected_reason: Final[Any] = Rejected.__dict__["reason"].__set__
_set_dropped_id: Final[Any] = Dropped.__dict__["id"].__set__
_set_dropped_reason: Final[Any] = Dropped.__dict__["reason"].__set__


def _timer(at: int) -> Timer:
    output: Timer = _instance(_TIMER)
    _set_at(output, at)
    return output


def _rejected(identity: str, reason: str) -> Rejected:
    output: Rejected = _instance(_REJECTED)
    _set_rejected_id(output, identity)
    _set_rejected_reason(output, reason)
    return output


def _dropped(identity: str, reason: str) -> Dropped:
    output: Dropped = _instance(_DROPPED)
    _set_dropped_id(output, identity)
    _set_dropped_reason(output, reason)
    return output


def _closed(batch: FastBatch) -> Batch:
    output: Batch = _instance(_BATCH)
    _set_start(output, batch.start)
    _set_end(output, batch.end)
    ids = batch.ids
    _set_ids(output, tuple(ids) if len(ids) == batch.count else tuple(ids[:batch.count]))
    return output


def initial(config: Config) -> FastState:
    """No open batch and no processing time yet, bound to ``config`` (DRV-R10)."""
    return FastState([], NO_TIME, _Ledger(set()), 0, _Params(config))


def step(config: object, state: object, item: Input) -> Step:
    """Equivalent to ``machine.step``; :class:`InvalidInput` (state untouched) on bad input.

    ``config`` and ``state`` are declared ``object`` so that, compiled, a wrong one still
    reaches the check below (a typed parameter would be refused by mypyc first).
    """
    if type(state) is not _FAST_STATE or type(config) is not _CONFIG:
        raise wrong_object("event_time_batcher.fast.step", config, state, Config, FastState)
    bound = state.params.config
    if bound is not config and bound != config:
        raise foreign_state(bound)  # DRV-R10, before anything changes
    if isinstance(item, _MESSAGE):
        return _message(config, state, item)
    if isinstance(item, _TICK):
        at = item.at
        _require_forward(state.now, at)
        return _close_expired(_params(config, state), state.batches, at, state, ())
    if isinstance(item, _FLUSH):
        return (FastState([], state.now, _Ledger(set()), 0, state.params),
                tuple([_closed(b) for b in reversed(state.batches)]))
    refuse_unknown_input(item)  # raises EB-R2


def _require_forward(now: int, at: int) -> None:
    """EB-R3: the rule text's ``refuse_backwards`` raises (``now`` is never below
    :data:`NO_TIME`, below every accepted ``at``)."""
    if at < now:
        refuse_backwards(now, at)




def _message(config: Config, state: FastState, m: Message) -> Step:
    # The event time is read as the object the message holds and kept so in the members'
    # list (compiled, the typed read unboxes it and the append boxes a new integer).
    view: Any = m
    stamp: Any = view.event_time
    now: int = view.at
    t: int = stamp
    key: str = view.key
    identity: str = view.id
    _require_forward(state.now, now)
    ledger = _own(state)
    if identity in ledger.ids:
        refuse_held_id(identity)  # raises EB-R4
    params = _params(config, state)
    batches = state.batches
    if t < now - params.delay:  # EB-R5
        return _state(batches, now, ledger, params), (_rejected(identity, TOO_OLD),)
    if t > now + params.leap:  # EB-R6
        return _state(batches, now, ledger, params), (_rejected(identity, TOO_FAR_IN_FUTURE),)
    if t >= params.guard and t > params.limit:  # EB-R2, DRV-D9: t + W + D > INT64_MAX
        _require_timeout_fits(config, t)  # raises EB-R2
    # Every check has passed: from here on the ledger may change.
    index = -1
    for i, target in enumerate(batches):  # EB-R7: the first batch holding t
        if target.start <= t <= target.end:
            index = i
            break
    if index < 0:  # EB-R8: a new batch [t, t + W], clipped at the next batch's start
        end = t + params.window
        for batch in batches:
            if t < batch.start < end:
                end = batch.start
        ledger.ids.add(identity)
        ledger.version += 1
        batches = batches[:]
        batches.append(FastBatch(t, end, [key], [stamp], [identity], {key: 0}, 1))
        return _timer_or_close(params, batches, now, end, (), ledger)
    target = batches[index]
    count = target.count
    at = target.place.get(key, count)
    if at >= count:  # EB-R9: joins (no member of this batch has the key)
        keys, times, ids, place = target.keys, target.times, target.ids, target.place
        if len(keys) != count:  # another state appended to these lists: this one's own copy
            keys, times, ids = keys[:count], times[:count], ids[:count]
            place = {keys[i]: i for i in range(count)}
        keys.append(key)
        held: list[Any] = times  # the message's own integer (see above)
        held.append(stamp)
        ids.append(identity)
        place[key] = count
        ledger.ids.add(identity)
        ledger.version += 1
        batches = batches[:]
        batches[index] = FastBatch(target.start, target.end, keys, times, ids, place,
                                   count + 1)
        return _state(batches, now, ledger, params), ()
    existing = target.times[at]
    if existing == t:  # EB-R10
        return _state(batches, now, ledger, params), (_rejected(identity, DUPLICATE),)
    cut = split_point(t, existing)  # EB-R11, EB-R12
    lower, upper, lost = _split(target, key, t, identity, cut)
    ledger.ids.add(identity)
    for output in lost:
        ledger.ids.discard(output.id)
    ledger.version += 1
    batches = batches[:]
    batches[index] = FastBatch(target.start, cut, *lower)
    batches.append(FastBatch(cut, target.end, *upper))
    return _timer_or_close(params, batches, now, cut, tuple(lost), ledger)


_Part = tuple[list[str], list[int], list[str], dict[str, int], int]


def _split(target: FastBatch, key: str, t: int, identity: str, cut: int
           ) -> tuple[_Part, _Part, list[Dropped]]:
    """EB-R12 (``machine._rehome``) on the lists: the members of ``target`` then the new
    one, by arrival, go below ``cut`` or above; a later same-key member on the same side
    replaces the earlier one, which is ``Dropped``. A side is a dict key -> position in
    arrival order: removing a key and inserting it again puts it last, as the rule text's
    remove-then-append does (a side holds at most one member per key)."""
    keys, times, ids = target.keys[:target.count], target.times[:target.count], \
        target.ids[:target.count]
    keys.append(key)
    times.append(t)
    ids.append(identity)
    sides: tuple[dict[str, int], dict[str, int]] = ({}, {})
    lost: list[Dropped] = []
    for i in range(len(keys)):
        side = sides[1] if times[i] >= cut else sides[0]
        clash = side.pop(keys[i], -1)
        if clash >= 0:
            lost.append(_dropped(ids[clash], OVERWRITTEN))
        side[keys[i]] = i
    lower, upper = sides
    return (_part(lower, keys, times, ids), _part(upper, keys, times, ids), lost)


def _part(side: dict[str, int], keys: list[str], times: list[int], ids: list[str]) -> _Part:
    """The lists of one side of a split (positions into the arrival-order lists)."""
    held = list(side.values())
    return ([keys[i] for i in held], [times[i] for i in held], [ids[i] for i in held],
            {keys[held[j]]: j for j in range(len(held))}, len(held))


def _timer_or_close(params: _Params, batches: list[FastBatch], now: int, end: int,
                    before: tuple[Output, ...], ledger: _Ledger) -> Step:
    """EB-R13: ask for a tick at ``end + D``, or close every expired batch if it has passed.
    ``ledger`` is owned (its version is the one the new state gets)."""
    timeout = end + params.delay
    if now < timeout:
        return _state(batches, now, ledger, params), (*before, _timer(timeout))
    owner = _state(batches, now, ledger, params)
    return _close_expired(params, batches, now, owner, before)


def _close_expired(params: _Params, batches: list[FastBatch], now: int, owner: FastState,
                   before: tuple[Output, ...]) -> Step:
    """EB-R13, EB-R14: batches with ``end + D <= now`` close, in creation order; the state
    at ``now`` with ``batches``, whose ledger is ``owner``'s."""
    delay = params.delay
    kept: list[FastBatch] = []
    closed: list[Batch] = []
    for batch in batches:
        if batch.end + delay > now:
            kept.append(batch)
        else:
            closed.append(_closed(batch))
    if not closed:
        return FastState(batches, now, owner.ledger, owner.version, params), before
    ledger = _own(owner)
    for output in closed:
        ledger.ids.difference_update(output.ids)
    ledger.version += 1
    return _state(kept, now, ledger, params), (*before, *closed)


def to_spec(state: FastState) -> State:
    """The spec's state: the batches as :class:`OpenBatch`, without the ledger."""
    now = state.now
    return State(tuple([OpenBatch(b.start, b.end, b.members) for b in state.batches]),
                 None if now == NO_TIME else now, config=state.params.config)


def from_spec(state: State) -> FastState:
    """The fast form of a spec state, with a ledger collected from its batches."""
    batches = [_batch(b.start, b.end, b.members) for b in state.batches]
    now = NO_TIME if state.now is None else state.now
    return FastState(batches, now, _Ledger({m.id for b in state.batches for m in b.members}),
                     0, _Params(state.config))
