"""The streaming job (``timealign stream``): Structured Streaming over a folder of files.

New Parquet, CSV or JSON-lines files in ``--source`` become micro-batches. Rows are grouped by
source and handed to :class:`MachineProcessor`, a ``transformWithStateInPandas``
processor (RocksDB state store) that keeps, per source, ONE binary state value: the
driver's checkpoint plus the adapter's bookkeeping, in the versioned codec of
:mod:`timealign.spark.checkpoint_codec` (SP-R11, SP-R12). It is read once and written once per
micro-batch. Ticks of clocked machines are delivered by one processing-time timer per
source, re-armed only when the earliest pending instant changes (SP-R13).

Each micro-batch's output is written idempotently to ``groups/batch=N`` and
``outcomes/batch=N`` (overwrite of a directory named by the batch id), so a batch that
Spark re-runs after a crash replaces its own earlier attempt: exactly once (SP-R15).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.streaming.stateful_processor import (
    ExpiredTimerInfo,
    StatefulProcessor,
    StatefulProcessorHandle,
    TimerValues,
)

from timealign import reasons
from timealign.algorithm import Algorithm
from timealign.drive import Driver
from timealign.errors import InvalidInput
from timealign.outputs import check_stream_output, write_stream_manifest
from timealign.spark import schema
from timealign.spark.binding import bind
from timealign.spark.checkpoint_codec import StateCodec
from timealign.spark.failures import marked, raise_job_error
from timealign.spark.outcomes import COLUMNS, LossError, SourceRun, timer_ms
from timealign.spark.paths import GLOB_CHARACTERS, JobPaths, PathError
from timealign.spark.replay import REQUIRED_VALUES, records_from, require_values, source_name

STATE_NAME = "machine"
STATE_SCHEMA = T.StructType([T.StructField("blob", T.BinaryType(), False)])
#: The reason of a late row's ``rejected`` outcome (SP-R14): a word, like the machines' own.
LATE = "late_file"
#: Hadoop glob of the files of a watched folder, names starting with "." or "_" left out
#: (Spark's own): Hadoop lists a glob's matches sorted by name (SP-R46).
NAME_ORDER_GLOB = "[^._]*"
INTEGER_COLUMNS = frozenset({"seq", "start", "end", "at", "input"})
#: The ``kind`` of a tick row: the clock reached the row's ``arrival`` (a stream whose
#: ticks are recorded with its input, MQ-R8); never fed to the machine as a row.
TICK_KIND = "timealign:tick"


def frame_of(columns: dict[str, list[Any]]) -> pd.DataFrame:
    """The combined output rows as a pandas frame with nullable integer columns."""
    return pd.DataFrame({
        name: pd.array(columns[name], dtype="Int64") if name in INTEGER_COLUMNS
        else pd.Series(columns[name], dtype=object)
        for name in COLUMNS
    })


def _files(frame: pd.DataFrame) -> list[str]:
    """The input files of a micro-batch's rows (text formats: without the block part)."""
    found = dict.fromkeys(str(f).split("\x00")[0] for f in frame[schema.FILE].tolist())
    return list(found)[:3]


def _optional(values: list[Any]) -> list[Any]:
    return [None if pd.isna(v) else v for v in values]


