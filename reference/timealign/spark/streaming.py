"""The streaming job (``timealign stream``): Structured Streaming over a folder of files.

New Parquet, CSV or JSON-lines files in ``--source`` become micro-batches. Rows are grouped by
source and handed to :class:`MachineProcessor`, a ``transformWithStateInPandas``
processor (RocksDB state store) that keeps, per source, ONE binary state value: the
driver's checkpoint plus the adapter's bookkeeping, in the versioned codec of
:mod:`timealign.spark.checkpoint_codec` (SP-R11, SP-R12). It is read once and written once per
micro-batch. Ticks of clocked machines follow the rows' own clock, as in batch: a tick fires
before the first row at or after its instant (DRV-R3), never at a micro-batch's end ahead of
rows not read yet (SP-R13, SP-D5).

Each micro-batch's output is written idempotently to ``groups/batch=N`` and
``outcomes/batch=N`` (overwrite of a directory named by the batch id), so a batch that
Spark re-runs after a crash replaces its own earlier attempt: exactly once (SP-R15).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pandas as pd
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.streaming.stateful_processor import (
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
from timealign.spark.outcomes import COLUMNS, LossError, SourceRun
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
#: The table of the files whose rows a stream rejected as late (SP-R56), one row per
#: (micro-batch, source, file): written to ``late_files/batch=N``, named by the summary.
LATE_FILES = "late_files"
#: The ``table`` of the row a processor call adds for the rows it read (its ``input``
#: column holds the count): the micro-batch line's "rows read" (SP-R33); no table takes it.
READ = "read"


def frame_of(columns: dict[str, list[Any]]) -> pd.DataFrame:
    """The combined output rows as a pandas frame with nullable integer columns."""
    return pd.DataFrame({
        name: pd.array(columns[name], dtype="Int64") if name in INTEGER_COLUMNS
        else pd.Series(columns[name], dtype=object)
        for name in COLUMNS
    })


def _read_row(source: str, rows: int) -> pd.DataFrame:
    """The one combined row saying that a call read ``rows`` rows of ``source`` (SP-R33)."""
    return frame_of({name: [READ] if name == "table" else [source] if name == "source"
                     else [rows] if name == "input" else [None] for name in COLUMNS})


def _local(uri: str) -> str:
    """A ``file:`` URI as the local path it names (other URIs as they are)."""
    if not uri.startswith("file:"):
        return uri
    from urllib.parse import unquote, urlparse

    return unquote(urlparse(uri).path)


def _late_rows(source: str, late: pd.DataFrame, behind: int) -> pd.DataFrame:
    """SP-R56: per file, the combined row of its rows rejected late: ``id`` the file,
    ``input`` its late rows, ``start`` the earliest of their arrivals, ``end`` the arrival
    of the source's last row taken, which they came after."""
    files = late[schema.FILE].map(lambda f: _local(str(f).split("\x00")[0]))
    per_file = late.assign(file=files).groupby("file", sort=True)["arrival"].agg(
        ["size", "min"])
    count = len(per_file)
    return frame_of({
        name: [LATE_FILES] * count if name == "table" else [source] * count
        if name == "source" else list(per_file.index) if name == "id"
        else [int(v) for v in per_file["size"]] if name == "input"
        else [int(v) for v in per_file["min"]] if name == "start"
        else [behind] * count if name == "end" else [None] * count for name in COLUMNS})


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
        # MQ-R8: ticks come as rows of kind TICK_KIND too; without them, only the driver's
        # own (DRV-R3): Spark's clock never fires a tick (SP-R13)
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

    def _save(self, run: SourceRun) -> None:
        checkpoint = run.driver.checkpoint()
        self.value.update((self.codec.encode(checkpoint, run.seq, list(run.open),
                                             list(run.recent or ())),))

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
        lates: list[pd.DataFrame] = []
        if not self.tick_rows:  # SP-R13: the rows' ticks (DRV-R3), none past the last row
            self._feed(run, frame, lates)
        else:  # MQ-R9: the rows up to each tick row, then the tick
            ticks = (frame["kind"] == TICK_KIND).fillna(False).to_numpy().nonzero()[0]
            begin = 0
            for at in ticks.tolist():
                self._feed(run, frame.iloc[begin:at], lates)
                run.fire_until(int(frame["arrival"].iloc[at]))
                begin = at + 1
            self._feed(run, frame.iloc[begin:], lates)
        self._save(run)
        output = frame_of(run.take())
        read = len(frame) - int((frame["kind"] == TICK_KIND).fillna(False).sum())
        if not read:
            return output
        return pd.concat([output, _read_row(source, read), *lates], ignore_index=True)

    def _feed(self, run: SourceRun, frame: pd.DataFrame, lates: list[pd.DataFrame]) -> None:
        """Feed rows in order; a row arriving before the machine's last is late (SP-R14),
        and its file is added to ``lates`` (SP-R56)."""
        last = run.driver.last_arrival
        late = frame["arrival"] < last if last is not None else frame["arrival"] < 0
        if last is not None and late.any():
            lates.append(_late_rows(run.source, frame.loc[late], last))
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


