"""A faster transcription of :func:`timealign.approximate_time.machine.step` (same states,
same outputs), kept outside the rule text.

``machine.py`` is the readable rule text and what ``ALGORITHM`` (the registry) runs; this
module is ``ALGORITHM.machine.fast``, run by the Spark adapter and the benchmarks. It differs only
in mechanics:

- its state (:class:`FastState`) and each topic's *lane* (:class:`Lane`, ``P[k]`` then
  ``D[k]``) are plain classes that mypyc compiles to native classes (their fields are
  struct slots, read and built without a dictionary or ``tuple.__new__``), marked acyclic
  (they never refer back to themselves, so the cyclic GC neither tracks nor traverses them
  nor counts them toward a collection: about 11 % of a step went to collections) with a
  free list of one (a step frees the previous state and lane just before building the
  next); a lane holds its messages, and their stamps beside them, as a prefix of two
  lists. Appending a message extends the lists in place when the lane's prefix is the
  whole list, and copies the prefix first otherwise (a state stepped twice): list items
  are only ever appended, never changed, so every other state that shares the lists still
  sees its own prefix unchanged, and no state ever changes once built. :func:`to_spec`
  and :func:`from_spec` convert to and from the spec's state;
- the config's fields the step reads are read once per config (:class:`_Params`, kept in
  the state and rebuilt when a step is handed another config object), and so is its
  arithmetic's table (:data:`timealign.approximate_time.arithmetic.BOOK`): the scaling is
  the table's function (ROS 2's exact product inlined where positive), its time check the
  fast form :data:`TIME_CHECKS` maps the table's function to (a function it has no form of
  is refused), never an arithmetic flag;
- the common path (a message queued behind others) uses exact-type checks and builds one
  lane, the list of lanes and the state; AT-R20's limit is compared with an unboxed bound
  first (``_Params.short``), as the limits themselves are too large for mypyc's unboxed
  integers;
- ``process()`` and the overflow work on a scratch form in which nothing is ever copied
  or shifted: per topic the lane's lists and three indices, ``lo[k]`` (the oldest held,
  the first of ``P[k]``), ``sp[k]`` (the front of ``D[k]``) and ``hi[k]`` (the lane's
  end). Deleting a front, moving a message to the past, destroying a past buffer,
  recovering and publishing only move indices; one slice per changed lane when the state
  is frozen again drops the consumed prefix, so the state never keeps a discarded message;
- the loop keeps every scalar of the state in a local, finds both boundaries in one pass
  (min/max/index cost more for a few topics), refreshes only the front that changed,
  reads stamps from the stamp lists instead of the messages, tests the drop flags only
  when one may be set, skips the scaling when the age is 0 (``scale(0) == 0`` in both
  arithmetics), uses the exact integer product for positive ages in ROS 2 arithmetic,
  remembers which topics have a past buffer (so destroying the pasts does not scan every
  topic), and builds the candidate tuple (:func:`_fronts`) only when it is published or
  kept in the state (a candidate made in the loop is the oldest held message of every
  topic until the next publish);
- ``Dropped`` and ``Published`` are built by filling their slots (see ``_Build``).

It relies on the state shape the spec states (and the stateful test checks): with no pivot
every past buffer is empty, so the deletions of AT-R8/AT-R9 always take the oldest held
message. The differential tests (tests/approximate_time/test_at_differential.py) and the
stateful test compare this step with the rule text, state for state and output for
output, and with the literal §17 model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, final

import attrs

from timealign.approximate_time import ros1
from timealign.approximate_time.arithmetic import BOOK, scale_ros2
from timealign.approximate_time.machine import _check_ros1, _time_fits, check_message
from timealign.approximate_time.model import (
    CLOSER_THAN_BOUND,
    INT64_MAX,
    INTERVAL_TOO_WIDE,
    NO_PIVOT,
    OUT_OF_ORDER,
    PIVOT_REFUSED,
    QUEUE_OVERFLOW,
    SUPERSEDED,
    Config,
    Dropped,
    End,
    Input,
    Message,
    Output,
    Pending,
    Published,
    State,
    Warned,
)
from timealign.errors import foreign_state, wrong_object

try:
    from mypy_extensions import mypyc_attr
except ImportError:  # pragma: no cover - a pure install without mypy's extensions
    def mypyc_attr(*_: object, **__: object) -> Any:  # type: ignore[misc]
        """The no-op mypyc's class marker is at run time (mypyc reads it when compiling)."""
        return lambda cls: cls