class MachineProcessor(StatefulProcessor):
    """Replays each source's rows micro-batch by micro-batch, its state in the store; on
    the algorithm's fast path (``Algorithm.fast_path``)."""

    def __init__(self, algorithm: Algorithm[Any, Any, Any, Any], config: Any,
                 tick_rows: bool = False) -> None:
        self.reference = algorithm
        self.algorithm = algorithm.fast_path()
        self.config = config
        # MQ-R8: ticks come as rows of kind TICK_KIND, not from Spark's clock (no timers)
        self.tick_rows = tick_rows

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.value = handle.getValueState(STATE_NAME, STATE_SCHEMA)
        self.codec = StateCodec.for_algorithm(self.reference, self.config)

    def _load(self, source: str) -> SourceRun:
        stored = self.value.get()
        if stored is None:
            return SourceRun(self.algorithm, self.config, source, recent=())
        checkpoint, seq, open_ids, recent = self.codec.decode(bytes(stored[0]))
        driver = Driver.resume(self.algorithm, self.config, checkpoint)
        return SourceRun(self.algorithm, self.config, source, driver, seq, open_ids, recent)

    def _save(self, run: SourceRun, armed: int | None) -> None:
        checkpoint = run.driver.checkpoint()
        self.value.update((self.codec.encode(checkpoint, run.seq, list(run.open),
                                             list(run.recent or ())),))
        wanted = timer_ms(checkpoint.timers[0]) if checkpoint.timers else None
        if self.tick_rows:
            return
        if wanted != armed:  # SP-R13: re-arm only when the earliest instant changes
            if armed is not None:
                self.handle.deleteTimer(armed)
            if wanted is not None:
                self.handle.registerTimer(wanted)

    def handleInputRows(
        self, key: Any, rows: Iterator[pd.DataFrame], timerValues: TimerValues
    ) -> Iterator[pd.DataFrame]:
        frame = pd.concat(list(rows), ignore_index=True)
        frame = frame.sort_values(["arrival", schema.FILE, schema.POSITION], kind="stable")
        source = key[0]
        # SP-R23: a bad row fails the stream with the file to remove, not a traceback.
        with marked(f"source {source!r}, micro-batch file(s) {_files(frame)} (remove or fix "
                    f"the file, then restart)"):
            output = self._replay(source, frame)
        yield output

    def _replay(self, value: Any, frame: pd.DataFrame) -> pd.DataFrame:
        source = source_name(None if isinstance(value, float) and pd.isna(value) else value)
        require_values(source, [f for f in REQUIRED_VALUES if frame[f].isna().any()])
        run = self._load(source)
        timers = run.driver.timers
        armed = timer_ms(min(timers)) if timers else None
        if not self.tick_rows:
            self._feed(run, frame)
        else:  # MQ-R9: the rows up to each tick row, then the tick
            ticks = (frame["kind"] == TICK_KIND).fillna(False).to_numpy().nonzero()[0]
            begin = 0
            for at in ticks.tolist():
                self._feed(run, frame.iloc[begin:at])
                run.fire_until(int(frame["arrival"].iloc[at]))
                begin = at + 1
            self._feed(run, frame.iloc[begin:])
        self._save(run, armed)
        return frame_of(run.take())

    def _feed(self, run: SourceRun, frame: pd.DataFrame) -> None:
        """Feed rows in order; a row arriving before the machine's last is late (SP-R14)."""
        last = run.driver.last_arrival
        late = frame["arrival"] < last if last is not None else frame["arrival"] < 0
        fresh = frame.loc[~late]
        fed = set(fresh["id"].tolist())
        for row_id in frame.loc[late, "id"].tolist():  # SP-R14; repeated ids: SP-R22
            run.reject_late(row_id, fed, LATE)
            fed.add(row_id)
        records = records_from(
            fresh["id"].tolist(), fresh["topic"].tolist(), fresh["stamp"].tolist(),
            fresh["arrival"].tolist(), _optional(fresh["kind"].tolist()),
            [None if v is None else int(v) for v in _optional(fresh["poll"].tolist())],
        )
        run.feed_all(records)

    def handleExpiredTimer(
        self, key: Any, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo
    ) -> Iterator[pd.DataFrame]:
        with marked(f"source {key[0]!r}, timer"):
            run = self._load(str(key[0]))
            run.fire_until(timerValues.getCurrentProcessingTimeInMs() * 1_000_000)
            self._save(run, None)  # the expired timer is gone
        yield frame_of(run.take())

    def close(self) -> None:
        pass


def name_ordered(source_dir: str) -> tuple[str, dict[str, str]]:
    """The path and options under which Spark's file source takes the files of a watched
    folder in name order where their modification times are equal (SP-R46).

    Spark orders new files by modification time only, and equal times in the order the
    file system lists them: on a local disk a hash order (measured: 5, 6, 2, 7, 4, 1, 0, 3
    for the 8 files of one ``cp -p``), so ``maxFilesPerTrigger`` took a recording's files
    out of order and their rows were late. Given a glob, Hadoop lists the matches sorted
    by name; ``basePath`` keeps Spark's partition discovery what it was for the folder. A
    path that is a file, or a remote glob, is left as given (a local glob is refused
    before, SP-R1)."""
    if GLOB_CHARACTERS & set(source_dir) or (
            "://" not in source_dir and not Path(source_dir).is_dir()):
        return source_dir, {}
    return f"{source_dir.rstrip('/')}/{NAME_ORDER_GLOB}", {"basePath": source_dir}


