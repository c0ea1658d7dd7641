"""``timealign run|stream --format rosbag``: bags through the ``rosbag`` data source into
the jobs (spec/formats.md).

The data source yields every message of every bag; this module drops the rows of skipped
bags (BAG-R6), sets aside the rows of topics the algorithm is not configured for and
counts them per topic (BAG-R7), and hands the rest to the jobs as canonical rows (SP-R1,
with the bag as the file and the read position as the row of SP-R2).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import attrs
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from timealign.algorithm import Algorithm
from timealign.errors import InvalidInput
from timealign.spark import schema
from timealign.spark.batch import BatchResult, no_phase, run_rows
from timealign.spark.census import configured_topics
from timealign.spark.failures import raise_job_error
from timealign.spark.inventory import Inventory
from timealign.spark.paths import JobPaths
from timealign.spark.per_file import PER_FILE
from timealign.spark.rosbag_source import options_of, register


def reader_options(stamps: Sequence[str], source_from: str, skip_bad: bool,
                   topics: Sequence[str] | None) -> dict[str, str]:
    """The data source options of the CLI's ``--stamp``, ``--source-from``,
    ``--skip-bad-files`` and the config's topics (BAG-R3, BAG-R2, BAG-R6, BAG-R7)."""
    log_topics = []
    stamp = "header"
    for item in stamps:
        topic, sep, mode = item.rpartition("=")
        if not sep:
            if item not in ("header", "log"):
                raise InvalidInput("--stamp", "BAG-R3", "must be header, log or TOPIC=log", item)
            stamp = item
        elif mode == "log" and topic:
            log_topics.append(topic)
        else:
            raise InvalidInput("--stamp", "BAG-R3", "must be header, log or TOPIC=log", item)
    options = {"stamp": stamp, "logStampTopics": ",".join(log_topics),
               "sourceFrom": source_from, "skipBadFiles": str(skip_bad).lower(),
               "errorNames": "flags"}  # BAG-R15: the reader's errors name these flags
    if topics is not None:
        options["topics"] = ",".join(topics)
        options["missingTopics"] = "allow"  # BAG-R13 says it (a warning, or --strict)
    options_of(options)  # reject bad options before Spark starts reading
    return options


def canonical(frame: DataFrame) -> DataFrame:
    """The jobs' canonical columns: the bag is the file, the read position the row."""
    return frame.select(
        "source", "id", "topic", "stamp", "arrival",
        F.lit(None).cast(T.StringType()).alias("kind"),
        F.lit(None).cast(T.LongType()).alias("poll"),
        F.col("bag").alias(schema.FILE), F.col("position").alias(schema.POSITION))


@attrs.frozen
class BagReport:
    """What the summary adds for bags: skipped bags, rows of other topics and the
    configured topics no bag holds (BAG-R13)."""

    skipped: tuple[tuple[str, str], ...]
    not_configured: tuple[tuple[str, int], ...]
    absent: tuple[str, ...] = ()

    def warnings(self) -> list[str]:
        """BAG-R13: one line per configured topic that no bag holds."""
        return [f"the configured topic {topic} is in no bag: no row of it was read (BAG-R13)"
                for topic in self.absent]

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "skipped_bags": [{"bag": b, "error": e} for b, e in self.skipped],
            "not_configured": [{"topic": t, "rows": n} for t, n in self.not_configured]}
        if self.absent:
            body["absent_topics"] = list(self.absent)
            body["warnings"] = self.warnings()
        return body


