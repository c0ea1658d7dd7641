"""``timealign stream ALGORITHM --source mqtt://HOST:PORT/FILTER --format thin-edge``: the
receiver spools, the ``timealign_mqtt`` data source reads the spool, and the existing stream
job (:func:`timealign.spark.streaming.stream_job`) replays it (spec/mqtt.md).

The not-a-measurement rows are written beside the tables, per micro-batch, to
``not_measurements/`` (source, id, reason): every received message has one visible outcome.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from timealign.algorithm import Algorithm
from timealign.mqtt.receiver import Receiver
from timealign.mqtt.rows import NOT, TICK
from timealign.mqtt.source import NAME, register
from timealign.mqtt.spool import Spool, spool_path
from timealign.spark import schema
from timealign.spark.paths import JobPaths
from timealign.spark.stopping import SignalStop, say
from timealign.spark.streaming import TICK_KIND, stream_job

NOT_MEASUREMENTS = "not_measurements"


class Stop(SignalStop):
    """MQ-R14: SIGINT (Ctrl-C) and SIGTERM (systemd, ``docker stop``, ``timeout``) stop the
    stream at a micro-batch boundary (:class:`timealign.spark.stopping.SignalStop`): the
    first signal stops the receiver, spools a last tick at the signal's instant and lets the
    micro-batch that takes everything received end and commit; then the query is stopped,
    while idle."""

    then = ("stopping after the micro-batch that takes every message received; then the "
            "summary (MQ-R14)")

    def __init__(self) -> None:
        super().__init__()
        self._final: int | None = None
        self._receiver: Receiver | None = None

    def watching(self, receiver: Receiver, checkpoint: str) -> Callable[[Any], bool]:
        """The stream job's ``stop`` hook: whether the query stopped at the boundary."""
        self._receiver = receiver

        def stop(query: Any) -> bool:
            if self.signal is None:
                return False
            if self._final is None:
                receiver.stop()  # nothing is taken (or acknowledged) after this
                self._final = receiver.spool.tick(self.at).position + 1
            if committed_position(Path(checkpoint)) < self._final:
                return False
            query.stop()  # idle between micro-batches: nothing is cut short
            return True

        return stop


#: MQ-R17: seconds after which a first micro-batch still running is said to be.
FIRST_WAIT = 20.0


def first_batch_watch(checkpoint: Path, report: bool = True,
                      wait: float = FIRST_WAIT) -> Callable[[], None]:
    """MQ-R17: a poll hook that says, once, that the first micro-batch of this start is
    still running after ``wait`` seconds (the messages are spooled meanwhile)."""
    started, said = time.monotonic(), [not report]
    done = {p.name for p in (checkpoint / "commits").glob("*")}

    def watch() -> None:
        if said[0] or time.monotonic() - started < wait:
            return
        said[0] = True
        if {p.name for p in (checkpoint / "commits").glob("*")} - done:
            return
        say(f"[timealign stream] the first micro-batch is still running after {wait:g} s "
            f"(Spark starts its state store and Python workers; a minute or more on a busy "
            f"machine): messages are spooled and acknowledged meanwhile, none is lost "
            f"(MQ-R17)")

    return watch


def committed_position(checkpoint: Path) -> int:
    """MQ-R14: the spool position every reader of the query has committed up to (the
    smallest of the last committed micro-batch's end offsets; 0 before the first)."""
    done = [int(p.name) for p in (checkpoint / "commits").glob("*") if p.name.isdigit()]
    if not done:
        return 0
    lines = (checkpoint / "offsets" / str(max(done))).read_text().splitlines()[2:]
    ends = [int(json.loads(line)["position"]) for line in lines if line.strip()]
    return min(ends, default=0)


def spool_frames(spark: SparkSession, spool: Path, algorithm: Algorithm[Any, Any, Any, Any],
                 config: Any) -> tuple[DataFrame, DataFrame]:
    """(canonical rows with tick rows of kind ``TICK_KIND``, not-a-measurement rows in the
    combined schema under the table ``not_measurements``) of the spool's stream; the rows
    are checked by the algorithm's row form (MQ-R2, ``rows.row_check``)."""
    register(spark)
    frame = spark.readStream.format(NAME).options(
        algorithm=algorithm.name, config=json.dumps(algorithm.codec.config_to_json(config))
    ).load(str(spool))
    return _canonical(frame), _refused(frame)


def _canonical(frame: DataFrame) -> DataFrame:
    """The canonical rows (tick rows of kind ``TICK_KIND``) of frames of ``rows.DDL``."""
    return frame.where(F.col("what") != NOT).select(
        "source", "id", "topic", "stamp", "arrival",
        F.when(F.col("what") == TICK, F.lit(TICK_KIND)).cast(T.StringType()).alias("kind"),
        F.lit(None).cast(T.LongType()).alias("poll"),
        F.lit("spool").alias(schema.FILE), F.col("position").alias(schema.POSITION))


def _refused(frame: DataFrame) -> DataFrame:
    """The not-a-measurement rows of frames of ``rows.DDL``, in the combined schema."""
    return frame.where(F.col("what") == NOT).select(*(
        F.lit(NOT_MEASUREMENTS).alias(field.name) if field.name == "table"
        else F.col(field.name) if field.name in ("source", "id", "reason")
        else F.lit(None).cast(field.dataType).alias(field.name)
        for field in schema.COMBINED.fields))


