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

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
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
from timealign.spark.failures import OrderError, marked, raise_job_error
from timealign.spark.outcomes import SourceRun
from timealign.spark.paths import TABLES, check_output_folder, check_separate, table_paths
from timealign.spark.publish import Staging, discard, publish

CHUNK = 20_000


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


def source_of(key: tuple[pa.Scalar, ...]) -> str:
    """The source of a group's key; a null source is refused (SP-R1) rather than
    replayed as the string ``"None"``."""
    value = key[0].as_py()
    if value is None:
        raise InvalidInput("source", "SP-R1", "null source: every row needs a source "
                           "(or no source column at all, SP-D3)", None)
    return str(value)


def _key(batch: pa.RecordBatch, row: int) -> tuple[Any, ...]:
    return tuple(batch.column(name)[row].as_py() for name in ORDER_COLUMNS)


def sort_broken(source: str, batch: pa.RecordBatch, row: int,
                previous: tuple[Any, ...] | None) -> str:
    """The shuffled path's disorder: Spark's sort did not reach the UDF intact."""
    return (f"source {source!r}: row {batch.column('id')[row].as_py()!r} at "
            f"{_key(batch, row)} reached the UDF after {previous}; Spark broke the sort "
            f"(SP-R10)")


Explain = Callable[[str, pa.RecordBatch, int, "tuple[Any, ...] | None"], str]


def records_of(source: str, batches: Iterator[pa.RecordBatch],
               explain: Explain = sort_broken) -> Iterator[Record]:
    """Rows of one source as records, checking nulls (SP-R1) and order (SP-R10) per batch;
    ``explain`` words the :class:`OrderError` for the first row out of order."""
    last: tuple[Any, ...] | None = None
    for batch in batches:
        if not batch.num_rows:
            continue
        for field in ("id", "topic", "stamp", "arrival"):
            if batch.column(field).null_count:
                raise InvalidInput(field, "SP-R1", f"null {field} in source {source!r}", None)
        first = _key(batch, 0)
        broken = 0 if last is not None and first < last else _first_out_of_order(batch)
        if broken is not None:
            previous = last if broken == 0 else _key(batch, broken - 1)
            raise OrderError(explain(source, batch, broken, previous))
        last = _key(batch, batch.num_rows - 1)
        columns = [batch.column(name) for name in ("id", "topic", "stamp", "arrival")]
        optional = [batch.column(name) for name in ("kind", "poll")]
        yield from map(Record, *(c.to_pylist() for c in columns), *(
            repeat(None) if c.null_count == len(c) else c.to_pylist() for c in optional))


def replay_records(algorithm: Algorithm[Any, Any, Any, Any], config: Any, source: str,
                   records: Iterator[Record]) -> Iterator[pa.RecordBatch]:
    """Replay one source's records through a fresh :class:`SourceRun`, yielding the combined
    output in chunks; the machine's and the accounting's errors are marked so that the
    driver can raise them again (:func:`raise_job_error`)."""
    with marked(f"source {source!r}"):
        run = SourceRun(algorithm, config, source)
        for chunk in run.feed(records, CHUNK):
            yield to_batch(chunk)
        run.finish()
    yield to_batch(run.take())


def run_source_udf(
    algorithm: Algorithm[Any, Any, Any, Any], config: Any
) -> Callable[[tuple[pa.Scalar, ...], Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The grouped Arrow UDF (iterator form) that replays one source per call."""

    def run_source(
        key: tuple[pa.Scalar, ...], batches: Iterator[pa.RecordBatch]
    ) -> Iterator[pa.RecordBatch]:
        with marked("the batch job"):
            source = source_of(key)
        yield from replay_records(algorithm, config, source, records_of(source, batches))

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


def no_phase(_name: str) -> AbstractContextManager[object]:
    """The default ``phase`` hook of :func:`run_rows`: observe nothing."""
    return nullcontext()


@attrs.frozen
class BatchResult:
    """Where the tables were written and what the input held."""

    output: str
    rows: int


@contextmanager
def session_conf(spark: SparkSession, settings: dict[str, str]) -> Iterator[None]:
    """Set SQL settings for the duration of a job, then restore the previous values."""
    before: dict[str, str | None] = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, previous in before.items():
            if previous is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, previous)


def run_batch(
    spark: SparkSession,
    algorithm: Algorithm[Any, Any, Any, Any],
    config: Any,
    input_path: str,
    output: str,
    fmt: str = "parquet",
    columns: schema.ColumnMap | None = None,
    per_file: bool = False,
    phase: Callable[[str], AbstractContextManager[object]] = no_phase,
) -> BatchResult:
    """Replay ``input_path`` and write ``output/groups`` and ``output/outcomes``; with
    ``per_file`` each file is one source already in arrival order (SP-R18); ``phase`` as
    for :func:`run_rows`."""
    check_separate({"--input": input_path}, table_paths(output))
    check_output_folder("--output", output)
    rows = schema.read_input(spark, input_path, fmt, columns or schema.ColumnMap(),
                             source_from_file=per_file)
    return run_rows(spark, algorithm, config, rows, output, per_file, phase)


def run_rows(
    spark: SparkSession,
    algorithm: Algorithm[Any, Any, Any, Any],
    config: Any,
    rows: DataFrame,
    output: str,
    per_file: bool = False,
    phase: Callable[[str], AbstractContextManager[object]] = no_phase,
    dense: bool = True,
) -> BatchResult:
    """Replay canonical ``rows`` (SP-R1 columns plus the input order, SP-R2) and write
    ``output/groups`` and ``output/outcomes``; the entry point of other readers (bags),
    which check their paths (SP-R20) before reading. With ``per_file`` every file of
    ``rows`` is one source, read whole by one task (SP-R18); ``dense`` false when the rows'
    positions may have gaps (bags, see :func:`timealign.spark.per_file.checked`).
    ``phase(name)`` is entered around each Spark job (census, replay, outcomes, reconcile,
    publish), for the benchmark's split of where the time goes."""
    from timealign.spark.check import Census
    from timealign.spark.per_file import ONE_FILE_PER_TASK, replay_files_frame

    staging = Staging(output)  # SP-R21: published only once the job has succeeded
    census = Census(rows, one_file=per_file)
    try:
        with phase("census"):
            total = census.check_input()  # SP-R22 (and SP-R18), before any replay work
        # Only the replay reads one file per task (SP-R18); the census above packs files.
        with session_conf(spark, ONE_FILE_PER_TASK if per_file else {}):
            replayed = (replay_files_frame(rows, algorithm, config, dense=dense) if per_file
                        else run_sources(rows, algorithm, config))
            # Persisted once, read by the two writes. DISK_ONLY ran about 30 s faster than
            # MEMORY_AND_DISK at 10M rows on the default 2 GB driver (bench_spark.py).
            combined = replayed.persist(StorageLevel.DISK_ONLY)
            try:
                with phase("replay"):  # the replay, persisted, then the groups table
                    schema.groups_of(combined).write.parquet(staging.path("groups"))
                with phase("outcomes"):
                    schema.outcomes_of(combined).write.parquet(staging.path("outcomes"))
            finally:
                combined.unpersist()
        with phase("reconcile"):  # SP-R6, SP-D6
            census.check_outcomes(spark.read.parquet(staging.path("outcomes")))
        with phase("publish"):
            publish(spark, staging, TABLES)
    except Exception as error:
        raise_job_error(error)
    finally:
        census.close()
        discard(spark, staging, TABLES)
    return BatchResult(output, total)
