"""One source's replay as table rows: the groups and outcomes of ``spec/spark.md``.

:class:`SourceRun` wraps a :class:`timealign.drive.Driver` and turns every output the
machine explains through ``Algorithm.account`` into rows of the combined output: a row per
group (SP-R4) and a row per message settled otherwise (SP-R5); the outcome rows of grouped
messages are derived from the group rows (:func:`with_members`). It also checks,
incrementally and in memory bounded by what the machine holds, that every row fed is
accounted for exactly once (SP-R6): an id is *open* from the moment the machine's input
mapping reads its row until an output settles it.

Pure Python, no Spark: the batch UDF, the streaming processor and the tests share it.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Iterator
from typing import Any

from timealign.algorithm import Algorithm, Columns, Grouped, Record, records_of
from timealign.drive import Driver, Step
from timealign.errors import ConsistencyError

GROUPS = "groups"
OUTCOMES = "outcomes"
GROUPED = "grouped"
RECENT_IDS = 1024  # SP-R22: settled ids a stream remembers per source
_MISSING = object()

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


def timer_ms(instant_ns: int) -> int:
    """The Spark timer (ms) for a driver timer: the first millisecond not before it.

    pre: instant_ns >= 0
    post: __return__ * 1_000_000 >= instant_ns
    post: (__return__ - 1) * 1_000_000 < instant_ns
    """
    return -(-instant_ns // 1_000_000)


class LossError(ConsistencyError):
    """A row was not accounted for exactly once (SP-R6): the job must fail loudly."""


class DuplicateIdError(LossError):
    """Two rows of one source share an id (SP-R1, SP-R22); a kind of loss error, since
    outcomes are keyed by (source, id) and one of the two rows could not be told apart."""


#: The columns of a row as :class:`Rows` keeps it: :data:`COLUMNS` without ``table`` (a row
#: with a ``seq`` is a group's, SP-R4, the others are outcome rows, SP-R5: the grouped ones
#: are not emitted) and ``source`` (one per run).
ROW_COLUMNS: tuple[str, ...] = COLUMNS[2:]


def table_of(seq: int | None) -> str:
    """The output table of a row of :data:`ROW_COLUMNS`, from its ``seq``."""
    return OUTCOMES if seq is None else GROUPS


class Rows:
    """One source's rows of the combined output in emission order. Each row is kept as one
    tuple in :data:`ROW_COLUMNS` order (the hot path appends one tuple per row, through
    :attr:`add`) and turned into columns once, by :meth:`take` (or by the Spark worker
    straight into Arrow, from :meth:`take_rows`)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._rows: list[tuple[Any, ...]] = []
        self.add = self._rows.append

    def __len__(self) -> int:
        return len(self._rows)

    def outcome(self, message_id: str, outcome: str, reason: str | None, at: int | None,
                index: int | None) -> None:
        self.add((None, None, None, None, at, index, message_id, outcome, reason))

    def take_rows(self) -> list[tuple[Any, ...]]:
        """The rows gathered so far, as :data:`ROW_COLUMNS` tuples; the buffer starts empty
        again."""
        taken, self._rows = self._rows, []
        self.add = self._rows.append
        return taken

    def take(self) -> dict[str, list[Any]]:
        """The rows gathered so far, as :data:`COLUMNS`; the buffer starts empty again."""
        taken = self.take_rows()
        if not taken:
            return {name: [] for name in COLUMNS}
        columns = dict(zip(ROW_COLUMNS, map(list, zip(*taken, strict=True)), strict=True))
        return {"table": list(map(table_of, columns["seq"])),
                "source": [self.source] * len(taken), **columns}


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
        # Chosen once: the hot loop calls one bound method, with no test per row.
        self._close: Callable[[str], None] = (
            self._close_open if self.recent is None else self._close_remembering)
        self.rows = Rows(source)
        self._outcomes = algorithm.outcomes

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
        append = self.rows.add
        pop = None if self.recent is not None else self.open.pop
        settled = (None, None, None, None, at, index)  # an outcome row, before its account
        # Settled accounts come as (id, outcome, reason) tuples (Algorithm.accounts): one
        # tuple per settled message instead of an object, the bulk of a fleet's outcomes.
        accounts = self._outcomes(outputs)
        for account in accounts:
            if account is None:
                continue
            if type(account) is tuple:
                if pop is None or pop(account[0], _MISSING) is _MISSING:
                    self._close(account[0])
                append(settled + account)
                continue
            assert isinstance(account, Grouped)
            seq, self.seq = self.seq, self.seq + 1
            ids = account.ids
            append((seq, account.start, account.end, list(ids), at, index, None, None, None))
            # Their outcome rows come from this row (SP-R5). A batch run closes the ids
            # in one loop of dict pops; a missing one is lost (SP-R6: _close_open raises).
            if pop is None:
                for member in ids:
                    self._close(member)
            else:
                for member in ids:
                    if pop(member, _MISSING) is _MISSING:
                        self._close(member)

    def _at(self, item: Any) -> int | None:
        """SP-R8: the input's own clock (ticks), else the arrival of the last row read."""
        clock = self.algorithm.clock_of(item)
        return clock if clock is not None else self.driver.arrival

    def feed(self, records: Iterable[Record], chunk: int = 0) -> Iterator[dict[str, list[Any]]]:
        """Feed rows in arrival order; yield the gathered rows every ``chunk`` rows (0: never,
        call :meth:`take` at the end)."""
        clocked = self.algorithm.clocked
        driver, rows, account = self.driver, self.rows, self._account
        # The hot loop of the batch job: steps without outputs (most rows of a batcher)
        # cost no call, and the buffer is measured only after a step that added rows.
        for step in driver.feed(self._opening(records)):
            if step[2]:
                account(step, self._at(step[1]) if clocked else driver.arrival)
                if chunk and len(rows) >= chunk:
                    yield rows.take()

    def feed_columns(self, batches: Iterable[Columns], chunk: int = 0) -> Iterator[None]:
        """:meth:`feed` over batches of rows given as columns (the Spark worker's form; the
        rows never become records when the machine maps columns, ``inputs_from_columns``),
        yielding each time ``chunk`` rows are gathered (0: never) for the caller to take
        (:meth:`take`, or :meth:`Rows.take_rows`). A batch's ids are opened together, as the
        driver maps the batch at once (SP-R6), when they are distinct and none is open or
        recently settled; a batch that repeats an id goes row by row instead, which raises
        :class:`DuplicateIdError` at that row."""
        clocked = self.algorithm.clocked
        driver, rows, account, opened = self.driver, self.rows, self._account, self.open
        recent = self.recent
        for columns in batches:
            fresh = dict.fromkeys(columns[0])
            if len(fresh) < len(columns[0]) or not opened.keys().isdisjoint(fresh) or (
                    recent is not None and not recent.keys().isdisjoint(fresh)):
                for _ in self.feed(records_of(columns)):  # never yields (no chunk)
                    pass
                if chunk and len(rows) >= chunk:
                    yield None
                continue
            opened.update(fresh)
            for step in driver.feed_columns(columns):
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
            self._account(step, self.algorithm.clock_of(step[1]))

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
