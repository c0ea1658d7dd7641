"""The batch job (``timealign run``): replay every source of a recorded table.

Rows are hash-partitioned by source and sorted by (source, arrival, input order) inside
Spark (SP-R2); a grouped Arrow UDF in the iterator form receives each source as a stream
of record batches, so a source of tens of millions of rows is never in memory whole, and
replays it (:func:`timealign.spark.replay.replay`). Columns are converted
once per batch and the output is built as Arrow arrays. Spark does not promise that the
sort survives into the groups, so the UDF checks the order of every row and fails loudly
(SP-R10). The combined output is persisted once and written as the two tables
``groups/`` and ``outcomes/`` into staging folders; the no-loss check (SP-R6) reconciles the
outcome counts per source with the input (SP-D6), and only then are the tables moved into
place (SP-R21); a summary (SP-R9) is printed. An output that overlaps the input is refused
before anything is read (SP-R20, :class:`timealign.spark.paths.JobPaths`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import attrs
import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import DataFrame, Observation, SparkSession

from timealign.algorithm import Algorithm
from timealign.spark import schema
from timealign.spark.census import Census, configured_topics
from timealign.spark.failures import marked, raise_job_error
from timealign.spark.inventory import Inventory, rows_per_file
from timealign.spark.paths import TABLES, JobPaths
from timealign.spark.per_file import ONE_FILE_PER_TASK, PER_FILE, replay_files_frame
from timealign.spark.publish import Staging, discard, publish
from timealign.spark.replay import columns_from_batches, replay, source_of
from timealign.spark.session import session_conf


def run_source_udf(
    algorithm: Algorithm[Any, Any, Any, Any], config: Any
) -> Callable[[tuple[pa.Scalar, ...], Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The grouped Arrow UDF (iterator form) that replays one source per call."""

    def run_source(
        key: tuple[pa.Scalar, ...], batches: Iterator[pa.RecordBatch]
    ) -> Iterator[pa.RecordBatch]:
        with marked("the batch job"):
            source = source_of(key)
        yield from replay(algorithm, config, source, columns_from_batches(source, batches))

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
    """Where the tables were written and how many rows the input had."""

    output: str
    rows: int
    #: SP-R38: sources without rows of a configured topic: how many, and examples
    missing_sources: int = 0
    missing_topics: tuple[dict[str, Any], ...] = ()

    def looks(self) -> dict[str, Any]:
        """What the summary adds (SP-R38): the sources lacking a configured topic."""
        if not self.missing_sources:
            return {}
        return {"missing_topics": {"sources": self.missing_sources,
                                   "examples": list(self.missing_topics)}}


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
    per_file_option: str = PER_FILE,
) -> BatchResult:
    """Replay ``input_path`` and write ``output/groups`` and ``output/outcomes``: the
    library's entry for a table input, which checks the paths (SP-R20) once, here; as
    :func:`run_table` otherwise."""
    paths = JobPaths.check(input_path, output)
    return run_table(spark, algorithm, config, paths, fmt, columns, per_file, phase,
                     per_file_option)


def run_table(
    spark: SparkSession,
    algorithm: Algorithm[Any, Any, Any, Any],
    config: Any,
    paths: JobPaths,
    fmt: str = "parquet",
    columns: schema.ColumnMap | None = None,
    per_file: bool = False,
    phase: Callable[[str], AbstractContextManager[object]] = no_phase,
    per_file_option: str = PER_FILE,
    inventory: Inventory | None = None,
) -> BatchResult:
    """Replay the table input of ``paths`` (checked) and write its output's tables; with
    ``per_file`` each file is one source already in arrival order (SP-R18); ``phase``,
    ``per_file_option`` and ``inventory`` as for :func:`run_rows`."""
    rows = schema.read_input(spark, paths.input, fmt, columns or schema.ColumnMap(),
                             source_from_file=per_file)
    return run_rows(spark, algorithm, config, rows, paths.output, per_file, phase,
                    per_file_option=per_file_option, inventory=inventory)


def run_rows(
    spark: SparkSession,
    algorithm: Algorithm[Any, Any, Any, Any],
    config: Any,
    rows: DataFrame,
    output: str,
    per_file: bool = False,
    phase: Callable[[str], AbstractContextManager[object]] = no_phase,
    dense: bool = True,
    per_file_option: str = PER_FILE,
    inventory: Inventory | None = None,
) -> BatchResult:
    """Replay canonical ``rows`` (SP-R1 columns plus the input order, SP-R2) and write
    ``output/groups`` and ``output/outcomes`` (a checked path, :class:`JobPaths`); the
    entry point of other readers (bags). With ``per_file`` every file of
    ``rows`` is one source, read whole by one task (SP-R18); ``dense`` false when the rows'
    positions may have gaps (bags, see :func:`timealign.spark.per_file.checked`).
    ``phase(name)`` is entered around each Spark job (census, replay, outcomes, reconcile,
    publish), for the benchmark's split of where the time goes. The per-file path takes
    its per-source census from the replay (SP-D23), checked before anything is published.
    ``per_file_option``: how the caller names the per-file path in its errors
    (``--sources-per-file`` for the command line). ``inventory``: what a table input
    holds, taken before it was read; the census's count must equal it (SP-R42) before any
    replay work."""
    staging = Staging(output)  # SP-R21: published only once the job has succeeded
    topics = configured_topics(config)
    census = Census(rows, one_file=per_file, option=per_file_option, topics=topics,
                    folded=per_file)  # SP-D23: the per-file replay counts its sources
    try:
        with phase("census"):
            total = census.check_input()  # SP-R22 (and SP-R18), before any replay work
            if inventory is not None:  # SP-R42: every inventoried row read
                inventory.reconcile(total, lambda: rows_per_file(
                    ((r[0], r[1]) for r in rows.groupBy(schema.FILE).count().collect()),
                    inventory.root))
        # Only the replay reads one file per task (SP-R18); the census above packs files.
        with session_conf(spark, ONE_FILE_PER_TASK if per_file else {}):
            replayed = (replay_files_frame(rows, algorithm, config, dense=dense,
                                           option=per_file_option, topics=topics)
                        if per_file else run_sources(rows, algorithm, config))
            # Persisted once, read by the two writes; DISK_ONLY, not MEMORY_AND_DISK (why:
            # see benchmarks/README.md, "Persisting the replay").
            combined = replayed.persist(StorageLevel.DISK_ONLY)
            try:
                with phase("replay"):  # the replay, persisted, then the groups table
                    schema.groups_of(combined).write.parquet(staging.path("groups"))
                # SP-D23: the per-file census rows observed on the way to the outcomes
                files = Observation() if per_file else None
                with phase("outcomes"):
                    written = combined if files is None else combined.observe(
                        files, Census.metric())
                    schema.outcomes_of(written).write.parquet(staging.path("outcomes"))
            finally:
                combined.unpersist()
        with phase("reconcile"):  # SP-D23, SP-R18 (per file); SP-R6, SP-D6
            if files is not None:
                census.take_files(files.get["files"], total)
            census.check_outcomes(spark.read.parquet(staging.path("outcomes")))
            missing, examples = census.missing_topics()  # SP-R38
        with phase("publish"):
            publish(spark, staging, TABLES)
    except Exception as error:
        raise_job_error(error)
    finally:
        census.close()
        discard(spark, staging, TABLES)
    return BatchResult(output, total, missing, tuple(examples))
