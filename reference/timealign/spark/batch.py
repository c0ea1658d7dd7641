"""The batch job (``timealign run``): replay every source of a recorded table.

Rows are hash-partitioned by source and sorted by (source, arrival, input order) inside
Spark (SP-R2); a grouped Arrow UDF in the iterator form receives each source as a stream
of record batches, so a source of tens of millions of rows is never held whole, and
replays it through :class:`timealign.spark.outcomes.SourceRun`. Columns are converted
once per batch and the output is built as Arrow arrays. Spark does not promise that the
sort survives into the groups, so the UDF checks the order of every row and fails loudly
(SP-R10). The combined output is persisted once and written as the two tables
``groups/`` and ``outcomes/`` into staging folders; the no-loss check (SP-R6) reconciles the
outcome counts per source with the input (SP-D6), and only then are the tables moved into
place (SP-R21); a summary (SP-R9) is printed. An output that overlaps the input is refused
before anything is read (SP-R20).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from itertools import repeat
from typing import Any

import attrs
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession

from timealign.algorithm import Algorithm, Record
from timealign.errors import InvalidInput
from timealign.spark import schema
from timealign.spark.outcomes import LossError, SourceRun
from timealign.spark.paths import TABLES, check_output_folder, check_separate, table_paths
from timealign.spark.publish import Staging, discard, publish

CHUNK = 20_000
MARK_INVALID = "TIMEALIGN-INVALID-INPUT:"
MARK_LOSS = "TIMEALIGN-LOSS:"


class OrderError(RuntimeError):
    """Rows of a source reached the UDF out of (arrival, input order) order (SP-R10)."""


def to_batch(columns: dict[str, list[Any]]) -> pa.RecordBatch:
    """Arrow record batch of the combined output schema."""
    return pa.RecordBatch.from_pydict(columns, schema=schema.ARROW_COMBINED)


ORDER_COLUMNS: tuple[str, ...] = ("arrival", schema.FILE, schema.POSITION)


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


def records_of(source: str, batches: Iterator[pa.RecordBatch]) -> Iterator[Record]:
    """Rows of one source as records, checking nulls (SP-R1) and order (SP-R10) per batch."""
    last: tuple[int, str, int] | None = None
    for batch in batches:
        if not batch.num_rows:
            continue
        for field in ("id", "topic", "stamp", "arrival"):
            if batch.column(field).null_count:
                raise InvalidInput(field, "SP-R1", f"null {field} in source {source!r}", None)
        first = tuple(batch.column(name)[0].as_py() for name in ORDER_COLUMNS)
        broken = 0 if last is not None and first < last else _first_out_of_order(batch)
        if broken is not None:
            key = tuple(batch.column(name)[broken].as_py() for name in ORDER_COLUMNS)
            previous = last if broken == 0 else tuple(
                batch.column(name)[broken - 1].as_py() for name in ORDER_COLUMNS)
            raise OrderError(f"source {source!r}: row {batch.column('id')[broken].as_py()!r} "
                             f"at {key} reached the UDF after {previous}; Spark broke the sort "
                             f"(SP-R10)")
        last = tuple(batch.column(name)[-1].as_py() for name in ORDER_COLUMNS)
        columns = [batch.column(name) for name in ("id", "topic", "stamp", "arrival")]
        optional = [batch.column(name) for name in ("kind", "poll")]
        yield from map(Record, *(c.to_pylist() for c in columns), *(
            repeat(None) if c.null_count == len(c) else c.to_pylist() for c in optional))


def run_source_udf(
    algorithm: Algorithm[Any, Any, Any, Any], config: Any
) -> Callable[[tuple[pa.Scalar, ...], Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The grouped Arrow UDF (iterator form) that replays one source per call."""

    def run_source(
        key: tuple[pa.Scalar, ...], batches: Iterator[pa.RecordBatch]
    ) -> Iterator[pa.RecordBatch]:
        source = str(key[0].as_py())
        run = SourceRun(algorithm, config, source)
        try:
            for chunk in run.feed(records_of(source, batches), CHUNK):
                yield to_batch(chunk)
            run.finish()
        except InvalidInput as error:
            detail = {"field": error.field, "rule": error.rule, "value": repr(error.value),
                      "message": f"source {source!r}: {error}"}
            raise RuntimeError(MARK_INVALID + json.dumps(detail)) from error
        except LossError as error:
            raise RuntimeError(MARK_LOSS + str(error)) from error
        yield to_batch(run.take())

    return run_source