@final
@mypyc_attr(acyclic=True, free_list_len=1)
class Lane:
    """The messages one topic holds, past buffer then deque, oldest first:
    ``msgs[:end]``, with their stamps ``stamps[:end]``; the first ``split`` form the past
    buffer. The lists may be longer (another state appended to them) and may be shared
    with other lanes; items below a lane's ``end`` never change. Never changed once built.
    """

    __slots__ = ("end", "msgs", "split", "stamps")

    def __init__(self, msgs: list[Message], stamps: list[int], end: int, split: int) -> None:
        self.msgs = msgs
        self.stamps = stamps
        self.end = end
        self.split = split


def size(held: Lane) -> int:
    """How many messages a lane holds (past plus deque)."""
    return held.end


def messages(held: Lane) -> tuple[Message, ...]:
    """All messages a lane holds, oldest first."""
    return tuple(held.msgs[:held.end])


def lane(held: tuple[Message, ...], split: int) -> Lane:
    """A lane holding ``held`` (oldest first) whose first ``split`` are the past."""
    return Lane(list(held), [m.stamp for m in held], len(held), split)


#: The largest integer mypyc keeps unboxed (a tagged machine word) on 64-bit platforms.
_SHORT_MAX: Final = (1 << 62) - 1


@final
@mypyc_attr(acyclic=True)
class _Params:
    """The fields of a config the step reads, read once (generic attribute reads of the
    attrs ``Config`` cost more than a native class's slots)."""

    __slots__ = (
        "bounds",
        "checked",
        "config",
        "denominator",
        "exact",
        "latest",
        "max_interval",
        "numerator",
        "queue_size",
        "scale",
        "short",
        "topics",
    )

    def __init__(self, config: Config) -> None:
        self.config = config
        self.topics: int = config.topics
        self.queue_size: int = config.queue_size
        self.bounds: tuple[int, ...] = config.inter_message_lower_bounds
        # AT-R20: the latest stamp per topic whose virtual time fits in int64
        self.latest: tuple[int, ...] = tuple(INT64_MAX - b for b in self.bounds)
        # A stamp at or below ``short`` is below every ``latest``. Compiled, ``latest`` is
        # mostly above mypyc's unboxed ("short") integers (< 2**62), and comparing a stamp
        # with it went through PyObject_RichCompare (about 300 instructions a step);
        # ``short`` is unboxed, so the common case is one machine comparison.
        self.short: int = min((*self.latest, _SHORT_MAX))
        self.max_interval: int = config.max_interval_duration
        rules = BOOK.rules(config.arithmetic)
        self.numerator: int = config.scale_numerator
        self.denominator: int = config.scale_denominator
        scale = rules.of(scale_ros2)
        # ROS 2's scaling is inlined as the exact product; any other is called
        self.exact: bool = scale is scale_ros2
        numerator, denominator = self.numerator, self.denominator
        self.scale: Callable[[int], int] = lambda d: scale(d, numerator, denominator)
        check = rules.of(_time_fits)
        if check not in TIME_CHECKS:
            raise LookupError(f"the fast path has no form of {check.__qualname__} "
                              "(slot _time_fits): run the rule text")
        self.checked: bool = TIME_CHECKS[check]


@final
@mypyc_attr(acyclic=True, free_list_len=1)
class FastState:
    """The fast path's form of :class:`~timealign.approximate_time.model.State`: one
    :class:`Lane` per topic instead of ``D[k]`` and ``P[k]`` (a list, to save converting
    it: like the state, never changed once built).

    ``candidate`` is empty when there is no pivot (``pivot == NO_PIVOT``);
    ``candidate_start``/``candidate_end``/``pivot_time`` are then 0. ``params`` caches the
    config's fields (None until a step has run). ``config`` is the config the state was
    built under: ``step`` refuses another (DRV-R10).
    """

    __slots__ = (
        "candidate",
        "candidate_end",
        "candidate_start",
        "config",
        "dropped",
        "lanes",
        "params",
        "pivot",
        "pivot_time",
        "warned",
    )

    def __init__(self, lanes: list[Lane], candidate: tuple[Message, ...],
                 candidate_start: int, candidate_end: int, pivot: int, pivot_time: int,
                 dropped: tuple[bool, ...], warned: tuple[bool, ...],
                 params: _Params | None, config: Config) -> None:
        self.lanes = lanes
        self.candidate = candidate
        self.candidate_start = candidate_start
        self.candidate_end = candidate_end
        self.pivot = pivot
        self.pivot_time = pivot_time
        self.dropped = dropped
        self.warned = warned
        self.params = params
        self.config = config

    def __repr__(self) -> str:
        return f"FastState({to_spec(self)!r})"


