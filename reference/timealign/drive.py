"""The adapters' driver: feed message rows to a machine, deliver its ticks, end the run.

This is the *batch driver's rule* of ``spec/drivers.md`` written once for every adapter
(CLI, Spark batch job, Spark streaming job): rows arrive already in arrival order (DRV-R1);
the machine's own ``inputs_from_records`` turns them into inputs (DRV-R2); a timer requested
by the machine and due at or before the next input's clock fires (as a ``tick``) before that
input (DRV-R3, DRV-D1), once per instant (DRV-R4); at the end of a finite input every
remaining timer fires in order and then the machine's end input is delivered (DRV-R5,
DRV-D2). Machines without clocks ignore all of this.

The driver is the one mutable object of the package, on purpose: it lives at the edge and
holds the immutable machine state plus the pending timer instants, which is exactly what a
streaming adapter must checkpoint (:meth:`Driver.checkpoint`, DRV-R6).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable, Iterator, Sequence
from operator import le
from typing import Any, Generic

import attrs

from timealign.algorithm import (
    Algorithm,
    C,
    Columns,
    I,
    O,
    Record,
    S,
    check_config,
    records_of,
    run_ends,
)
from timealign.errors import INT64_MAX, InvalidInput, foreign_state, require, require_ns

Step = tuple[int, I, tuple[O, ...]]


def check_record(record: Record) -> None:
    """DRV-R9: a row has the field types of :class:`Record`, times within int64 ns
    (DRV-D9); otherwise :class:`InvalidInput` naming the row's field. Exact type tests keep
    this cheap on the hot path (bool, a subclass of int, is refused too)."""
    if type(record) is not Record:  # a dict or a tuple: no attribute to read (DRV-R9)
        raise InvalidInput("row", "DRV-R9", "must be a timealign.Record",
                           type(record).__name__)
    if type(record.id) is str and type(record.topic) is str \
            and type(record.stamp) is int and 0 <= record.stamp <= INT64_MAX \
            and type(record.arrival) is int and 0 <= record.arrival <= INT64_MAX \
            and (record.kind is None or type(record.kind) is str) \
            and (record.poll is None or type(record.poll) is int):
        return
    for name, kind in (("id", str), ("topic", str), ("kind", str | None)):
        value = getattr(record, name)
        require(isinstance(value, kind), f"row.{name}", "DRV-R9", "must be a string", value)
    for name in ("stamp", "arrival"):
        require_ns(getattr(record, name), f"row.{name}", "DRV-R9")
    if record.poll is not None:
        require_ns(record.poll, "row.poll", "DRV-R9")


_STR, _INT = frozenset({str}), frozenset({int})
_OPTIONAL_STR: frozenset[type] = frozenset({str, type(None)})
_OPTIONAL_INT: frozenset[type] = frozenset({int, type(None)})


def _typed(values: Sequence[Any], types: frozenset[type]) -> bool:
    return set(map(type, values)) <= types


def columns_pass(columns: Columns, previous: int | None, typed: bool = False) -> bool:
    """Whether every row of a batch of columns passes the driver's per-row checks
    (:meth:`Driver._in_order`: DRV-R9's exact type and range tests, DRV-R1's arrivals
    non-decreasing from ``previous``), tested a column at a time at C speed (arrivals in
    order lie within their first and last). ``typed``: the caller vouches that ids and
    topics hold only ``str`` and stamps and arrivals only ``int`` values within int64,
    exactly (columns converted from Arrow string and int64 arrays), so only the lower bound
    and the order are tested."""
    ids, topics, stamps, arrivals, kinds, polls = columns
    return ((typed or (_typed(ids, _STR) and _typed(topics, _STR) and _typed(stamps, _INT)
                       and _typed(arrivals, _INT)))
            and (kinds is None or _typed(kinds, _OPTIONAL_STR))
            and (polls is None or _typed(polls, _OPTIONAL_INT))
            and all(map(le, arrivals, itertools.islice(arrivals, 1, None)))
            and (not arrivals or (arrivals[0] >= 0 and arrivals[-1] <= INT64_MAX
                                  and (previous is None or previous <= arrivals[0])))
            and (not stamps or (min(stamps) >= 0 and (typed or max(stamps) <= INT64_MAX))))


def _joined(held: Sequence[Record], columns: Columns) -> Columns:
    """The held rows (DRV-R8) in front of a batch of columns."""
    ids, topics, stamps, arrivals, kinds, polls = columns
    count = len(arrivals)
    return ([r.id for r in held] + list(ids), [r.topic for r in held] + list(topics),
            [r.stamp for r in held] + list(stamps), [r.arrival for r in held] + list(arrivals),
            [r.kind for r in held] + (list(kinds) if kinds is not None else [None] * count),
            [r.poll for r in held] + (list(polls) if polls is not None else [None] * count))


def _sliced(columns: Columns, start: int, stop: int | None) -> Columns:
    ids, topics, stamps, arrivals, kinds, polls = columns
    return (ids[start:stop], topics[start:stop], stamps[start:stop], arrivals[start:stop],
            None if kinds is None else kinds[start:stop],
            None if polls is None else polls[start:stop])


@attrs.frozen
class Checkpoint(Generic[S]):
    """Everything a driver needs to resume (DRV-R6): machine state, pending timer instants
    (ascending), the index of the next input, the arrival of the last row mapped and the
    rows held back for the mapping (DRV-R8)."""

    state: S
    timers: tuple[int, ...] = ()
    index: int = 0
    arrival: int | None = None
    held_rows: tuple[Record, ...] = ()  # the trailing run not yet mapped (DRV-R8)


def _require_own_config(config: object, state: object) -> None:
    """DRV-R10: a state that carries the config it was built under (every algorithm's
    does; a toy machine's may not) is driven under that config only."""
    built = getattr(state, "config", config)
    if built is not config and built != config:
        raise foreign_state(built)


class Driver(Generic[C, S, I, O]):
    """Drives one machine instance (one source) through rows, ticks and the end.

    It takes the whole descriptor (its name names the machine in errors) and reads only its
    ``machine`` and ``feeding`` capabilities (DRV-R11, DRV-R12)."""

    def __init__(
        self,
        algorithm: Algorithm[C, S, I, O],
        config: C,
        state: S | None = None,
        timers: Iterable[int] = (),
        index: int = 0,
        arrival: int | None = None,
        held_rows: Iterable[Record] = (),
    ) -> None:
        self.algorithm = algorithm
        self.config = check_config(algorithm.machine, config)  # DRV-R9
        self.state: S = algorithm.machine.initial(config) if state is None else state
        _require_own_config(self.config, self.state)  # DRV-R10, at resume, not mid-stream
        self.timers: list[int] = sorted(set(timers))  # a heap of pending instants
        self._scheduled: set[int] = set(self.timers)  # the same instants, for O(1) lookup
        self.index = index
        self.arrival = arrival
        self._clocked = algorithm.feeding.clocked
        self.held_rows: list[Record] = list(held_rows)

    @classmethod
    def resume(
        cls, algorithm: Algorithm[C, S, I, O], config: C, checkpoint: Checkpoint[S]
    ) -> Driver[C, S, I, O]:
        """A driver that continues exactly where :meth:`checkpoint` was taken (DRV-R6)."""
        return cls(algorithm, config, checkpoint.state, checkpoint.timers, checkpoint.index,
                   checkpoint.arrival, checkpoint.held_rows)

    def checkpoint(self) -> Checkpoint[S]:
        """The driver's resumable state (DRV-R6)."""
        return Checkpoint(self.state, tuple(sorted(self.timers)), self.index, self.arrival,
                          tuple(self.held_rows))

    @property
    def last_arrival(self) -> int | None:
        """The arrival of the last row accepted: held back (DRV-R8) or mapped."""
        return self.held_rows[-1].arrival if self.held_rows else self.arrival

    def _step(self, item: I) -> Step[I, O]:
        # DRV-R7: every input delivered gets the next index; its outputs carry that index.
        self.state, outputs = self.algorithm.machine.step(self.config, self.state, item)
        index = self.index
        self.index += 1
        if self._clocked:  # DRV-D3: only a clocked machine asks for timers
            for output in outputs:
                instant = self.algorithm.feeding.timer_of(output)
                if instant is not None and instant not in self._scheduled:  # DRV-R4
                    self._scheduled.add(instant)
                    heapq.heappush(self.timers, instant)
        return index, item, outputs

    def fire_until(self, instant: int | None) -> Iterator[Step[I, O]]:
        """Deliver, in order, every pending tick due at or before ``instant`` (all if None)."""
        tick = self.algorithm.feeding.tick
        if tick is None:
            return
        while self.timers and (instant is None or self.timers[0] <= instant):
            due = heapq.heappop(self.timers)
            self._scheduled.discard(due)
            yield self._step(tick(due))

    def feed_inputs(self, inputs: Iterable[I]) -> Iterator[Step[I, O]]:
        """Deliver inputs, each preceded by the ticks due at or before its clock (DRV-R3).

        The hot loop of a clocked machine under every adapter, written flat: the ticks'
        generator is entered only when a timer is due (DRV-R3), and the timers an output
        asks for are recorded here as :meth:`_step` records them (DRV-R4)."""
        algorithm, config = self.algorithm, self.config
        step, feeding = algorithm.machine.step, algorithm.feeding
        clock_of, timer_of = feeding.clock_of, feeding.timer_of
        timers, scheduled = self.timers, self._scheduled  # mutated in place, never rebound
        push = heapq.heappush
        for item in inputs:
            clock = clock_of(item)
            if clock is not None and timers and timers[0] <= clock:
                yield from self.fire_until(clock)
            self.state, outputs = step(config, self.state, item)
            index = self.index
            self.index = index + 1
            for output in outputs:
                instant = timer_of(output)
                if instant is not None and instant not in scheduled:  # DRV-R4
                    scheduled.add(instant)
                    push(timers, instant)
            yield index, item, outputs

    def _in_order(self, records: Iterable[Record]) -> Iterator[Record]:
        """DRV-R9 then DRV-R1 per row; :func:`check_record`'s exact type tests are inlined
        (a call per row measured a tenth of the driver's own time), and a row failing them
        goes through :func:`check_record` for the error naming its field."""
        str_, int_, record_ = str, int, Record
        for record in records:
            if type(record) is not record_:
                check_record(record)  # raises DRV-R9: not a Record
            arrival = record.arrival
            if not (type(record.id) is str_ and type(record.topic) is str_
                    and type(record.stamp) is int_ and 0 <= record.stamp <= INT64_MAX
                    and type(arrival) is int_ and 0 <= arrival <= INT64_MAX
                    and (record.kind is None or type(record.kind) is str_)
                    and (record.poll is None or type(record.poll) is int_)):
                check_record(record)  # raises DRV-R9 naming the field
            previous = self.arrival
            if previous is not None and arrival < previous:
                raise InvalidInput(
                    "arrival", "DRV-R1",
                    f"row {record.id!r} arrives before the previous row ({previous})",
                    arrival,
                )
            self.arrival = arrival
            yield record

    def feed_columns(self, columns: Columns, typed: bool = False) -> Iterator[Step[I, O]]:
        """:meth:`feed` over one batch of rows given as columns (in arrival order), yielding
        only the steps with outputs (a columnar consumer has nothing to do for the others).

        When the machine has a columnar mapping (``inputs_from_columns``), the batch is
        mapped at once (DRV-R13): DRV-R9 and DRV-R1 are checked on the whole columns
        (:func:`columns_pass`), a run-reading machine's held rows are put in front and its
        trailing run is held back as records (DRV-R8), and the inputs are stepped with the
        ticks due before each (DRV-R3, DRV-R4) as :meth:`feed_inputs` delivers them. While a
        step is yielded, :attr:`arrival` is the arrival of its input's last row, as when
        rows are mapped one by one (SP-R8 reads it). A batch that fails the checks or that
        the mapping refuses is refused whole: the row path's error, found by feeding its
        rows to a copy of this driver, and this driver as it was before the batch.
        Otherwise the rows are fed as records (:meth:`feed`). ``typed``: see
        :func:`columns_pass`."""
        from_columns = self.algorithm.feeding.inputs_from_columns
        if from_columns is None:
            return (step for step in self.feed(records_of(columns)) if step[2])
        return self._feed_columns(from_columns, columns, typed)

    def _refuse(self, columns: Columns, error: InvalidInput | None = None) -> None:
        """DRV-D11: raise what :meth:`feed` raises over these rows, from a copy of this
        driver (this one stays as it was); ``error`` (the columnar mapping's) if it raises
        nothing."""
        probe = Driver.resume(self.algorithm, self.config, self.checkpoint())
        for _ in probe.feed(records_of(columns)):
            pass
        if error is not None:
            raise error

    def _held_in_order(self) -> bool:
        """DRV-R1 over the held rows (a chunk fed as records holds its rows unchecked)."""
        previous = self.arrival
        for record in self.held_rows:
            if previous is not None and record.arrival < previous:
                return False
            previous = record.arrival
        return True

    def _whole_runs(self, columns: Columns) -> tuple[Columns, Sequence[int], list[Record]]:
        """DRV-R8 over a batch: the held rows and the batch's rows but its trailing run (the
        rows to map, whole runs only), the index of each run's last row among them, and
        the trailing run to hold (as records: they belong to the checkpoint, DRV-R6)."""
        feeding = self.algorithm.feeding
        assert feeding.column_runs is not None and feeding.record_run is not None
        keys = feeding.column_runs(columns)
        held = self.held_rows
        if held:
            count = len(columns[3])
            columns = _joined(held, columns)
            following = itertools.repeat(None, count) if keys is None else keys
            keys = [*map(feeding.record_run, held), *following]
        elif keys is None:  # every row stands alone, none is held
            return columns, range(len(columns[3])), []
        tail = len(keys)
        last = keys[-1]
        if last is not None:  # the trailing run may continue in the next batch
            tail -= 1
            while tail and keys[tail - 1] == last:
                tail -= 1
        kept: list[Record] = []
        if tail < len(keys):
            kept = list(records_of(_sliced(columns, tail, None)))
            columns, keys = _sliced(columns, 0, tail), keys[:tail]
        return columns, run_ends(keys), kept

    def _feed_columns(self, from_columns: Any, columns: Columns, typed: bool
                      ) -> Iterator[Step[I, O]]:
        if not columns[3]:
            return
        held = self.held_rows
        if not (columns_pass(columns, held[-1].arrival if held else self.arrival, typed)
                and self._held_in_order()):
            self._refuse(columns)  # raises for the first bad row, as feed does
        batch, runs = columns, self.algorithm.feeding.column_runs
        lasts: Sequence[int]
        if runs is None:
            kept: list[Record] = []
            lasts = range(len(columns[3]))
        else:
            columns, lasts, kept = self._whole_runs(columns)
        try:
            inputs: list[I] = from_columns(self.config, columns) if lasts else []
        except InvalidInput as error:  # a row the mapping refuses: the row path's error
            self._refuse(batch, error)
            raise
        if len(inputs) != len(lasts):
            raise TypeError(f"{self.algorithm.name}: inputs_from_columns must map one input "
                            f"per row or run ({len(lasts)} expected, {len(inputs)} mapped)")
        self.held_rows = []
        stepped = self._step_clocked if self._clocked else self._step_direct
        yield from stepped(inputs, lasts, columns[3])
        self.held_rows = kept

    def _step_clocked(self, inputs: list[I], lasts: Sequence[int], arrivals: Sequence[int]
                    ) -> Iterator[Step[I, O]]:
        """Step a batch's inputs as :meth:`feed_inputs` does: the ticks due at or before
        an input's clock are stepped before it, one at a time (a tick's own timer may fall
        due too, DRV-R3), and each timer an output asks for is recorded once (DRV-R4). The
        ticks are stepped in this loop rather than through :meth:`fire_until` (a generator
        and a call per tick: the event-time batcher has nearly a tick per message). The
        state is kept in locals and written back at each yield, at a refused input (the
        state before it) and at the end; ``lasts`` gives each input's last row."""
        advance, config = self.algorithm.machine.step, self.config
        feeding = self.algorithm.feeding
        clock_of, timer_of, tick = feeding.clock_of, feeding.timer_of, feeding.tick
        timers, scheduled = self.timers, self._scheduled  # mutated in place, never rebound
        push, pop = heapq.heappush, heapq.heappop
        state, index = self.state, self.index
        for item, last in zip(inputs, lasts, strict=True):
            clock = clock_of(item)
            current = item
            while True:
                if clock is not None and timers and timers[0] <= clock:  # DRV-R3
                    due = pop(timers)
                    scheduled.discard(due)
                    current = tick(due)  # type: ignore[misc]  # clocked: tick is set
                try:
                    state, outputs = advance(config, state, current)
                except BaseException:
                    self.state, self.index, self.arrival = state, index, arrivals[last]
                    raise
                index += 1
                if outputs:
                    for output in outputs:
                        instant = timer_of(output)
                        if instant is not None and instant not in scheduled:  # DRV-R4
                            scheduled.add(instant)
                            push(timers, instant)
                    # a consumer stopping at this yield leaves the driver after it
                    self.state, self.index, self.arrival = state, index, arrivals[last]
                    yield index - 1, current, outputs
                if current is item:
                    break
                current = item
        self.state, self.index = state, index
        if lasts:
            self.arrival = arrivals[lasts[-1]]

    def _step_direct(self, inputs: list[I], lasts: Sequence[int], arrivals: Sequence[int]
                     ) -> Iterator[Step[I, O]]:
        """:meth:`_step_clocked` for a machine without a clock (DRV-D3), the Spark worker's
        hot loop for ApproximateTime: one step per input, nothing else."""
        advance, config = self.algorithm.machine.step, self.config
        state, index = self.state, self.index
        for item, last in zip(inputs, lasts, strict=True):
            try:
                state, outputs = advance(config, state, item)
            except BaseException:
                self.state, self.index, self.arrival = state, index, arrivals[last]
                raise
            index += 1
            if outputs:  # a consumer stopping at this yield leaves the driver after it
                self.state, self.index, self.arrival = state, index, arrivals[last]
                yield index - 1, item, outputs
        self.state, self.index = state, index
        if lasts:
            self.arrival = arrivals[lasts[-1]]

    def _runs(self, records: Iterable[Record]) -> Iterator[list[Record]]:
        """DRV-R8: the held rows and ``records`` as whole runs; the trailing run is held."""
        run_of = self.algorithm.feeding.record_run
        assert run_of is not None
        pending, self.held_rows = self.held_rows, []
        key = run_of(pending[-1]) if pending else None
        for record in records:
            check_record(record)  # before run_of reads it
            if pending and (key is None or run_of(record) != key):
                yield pending
                pending = []
            pending.append(record)
            key = run_of(record)
        if pending and key is not None:
            self.held_rows = pending  # the last run may continue in the next chunk
        elif pending:
            yield pending

    def feed(self, records: Iterable[Record]) -> Iterator[Step[I, O]]:
        """Deliver rows (in arrival order, DRV-R1) as the machine's inputs (DRV-R2); when
        the mapping reads runs of rows, map each whole run and hold the trailing one
        (DRV-R8). Lazy: nothing is read before the first step is asked for."""
        if self.algorithm.feeding.record_run is None:
            return self._map(records)  # one generator fewer on the hot path
        return self._feed_runs(records)

    def _feed_runs(self, records: Iterable[Record]) -> Iterator[Step[I, O]]:
        for run in self._runs(records):
            yield from self._map(run)

    def _map(self, records: Iterable[Record]) -> Iterator[Step[I, O]]:
        inputs = self.algorithm.feeding.inputs_from_records(self.config, self._in_order(records))
        if self._clocked:
            return self.feed_inputs(inputs)
        return self._direct(inputs)

    def _direct(self, inputs: Iterable[I]) -> Iterator[Step[I, O]]:
        """DRV-D3: no clock to read, no timers to record: step directly (the hot loop of
        every adapter; observe steps by wrapping Algorithm.machine.step, not _step)."""
        step, config = self.algorithm.machine.step, self.config
        for item in inputs:
            self.state, outputs = step(config, self.state, item)
            index = self.index
            self.index = index + 1
            yield index, item, outputs

    def finish(self) -> Iterator[Step[I, O]]:
        """End a finite input: map the held rows (DRV-R8), fire every remaining timer in
        order, then deliver the end input."""
        held, self.held_rows = self.held_rows, []
        yield from self._map(held)
        yield from self.fire_until(None)
        yield self._step(self.algorithm.machine.end(self.config))


def drive(
    algorithm: Algorithm[C, S, I, O], config: C, records: Iterable[Record]
) -> Iterator[Step[I, O]]:
    """Run a whole finite source: its rows, the ticks they call for, and the end."""
    driver = Driver(algorithm, config)
    return itertools.chain(driver.feed(records), driver.finish())  # both lazy