def run_sources(
    rows: DataFrame, algorithm: Algorithm[Any, Any, Any, Any], config: Any,
    partitions: int | None = None,
) -> DataFrame:
    """The combined output (both tables) of replaying every source of ``rows``, on the
    algorithm's fast path (``Algorithm.fast_path``)."""
    count = partitions or int(rows.sparkSession.conf.get("spark.sql.shuffle.partitions") or 2)
    ordered = rows.repartition(count, "source").sortWithinPartitions(
        "source", "arrival", schema.FILE, schema.POSITION)
    return ordered.groupBy("source").applyInArrow(
        run_source_udf(algorithm.fast_path(), config), schema.COMBINED)


def raise_job_error(error: Exception) -> None:
    """Turn a failed Spark action back into the adapter's own errors, loudly."""
    text = str(error)
    if MARK_INVALID in text:
        detail = json.loads(text.split(MARK_INVALID, 1)[1].splitlines()[0])
        raise InvalidInput(detail["field"], detail["rule"], detail["message"],
                           detail["value"]) from None
    if MARK_LOSS in text:
        raise LossError(text.split(MARK_LOSS, 1)[1].splitlines()[0]) from None
    if "SP-R10" in text:
        line = next(x for x in text.splitlines() if "SP-R10" in x)
        raise OrderError(line.split("OrderError: ", 1)[-1]) from None
    raise error


@attrs.frozen
class BatchResult:
    """Where the tables were written and what the input held."""

    output: str
    rows: int


def run_batch(
    spark: SparkSession,
    algorithm: Algorithm[Any, Any, Any, Any],
    config: Any,
    input_path: str,
    output: str,
    fmt: str = "parquet",
    columns: schema.ColumnMap | None = None,
) -> BatchResult:
    """Replay ``input_path`` and write ``output/groups`` and ``output/outcomes``."""
    check_separate({"--input": input_path}, table_paths(output))
    check_output_folder("--output", output)
    rows = schema.read_input(spark, input_path, fmt, columns or schema.ColumnMap())
    return run_rows(spark, algorithm, config, rows, output)


def run_rows(
    spark: SparkSession,
    algorithm: Algorithm[Any, Any, Any, Any],
    config: Any,
    rows: DataFrame,
    output: str,
) -> BatchResult:
    """Replay canonical ``rows`` (SP-R1 columns plus the input order, SP-R2) and write
    ``output/groups`` and ``output/outcomes``; the entry point of other readers (bags),
    which check their paths (SP-R20) before reading."""
    from timealign.spark.check import check_counts

    # Persisted once, read by the two writes. DISK_ONLY ran about 30 s faster than
    # MEMORY_AND_DISK at 10M rows on the default 2 GB driver (benchmarks/bench_spark.py).
    combined = run_sources(rows, algorithm, config).persist(StorageLevel.DISK_ONLY)
    staging = Staging(output)  # SP-R21: published only once the job has succeeded
    try:
        try:
            schema.groups_of(combined).write.parquet(staging.path("groups"))
            schema.outcomes_of(combined).write.parquet(staging.path("outcomes"))
        except Exception as error:
            raise_job_error(error)
        finally:
            combined.unpersist()
        total = check_counts(rows, spark.read.parquet(staging.path("outcomes")))
        publish(spark, staging, TABLES)
    finally:
        discard(spark, staging, TABLES)
    return BatchResult(output, total)