def initial(config: Config) -> FastState:
    """The empty synchronizer, bound to ``config`` (DRV-R10)."""
    n = config.topics
    return FastState([Lane([], [], 0, 0) for _ in range(n)], (), 0, 0, NO_PIVOT, 0,
                     (False,) * n, (False,) * n, None, config)


# Compiled (mypyc), a module-level name that is not ``Final`` is looked up in the module's
# dict at every use (measured: about seven lookups per step); these ``Final`` aliases of
# the classes and reasons the hot path names are kept in C statics instead.
_FAST_STATE: Final = FastState
_MESSAGE: Final = Message
_END: Final = End
_CONFIG: Final = Config
_INTERVAL_TOO_WIDE: Final = INTERVAL_TOO_WIDE
_PIVOT_REFUSED: Final = PIVOT_REFUSED
_SUPERSEDED: Final = SUPERSEDED
_QUEUE_OVERFLOW: Final = QUEUE_OVERFLOW

# Dropped and Published outputs are built by filling their slots directly: the attrs
# ``__init__`` of a frozen class goes through ``object.__setattr__`` per field and took
# about 1.7 times as long (one Dropped per message on a typical trace). Same instances;
# the check below keeps this in step with the classes (no other field, no converter).
if ([(f.name, f.converter, f.validator) for f in attrs.fields(Dropped)]
        != [("id", None, None), ("reason", None, None)]
        or [(f.name, f.converter, f.validator) for f in attrs.fields(Published)]
        != [("messages", None, None)]):
    raise TypeError("fast.py fills Dropped and Published by slot: their fields changed")
_instance: Final = object.__new__
_DROPPED: Final = Dropped
_PUBLISHED: Final = Published


@final
class _Build:
    """Where the outputs are built. ``object.__setattr__`` sets a slot past the frozen
    class's own ``__setattr__`` (as attrs' ``__init__`` does); written in a method of a
    native class, mypyc compiles it to one direct C call (``PyObject_GenericSetAttr``)
    instead of calling a slot's setter through the generic call protocol (an argument
    tuple per call: measured about 500 instructions less per ``Dropped``). The class must
    have no attributes: mypyc would take an ``id`` or ``reason`` of its own for the
    output's."""

    @staticmethod
    def dropped(message_id: str, reason: str) -> Dropped:
        output: Dropped = _instance(_DROPPED)
        object.__setattr__(output, "id", message_id)
        object.__setattr__(output, "reason", reason)
        return output

    @staticmethod
    def published(messages: tuple[Message, ...]) -> Published:
        output: Published = _instance(_PUBLISHED)
        object.__setattr__(output, "messages", messages)
        return output



#: The slot ``_time_fits`` of the rule text: each function a table may put in it -> whether
#: the step calls :func:`_check_time` (the fast form of ros1's ``_check_ros1``) or
#: nothing (ROS 2's: AT-R2 and AT-R20 already hold it).
TIME_CHECKS: dict[Any, bool] = {_time_fits: False, _check_ros1: True}


def _check_time(config: Config, state: FastState, topic: int, stamp: int) -> None:
    """AT-R19 over the stamps in play: every held message and the pivot time."""
    in_play = [m.stamp for held in state.lanes for m in messages(held)]
    if state.pivot != NO_PIVOT:
        in_play.append(state.pivot_time)
    bounds = config.inter_message_lower_bounds
    ros1.check_message(stamp, bounds[topic], max(bounds),
                       config.scale_numerator / config.scale_denominator, in_play)


# The scalar part of the state that process() reads and writes:
# (candidate, candidate_start, candidate_end, pivot, pivot_time).
_Pivot = tuple[tuple[Message, ...], int, int, int, int]
_NONE: Final[_Pivot] = ((), 0, 0, NO_PIVOT, 0)