def read_bags(spark: SparkSession, path: str, options: dict[str, str],
              topics: Sequence[str] | None) -> tuple[DataFrame, DataFrame, BagReport]:
    """(canonical input rows, all rows persisted, report). The rows carry no payloads and
    are persisted so that the bags are read once for the report, the replay and the
    no-loss count."""
    register(spark)
    try:  # the data source's planning errors come back as the package's own (BAG-R15)
        frame = spark.read.format("rosbag").options(**options).load(path)
    except Exception as error:
        raise_job_error(error)
    frame = frame.persist(StorageLevel.DISK_ONLY)
    try:
        bad = frame.where(F.col("error").isNotNull()).select("bag", "error").collect()
        rows = frame.where(~F.col("bag").isin([r["bag"] for r in bad])) if bad else frame
        other = []
        absent: tuple[str, ...] = ()
        if topics is not None:
            counts = rows.groupBy("topic").count().orderBy("topic").collect()
            other = [r for r in counts if r["topic"] not in topics]
            present = {r["topic"] for r in counts}
            absent = tuple(t for t in topics if t not in present)  # BAG-R13
            rows = rows.where(F.col("topic").isin(list(topics)))
    except Exception as error:
        frame.unpersist()
        raise_job_error(error)
    report = BagReport(tuple((r["bag"], r["error"]) for r in bad),
                       tuple((r["topic"], int(r["count"])) for r in other), absent)
    return canonical(rows), frame, report


def reconcile_bags(frame: DataFrame, report: BagReport, inventory: Inventory | None) -> None:
    """SP-R42, SP-R51: the rows read of every bag not skipped (all topics, ``frame`` as
    :func:`read_bags` persisted it) equal the bag's own counts in ``inventory``; on a
    difference ``frame`` is unpersisted and ``LossError`` names the bag. ``run`` and
    ``verify`` check the same way."""
    if inventory is None:
        return
    try:
        read = {r["bag"]: int(r["count"]) for r in frame.where(
            F.col("error").isNull()).groupBy("bag").count().collect()}
        inventory.reconcile(sum(read.values()), lambda: read, dict(report.skipped))
    except BaseException:
        frame.unpersist()
        raise


def run_bags(spark: SparkSession, algorithm: Algorithm[Any, Any, Any, Any], config: Any,
             paths: JobPaths, options: dict[str, str], per_file: bool = False,
             phase: Callable[[str], AbstractContextManager[object]] = no_phase,
             strict: bool = False, per_file_option: str = PER_FILE,
             inventory: Inventory | None = None) -> tuple[BatchResult, BagReport]:
    """The batch job over the folder of bags of ``paths`` (checked, SP-R20); with
    ``per_file`` every bag is one source in arrival order, replayed as read (SP-R18: the
    data source reads a bag as one partition, and its positions only increase, with gaps
    where rows of other topics were set aside). ``inventory``: the bags' own counts, taken
    before the read; the rows read of every bag not skipped must equal them (SP-R42)."""
    rows, frame, report = read_bags(spark, paths.input, options, configured_topics(config))
    reconcile_bags(frame, report, inventory)
    if strict and report.absent:  # BAG-R13: an error before the replay with --strict
        frame.unpersist()
        raise InvalidInput("--config topics", "BAG-R13", "configured topic(s) in no bag: "
                           f"{', '.join(report.absent)}", paths.input)
    try:
        result = run_rows(spark, algorithm, config, rows, paths.output, per_file, phase,
                          dense=False, per_file_option=per_file_option)
    finally:
        frame.unpersist()
    return result, report


NOT_CONFIGURED = "not_configured"


def stream_bags(spark: SparkSession, folder: str, options: dict[str, str],
                topics: Sequence[str] | None) -> tuple[DataFrame, DataFrame | None]:
    """(canonical rows, rows of other topics) of a stream of bags (BAG-R8, BAG-R7). The
    second frame is in the combined output schema under the table ``not_configured`` (topic
    in ``reason``), written per micro-batch to ``not_configured/``; None without topics."""
    register(spark)
    frame = spark.readStream.format("rosbag").options(**options).load(folder)
    frame = frame.where(F.col("error").isNull())
    if topics is None:
        return canonical(frame), None
    inside = F.col("topic").isin(list(topics))
    other = frame.where(~inside).select(*(
        F.lit(NOT_CONFIGURED).alias(field.name) if field.name == "table"
        else F.col("source") if field.name == "source"
        else F.col("id") if field.name == "id"
        else F.col("topic").alias("reason") if field.name == "reason"
        else F.lit(None).cast(field.dataType).alias(field.name)
        for field in schema.COMBINED.fields))
    return canonical(frame.where(inside)), other
