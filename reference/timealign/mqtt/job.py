"""``timealign stream ALGORITHM --source mqtt://HOST:PORT/FILTER --format thin-edge``: the
receiver spools, the ``timealign_mqtt`` data source reads the spool, and the existing stream
job (:func:`timealign.spark.streaming.stream_job`) replays it (spec/mqtt.md).

The not-a-measurement rows are written beside the tables, per micro-batch, to
``not_measurements/`` (source, id, reason): every received message has one visible outcome.
"""

from __future__ import annotations

import json
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
from timealign.spark.streaming import TICK_KIND, stream_job

NOT_MEASUREMENTS = "not_measurements"


def spool_frames(spark: SparkSession, spool: Path, algorithm: Algorithm[Any, Any, Any, Any],
                 config: Any) -> tuple[DataFrame, DataFrame]:
    """(canonical rows with tick rows of kind ``TICK_KIND``, not-a-measurement rows in the
    combined schema under the table ``not_measurements``) of the spool's stream; the rows
    are checked by the algorithm's row form (MQ-R2, ``rows.row_check``)."""
    register(spark)
    frame = spark.readStream.format(NAME).options(
        algorithm=algorithm.name, config=json.dumps(algorithm.codec.config_to_json(config))
    ).load(str(spool))
    rows = frame.where(F.col("what") != NOT).select(
        "source", "id", "topic", "stamp", "arrival",
        F.when(F.col("what") == TICK, F.lit(TICK_KIND)).cast(T.StringType()).alias("kind"),
        F.lit(None).cast(T.LongType()).alias("poll"),
        F.lit("spool").alias(schema.FILE), F.col("position").alias(schema.POSITION))
    refused = frame.where(F.col("what") == NOT).select(*(
        F.lit(NOT_MEASUREMENTS).alias(field.name) if field.name == "table"
        else F.col(field.name) if field.name in ("source", "id", "reason")
        else F.lit(None).cast(field.dataType).alias(field.name)
        for field in schema.COMBINED.fields))
    return rows, refused


def stream_mqtt(spark: SparkSession, algorithm: Algorithm[Any, Any, Any, Any], config: Any,
                url: str, paths: JobPaths, trigger_seconds: float = 1.0,
                report: bool = True) -> int:
    """Receive from the broker into the spool and stream the spool until stopped (Ctrl-C);
    return the micro-batches seen."""
    assert paths.checkpoint is not None, "a stream's paths name its checkpoint"
    spool = Spool(spool_path(paths.checkpoint).parent)
    receiver = Receiver(url, spool, paths.checkpoint, trigger_seconds)
    rows, refused = spool_frames(spark, spool.path, algorithm, config)
    receiver.start()
    try:
        return stream_job(spark, algorithm, config, paths, trigger_seconds=trigger_seconds,
                          report=report, rows=rows, set_aside=(NOT_MEASUREMENTS, refused),
                          tick_rows=True, aside_column="reason",
                          on_poll=receiver.check)  # MQ-R12: a refused subscription
    finally:
        receiver.stop()
