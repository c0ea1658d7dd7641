"""The no-loss reconciliation of a finished run (SP-R6, SP-I1), done by Spark over the outputs.

Every input row must have exactly one outcome. Inside the UDF, :class:`SourceRun
<timealign.spark.outcomes.SourceRun>` already enforces it id by id, where a fault happens;
these checks reconcile what Spark actually read with what it actually wrote:

- :func:`check_counts` (the batch job, every run): per source, the number of input rows
  equals the number of outcome rows. It reads one column of each side and shuffles one
  partial count per source and partition, so it stays cheap for tens of millions of rows.
- :func:`check_no_loss` (``timealign.spark.verify``, ``make demo``, the stream tests): the
  same per (source, id), plus for a stream the ids still held in the state store.

A difference fails loudly with a few examples.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from timealign.errors import InvalidInput
from timealign.spark.outcomes import DuplicateIdError, LossError
from timealign.spark.schema import FILE


def _reconcile(rows: DataFrame, outcomes: DataFrame, held: DataFrame | None,
               keys: list[str], what: str, one_file: bool = False) -> int:
    """Input rows count +1, outcomes (and held ids) -1, per ``keys``; one shuffle. With
    ``one_file``, the input rows of a key must also come from one file (SP-R18)."""
    file = F.col(FILE) if one_file else F.lit(None).cast("string")
    given = rows.select(*keys, F.lit(1).alias("given"), F.lit(0).alias("settled"),
                        file.alias("file"))
    settled = outcomes.select(*keys)
    if held is not None:
        settled = settled.unionByName(held.select(*keys))
    marks = given.unionByName(settled.select(*keys, F.lit(0).alias("given"),
                                             F.lit(1).alias("settled"),
                                             F.lit(None).cast("string").alias("file")))
    joined = marks.groupBy(*keys).agg(F.sum("given").alias("given"),
                                      F.sum("settled").alias("settled"),
                                      F.min("file").alias("first_file"),
                                      F.max("file").alias("last_file"))
    wrong = F.col("given") != F.col("settled")
    spread = F.col("first_file") != F.col("last_file")
    totals = joined.agg(F.sum("given").alias("given"),
                        F.sum(F.when(wrong, 1).otherwise(0)).alias("bad"),
                        F.sum(F.when(spread, 1).otherwise(0)).alias("spread")).first()
    if totals and totals["spread"]:
        split = joined.where(spread).limit(5).collect()
        examples = [f"{r['source']!r} in {r['first_file']} and {r['last_file']}"
                    for r in split]
        raise InvalidInput("source", "SP-R18", "with --sources-per-file every source must "
                           f"be in one file; e.g. {examples}", split[0]["source"])
    given_total = int(totals["given"] or 0) if totals else 0
    bad = int(totals["bad"] or 0) if totals else 0
    if bad:
        examples = [f"{'/'.join(str(r[k]) for k in keys)}: {r['given']} row(s), "
                    f"{r['settled']} outcome(s)"
                    for r in joined.where(wrong).limit(5).collect()]
        raise LossError(f"{bad} {what} without exactly one outcome per input row (SP-R6), "
                        f"e.g. {examples}")
    return given_total


def check_counts(rows: DataFrame, outcomes: DataFrame, held: DataFrame | None = None,
                 one_file: bool = False) -> int:
    """Return the number of input rows; raise :class:`LossError` if any source's count of
    outcome rows (plus held ids) differs from its count of input rows, and with
    ``one_file`` :class:`InvalidInput` if a source's rows come from more than one file
    (SP-R18)."""
    return _reconcile(rows, outcomes, held, ["source"], "source(s)", one_file)


def check_no_loss(rows: DataFrame, outcomes: DataFrame, held: DataFrame | None = None) -> int:
    """Return the number of input rows; raise :class:`LossError` on any (source, id) whose
    outcome rows (plus held ids) do not match its input rows one for one."""
    return _reconcile(rows, outcomes, held, ["source", "id"], "(source, id) pair(s)")


def check_unique_ids(rows: DataFrame) -> None:
    """SP-R22: raise :class:`DuplicateIdError` naming sources, ids and row counts when two
    rows of one source share an id. One aggregation over (source, id) of the input; the
    memory of no worker grows with a source (SP-D20)."""
    repeated = rows.groupBy("source", "id").count().where(F.col("count") > 1)
    examples = repeated.limit(5).collect()
    if examples:
        shown = ", ".join(f"source {r['source']!r} id {r['id']!r} ({r['count']} rows)"
                          for r in examples)
        raise DuplicateIdError(f"ids must be unique within a source (SP-R1, SP-R22); "
                               f"repeated: {shown}")