def stream_frame(
    spark: SparkSession, source_dir: str, fmt: str, columns: schema.ColumnMap,
    max_files: int | None = None,
) -> DataFrame:
    """The canonical rows of the file stream. A stream needs its schema up front: it is
    taken (for CSV, inferred) from the files present when the stream starts. Files are
    taken by modification time, then by name (:func:`name_ordered`, SP-R46)."""
    options = schema.reader_options(fmt)
    try:  # SP-R1: the files present are read or refused by name
        found = schema.load_named(spark, source_dir, fmt, columns).schema
    except PathError:
        raise
    except InvalidInput as error:
        raise PathError("input", "SP-R1", [f"no readable files to take the schema from "
                                           f"({error.message})"], source_dir) from None
    path, ordering = name_ordered(source_dir)
    reader = spark.readStream.format(fmt).options(**options, **ordering).schema(found)
    if max_files:
        reader = reader.option("maxFilesPerTrigger", max_files)
    return schema.canonical(reader.load(path), columns, has_row_index=fmt == "parquet")


#: Per micro-batch, the (outcome, reason, rows) of its settled rows other than grouped.
Tally = dict[int, list[tuple[str, str | None, int]]]


def write_batch(output: str, set_aside: str | None = None, tally: Tally | None = None,
                aside_column: str = "topic") -> Any:
    """The ``foreachBatch`` writer: idempotent per batch id (SP-R15). ``set_aside`` names a
    third table of rows that are not inputs (bags: topics not configured, BAG-R7), carried
    in the combined rows under that ``table`` with their topic in ``reason`` (written as the
    column ``aside_column``; the not-a-measurement rows of MQTT: their reason, MQ-R2).
    ``tally`` receives each batch's outcome counts other than grouped, for its progress line
    (SP-R33)."""

    def write(frame: DataFrame, batch_id: int) -> None:
        frame.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            for table, select in (("groups", schema.groups_of), ("outcomes", schema.outcomes_of)):
                select(frame).write.mode("overwrite").parquet(
                    f"{output}/{table}/batch={batch_id}")
            if set_aside is not None:
                frame.where(F.col("table") == set_aside).select(
                    "source", "id", F.col("reason").alias(aside_column)).write.mode(
                    "overwrite").parquet(f"{output}/{set_aside}/batch={batch_id}")
            if tally is not None:
                tally[batch_id] = sorted(
                    (str(r["outcome"]), r["reason"], int(r["count"])) for r in
                    frame.where(F.col("table") == "outcomes").groupBy(
                        "outcome", "reason").count().collect())
        finally:
            frame.unpersist()

    return write


def batch_line(algorithm: str, progress: dict[str, Any], tally: Tally) -> str:
    """A micro-batch's progress line (SP-R33): its rows read and the counts of what needs
    a look (SP-R31), or that nothing does."""
    batch = progress["batchId"]
    look = [f"{outcome}{f' ({reason})' if reason else ''} {rows}"
            for outcome, reason, rows in tally.get(batch, ())
            if not reasons.normal(algorithm, outcome)]
    verdict = f"needs a look: {', '.join(look)}" if look else "nothing needs a look"
    return f"[timealign stream] batch {batch}: {progress['numInputRows']} rows read; {verdict}"


def run_stream(
    spark: SparkSession,
    algorithm: Algorithm[Any, Any, Any, Any],
    config: Any,
    source_dir: str,
    output: str,
    checkpoint: str,
    fmt: str = "parquet",
    columns: schema.ColumnMap | None = None,
    available_now: bool = False,
    trigger_seconds: float = 1.0,
    max_files: int | None = None,
    report: bool = True,
    rows: DataFrame | None = None,
    set_aside: tuple[str, DataFrame] | None = None,
) -> int:
    """Run the stream over the files of ``source_dir``: the library's entry, which checks
    the paths (SP-R20) once, here; as :func:`stream_job` otherwise."""
    paths = JobPaths.check(source_dir, output, checkpoint=checkpoint)
    check_stream_output(output, checkpoint)  # CLI-R3: before the checkpoint is made
    return stream_job(spark, algorithm, config, paths, fmt, columns, available_now,
                      trigger_seconds, max_files, report, rows, set_aside)


