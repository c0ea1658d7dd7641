"""One source's replay as table rows: the groups and outcomes of ``spec/spark.md``.

:class:`SourceRun` wraps a :class:`timealign.drive.Driver` and turns every output the
machine explains through ``Accounting.account`` into rows of the combined output: a row per
group (SP-R4) and a row per message settled otherwise (SP-R5); the outcome rows of grouped
messages are derived from the group rows (:func:`with_members`). It also checks,
incrementally and in memory bounded by what the machine holds, that every row fed is
accounted for exactly once (SP-R6): an id is *open* from the moment the machine's input
mapping reads its row until an output settles it.

Pure Python, no Spark: the batch UDF, the streaming processor and the tests share it.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Container, Iterable, Iterator
from operator import itemgetter
from typing import Any

from timealign.algorithm import Algorithm, Columns, Outcome, Record, records_of
from timealign.drive import Driver, Step
from timealign.errors import ConsistencyError

GROUPS = "groups"
OUTCOMES = "outcomes"
GROUPED = "grouped"
RECENT_IDS = 1024  # SP-R22: settled ids a stream remembers per source
_MISSING = object()
_first = itemgetter(0)

# The columns of the combined output the adapters emit; ``table`` says which output
# table a row belongs to, the other columns are null where they do not apply. A grouped
# message has no row of its own here: its outcome row (SP-R5) is derived from its group's
# row when the outcomes table is written (``timealign.spark.schema.outcomes_of``), so the
# Python half neither builds nor ships it.
COLUMNS: tuple[str, ...] = (
    "table", "source", "seq", "start", "end", "ids", "at", "input", "id", "outcome", "reason",
)


def with_members(columns: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """Combined output columns plus an outcome row (SP-R5) for every member of every group,
    right after its group's row: the pure-Python form of what
    :func:`timealign.spark.schema.outcomes_of` derives in Spark, for readers without Spark."""
    rows: list[tuple[Any, ...]] = []
    for row in zip(*(columns[name] for name in COLUMNS), strict=True):
        rows.append(row)
        if row[0] == GROUPS:
            _, source, seq, _, _, ids, at, index, _, _, _ = row
            rows.extend((OUTCOMES, source, seq, None, None, None, at, index, member, GROUPED,
                         None) for member in ids)
    if not rows:
        return {name: [] for name in COLUMNS}
    return dict(zip(COLUMNS, map(list, zip(*rows, strict=True)), strict=True))


class LossError(ConsistencyError):
    """A row was not accounted for exactly once (SP-R6): the job must fail loudly."""


class DuplicateIdError(LossError):
    """Two rows of one source share an id (SP-R1, SP-R22); a kind of loss error, since
    outcomes are keyed by (source, id) and one of the two rows could not be told apart."""


class Rows:
    """One source's rows of the combined output, kept as the steps give them: the settled
    accounts as they come (``(id, outcome, reason)`` tuples, no row object per message),
    the group rows as ``(seq, start, end, ids)`` tuples, and per step that added rows its
    ``(at, input, groups, settled)`` (the last two: how many of each). A step's rows are its
    group rows then its outcome rows (SP-R4, SP-R5; the outcome rows of grouped messages
    are derived from their group's row, not kept). :meth:`take` turns them into
    :data:`COLUMNS` in that order; the Spark worker builds Arrow columns from
    :meth:`take_parts` instead."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._reset()

    def _reset(self) -> None:
        self.steps: list[tuple[int | None, int | None, int, int]] = []
        self.groups: list[tuple[int, int, int, list[str]]] = []
        self.settled: list[Outcome] = []

    def __len__(self) -> int:
        return len(self.settled) + len(self.groups)

    def outcome(self, message_id: str, outcome: str, reason: str, at: int | None,
                index: int | None) -> None:
        self.steps.append((at, index, 0, 1))
        self.settled.append((message_id, outcome, reason))

    def take_parts(self) -> tuple[list[tuple[int | None, int | None, int, int]],
                                  list[tuple[int, int, int, list[str]]], list[Outcome]]:
        """The steps, group rows and settled accounts gathered so far; the buffer starts
        empty again."""
        parts = self.steps, self.groups, self.settled
        self._reset()
        return parts

    def take(self) -> dict[str, list[Any]]:
        """The rows gathered so far, as :data:`COLUMNS`; the buffer starts empty again."""
        steps, groups, settled = self.take_parts()
        columns: dict[str, list[Any]] = {name: [] for name in COLUMNS}
        table, seqs, starts, ends, ids, ats, inputs, identities, outcomes, reasons = (
            columns[name] for name in COLUMNS if name != "source")
        group_rows, settled_rows = iter(groups), iter(settled)
        for at, index, grouped, settling in steps:
            for seq, start, end, members in itertools.islice(group_rows, grouped):
                table.append(GROUPS)
                seqs.append(seq)
                starts.append(start)
                ends.append(end)
                ids.append(members)
                identities.append(None)
                outcomes.append(None)
                reasons.append(None)
            for identity, outcome, reason in itertools.islice(settled_rows, settling):
                table.append(OUTCOMES)
                seqs.append(None)
                starts.append(None)
                ends.append(None)
                ids.append(None)
                identities.append(identity)
                outcomes.append(outcome)
                reasons.append(reason)
            ats.extend(itertools.repeat(at, grouped + settling))
            inputs.extend(itertools.repeat(index, grouped + settling))
        columns["source"] = [self.source] * len(table)
        return columns


class SourceRun:
    """Replays one source (SP-R3) and accounts for every row it is fed (SP-R6)."""

    def __init__(
        self,
        algorithm: Algorithm[Any, Any, Any, Any],
        config: Any,
        source: str,
        driver: Driver[Any, Any, Any, Any] | None = None,
        seq: int = 0,
        open_ids: Iterable[str] = (),
        recent: Iterable[str] | None = None,
    ) -> None:
        self.algorithm = algorithm
        self.source = source
        self.driver = driver if driver is not None else Driver(algorithm, config)
        self.seq = seq
        self.open: dict[str, None] = dict.fromkeys(open_ids)
        # SP-R22: a stream remembers the last RECENT_IDS settled ids (None: a batch run,
        # whose duplicates Spark finds over the whole input instead).
        self.recent: dict[str, None] | None = None if recent is None else dict.fromkeys(recent)
        self.rows = Rows(source)
        self._outcomes = (algorithm.accounting.accounts if algorithm.accounting.accounts is not None
                          else algorithm.accounting.outcomes)  # the hook itself: one call per step

    def _opening(self, records: Iterable[Record]) -> Iterator[Record]:
        """Open each row's id as the mapping reads it (SP-R6): one dict insertion per row,
        whose size tells whether the id was open already."""
        opened, recent = self.open, self.recent
        for record in records:
            identity = record.id
            size = len(opened)
            opened[identity] = None
            if len(opened) == size or (recent is not None and identity in recent):
                raise DuplicateIdError(
                    f"source {self.source!r}: id {identity!r} fed again while "
                    f"{'still open' if len(opened) == size else 'recently settled'}; "
                    f"ids must be unique within a source (SP-R1, SP-R22)")
            yield record

    def reject_late(self, message_id: str, fresh: Container[str], rule: str) -> None:
        """SP-R14, SP-R22: a late row's ``rejected`` outcome, unless its id repeats one
        still open, recently settled, or fed in the same micro-batch (``fresh``): that is
        the duplicate-id failure, never a second outcome row for one id."""
        recent = self.recent
        if message_id in self.open or message_id in fresh or (
                recent is not None and message_id in recent):
            raise DuplicateIdError(
                f"source {self.source!r}: id {message_id!r} arrived late (a late file) and "
                f"repeats an id already fed; ids must be unique within a source (SP-R1, "
                f"SP-R22)")
        self.rows.outcome(message_id, "rejected", rule, None, None)
        if recent is not None:
            recent[message_id] = None
            if len(recent) > RECENT_IDS:
                del recent[next(iter(recent))]

    def _close_open(self, message_id: str) -> None:
        """Settle an open id (SP-R6): accounted for once, and only after it was fed."""
        try:
            del self.open[message_id]
        except KeyError:
            raise LossError(f"source {self.source!r}: id {message_id!r} accounted for twice "
                            f"or never fed (SP-R6)") from None

    def _close_remembering(self, message_id: str) -> None:
        """:meth:`_close_open`, then remember the id among the recent ones (SP-R22)."""
        self._close_open(message_id)
        recent = self.recent
        assert recent is not None
        recent[message_id] = None
        if len(recent) > RECENT_IDS:
            del recent[next(iter(recent))]

    def _account(self, step: Step[Any, Any], at: int | None) -> None:
        index, _item, outputs = step
        if not outputs:
            return
        # A stream (``recent`` kept) closes each id and remembers it; a batch run pops
        # them. No bound method is kept on ``self`` (SP-D30): that reference cycle held
        # every replay's record until a collector pass (benchmarks/README.md).
        pop = None if self.recent is not None else self.open.pop
        settled, grouped = self._outcomes(outputs)
        rows = self.rows
        if grouped:
            add = rows.groups.append
            for account in grouped:
                seq, self.seq = self.seq, self.seq + 1
                ids = account.ids
                add((seq, account.start, account.end, list(ids)))
                # Their outcome rows come from this row (SP-R5). A batch run closes the ids
                # in one loop of dict pops; a missing one is lost (SP-R6: _close_open raises).
                if pop is None:
                    for member in ids:
                        self._close_remembering(member)
                else:
                    for member in ids:
                        if pop(member, _MISSING) is _MISSING:
                            self._close_open(member)
        elif not settled:
            return
        # Settled accounts come as (id, outcome, reason) tuples (Algorithm.accounting.accounts), the
        # bulk of a fleet's outcomes: closed and kept a step at a time, as they come.
        if pop is None:
            for outcome in settled:
                self._close_remembering(outcome[0])
        else:
            try:
                deque(map(pop, map(_first, settled)), 0)
            except KeyError as missing:
                self._close_open(missing.args[0])  # not open: raises LossError (SP-R6)
        rows.steps.append((at, index, len(grouped), len(settled)))
        rows.settled += settled

    def _at(self, item: Any) -> int | None:
        """SP-R8: the input's own clock (ticks), else the arrival of the last row read."""
        clock = self.algorithm.feeding.clock_of(item)
        return clock if clock is not None else self.driver.arrival

    def feed(self, records: Iterable[Record], chunk: int = 0) -> Iterator[dict[str, list[Any]]]:
        """Feed rows in arrival order; yield the gathered rows every ``chunk`` rows (0: never,
        call :meth:`take` at the end)."""
        clocked = self.algorithm.feeding.clocked
        driver, rows, account = self.driver, self.rows, self._account
        # The hot loop of the batch job: steps without outputs (most rows of a batcher)
        # cost no call, and the buffer is measured only after a step that added rows.
        for step in driver.feed(self._opening(records)):
            if step[2]:
                account(step, self._at(step[1]) if clocked else driver.arrival)
                if chunk and len(rows) >= chunk:
                    yield rows.take()

    def feed_columns(self, batches: Iterable[Columns], chunk: int = 0, typed: bool = False
                     ) -> Iterator[None]:
        """:meth:`feed` over batches of rows given as columns (the Spark worker's form; the
        rows never become records when the machine maps columns, ``inputs_from_columns``),
        yielding each time ``chunk`` rows are gathered (0: never) for the caller to take
        (:meth:`Rows.take`, or :meth:`Rows.take_parts`). A batch's ids are opened together, as the
        driver maps the batch at once (SP-R6), when they are distinct and none is open or
        recently settled; a batch that repeats an id goes row by row instead, which raises
        :class:`DuplicateIdError` at that row. ``typed``: the columns' value types are
        vouched for (:func:`timealign.drive.columns_pass`)."""
        clocked = self.algorithm.feeding.clocked
        driver, rows, account, recent = self.driver, self.rows, self._account, self.recent
        for columns in batches:
            # The batch's ids, then the ids still open, in one new dict (the larger set is
            # inserted once): its sizes tell whether an id repeats (SP-R6, SP-R22).
            fresh = dict.fromkeys(columns[0])
            distinct = len(fresh) == len(columns[0])
            fresh.update(self.open)
            if not distinct or len(fresh) < len(columns[0]) + len(self.open) or (
                    recent is not None and not recent.keys().isdisjoint(fresh)):
                for _ in self.feed(records_of(columns)):  # never yields (no chunk)
                    pass
                if chunk and len(rows) >= chunk:
                    yield None
                continue
            self.open = fresh
            for step in driver.feed_columns(columns, typed):
                account(step, self._at(step[1]) if clocked else driver.arrival)
                if chunk and len(rows) >= chunk:
                    yield None

    def feed_all(self, records: Iterable[Record]) -> None:
        """Feed rows in arrival order, keeping every row for :meth:`take`."""
        for _ in self.feed(records):
            pass

    def fire_until(self, instant: int) -> None:
        """Deliver the ticks due at or before ``instant`` (a streaming timer expired)."""
        for step in self.driver.fire_until(instant):
            self._account(step, self.algorithm.feeding.clock_of(step[1]))

    def finish(self) -> None:
        """End the source (SP-R7: remaining ticks, then the end input) and check that no
        row is left unaccounted (SP-R6)."""
        steps = list(self.driver.finish())
        for step in steps[:-1]:  # held rows (DRV-R8), then the remaining ticks
            self._account(step, self._at(step[1]))
        self._account(steps[-1], None)
        if self.open:
            missing = list(self.open)[:5]
            raise LossError(f"source {self.source!r}: {len(self.open)} row(s) without an "
                            f"outcome at the end of input, e.g. {missing} (SP-R6)")

    def take(self) -> dict[str, list[Any]]:
        return self.rows.take()