def first_files(source_dir: str, fmt: str, columns: schema.ColumnMap, available_now: bool,
                seconds: float, say: Callable[[str], object] | None,
                stopped: Callable[[], bool] = lambda: False) -> bool:
    """SP-R55: whether the watched folder holds files to take the schema from, waiting for
    the first one (checked every ``seconds``) unless ``available_now`` (False then: nothing
    to process) or until ``stopped`` (SP-R81: a signal came; False). A path that is not a
    local folder is left to Spark."""
    if "://" in source_dir or GLOB_CHARACTERS & set(source_dir) or \
            not Path(source_dir).is_dir():
        return True
    waited = False
    while not schema.input_files(source_dir, fmt, columns, read_whole=False):
        if available_now or stopped():
            return False
        if not waited and say is not None:
            say(f"[timealign stream] no {fmt} file in {source_dir} yet: waiting for the "
                f"first one, to take the columns from (SP-R55)")
        waited = True
        time.sleep(max(seconds, 0.2))
    if waited:  # a file that just appeared may still be being written: one more interval
        time.sleep(max(seconds, 0.2))
    return True


def stream_frame(
    spark: SparkSession, source_dir: str, fmt: str, columns: schema.ColumnMap,
    max_files: int | None = None,
) -> DataFrame:
    """The canonical rows of the file stream. A stream needs its schema up front: it is
    taken (for CSV, inferred) from the files present when the stream starts. Files are
    taken by modification time, then by name (:func:`name_ordered`, SP-R46)."""
    options = schema.reader_options(fmt)
    columns = schema.with_timestamps(source_dir, fmt, columns)  # SP-R36
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


@attrs.frozen
class BatchCount:
    """What one micro-batch did (SP-R33): the rows it read (the rows the machines were given,
    tick rows not counted, plus the rows set aside), the rows it settled (the rows of its
    ``outcomes/batch=N``, plus the rows set aside), and per (outcome, reason) the settled
    rows other than grouped."""

    read: int
    settled: int
    outcomes: tuple[tuple[str, str | None, int], ...] = ()
    late_files: tuple[str, ...] = ()  # SP-R56: the files whose rows were late


#: Per micro-batch id, its counts.
Tally = dict[int, BatchCount]


def batch_count(frame: DataFrame, set_aside: str | None) -> BatchCount:
    """:class:`BatchCount` of a micro-batch's combined rows, in one aggregation."""
    table = F.col("table")
    aside = table == set_aside if set_aside is not None else F.lit(False)
    counted = frame.groupBy("table", "outcome", "reason").agg(
        F.count(F.lit(1)).alias("rows"),
        F.sum(F.when(table == READ, F.col("input"))).alias("read"),
        F.sum(F.when(table == "groups", F.size("ids"))).alias("members"),
        F.max(aside).alias("aside")).collect()
    read = settled = 0
    outcomes = []
    for row in counted:
        if row["aside"]:  # read and settled at once: beside the tables (BAG-R7, MQ-R2)
            read += int(row["rows"])
            settled += int(row["rows"])
        elif row["table"] == READ:
            read += int(row["read"] or 0)
        elif row["table"] == "groups":
            settled += int(row["members"] or 0)
        elif row["table"] == "outcomes":
            settled += int(row["rows"])
            outcomes.append((str(row["outcome"]), row["reason"], int(row["rows"])))
    late: tuple[str, ...] = ()
    if any(row["table"] == LATE_FILES for row in counted):  # SP-R56: few rows, named
        late = tuple(sorted({str(r["id"]) for r in frame.where(table == LATE_FILES).select(
            "id").collect()}))
    return BatchCount(read, settled, tuple(sorted(outcomes, key=repr)), late)


def late_files_of(combined: DataFrame) -> DataFrame:
    """SP-R56: the ``late_files`` table: (source, file, rows, first_arrival, after)."""
    return combined.where(F.col("table") == LATE_FILES).select(
        "source", F.col("id").alias("file"), F.col("input").alias("rows"),
        F.col("start").alias("first_arrival"), F.col("end").alias("after"))


