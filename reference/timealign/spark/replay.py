"""Replaying one source's rows inside Spark: Arrow batches to columns of values, the order
check, the replay and its rows back to Arrow column by column (SP-R1, SP-R3, SP-R10). No row
becomes a Python object of its own on the way in or out (issue 26; ``benchmarks/README.md``).

One module for the one job every path shares: the shuffled batch job
(:mod:`timealign.spark.batch`), the per-file path (:mod:`timealign.spark.per_file`),
verify's re-run (:mod:`timealign.spark.verify`), the pictures and, for the checks of a
row and the building of records, the stream (:mod:`timealign.spark.streaming`).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from timealign.algorithm import Algorithm, Columns, Record, records, records_of
from timealign.errors import InvalidInput
from timealign.spark import schema
from timealign.spark.failures import OrderError, marked
from timealign.spark.outcomes import GROUPS, OUTCOMES, Rows, SourceRun

CHUNK = 20_000
REQUIRED_VALUES: tuple[str, ...] = ("id", "topic", "stamp", "arrival")
TIME_VALUES: tuple[str, ...] = ("stamp", "arrival")
_TEXT, _TIME = (pa.string(), pa.large_string()), (pa.int64(),)
ORDER_COLUMNS: tuple[str, ...] = ("arrival", schema.FILE, schema.POSITION)


def to_batch(columns: dict[str, list[Any]]) -> pa.RecordBatch:
    """Arrow record batch of the combined output schema."""
    return pa.RecordBatch.from_pydict(columns, schema=schema.ARROW_COMBINED)


_TYPES = {field.name: field.type for field in schema.ARROW_COMBINED}
_GROUP = pa.struct([schema.ARROW_COMBINED.field(name) for name in ("seq", "start", "end", "ids")])
_SETTLED = pa.struct([schema.ARROW_COMBINED.field(name) for name in ("id", "outcome", "reason")])


def rows_batch(source: str, rows: Rows) -> pa.RecordBatch:
    """The rows a :class:`timealign.spark.outcomes.Rows` gathered, taken, as one Arrow record
    batch, column by column: Arrow converts the group rows and the settled accounts as
    structs, repeats each step's ``at`` and ``input`` over its rows, and builds ``table``
    and ``source``; nothing per row in Python. The rows of :meth:`Rows.take`, the group
    rows first (each table's rows in emission order: the combined output is split into
    ``groups/`` and ``outcomes/``, and no table's order is part of SP-R4 or SP-R5)."""
    steps, groups, settled = rows.take_parts()
    if not steps:
        return to_batch({name: [] for name in schema.ARROW_COMBINED.names})
    at, index, grouped, settling = zip(*steps, strict=True)
    positions = np.arange(len(steps))
    step_of = pa.array(np.concatenate([np.repeat(positions, grouped),
                                       np.repeat(positions, settling)]))
    count, before, after = len(step_of), len(groups), len(settled)
    group_values = pa.array(groups, _GROUP).flatten() if groups else [
        pa.nulls(0, _TYPES[name]) for name in ("seq", "start", "end", "ids")]
    settled_values = pa.array(settled, _SETTLED).flatten() if settled else [
        pa.nulls(0, _TYPES[name]) for name in ("id", "outcome", "reason")]
    columns = [pa.concat_arrays([values, pa.nulls(after, values.type)]) if after else values
               for values in group_values]
    columns += [pa.array(at, _TYPES["at"]).take(step_of),
                pa.array(index, _TYPES["input"]).take(step_of)]
    columns += [pa.concat_arrays([pa.nulls(before, values.type), values]) if before else values
                for values in settled_values]
    table = pa.concat_arrays([pa.repeat(pa.scalar(GROUPS), before),
                              pa.repeat(pa.scalar(OUTCOMES), after)])
    sources = pa.repeat(pa.scalar(source, _TYPES["source"]), count)
    return pa.RecordBatch.from_arrays([table, sources, *columns], schema=schema.ARROW_COMBINED)


def source_name(value: object) -> str:
    """A group's source as text; a null source is refused (SP-R1) rather than replayed as
    the string ``"None"``."""
    if value is None:
        raise InvalidInput("source", "SP-R1", "null source: every row needs a source "
                           "(or no source column at all, SP-D3)", None)
    return str(value)


def source_of(key: tuple[pa.Scalar, ...]) -> str:
    """The source of a grouped UDF's key (:func:`source_name`)."""
    return source_name(key[0].as_py())


def require_values(source: str, with_nulls: Iterable[str]) -> None:
    """SP-R1: no null in the columns every row needs; ``with_nulls`` names those of
    :data:`REQUIRED_VALUES` that hold one."""
    for field in with_nulls:
        raise InvalidInput(field, "SP-R1", f"null {field} in source {source!r}", None)


def records_from(ids: Iterable[Any], topics: Iterable[Any], stamps: Iterable[Any],
                 arrivals: Iterable[Any], kinds: Iterable[Any], polls: Iterable[Any]
                 ) -> Iterator[Record]:
    """Records of columns of values (Arrow's or pandas'), row by row, built by slot."""
    return records(ids, topics, stamps, arrivals, kinds, polls)


def _first_out_of_order(batch: pa.RecordBatch,
                        order: tuple[str, ...] = ORDER_COLUMNS) -> int | None:
    """Index of the first row whose (arrival, file, position) (``order``) is below its
    predecessor's, computed on the Arrow columns (no per-row Python)."""
    if batch.num_rows < 2:
        return None
    before, after = batch.slice(0, batch.num_rows - 1), batch.slice(1)
    broken = None
    for name in reversed(order):  # lexicographic, least significant key first
        a, b = after.column(name), before.column(name)
        less = pc.less(a, b)
        broken = less if broken is None else pc.or_(less, pc.and_(pc.equal(a, b), broken))
    assert broken is not None
    if not pc.any(broken).as_py():
        return None
    return int(pc.index(broken, True).as_py()) + 1


def _key(batch: pa.RecordBatch, row: int,
         order: tuple[str, ...] = ORDER_COLUMNS) -> tuple[Any, ...]:
    return tuple(batch.column(name)[row].as_py() for name in order)


def sort_broken(source: str, batch: pa.RecordBatch, row: int,
                previous: tuple[Any, ...] | None) -> str:
    """The shuffled path's disorder: Spark's sort did not reach the UDF intact."""
    return (f"source {source!r}: row {batch.column('id')[row].as_py()!r} at "
            f"{_key(batch, row)} reached the UDF after {previous}; Spark broke the sort "
            f"(SP-R10)")


Explain = Callable[[str, pa.RecordBatch, int, "tuple[Any, ...] | None"], str]


def columns_from_batches(source: str, batches: Iterator[pa.RecordBatch],
                         explain: Explain = sort_broken,
                         order: tuple[str, ...] = ORDER_COLUMNS) -> Iterator[Columns]:
    """Rows of one source's Arrow batches as columns of values (a batch each), checking
    nulls (SP-R1), the canonical column types (string ids and topics, int64 times, so the
    values are exactly ``str`` and ``int``: the driver's DRV-R9 then tests only ranges,
    ``typed``) and order (SP-R10) per batch; ``explain`` words the :class:`OrderError`
    for the first row out of order. ``order``: the key of SP-R10's order, (arrival, file,
    position); the rows of one file (SP-R18) leave the file out, constant in them. No row
    becomes a Python object here."""
    last: tuple[Any, ...] | None = None
    for batch in batches:
        if not batch.num_rows:
            continue
        require_values(source, [f for f in REQUIRED_VALUES if batch.column(f).null_count])
        first = _key(batch, 0, order)
        broken = 0 if last is not None and first < last else _first_out_of_order(batch, order)
        if broken is not None:
            previous = last if broken == 0 else _key(batch, broken - 1, order)
            raise OrderError(explain(source, batch, broken, previous))
        last = _key(batch, batch.num_rows - 1, order)
        for name in REQUIRED_VALUES:  # the types columns_pass(typed=True) relies on
            kind = batch.column(name).type
            if kind not in (_TIME if name in TIME_VALUES else _TEXT):
                raise InvalidInput(name, "SP-R1", f"column {name} of type {kind} in source "
                                   f"{source!r}; the canonical schema has "
                                   f"{'int64' if name in TIME_VALUES else 'string'}", None)
        ids, topics, stamps, arrivals = (batch.column(name).to_pylist()
                                         for name in REQUIRED_VALUES)
        kinds, polls = (None if c.null_count == len(c) else c.to_pylist()
                        for c in (batch.column("kind"), batch.column("poll")))
        yield ids, topics, stamps, arrivals, kinds, polls


def records_from_batches(source: str, batches: Iterator[pa.RecordBatch],
                         explain: Explain = sort_broken) -> Iterator[Record]:
    """:func:`columns_from_batches` row by row, as records (for readers of rows)."""
    for columns in columns_from_batches(source, batches, explain):
        yield from records_of(columns)


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a source replays, then as it was: a replay
    makes no reference cycles (messages, states, outputs and rows are freed by reference
    counting), and the collector's passes over the messages and rows in flight cost about
    5 % of the worker's instructions (``benchmarks/README.md``)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def replay(algorithm: Algorithm[Any, Any, Any, Any], config: Any, source: str,
           batches: Iterable[Columns]) -> Iterator[pa.RecordBatch]:
    """Replay one source's rows (batches of columns from :func:`columns_from_batches`, whose
    value types it vouches for) through a
    fresh :class:`SourceRun`, yielding the combined output in chunks; the machine's and the
    accounting's errors are marked so that the driver can raise them again
    (:func:`timealign.spark.failures.raise_job_error`)."""
    with marked(f"source {source!r}"), collector_paused():
        run = SourceRun(algorithm, config, source)
        for _ in run.feed_columns(batches, CHUNK, typed=True):
            yield rows_batch(source, run.rows)
        run.finish()
    yield rows_batch(source, run.rows)
