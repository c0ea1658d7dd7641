"""The ``Algorithm`` descriptor: what every algorithm of timealign is, as adapters see it.

An algorithm is a frozen, validated ``config``, an immutable ``state``, ``initial(config)``
and a pure ``step(config, state, input) -> (state, outputs)``. Nothing here does I/O,
reads a clock or draws randomness: adapters (the CLI, the vector runner, the Spark jobs,
the model checkers) drive every algorithm through the :class:`Algorithm` descriptor below
and never re-implement a rule.

Clocks are inputs: an algorithm that needs wall-clock progress (the event-time batcher)
receives ``tick`` inputs and asks for them with timer outputs; the descriptor says how to
read those (``timer_of``, ``tick``, ``clock_of``) so generic drivers can deliver them.
Every output that settles a message is explained through :attr:`Accounting.account`, which
is what the no-loss checks and the Spark outcome table are built on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import groupby, repeat
from typing import Any, Generic, TypeVar

import attrs

from timealign.errors import InvalidInput
from timealign.traces import Traces

C = TypeVar("C")
S = TypeVar("S")
I = TypeVar("I")  # noqa: E741 - the conventional name of the input type
O = TypeVar("O")  # noqa: E741 - the conventional name of the output type

JSON = dict[str, Any]


@attrs.frozen
class Grouped:
    """An output that delivers messages together: a published set or a closed batch."""

    ids: tuple[str, ...]
    start: int
    end: int


@attrs.frozen
class Settled:
    """An output that settles one message outside any group.

    ``outcome`` is ``"dropped"``, ``"rejected"`` or ``"pending"`` (still held at the end
    of a finite input); ``reason`` is the spec's reason code.
    """

    id: str
    outcome: str
    reason: str


Account = Grouped | Settled | None

#: A settled account as the plain tuple ``(id, outcome, reason)`` of its :class:`Settled`:
#: the form :attr:`Accounting.accounts` gives, one tuple instead of an object per settled
#: message (most messages of a fleet are settled one by one).
Outcome = tuple[str, str, str]
#: The accounts of one step's outputs as :attr:`Accounting.accounts` gives them: the settled
#: ones (as :data:`Outcome` tuples) and the grouped ones, each in emission order (outputs
#: without an account left out).
Accounts = tuple[list[Outcome], list[Grouped]]
#: One batch of rows in arrival order as columns of values: ``(ids, topics, stamps,
#: arrivals, kinds, polls)``, the fields of :class:`Record`; ``kinds`` or ``polls`` is None
#: when the whole column is null. The Spark worker's rows never become records on the way in.
Columns = tuple[Sequence[Any], Sequence[Any], Sequence[Any], Sequence[Any],
                Sequence[Any] | None, Sequence[Any] | None]


@attrs.frozen
class Record:
    """One message row as adapters see it, before an algorithm turns it into inputs.

    ``topic`` is the ApproximateTime topic name, the batcher key or the stream name;
    ``stamp`` the event time in ns; ``arrival`` the processing time in ns (or an arrival
    sequence); ``kind`` and ``poll`` serve the rate-aware batcher.
    """

    id: str
    topic: str
    stamp: int
    arrival: int = 0
    kind: str | None = None
    poll: int | None = None


def slot_setters(cls: type, names: tuple[str, ...]) -> tuple[Callable[[Any, Any], None], ...]:
    """The slot setters of the frozen attrs class ``cls``, whose fields must be exactly
    ``names`` with no validator or converter (else ``TypeError``, at import).

    ``object.__new__(cls)`` then each setter builds the instance ``cls(*values)`` builds,
    without the ``__init__`` that goes through ``object.__setattr__`` per field: the row
    mappings build one object per row on the adapters' hot paths (measured about twice as
    fast as the ``__init__``)."""
    fields = [(f.name, f.converter, f.validator) for f in attrs.fields(cls)]
    if fields != [(name, None, None) for name in names]:
        raise TypeError(f"{cls.__name__} is built by slot: its fields changed ({fields})")
    return tuple(cls.__dict__[name].__set__ for name in names)


_RECORD_SETTERS = slot_setters(Record, ("id", "topic", "stamp", "arrival", "kind", "poll"))


def records(ids: Iterable[Any], topics: Iterable[Any], stamps: Iterable[Any],
            arrivals: Iterable[Any], kinds: Iterable[Any], polls: Iterable[Any]
            ) -> Iterator[Record]:
    """``map(Record, ...)`` over columns of values, each built by slot (:func:`slot_setters`;
    a ``Record`` checks nothing: the driver's DRV-R9 does)."""
    new = object.__new__
    set_id, set_topic, set_stamp, set_arrival, set_kind, set_poll = _RECORD_SETTERS
    for identity, topic, stamp, arrival, kind, poll in zip(ids, topics, stamps, arrivals,
                                                           kinds, polls, strict=False):
        record = new(Record)
        set_id(record, identity)
        set_topic(record, topic)
        set_stamp(record, stamp)
        set_arrival(record, arrival)
        set_kind(record, kind)
        set_poll(record, poll)
        yield record


def records_of(columns: Columns) -> Iterator[Record]:
    """The rows of a batch of :data:`Columns`, as records (:func:`records`)."""
    ids, topics, stamps, arrivals, kinds, polls = columns
    return records(ids, topics, stamps, arrivals, repeat(None) if kinds is None else kinds,
                   repeat(None) if polls is None else polls)


def run_ends(keys: Iterable[object]) -> list[int]:
    """DRV-R8 over a batch's run keys (``Feeding.column_runs``): the index of the last row
    of each run (consecutive rows with equal keys; a None key stands alone), a run's rows
    counted at C speed."""
    ends: list[int] = []
    position = 0
    for key, rows in groupby(keys):
        size = len(list(rows))
        if key is None:
            ends.extend(range(position, position + size))
        else:
            ends.append(position + size - 1)
        position += size
    return ends


def accounts_of(account: Callable[[Any], Account], outputs: Iterable[Any]) -> Accounts:
    """:data:`Accounts` of ``outputs`` from an algorithm's ``account``, output by output."""
    settled: list[Outcome] = []
    grouped: list[Grouped] = []
    for output in outputs:
        found = account(output)
        if isinstance(found, Settled):
            settled.append((found.id, found.outcome, found.reason))
        elif found is not None:
            grouped.append(found)
    return settled, grouped


_SETTLED_SETTERS = slot_setters(Settled, ("id", "outcome", "reason"))


def settled(message_id: str, outcome: str, reason: str) -> Settled:
    """``Settled(message_id, outcome, reason)``, built by slot (:func:`slot_setters`): the
    accounts of most messages of a source are one of these (SP-R6's hot path)."""
    set_id, set_outcome, set_reason = _SETTLED_SETTERS
    account = object.__new__(Settled)
    set_id(account, message_id)
    set_outcome(account, outcome)
    set_reason(account, reason)
    return account


_GROUPED_SETTERS = slot_setters(Grouped, ("ids", "start", "end"))


def grouped(ids: tuple[str, ...], start: int, end: int) -> Grouped:
    """``Grouped(ids, start, end)``, built by slot (:func:`slot_setters`)."""
    set_ids, set_start, set_end = _GROUPED_SETTERS
    account = object.__new__(Grouped)
    set_ids(account, ids)
    set_start(account, start)
    set_end(account, end)
    return account


def _same(state: Any) -> Any:
    return state


@attrs.frozen
class Fast(Generic[C, S, I, O]):
    """A faster implementation of an algorithm's rule text: same outputs, checked against it.

    It may keep a private state form; ``to_spec`` and ``from_spec`` convert to and from the
    spec's state (the identity when it uses the spec's). The bounded explorers step it in
    lockstep with the rule text and compare ``(to_spec(state), outputs)`` at every node.
    """

    initial: Callable[[C], Any]
    step: Callable[[C, Any, I], tuple[Any, tuple[O, ...]]]
    to_spec: Callable[[Any], S] = _same
    from_spec: Callable[[S], Any] = _same


@attrs.frozen
class Slots:
    """The pulse slots a machine gates on in its active window, for pictures.

    ``lane`` is the stream name, ``start``/``end`` the window, ``instants`` the slot
    centres in ns, ascending. Reported by :attr:`Pictures.slots_of`; nothing reads it back.
    """

    lane: str
    start: int
    end: int
    instants: tuple[int, ...]


@attrs.frozen
class Flag:
    """One per-lane flag of a machine's state, for pictures (PL-R20).

    ``lane`` is the lane it belongs to (a topic name), ``name`` what it is (``drop``),
    ``on`` its value after the input just applied. Reported by :attr:`Pictures.flags_of`;
    nothing reads it back.
    """

    lane: str
    name: str
    on: bool


@attrs.frozen
class Machine(Generic[C, S, I, O]):
    """The machine itself (DRV-R11): what every adapter that runs an algorithm needs.

    ``initial`` and ``step`` are the rule text (the spec's ``machine.py``); ``end`` is the
    input that ends a finite run; ``config_type`` the config class a caller must hand in
    (DRV-R9, :func:`check_config`). ``fast``, when set, is a faster implementation checked
    against the rule text, which adapters that need throughput run through
    :meth:`fast_path`. Kept apart from the codec and the feeding because the model checkers,
    the lockstep and the benchmarks step a machine and read nothing else.
    """

    initial: Callable[[C], S]
    step: Callable[[C, S, I], tuple[S, tuple[O, ...]]]
    end: Callable[[C], I]
    config_type: type | None = None
    fast: Fast[C, S, I, O] | None = None

    def fast_path(self) -> Machine[C, Any, I, O]:
        """This machine running its fast implementation (itself when it has none).

        Same outputs; the state is the fast path's private form (``fast.to_spec`` gives the
        spec's). For the Spark adapter and the benchmarks.
        """
        if self.fast is None:
            return self
        return Machine(self.fast.initial, self.fast.step, self.end, self.config_type)


@attrs.frozen
class Codec(Generic[C, I, O]):
    """The ``timealign.vector/1`` encoding of configs, inputs and outputs (DRV-R11,
    ``spec/vectors.md``): what the vectors, the CLI's ``replay``/``check``, the conformance
    harness and the Spark checkpoint read and write.

    ``input_from_json`` and ``config_from_json`` raise
    :class:`timealign.errors.InvalidInput` on bad data. ``output_from_json(raw, inputs)``
    is the package's ``codec.output_from_json`` (decoding another implementation's output,
    the run's inputs given for the ids it names); only the invariant checks of a run in
    vector form need it, so it is optional.
    """

    config_from_json: Callable[[Mapping[str, Any]], C]
    config_to_json: Callable[[C], JSON]
    input_from_json: Callable[[Mapping[str, Any]], I]
    input_to_json: Callable[[I], JSON]
    output_to_json: Callable[[O], JSON]
    output_from_json: Callable[[Mapping[str, Any], Sequence[I]], O] | None = None


def _no_timer(_output: Any) -> int | None:
    return None


def _no_clock(_input: Any) -> int | None:
    return None


@attrs.frozen
class Feeding(Generic[C, I, O]):
    """How a driver turns adapter rows into inputs and delivers clocks (DRV-R11,
    ``spec/drivers.md``): what :class:`timealign.drive.Driver` and the Spark replay read.

    ``inputs_from_records`` turns rows (already in arrival order) into inputs, lazily.
    ``record_run`` is set when the mapping reads several rows as one input: consecutive
    rows with equal, non-None ``record_run(row)`` form one run, and a driver fed in chunks
    never splits a run (DRV-R8). A machine that needs wall-clock progress (the event-time
    batcher) receives ``tick`` inputs and asks for them with timer outputs: ``timer_of``,
    ``clock_of`` and ``tick`` say how to read and make those. ``inputs_from_columns(config,
    columns)`` is ``inputs_from_records`` over one batch of :data:`Columns` (the Spark
    worker's rows, never records) that holds whole runs only, as a list: an input per row,
    or, with ``record_run``, an input per run of the batch, in order (DRV-R13). It may
    assume the rows passed the driver's checks (DRV-R9, DRV-R1), and refuses a row that its
    row form refuses (any ``InvalidInput``: the driver then finds the row form's error).
    ``column_runs(columns)``, required with both ``record_run`` and ``inputs_from_columns``,
    is ``record_run`` of each row of such a batch, row for row (``None``: every row stands
    alone), for the driver to cut the batch into runs. The tests check both against their
    row forms; neither is a rule of its own.
    """

    inputs_from_records: Callable[[C, Iterable[Record]], Iterator[I]]
    timer_of: Callable[[O], int | None] = _no_timer
    clock_of: Callable[[I], int | None] = _no_clock
    tick: Callable[[int], I] | None = None
    record_run: Callable[[Record], object] | None = None
    inputs_from_columns: Callable[[C, Columns], list[I]] | None = None
    column_runs: Callable[[Columns], Sequence[object] | None] | None = None

    def __attrs_post_init__(self) -> None:
        if self.tick is None and (self.timer_of is not _no_timer or self.clock_of is not _no_clock):
            raise TypeError("timer_of and clock_of need a tick input")
        if (self.column_runs is not None) != (self.inputs_from_columns is not None
                                              and self.record_run is not None):
            # DRV-R13: the driver cuts a batch into whole runs before the mapping reads it
            raise TypeError("column_runs goes with record_run and inputs_from_columns: a "
                            "columnar mapping of runs needs the runs of a batch")

    @property
    def clocked(self) -> bool:
        """Whether the algorithm reads a clock (tick inputs, timers); drivers skip the
        timer and clock lookups of the others."""
        return self.tick is not None


@attrs.frozen
class Accounting(Generic[O]):
    """How each output settles messages (DRV-R11): what the no-loss checks, the Spark
    outcome table and the census are built on.

    ``account(output)`` explains one output; ``accounts(outputs)``, when set, is ``account``
    of each output as :data:`Accounts` (:func:`accounts_of`: the settled ones as tuples,
    apart from the grouped ones), the columnar form of ``account`` for the Spark worker,
    checked against it by the tests.
    """

    account: Callable[[O], Account]
    accounts: Callable[[Sequence[O]], Accounts] | None = None

    def outcomes(self, outputs: Sequence[O]) -> Accounts:
        """:attr:`accounts` of ``outputs``, or :attr:`account` of each (:func:`accounts_of`)."""
        if self.accounts is not None:
            return self.accounts(outputs)
        return accounts_of(self.account, outputs)


@attrs.frozen
class Pictures(Generic[C, S, I]):
    """What pictures read of a machine (DRV-R11, ``spec/plots.md``); they read, never
    decide, and every hook is optional (a machine without them is drawn plainer).

    ``timeline_records(config, input)`` lists the messages an input carries, as records
    (the inverse of ``inputs_from_records``, for adapters that start from inputs, such as
    vectors); ``slots_of(config, state)`` reports the slot grid of the active window for
    machines that have one; ``flags_of(config, state)`` the per-lane flags of the state
    that decide what happens next (ApproximateTime's drop flags, PL-R20).
    """

    timeline_records: Callable[[C, I], tuple[Record, ...]] | None = None
    slots_of: Callable[[C, S], tuple[Slots, ...]] | None = None
    flags_of: Callable[[C, S], tuple[Flag, ...]] | None = None


@attrs.frozen
class Checks(Generic[C, I, O]):
    """What the algorithm knows about checking runs of itself (DRV-R11), all optional.

    ``check(config, inputs, outputs)`` is the package's ``invariants.check`` (every
    violation of the executable invariants, as strings: :func:`check_invariants`);
    ``traces`` its conformance knowledge (``<algorithm>/traces.py``: explorer instances,
    fuzz strategy, observability profiles, output -> rule map, targets), read by
    ``timealign conform`` (spec/conformance.md).
    """

    check: Callable[[C, Sequence[I], Sequence[tuple[int, O]]], list[str]] | None = None
    traces: Traces | None = None


@attrs.frozen
class Algorithm(Generic[C, S, I, O]):
    """The descriptor through which every adapter drives one algorithm: its ``name`` and
    its capabilities (DRV-R11, DRV-D10), each wired once in the algorithm's ``__init__``.

    Each capability is the set of hooks one kind of adapter uses together (DRV-D10), so an
    adapter function that needs one or two of them takes those, typed against them, and
    each adapter reads only the capabilities it declares (DRV-R12); a test stub fills only
    what it exercises: :class:`Machine` (stepping), :class:`Codec` (vector
    form), :class:`Feeding` (rows and clocks into inputs), :class:`Accounting` (outputs
    to settled messages), :class:`Pictures` and :class:`Checks` (both optional).
    """

    name: str
    machine: Machine[C, S, I, O]
    codec: Codec[C, I, O]
    feeding: Feeding[C, I, O]
    accounting: Accounting[O]
    pictures: Pictures[C, S, I] = Pictures()
    checks: Checks[C, I, O] = Checks()

    def fast_path(self) -> Algorithm[C, Any, I, O]:
        """This descriptor with its machine running its fast implementation
        (:meth:`Machine.fast_path`; itself when it has none). For adapters that pass the
        whole descriptor on (the Spark jobs, the vectors' ``fast`` run)."""
        if self.machine.fast is None:
            return self
        return attrs.evolve(self, machine=self.machine.fast_path())


def check_config(machine: Machine[C, S, I, O], config: C) -> C:
    """DRV-R9: ``config`` is the algorithm's config object (``config_from_json`` builds
    one), not a dict or ``None``: :class:`InvalidInput` naming ``config``, where the first
    field read would have raised ``AttributeError`` deep inside ``initial``."""
    wanted = machine.config_type
    if wanted is not None and type(config) is not wanted:
        raise InvalidInput("config", "DRV-R9", f"must be a {wanted.__module__}."
                           f"{wanted.__qualname__} (build it with the algorithm's "
                           f"config_from_json)", type(config).__name__)
    return config


def iter_outputs(
    algorithm: Algorithm[C, S, I, O],
    config: C,
    inputs: Iterable[I],
    state: S | None = None,
) -> Iterator[tuple[int, O]]:
    """Fold ``inputs`` through ``step``; yield each output with its input's index."""
    machine = algorithm.machine
    check_config(machine, config)  # DRV-R9
    current = machine.initial(config) if state is None else state
    step = machine.step  # read once (issue 44: two attribute reads a step otherwise)
    for index, item in enumerate(inputs):
        current, outputs = step(config, current, item)
        if outputs:  # most steps output nothing: no iterator for them
            for output in outputs:
                yield index, output


def run(
    algorithm: Algorithm[C, S, I, O],
    config: C,
    inputs: Iterable[I],
) -> tuple[S, tuple[tuple[int, O], ...]]:
    """Replay ``inputs`` from the initial state; return the final state and all outputs."""
    state = algorithm.machine.initial(check_config(algorithm.machine, config))  # DRV-R9
    produced: list[tuple[int, O]] = []
    for index, item in enumerate(inputs):
        state, outputs = algorithm.machine.step(config, state, item)
        produced.extend((index, output) for output in outputs)
    return state, tuple(produced)


def check_invariants(
    checks: Checks[C, I, O], config: C, inputs: Sequence[I],
    outputs: Sequence[tuple[int, O]],
) -> list[str]:
    """Every violation of the algorithm's executable invariants (its :class:`Checks`) over
    one finished run (``outputs`` as ``(input index, output)``); ``[]`` for an algorithm
    without them."""
    if checks.check is None:
        return []
    return checks.check(config, inputs, outputs)


def check_json_run(
    algorithm: Algorithm[C, S, I, O], config: Mapping[str, Any],
    inputs: Sequence[Mapping[str, Any]], outputs: Sequence[Mapping[str, Any]],
) -> list[str]:
    """:func:`check_invariants` over a run in vector form (``spec/vectors.md``): decoded
    with the algorithm's codec; ``error`` outputs and the inputs they refused are left out
    (the run goes on from the state before a refused input, VEC-R5); a refused config
    (VEC-R5) leaves no run to check. Raises
    :class:`timealign.errors.InvalidInput` on a part that does not decode."""
    if algorithm.checks.check is None or algorithm.codec.output_from_json is None or any(
            o.get("kind") == "error" and o.get("input") is None for o in outputs):
        return []
    refused = {o.get("input") for o in outputs if o.get("kind") == "error"}
    kept = [k for k in range(len(inputs)) if k not in refused]
    renumber = {k: position for position, k in enumerate(kept)}
    decoded = [algorithm.codec.input_from_json(inputs[k]) for k in kept]
    produced = []
    for position, raw in enumerate(outputs):
        if raw.get("kind") == "error":
            continue
        if raw.get("input") not in renumber:
            raise InvalidInput(f"outputs[{position}].input", "VEC-R4",
                               "must be the index of an input that was not refused",
                               raw.get("input"))
        produced.append((renumber[raw["input"]], algorithm.codec.output_from_json(raw, decoded)))
    return algorithm.checks.check(algorithm.codec.config_from_json(config), decoded, produced)


def run_json(
    algorithm: Algorithm[C, S, I, O], config: Mapping[str, Any],
    inputs: Iterable[Mapping[str, Any]],
) -> list[JSON]:
    """Run ``algorithm`` over a trace in vector form and return its outputs in vector form
    (VEC-R4, VEC-R5): a config it refuses is the single ``error`` output of input ``None``;
    an input it refuses is an ``error`` output of that input, and the run goes on from the
    state before it. The one loop behind ``timealign replay``/``check``, the vectors and the
    conformance harness."""
    try:
        decoded = algorithm.codec.config_from_json(config)
    except InvalidInput as error:
        return [_error_output(None, error)]
    machine, codec = algorithm.machine, algorithm.codec
    state, step, encode = machine.initial(decoded), machine.step, codec.output_to_json
    produced: list[JSON] = []
    for index, raw in enumerate(inputs):
        try:
            state, outputs = step(decoded, state, codec.input_from_json(raw))
        except InvalidInput as error:
            produced.append(_error_output(index, error))
            continue
        produced.extend({"input": index, **encode(output)} for output in outputs)
    return produced


def _error_output(index: int | None, error: InvalidInput) -> JSON:
    return {"input": index, "kind": "error", "field": error.field, "rule": error.rule}
