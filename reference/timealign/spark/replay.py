"""Replaying one source's rows inside Spark: Arrow batches to records, the order check, the
replay (SP-R1, SP-R3, SP-R10).

One module for the one job every path shares: the shuffled batch job
(:mod:`timealign.spark.batch`), the per-file path (:mod:`timealign.spark.per_file`),
verify's re-run (:mod:`timealign.spark.verify`), the pictures and, for the checks of a
row and the building of records, the stream (:mod:`timealign.spark.streaming`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from timealign.algorithm import Algorithm, Columns, Record, records, records_of
from timealign.errors import InvalidInput
from timealign.spark import schema
from timealign.spark.failures import OrderError, marked
from timealign.spark.outcomes import GROUPS, OUTCOMES, SourceRun

CHUNK = 20_000
REQUIRED_VALUES: tuple[str, ...] = ("id", "topic", "stamp", "arrival")
ORDER_COLUMNS: tuple[str, ...] = ("arrival", schema.FILE, schema.POSITION)


def to_batch(columns: dict[str, list[Any]]) -> pa.RecordBatch:
    """Arrow record batch of the combined output schema."""
    return pa.RecordBatch.from_pydict(columns, schema=schema.ARROW_COMBINED)


_TYPES = [field.type for field in schema.ARROW_COMBINED]


def rows_batch(source: str, rows: list[tuple[Any, ...]]) -> pa.RecordBatch:
    """The combined output of :class:`timealign.spark.outcomes.Rows` tuples as one Arrow
    record batch, column by column; ``table`` (from ``seq``) and ``source`` (one value) are
    built by Arrow, not per row in Python. The same batch as ``to_batch(Rows.take())``."""
    if not rows:
        return to_batch({name: [] for name in schema.ARROW_COMBINED.names})
    values = [pa.array(column, kind) for column, kind in
              zip(zip(*rows, strict=True), _TYPES[2:], strict=True)]
    table = pc.if_else(values[0].is_valid(), GROUPS, OUTCOMES)
    sources = pa.repeat(pa.scalar(source, _TYPES[1]), len(rows))
    return pa.RecordBatch.from_arrays([table, sources, *values], schema=schema.ARROW_COMBINED)


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


def _first_out_of_order(batch: pa.RecordBatch) -> int | None:
    """Index of the first row whose (arrival, file, position) is below its predecessor's,
    computed on the Arrow columns (no per-row Python)."""
    if batch.num_rows < 2:
        return None
    before, after = batch.slice(0, batch.num_rows - 1), batch.slice(1)
    broken = None
    for name in reversed(ORDER_COLUMNS):  # lexicographic, least significant key first
        a, b = after.column(name), before.column(name)
        less = pc.less(a, b)
        broken = less if broken is None else pc.or_(less, pc.and_(pc.equal(a, b), broken))
    assert broken is not None
    if not pc.any(broken).as_py():
        return None
    return int(pc.index(broken, True).as_py()) + 1


def _key(batch: pa.RecordBatch, row: int) -> tuple[Any, ...]:
    return tuple(batch.column(name)[row].as_py() for name in ORDER_COLUMNS)


def sort_broken(source: str, batch: pa.RecordBatch, row: int,
                previous: tuple[Any, ...] | None) -> str:
    """The shuffled path's disorder: Spark's sort did not reach the UDF intact."""
    return (f"source {source!r}: row {batch.column('id')[row].as_py()!r} at "
            f"{_key(batch, row)} reached the UDF after {previous}; Spark broke the sort "
            f"(SP-R10)")


Explain = Callable[[str, pa.RecordBatch, int, "tuple[Any, ...] | None"], str]


def columns_from_batches(source: str, batches: Iterator[pa.RecordBatch],
                         explain: Explain = sort_broken) -> Iterator[Columns]:
    """Rows of one source's Arrow batches as columns of values (a batch each), checking
    nulls (SP-R1) and order (SP-R10) per batch; ``explain`` words the :class:`OrderError`
    for the first row out of order. No row becomes a Python object here."""
    last: tuple[Any, ...] | None = None
    for batch in batches:
        if not batch.num_rows:
            continue
        require_values(source, [f for f in REQUIRED_VALUES if batch.column(f).null_count])
        first = _key(batch, 0)
        broken = 0 if last is not None and first < last else _first_out_of_order(batch)
        if broken is not None:
            previous = last if broken == 0 else _key(batch, broken - 1)
            raise OrderError(explain(source, batch, broken, previous))
        last = _key(batch, batch.num_rows - 1)
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


def replay(algorithm: Algorithm[Any, Any, Any, Any], config: Any, source: str,
           batches: Iterable[Columns]) -> Iterator[pa.RecordBatch]:
    """Replay one source's rows (batches of columns, :func:`columns_from_batches`) through a
    fresh :class:`SourceRun`, yielding the combined output in chunks; the machine's and the
    accounting's errors are marked so that the driver can raise them again
    (:func:`timealign.spark.failures.raise_job_error`)."""
    with marked(f"source {source!r}"):
        run = SourceRun(algorithm, config, source)
        for _ in run.feed_columns(batches, CHUNK):
            yield rows_batch(source, run.rows.take_rows())
        run.finish()
    yield rows_batch(source, run.rows.take_rows())