def step(config: object, state: object,
         item: Input) -> tuple[FastState, tuple[Output, ...]]:
    """Equivalent to ``machine.step``; see the module docstring."""
    # config and state are declared ``object`` so that, compiled, a wrong one still reaches
    # this check (a typed parameter would be refused by mypyc with its own TypeError first).
    if type(state) is not _FAST_STATE or type(config) is not _CONFIG:
        raise wrong_object("approximate_time.fast.step", config, state, Config, FastState)
    if state.config is not config and state.config != config:
        raise foreign_state(state.config)  # DRV-R10, before anything changes
    if type(item) is not _MESSAGE:
        if type(item) is _END:
            return end(config, state)  # AT-R17
        item = check_message(config, item)  # raises AT-R2
    params = state.params
    if params is None or params.config is not config:
        params = _Params(config)
    # AT-R2 with exact type tests (they also rule out bools); for two ints,
    # ``(topic | stamp) >> 63 == 0`` holds exactly when both are in [0, INT64_MAX] (-1
    # stands for a field of the wrong type). The fields are read through an untyped view:
    # compiled (mypyc), reading a field declared ``int`` checks its type and would raise
    # TypeError before AT-R2 could name the field. Each is converted to a machine integer
    # once, into ``i`` and ``stamp`` (compiled, every use of an ``object`` narrowed by
    # ``type(x) is int`` converts it again).
    fields: Any = item
    topic: object = fields.topic
    when: object = fields.stamp
    boxed: Any = when  # kept as it came: the stamp lists hold the message's own int
    name: object = fields.id
    i = topic if type(topic) is int else -1
    stamp = when if type(when) is int else -1
    if (i | stamp) >> 63 or i >= params.topics or type(name) is not str or not name:
        check_message(config, item)  # raises AT-R2
        raise AssertionError(f"AT-R2 accepted {item!r}")  # pragma: no cover
    if stamp > params.short and stamp > params.latest[i]:
        check_message(config, item)  # raises AT-R20
        raise AssertionError(f"AT-R20 accepted {item!r}")  # pragma: no cover
    if params.checked:  # AT-R19: ROS 1's 32-bit time, a slow path
        _check_time(config, state, i, stamp)
    lanes = state.lanes
    old = lanes[i]
    msgs, stamps, held, split = old.msgs, old.stamps, old.end, old.split
    if len(msgs) != held:  # another state appended to these lists: this one's own copy
        msgs, stamps = msgs[:held], stamps[:held]
    msgs.append(item)
    stamps.append(boxed)
    lanes = lanes[:]  # a copy (compiled, cheaper than list() or slicing and splatting)
    lanes[i] = Lane(msgs, stamps, held + 1, split)
    warned = state.warned
    if held != split:  # the deque was not empty: AT-R4 warnings only
        if not warned[i]:
            previous = stamps[held - 1]
            # Bounds are >= 0, so an out-of-order stamp also falls below the bound.
            if stamp - previous < params.bounds[i]:
                warned = (*warned[:i], True, *warned[i + 1:])
                outputs: tuple[Output, ...] = (
                    Warned(i, OUT_OF_ORDER if stamp < previous else CLOSER_THAN_BOUND),)
                if held >= params.queue_size:  # AT-R5
                    return _settle(params, lanes, state, warned, outputs, False, i)
                return FastState(lanes, state.candidate, state.candidate_start,
                                 state.candidate_end, state.pivot, state.pivot_time,
                                 state.dropped, warned, params, params.config), outputs
    else:  # AT-R3: the deque was empty; process only if every deque is now non-empty.
        for other in lanes:
            if other.end == other.split:
                break
        else:
            return _settle(params, lanes, state, warned, (), True, i)
    if held >= params.queue_size:
        return _settle(params, lanes, state, warned, (), False, i)  # AT-R5
    return FastState(lanes, state.candidate, state.candidate_start, state.candidate_end,
                     state.pivot, state.pivot_time, state.dropped, warned, params,
                     params.config), ()


