"""Verify a stream's output (SP-R48): every input row has exactly one outcome or is held
in the checkpoint's state, and how many rows each source's machine still holds.

A stream has no end (SP-D1): the rows a machine still holds have no outcome row yet, so
the batch verification's first check (SP-R6) would count them as lost. Their ids are in
the checkpoint's state value of each source (SP-R11, SP-R12), decoded with the stream's
codec; they complete the reconciliation. A stream's tables are not compared with a
re-run: its late files (SP-R14) decide them, which a replay of the input cannot reproduce
(its ticks follow its rows, SP-D5, as a replay's do).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from timealign.algorithm import Algorithm
from timealign.spark.census import check_unique_and_no_loss, check_unique_ids
from timealign.spark.paths import PathError
from timealign.spark.verify import read_written

RULE = "SP-R48"


def stream_checkpoint(manifest: dict[str, Any] | None) -> str | None:
    """The checkpoint of a stream's output from its manifest (SP-R32); None for a run's."""
    if manifest is None or manifest.get("command") != "stream":
        return None
    checkpoint = manifest.get("checkpoint")
    return checkpoint if isinstance(checkpoint, str) else None


def held_rows(spark: SparkSession, algorithm: Algorithm[Any, Any, Any, Any], config: Any,
              checkpoint: str) -> DataFrame:
    """(source, id) of every row held in the checkpoint's state, decoded with the stream's
    codec (SP-R12); none for a checkpoint whose stream never wrote a state."""
    from timealign.spark.streaming import open_ids

    if "://" not in checkpoint and not Path(checkpoint).is_dir():
        raise PathError("checkpoint", RULE, ["the stream's checkpoint named by its manifest "
                                             "is missing: its held rows cannot be counted"],
                        checkpoint)
    if "://" not in checkpoint and not (Path(checkpoint) / "state").is_dir():
        return spark.createDataFrame([], "source string, id string")
    return open_ids(spark, algorithm, config, checkpoint)


def verify_stream_rows(
    spark: SparkSession, algorithm: Algorithm[Any, Any, Any, Any], config: Any,
    rows: DataFrame, output: str, checkpoint: str,
) -> dict[str, Any]:
    """SP-R48: ids unique within a source (SP-R22), and each (source, id) of ``rows`` has
    one outcome row or is held (SP-I1); :class:`~timealign.spark.outcomes.LossError`
    otherwise. Returns the rows, the held rows and their count per source."""
    try:
        held = held_rows(spark, algorithm, config, checkpoint)
    except PathError:
        check_unique_ids(rows)  # SP-R22 first, whatever else is wrong
        raise
    held = held.cache()
    try:
        try:
            outcomes = read_written(spark, output, "outcomes", RULE, "the stream has "
                                    "written no micro-batch").drop("batch")
        except (PathError, AssertionError):
            check_unique_ids(rows)
            raise
        total = check_unique_and_no_loss(rows, outcomes, held)  # SP-R22, SP-I1: one pass
        per_source = {str(r["source"]): int(r["count"]) for r in
                      held.groupBy("source").count().orderBy(F.desc("count"), "source")
                      .collect()}
    finally:
        held.unpersist()
    return {"rows": total, "held": sum(per_source.values()), "held_by_source": per_source}


def held_line(result: dict[str, Any], listed: int = 5) -> str:
    """``verified: N rows ...`` of a stream: settled and held rows, the held per source."""
    held, rows = result["held"], result["rows"]
    by_source = result["held_by_source"]
    shown = ", ".join(f"{source or '(no source)'} {count}"
                      for source, count in list(by_source.items())[:listed])
    more = f", … ({len(by_source) - listed} more sources)" if len(by_source) > listed else ""
    where = f" (held per source: {shown}{more})" if held else ""
    return (f"verified: {rows} rows of a stream, each with exactly one outcome ({rows - held}) "
            f"or held in the checkpoint's state ({held}){where}; a stream's tables are not "
            "compared with a re-run (SP-R48)")
