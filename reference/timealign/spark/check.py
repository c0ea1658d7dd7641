"""The no-loss check of a finished run (SP-R6, SP-I1), done by Spark over the outputs.

Every input row must have exactly one outcome: for each (source, id), the number of input
rows equals the number of outcome rows (plus, for a stream, the ids still held in the state
store). A difference fails the job loudly with a few examples. The per-source incremental
check inside the UDF (:class:`timealign.spark.outcomes.SourceRun`) catches a fault where it
happens; this one reconciles what was actually read with what was actually written.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from timealign.spark.outcomes import LossError


def check_no_loss(rows: DataFrame, outcomes: DataFrame, held: DataFrame | None = None) -> int:
    """Return the number of input rows; raise :class:`LossError` on any difference.

    One shuffle: input rows count +1, outcomes (and held ids) -1, per (source, id).
    """
    given = rows.select("source", "id", F.lit(1).alias("given"), F.lit(0).alias("settled"))
    settled = outcomes.select("source", "id")
    if held is not None:
        settled = settled.unionByName(held.select("source", "id"))
    marks = given.unionByName(settled.select("source", "id", F.lit(0).alias("given"),
                                             F.lit(1).alias("settled")))
    joined = marks.groupBy("source", "id").agg(F.sum("given").alias("given"),
                                              F.sum("settled").alias("settled"))
    wrong = F.col("given") != F.col("settled")
    totals = joined.agg(F.sum("given").alias("given"),
                        F.sum(F.when(wrong, 1).otherwise(0)).alias("bad")).first()
    given_total = int(totals["given"] or 0) if totals else 0
    bad = int(totals["bad"] or 0) if totals else 0
    if bad:
        examples = [f"{r['source']}/{r['id']}: {r['given']} row(s), {r['settled']} outcome(s)"
                    for r in joined.where(wrong).limit(5).collect()]
        raise LossError(f"{bad} (source, id) pair(s) without exactly one outcome per input "
                        f"row (SP-R6), e.g. {examples}")
    return given_total