def stream_mqtt(spark: SparkSession, algorithm: Algorithm[Any, Any, Any, Any], config: Any,
                receiver: Receiver, paths: JobPaths, trigger_seconds: float = 1.0,
                report: bool = True, stop: Stop | None = None) -> int:
    """Stream the spool of the started ``receiver`` until stopped (a signal, with ``stop``:
    at a micro-batch boundary, MQ-R14); return the micro-batches seen."""
    assert paths.checkpoint is not None, "a stream's paths name its checkpoint"
    rows, refused = spool_frames(spark, receiver.spool.path, algorithm, config)
    topic = receiver.topic
    first = first_batch_watch(Path(paths.checkpoint), report)

    def poll() -> None:
        receiver.check()  # MQ-R12: a refused subscription
        first()  # MQ-R17
    try:
        return stream_job(spark, algorithm, config, paths, trigger_seconds=trigger_seconds,
                          report=report, rows=rows, set_aside=(NOT_MEASUREMENTS, refused),
                          tick_rows=True, aside_column="reason",
                          on_poll=poll,
                          watching=f"MQTT topic filter {topic!r}, QoS 1; spooled to "
                                   f"{receiver.spool.path}; a micro-batch every "
                                   f"{trigger_seconds:g} s (MQ-R10)",  # MQ-R16
                          stop=None if stop is None else stop.watching(
                              receiver, paths.checkpoint))
    finally:
        receiver.stop()


def start_receiver(url: str, checkpoint: str, trigger_seconds: float) -> Receiver:
    """MQ-R10: the receiver of the stream, connected to the broker (before Spark starts: an
    unreachable broker is refused at once, MQ-R16)."""
    receiver = Receiver(url, Spool(spool_path(checkpoint).parent), checkpoint,
                        trigger_seconds)
    receiver.start()
    return receiver


def stream_summary(spark: SparkSession, algorithm: Algorithm[Any, Any, Any, Any], config: Any,
                   paths: JobPaths) -> dict[str, Any]:
    """MQ-R15: the summary of a stopped MQTT stream, as a file stream's (SP-R33): the
    outcomes of its tables, the rows still held by the machines (pending, SP-D1), and the
    messages that are not measurements (``not_measurements``: per reason word, MQ-R2)."""
    from timealign.spark.streaming import open_ids, read_table
    from timealign.spark.summary import summarize, with_held, with_verdict

    assert paths.checkpoint is not None, "a stream's paths name its checkpoint"
    out = Path(paths.output)
    tables = {name: (read_table(spark, paths.output, name) if (out / name).is_dir() else
                     spark.createDataFrame([], select(spark.createDataFrame(
                         [], schema.COMBINED)).schema))
              for name, select in (("groups", schema.groups_of),
                                   ("outcomes", schema.outcomes_of))}
    held = open_ids(spark, algorithm, config, paths.checkpoint).count() \
        if (Path(paths.checkpoint) / "state").is_dir() else 0
    summary = with_held(summarize(tables["groups"], tables["outcomes"]), held)
    words: dict[str, int] = {}
    if (out / NOT_MEASUREMENTS).is_dir():
        for row in read_table(spark, paths.output, NOT_MEASUREMENTS).select(
                F.substring_index("reason", ":", 1).alias("word")).groupBy("word").count(
                ).collect():
            words[str(row["word"])] = int(row["count"])
    summary[NOT_MEASUREMENTS] = [{"reason": word, "messages": count} for word, count in
                                 sorted(words.items(), key=lambda item: (-item[1], item[0]))]
    return with_verdict(summary, algorithm.name)


def not_measurement_lines(summary: dict[str, Any]) -> list[str]:
    """MQ-R15: the summary's lines for the messages that are not measurements."""
    return [f"  not a measurement ({entry['reason']}): {entry['messages']} messages, in "
            f"{NOT_MEASUREMENTS}/ (MQ-R2)" for entry in summary.get(NOT_MEASUREMENTS, [])]


def write_stream_report(spark: SparkSession, algorithm: Algorithm[Any, Any, Any, Any],
                        config: Any, paths: JobPaths, summary: dict[str, Any],
                        command: str | None) -> Path:
    """MQ-R15, PL-R9: the report of a stopped MQTT stream, its input rows taken from the
    spool (the rows of the measurements, MQ-R8)."""
    from timealign.mqtt.rows import DDL, ROW, row_check, spool_rows
    from timealign.mqtt.spool import read_entries
    from timealign.outputs import read_manifest
    from timealign.spark.inputs import write_rows_report

    assert paths.checkpoint is not None and paths.report is not None
    entries, _ = read_entries(spool_path(paths.checkpoint))
    rows = [row for row in spool_rows(entries, 0, row_check(algorithm, config))
            if row[0] == ROW]
    return write_rows_report(algorithm, config, _canonical(spark.createDataFrame(rows, DDL)),
                             paths, summary, command, read_manifest(paths.output, "--output"))