def _settle(params: _Params, lanes: list[Lane], state: FastState,
            warned: tuple[bool, ...], outputs: tuple[Output, ...], process: bool,
            i: int) -> tuple[FastState, tuple[Output, ...]]:
    """Run ``process()`` (when ``process``) and then the AT-R5 overflow test of topic
    ``i`` on the scratch form of ``lanes`` (and the rest of ``state``, with ``warned``),
    and freeze the result."""
    # Comprehensions over the list: compiled, each is one preallocated list (no appends).
    msgs = [each.msgs for each in lanes]
    stamps: list[list[Any]] = [each.stamps for each in lanes]
    sp = [each.split for each in lanes]
    hi = [each.end for each in lanes]
    lo = [0] * len(lanes)
    dropped = list(state.dropped)
    produced: list[Output] = list(outputs)
    carry: _Pivot = (state.candidate, state.candidate_start, state.candidate_end, state.pivot,
                     state.pivot_time)
    if process:
        carry = _process(params, msgs, stamps, lo, sp, hi, dropped, produced, carry)
    if hi[i] - lo[i] > params.queue_size:  # AT-R5: recover, drop the oldest
        sp[:] = lo
        produced.append(_Build.dropped(msgs[i][lo[i]].id, _QUEUE_OVERFLOW))
        lo[i] = sp[i] = lo[i] + 1
        dropped[i] = True
        if carry[3] != NO_PIVOT:
            carry = _process(params, msgs, stamps, lo, sp, hi, dropped, produced, _NONE)
    frozen: list[Lane] = []
    for k in range(len(lanes)):
        first, last, each = lo[k], hi[k], lanes[k]
        if first:  # drop the consumed prefix: the state never keeps a discarded message
            frozen.append(Lane(msgs[k][first:last], stamps[k][first:last], last - first,
                               sp[k] - first))
        elif sp[k] != each.split:
            frozen.append(Lane(each.msgs, each.stamps, last, sp[k]))
        else:
            frozen.append(each)
    candidate, candidate_start, candidate_end, pivot, pivot_time = carry
    return FastState(frozen, candidate, candidate_start, candidate_end, pivot,
                     pivot_time, tuple(dropped), warned, params, params.config), tuple(produced)


def _process(params: _Params, msgs: list[list[Message]], stamps: list[list[Any]],
             lo: list[int], sp: list[int], hi: list[int], dropped: list[bool],
             outputs: list[Output], carry: _Pivot) -> _Pivot:
    """AT-R6 to AT-R14 on the scratch form: loop while every deque is non-empty."""
    candidate, candidate_start, candidate_end, pivot, pivot_time = carry
    n = len(msgs)  # loops are ``range(...)`` literals: compiled, a C loop over machine ints
    # Stamps are copied as the objects they are (``Any``), unboxed only where compared.
    fronts: list[int] = []
    for k in range(n):
        if sp[k] == hi[k]:
            return carry
        fronts.append(stamps[k][sp[k]])
    max_interval = params.max_interval
    exact = params.exact
    numerator, denominator = params.numerator, params.denominator
    # Whether a drop flag may be set: AT-R7 clears all but the end's, so after it only the
    # end's flag can be, and nothing in the loop sets one.
    flagged = any(flag for flag in dropped)  # compiled, a C loop (``in`` is a generic call)
    # The topics whose past buffer may be non-empty, so that destroying the pasts (AT-D1)
    # does not scan every topic; kept in move order, sorted when it names several.
    pasts = [k for k in range(n) if sp[k] != lo[k]]
    # Set when a candidate is made: it is then the oldest held message of every topic
    # (each past buffer was just destroyed) until the next publish.
    made = False
    while True:
        # AT-R6 boundaries in one pass (cheaper than min, max and index for a few topics):
        # ties give the end to the highest index and the start to the lowest.
        start_time = end_time = fronts[0]
        s = e = 0
        for k in range(1, n):
            stamp = fronts[k]
            if stamp >= end_time:
                end_time, e = stamp, k
            elif stamp < start_time:
                start_time, s = stamp, k
        if flagged:  # AT-R7
            flagged = dropped[e]
            for k in range(n):
                dropped[k] = False
            dropped[e] = flagged
        if pivot < 0:  # NO_PIVOT: every past buffer is empty
            if end_time - start_time > max_interval or flagged:  # AT-R8, AT-R9
                reason = _INTERVAL_TOO_WIDE if end_time - start_time > max_interval \
                    else _PIVOT_REFUSED
                first = sp[s]
                outputs.append(_Build.dropped(msgs[s][first].id, reason))
                first += 1
                lo[s] = sp[s] = first
                if first == hi[s]:
                    break
                fronts[s] = stamps[s][first]
                continue
            made = True  # AT-R10: the candidate is the fronts, built when needed
            candidate_start, candidate_end = start_time, end_time
            pivot, pivot_time = e, end_time
            scaled = 0
        else:
            age = end_time - candidate_end
            scaled = 0 if not age else age * numerator // denominator if exact and age > 0 \
                else params.scale(age)
            if scaled < start_time - candidate_start:  # AT-R11: better
                if pasts:  # destroy every past buffer, in topic order (AT-D1)
                    for k in pasts if len(pasts) == 1 else sorted(set(pasts)):
                        first, front = lo[k], sp[k]
                        held = msgs[k]
                        while first < front:
                            outputs.append(_Build.dropped(held[first].id, _SUPERSEDED))
                            first += 1
                        lo[k] = front
                    pasts = []
                made = True
                candidate_start, candidate_end = start_time, end_time
                scaled = 0
        front = sp[s] = sp[s] + 1
        pasts.append(s)
        # AT-R12, with scale(end_time - candidate_end) already in ``scaled``.
        if s == pivot or scaled >= pivot_time - candidate_start:
            outputs.append(_Build.published(_fronts(msgs, lo) if made else candidate))
        elif front == hi[s]:
            if not _virtual_search(params, stamps, sp, hi, candidate_start, candidate_end,
                                   pivot_time):
                break  # moves undone and D[s] still empty
            outputs.append(_Build.published(_fronts(msgs, lo) if made else candidate))
        else:
            fronts[s] = stamps[s][front]
            continue
        # Publish: recover every past, then pop each candidate message (the oldest held).
        candidate, candidate_start, candidate_end, pivot, pivot_time = _NONE
        made = False
        pasts = []
        for k in range(n):
            first = lo[k] + 1
            lo[k] = sp[k] = first
            if first == hi[k]:
                for j in range(k + 1, n):  # finish popping before leaving
                    lo[j] = sp[j] = lo[j] + 1
                return _NONE
            fronts[k] = stamps[k][first]
    if made:
        candidate = _fronts(msgs, lo)
    return candidate, candidate_start, candidate_end, pivot, pivot_time