def write_batch(output: str, set_aside: str | None = None, tally: Tally | None = None,
                aside_column: str = "topic") -> Any:
    """The ``foreachBatch`` writer: idempotent per batch id (SP-R15). ``set_aside`` names a
    third table of rows that are not inputs (bags: topics not configured, BAG-R7), carried
    in the combined rows under that ``table`` with their topic in ``reason`` (written as the
    column ``aside_column``; the not-a-measurement rows of MQTT: their reason, MQ-R2).
    ``tally`` receives each batch's counts (:class:`BatchCount`), for its progress line
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
            count = batch_count(frame, set_aside)
            if count.late_files:  # SP-R56
                late_files_of(frame).write.mode("overwrite").parquet(
                    f"{output}/{LATE_FILES}/batch={batch_id}")
            if tally is not None:
                tally[batch_id] = count
        finally:
            frame.unpersist()

    return write


def batch_line(algorithm: str, batch: int, count: BatchCount) -> str:
    """A micro-batch's progress line (SP-R33): the rows it read and settled, and the counts
    of what needs a look (SP-R31), or that nothing does."""
    look = [f"{outcome}{f' ({reason})' if reason else ''} {rows}"
            for outcome, reason, rows in count.outcomes
            if not reasons.normal(algorithm, outcome)]
    verdict = f"needs a look: {', '.join(look)}" if look else "nothing needs a look"
    if count.late_files:  # SP-R56
        shown = ", ".join(count.late_files[:3])
        more = len(count.late_files) - 3
        verdict += f" (late: {shown}{f' and {more} more' if more > 0 else ''})"
    return (f"[timealign stream] batch {batch}: {count.read} rows read, {count.settled} "
            f"settled; {verdict}")


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
    watching: str | None = None,
    stop: Callable[[Any], object] | None = None,
) -> int:
    """Run the stream of ``paths`` (checked: the watched folder is the input); return the
    number of micro-batches seen (SP-R16 for available-now). ``rows``: canonical streaming
    rows from another reader (bags) instead of the files; ``set_aside``: a table name and
    streaming rows of the combined schema written beside the outputs (see
    :func:`write_batch`); ``tick_rows``: the rows carry their ticks too (MQ-R8);
    ``on_poll``: called at every poll of the running query (every 2 s, SP-R54), an error
    it raises stops the query and is raised; ``watching``: what the start line says is
    watched (default: the files of the folder); ``stop``: when given, the stream ends when
    it returns, called with the running query at every poll and after each micro-batch
    line (MQ-R14, SP-R81: it stops the query itself, at a micro-batch boundary), and with
    None while the stream waits for its first file (SP-R55: true ends the wait)."""
    output, checkpoint = paths.output, paths.checkpoint
    assert checkpoint is not None, "a stream's paths name its checkpoint"
    if report:  # SP-R33: what the stream watches, before the first micro-batch
        order = "new bags in name order" if fmt == "rosbag" else \
            "new files by modification time, then name (SP-R46)"
        print(f"[timealign stream] watching {paths.input} ({watching or f'{fmt}; {order}'})",
              file=sys.stderr, flush=True)
    if rows is None:  # SP-R55: the columns come from the first files; none yet: wait
        columns = columns or schema.ColumnMap()
        if not first_files(paths.input, fmt, columns, available_now, trigger_seconds,
                           (lambda line: print(line, file=sys.stderr, flush=True))
                           if report else None,
                           lambda: stop is not None and bool(stop(None))):
            return 0
        rows = stream_frame(spark, paths.input, fmt, columns, max_files)
    bind(spark, checkpoint, algorithm, config)  # SP-R24
    # SP-R16: no empty micro-batch: no Spark timer (SP-R13) has anything for one to do.
    spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "false")
    # SP-R13, SP-D5: no processing-time timers; a clocked machine's ticks follow its rows
    combined = rows.groupBy("source").transformWithStateInPandas(
        MachineProcessor(algorithm, config, tick_rows), schema.COMBINED, "Append", "None")
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
    query = writer.start()
    seen = -1
    try:
        while query.isActive:
            query.awaitTermination(2)
            # SP-R33: each micro-batch's own counts (Spark's numInputRows counted tick rows
            # and a source read twice, and missed rows read through a persisted frame)
            for batch in sorted(b for b in list(tally) if b > seen):
                seen, count = batch, tally[batch]
                if report and (count.read or count.settled):
                    print(batch_line(algorithm.name, batch, count), file=sys.stderr, flush=True)
            if on_poll is not None:  # SP-R54: the taken files, whenever Spark may list again
                on_poll()
            if stop is not None and stop(query):  # MQ-R14: stopped at a batch boundary
                break
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


def late_files(spark: SparkSession, output: str) -> list[dict[str, Any]]:
    """SP-R56: the rows of a stream's ``late_files`` table, none when it has none."""
    if "://" not in output and not Path(output, LATE_FILES).is_dir():
        return []
    try:
        rows = read_table(spark, output, LATE_FILES).collect()
    except Exception:  # AnalysisException: a remote output without the table
        if "://" not in output:
            raise
        return []
    return [{"file": str(r["file"]), "source": str(r["source"]), "rows": int(r["rows"]),
             "first_arrival": int(r["first_arrival"]), "after": int(r["after"])}
            for r in rows]