def stream_job(
    spark: SparkSession,
    algorithm: Algorithm[Any, Any, Any, Any],
    config: Any,
    paths: JobPaths,
    fmt: str = "parquet",
    columns: schema.ColumnMap | None = None,
    available_now: bool = False,
    trigger_seconds: float = 1.0,
    max_files: int | None = None,
    report: bool = True,
    rows: DataFrame | None = None,
    set_aside: tuple[str, DataFrame] | None = None,
    tick_rows: bool = False,
    aside_column: str = "topic",
    on_poll: Callable[[], object] | None = None,
) -> int:
    """Run the stream of ``paths`` (checked: the watched folder is the input); return the
    number of micro-batches seen (SP-R16 for available-now). ``rows``: canonical streaming
    rows from another reader (bags) instead of the files; ``set_aside``: a table name and
    streaming rows of the combined schema written beside the outputs (see
    :func:`write_batch`); ``tick_rows``: the rows carry their ticks (MQ-R8), Spark's
    clock fires no timer; ``on_poll``: called at every poll of the running query (every 2
    s, SP-R54), an error it raises stops the query and is raised."""
    output, checkpoint = paths.output, paths.checkpoint
    assert checkpoint is not None, "a stream's paths name its checkpoint"
    bind(spark, checkpoint, algorithm, config)  # SP-R24
    if rows is None:
        rows = stream_frame(spark, paths.input, fmt, columns or schema.ColumnMap(), max_files)
    # SP-R16: with available-now, empty micro-batches would run forever (timers never let
    # the query finish); without them timers fire in batches that carry data.
    spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled",
                   "false" if available_now else "true")
    time_mode = "None" if algorithm.feeding.tick is None or tick_rows else "ProcessingTime"
    combined = rows.groupBy("source").transformWithStateInPandas(
        MachineProcessor(algorithm, config, tick_rows), schema.COMBINED, "Append", time_mode)
    if set_aside is not None:
        combined = combined.unionByName(set_aside[1])
    tally: Tally = {}
    writer = combined.writeStream.foreachBatch(
        write_batch(output, set_aside[0] if set_aside else None, tally, aside_column)).option(
        "checkpointLocation", checkpoint)
    if available_now:
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime=f"{trigger_seconds} seconds")
    write_stream_manifest(output, checkpoint)  # CLI-R3: the tables are this stream's
    if report:  # SP-R33: what the stream watches, before the first micro-batch
        order = "new bags in name order" if fmt == "rosbag" else \
            "new files by modification time, then name (SP-R46)"
        print(f"[timealign stream] watching {paths.input} ({fmt}; {order})",
              file=sys.stderr, flush=True)
    query = writer.start()
    seen = -1
    try:
        while query.isActive:
            query.awaitTermination(2)
            for progress in query.recentProgress:
                if progress["batchId"] > seen and (progress["numInputRows"] or
                                                   progress["batchId"] in tally):
                    seen = progress["batchId"]
                    if report:
                        print(batch_line(algorithm.name, progress, tally),
                              file=sys.stderr, flush=True)
            if on_poll is not None:  # SP-R54: the taken files, whenever Spark may list again
                on_poll()
    except (KeyboardInterrupt, LossError):  # CLI-R2: stop the query, then end the command
        query.stop()
        raise
    except Exception as failed:  # StreamingQueryException from awaitTermination
        raise_job_error(failed)
    error = query.exception()
    if error is not None:
        raise_job_error(RuntimeError(str(error)))
    return len(query.recentProgress)


def open_ids(
    spark: SparkSession, algorithm: Algorithm[Any, Any, Any, Any], config: Any, checkpoint: str
) -> DataFrame:
    """(source, id) of every row still open (fed, no outcome yet) in the state store after
    a stream (SP-D1)."""
    codec = StateCodec.for_algorithm(algorithm, config)
    state = spark.read.format("statestore").option("stateVarName", STATE_NAME).load(checkpoint)
    pairs = [
        (str(row["key"][0]), message_id)
        for row in state.select("key", "value").collect()
        for message_id in codec.decode(bytes(row["value"][0]))[2]
    ]
    return spark.createDataFrame(pairs, "source string, id string")


def read_table(spark: SparkSession, output: str, table: str) -> DataFrame:
    """One output table of a stream, without its ``batch`` partition column."""
    return spark.read.parquet(f"{output}/{table}").drop("batch")