def _fronts(msgs: list[list[Message]], lo: list[int]) -> tuple[Message, ...]:
    """The oldest held message of every topic (compiled, a list comprehension over a
    ``range`` costs about a quarter of ``tuple(map(getitem, msgs, lo))``, which calls
    ``operator.getitem`` through the generic call protocol per topic)."""
    return tuple([msgs[k][lo[k]] for k in range(len(msgs))])


def _virtual_search(params: _Params, stamps: list[list[Any]], sp: list[int], hi: list[int],
                    candidate_start: int, candidate_end: int, pivot_time: int) -> bool:
    """AT-R13: True when the candidate is proven optimal (the caller publishes); else
    every virtual move is undone and False."""
    bounds = params.bounds
    exact = params.exact
    numerator, denominator = params.numerator, params.denominator
    saved = sp[:]
    n = len(stamps)
    while True:
        # The virtual fronts' start (lowest stamp, first such topic) and end, in one pass.
        vstart_time = vend_time = 0
        vs = 0
        for k in range(n):
            if sp[k] != hi[k]:
                virtual: int = stamps[k][sp[k]]
            else:
                virtual = stamps[k][sp[k] - 1] + bounds[k]
                if virtual < pivot_time:
                    virtual = pivot_time
            if not k:
                vstart_time = vend_time = virtual
            elif virtual < vstart_time:
                vstart_time, vs = virtual, k
            elif virtual > vend_time:
                vend_time = virtual
        age = vend_time - candidate_end
        if exact and age > 0:
            age = age * numerator // denominator
        elif age:
            age = params.scale(age)
        if age >= pivot_time - candidate_start:
            return True
        if age < vstart_time - candidate_start:
            sp[:] = saved
            return False
        sp[vs] += 1


def end(config: Config, state: FastState) -> tuple[FastState, tuple[Output, ...]]:
    """AT-R17: every held message as ``Pending``, topic order then arrival order; restart."""
    pending = tuple(Pending(m.id) for held in state.lanes for m in messages(held))
    return initial(config), pending


def to_spec(state: FastState) -> State:
    """The spec's state: each lane split into ``P[k]`` and ``D[k]``."""
    held = [(messages(each), each.split) for each in state.lanes]
    return State(tuple(m[split:] for m, split in held), tuple(m[:split] for m, split in held),
                 state.candidate, state.candidate_start, state.candidate_end, state.pivot,
                 state.pivot_time, state.dropped, state.warned, config=state.config)


def from_spec(state: State) -> FastState:
    """The fast form of a spec state: one lane per topic holding ``P[k]`` then ``D[k]``."""
    lanes = [lane(p + d, len(p)) for p, d in zip(state.pasts, state.deques, strict=True)]
    return FastState(lanes, state.candidate, state.candidate_start, state.candidate_end,
                     state.pivot, state.pivot_time, state.dropped, state.warned, None,
                     state.config)
