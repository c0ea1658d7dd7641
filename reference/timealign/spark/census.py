"""The census of a run's input and the no-loss reconciliation of a finished run (SP-R6,
SP-I1, SP-R22), done by Spark over the outputs.

Every input row must have exactly one outcome. Inside the UDF, :class:`SourceRun
<timealign.spark.outcomes.SourceRun>` already enforces it id by id, where a fault happens;
these checks reconcile what Spark actually read with what it actually wrote:

- :class:`Census` (the batch job, every run): before the replay, the most rows sharing one
  id (SP-R22), the rows of every source and, for the per-file path, the files a source
  spans (SP-R18); the per-source counts are kept (a small row per source) and, after the
  write, compared with the outcome rows per source (SP-D6).
- :func:`check_counts`: the same count comparison for a given input and outcomes.
- :func:`check_no_loss` (the stream tests): the same per (source, id), plus for a stream
  the ids still open in the state store; :func:`check_unique_and_no_loss`
  (``timealign.spark.verify``, ``make demo``) settles SP-R22 in that same pass.

A difference fails loudly with a few examples.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from timealign.errors import InvalidInput
from timealign.spark.outcomes import DuplicateIdError, LossError
from timealign.spark.per_file import CENSUS, PER_FILE
from timealign.spark.schema import FILE
from timealign.spark.session import session_conf

#: SP-D28: the hash count's grouping keys are all distinct but for a repeat, so the
#: aggregation before its shuffle (a hash map of one entry per row) reduces nothing; Spark
#: 4.3 can skip it (earlier versions ignore the setting). Set for that query alone: the
#: per-source counts group a few keys, where the partial aggregation is what saves the
#: shuffle.
HASH_COUNT_SETTINGS: dict[str, str] = {"spark.sql.execution.bypassPartialAggregation": "true"}


def _reconcile(rows: DataFrame, outcomes: DataFrame, open_ids: DataFrame | None,
               keys: list[str], what: str, unique: bool = False) -> int:
    """Input rows count +1, outcomes (and open ids) -1, per ``keys``; one shuffle.
    ``unique``: the same pass also settles SP-R22 (an input count above one per key)."""
    given = rows.select(*keys, F.lit(1).alias("given"), F.lit(0).alias("settled"))
    settled = outcomes.select(*keys)
    if open_ids is not None:
        settled = settled.unionByName(open_ids.select(*keys))
    marks = given.unionByName(settled.select(*keys, F.lit(0).alias("given"),
                                             F.lit(1).alias("settled")))
    joined = marks.groupBy(*keys).agg(F.sum("given").alias("given"),
                                      F.sum("settled").alias("settled"))
    return _differences(joined, keys, what, rows if unique else None)


def _differences(joined: DataFrame, keys: list[str], what: str,
                 unique: DataFrame | None = None) -> int:
    """The input total of ``joined`` (``keys``, ``given``, ``settled``); :class:`LossError`
    with up to five examples where the two counts differ. Given the input rows ``unique``
    (``keys`` being (source, id)), a key given more than once is first a repeated id
    (SP-R22): :func:`check_unique_ids` names them, so one aggregation serves both checks
    and the repeat is reported before the loss it also causes."""
    wrong = F.col("given") != F.col("settled")
    totals = joined.agg(F.sum("given").alias("given"), F.max("given").alias("most"),
                        F.sum(F.when(wrong, 1).otherwise(0)).alias("bad")).first()
    if unique is not None and totals and (totals["most"] or 0) > 1:
        check_unique_ids(unique)
    given_total = int(totals["given"] or 0) if totals else 0
    bad = int(totals["bad"] or 0) if totals else 0
    if bad:
        examples = [f"{'/'.join(str(r[k]) for k in keys)}: {r['given']} row(s), "
                    f"{r['settled']} outcome(s)"
                    for r in joined.where(wrong).limit(5).collect()]
        raise LossError(f"{bad} {what} without exactly one outcome per input row (SP-R6), "
                        f"e.g. {examples}")
    return given_total


def configured_topics(config: Any) -> list[str] | None:
    """The topic names the algorithm's config lists (ApproximateTime), or None: the
    batchers configure no key or stream, every topic is theirs."""
    names = getattr(config, "topic_names", None)
    return None if names is None else [str(name) for name in names]


#: Sources without a configured topic named in the summary at most (SP-R38).
MISSING_EXAMPLES = 20


class Census:
    """The batch job's look at its whole input (SP-R22, SP-R18, SP-R6).

    Before the replay, an aggregation over a 64-bit hash of (``source``, ``id``), whose
    largest count says whether any id may repeat, and whose sum is the number of rows. A
    hash count above one (a repeated id, or, rarely, two ids with equal hashes) runs the
    exact check (:func:`check_unique_ids`), which raises only for a real repeat. Hashes keep
    that shuffle to one long per row (measured at 10M rows: about half the JVM time of
    grouping by the two strings). Then the per-source counts: each source's rows and, for
    the per-file path, its smallest and largest file path (exact: the partial aggregation
    keeps one pair per source and task). The shuffled path aggregates them over the input,
    before the replay; the per-file path (``folded``, SP-D23) takes them from the replay's
    own census rows (:meth:`metric`, :meth:`take_files`), read as the outcomes table is
    written, so that the input is scanned once for the census and once for the replay, not
    twice and once. The per-source result, a row per source, is kept for
    :meth:`check_outcomes` (call :meth:`close` after)."""

    def __init__(self, rows: DataFrame, one_file: bool = False,
                 key: Callable[..., Column] = F.xxhash64,
                 option: str = PER_FILE, topics: Sequence[str] | None = None,
                 folded: bool = False) -> None:
        self.rows = rows
        self.option = option  # how the caller names the per-file path (SP-R18's error)
        self.key = key  # the hash of (source, id); tests give one that always collides
        self.topics = None if topics is None else sorted(set(topics))
        self.folded = folded
        self.per_source: DataFrame | None = None
        if folded:
            return  # SP-D23: the per-source counts come from the replay (take_files)
        file = F.col(FILE) if one_file else F.lit(None).cast("string")
        # SP-R38: the configured topics each source has rows of (a set of at most the
        # config's topics per source, so the aggregation stays small)
        seen = F.collect_set(F.when(F.col("topic").isin(self.topics), F.col("topic"))) \
            if self.topics else F.array().cast("array<string>")
        self.per_source = rows.groupBy("source").agg(
            F.count(F.lit(1)).alias("given"), F.min(file).alias("first_file"),
            F.max(file).alias("last_file"), seen.alias("topics")
        ).persist(StorageLevel.MEMORY_AND_DISK)

    def check_input(self) -> int:
        """The number of input rows; :class:`DuplicateIdError` (through
        :func:`check_unique_ids`, so that its wording is the verification's) when an id
        repeats within a source; unless ``folded``, :class:`InvalidInput` (SP-R18) when a
        source spans files (folded: :meth:`take_files`)."""
        total = count_unique_ids(self.rows, self.key)
        if not self.folded:
            self._check_files()
        return total

    def _sources(self) -> DataFrame:
        if self.per_source is None:
            raise RuntimeError("the folded census has no per-source counts before "
                               "take_files")
        return self.per_source

    def _check_files(self) -> None:
        """SP-R18: with the per-file path, every source's rows are in one file."""
        sources = self._sources()
        spread = F.col("first_file") != F.col("last_file")
        if sources.where(spread).limit(1).count():
            split = sources.where(spread).orderBy("source").limit(5).collect()
            examples = [f"{r['source']!r} in {r['first_file']} and {r['last_file']}"
                        for r in split]
            raise InvalidInput("source", "SP-R18", f"with {self.option} every source "
                               f"must be in one file; e.g. {examples}", split[0]["source"])

    @staticmethod
    def metric() -> Column:
        """SP-D23: the replay's census rows (:data:`timealign.spark.per_file.CENSUS`, one
        per file), gathered by an ``Observation`` of the read that writes the outcomes
        table, so no pass of its own reads them."""
        return F.collect_list(F.when(F.col("table") == CENSUS, F.struct(
            "source", F.col("id").alias("file"), F.col("input").alias("rows"),
            F.col("ids").alias("topics")))).alias("files")

    def take_files(self, files: Sequence[Any], total: int) -> None:
        """SP-D23: the per-source counts from the replay's census rows (:meth:`metric`);
        :class:`LossError` unless they add up to the ``total`` that :meth:`check_input`
        counted in the input (a row the replay was not fed, or fed twice), then the SP-R18
        check of :meth:`check_input`."""
        per_source = sources_of_files(files)
        read = sum(given for given, _, _, _ in per_source.values())
        if read != total:
            raise LossError(f"the replay read {read} row(s) of an input of {total} (counted "
                            f"by the census); every input row is replayed once (SP-R6, "
                            f"SP-D23)")
        self.per_source = self.rows.sparkSession.createDataFrame(
            [(source, given, first, last, sorted(topics))
             for source, (given, first, last, topics) in sorted(per_source.items())],
            "source string, given long, first_file string, last_file string, "
            "topics array<string>")
        self._check_files()

    def missing_topics(self) -> tuple[int, list[dict[str, Any]]]:
        """SP-R38: how many sources lack rows of a configured topic, and up to
        :data:`MISSING_EXAMPLES` of them with the topics they lack (sorted by source)."""
        if not self.topics:
            return 0, []
        short = self._sources().where(F.size("topics") < len(self.topics))
        count = short.count()
        examples = [{"source": r["source"],
                     "topics": [t for t in self.topics if t not in set(r["topics"])]}
                    for r in short.orderBy("source").limit(MISSING_EXAMPLES).collect()]
        return count, examples

    def check_outcomes(self, outcomes: DataFrame, open_ids: DataFrame | None = None) -> int:
        """SP-R6, SP-D6: per source, outcome rows (plus open ids) equal input rows; return
        the number of input rows."""
        settled = outcomes.select("source")
        if open_ids is not None:
            settled = settled.unionByName(open_ids.select("source"))
        counted = settled.groupBy("source").agg(F.count(F.lit(1)).alias("settled"))
        joined = self._sources().select("source", "given").join(
            counted, "source", "full_outer").select(
            "source", F.coalesce("given", F.lit(0)).alias("given"),
            F.coalesce("settled", F.lit(0)).alias("settled"))
        return _differences(joined, ["source"], "source(s)")

    def close(self) -> None:
        if self.per_source is not None:
            self.per_source.unpersist()


def sources_of_files(files: Sequence[Any]) -> dict[str, tuple[int, str, str, set[str]]]:
    """SP-D23: the replay's census rows (``source``, ``file``, ``rows``, ``topics``) per
    source: its rows, smallest and largest file, and the configured topics it has."""
    sources: dict[str, tuple[int, str, str, set[str]]] = {}
    for entry in files:
        source, file = str(entry["source"]), str(entry["file"])
        given, first, last, topics = sources.get(source, (0, file, file, set()))
        sources[source] = (given + int(entry["rows"]), min(first, file), max(last, file),
                           topics | set(entry["topics"] or ()))
    return sources


def check_counts(rows: DataFrame, outcomes: DataFrame,
                 open_ids: DataFrame | None = None) -> int:
    """Return the number of input rows; raise :class:`LossError` if any source's count of
    outcome rows (plus open ids) differs from its count of input rows (SP-D6)."""
    census = Census(rows)
    try:
        return census.check_outcomes(outcomes, open_ids)
    finally:
        census.close()


def check_no_loss(rows: DataFrame, outcomes: DataFrame,
                  open_ids: DataFrame | None = None) -> int:
    """Return the number of input rows; raise :class:`LossError` on any (source, id) whose
    outcome rows (plus open ids) do not match its input rows one for one."""
    return _reconcile(rows, outcomes, open_ids, ["source", "id"], "(source, id) pair(s)")


def check_unique_and_no_loss(rows: DataFrame, outcomes: DataFrame,
                             open_ids: DataFrame | None = None) -> int:
    """:func:`check_unique_ids` then :func:`check_no_loss`, as one aggregation over
    (source, id) of the input and the outcomes (issue 42: ``verify`` ran two): a repeated id
    raises :class:`DuplicateIdError` with the same examples, whatever the outcomes say."""
    return _reconcile(rows, outcomes, open_ids, ["source", "id"], "(source, id) pair(s)",
                      unique=True)


def count_unique_ids(rows: DataFrame, key: Callable[..., Column] = F.xxhash64) -> int:
    """SP-R22, SP-D10, SP-D28: the number of input rows, counted per 64-bit ``key`` of
    (``source``, ``id``) in one shuffle of a long per row; a count above one (a repeated
    id, or rarely two ids with equal hashes) runs the exact :func:`check_unique_ids`, which
    raises :class:`DuplicateIdError` only for a real repeat. The batch job's census and
    ``verify`` count alike, so the two agree on every input."""
    with session_conf(rows.sparkSession, HASH_COUNT_SETTINGS):  # SP-D28
        counts = rows.groupBy(key("source", "id").alias("key")).count() \
            .agg(F.max("count").alias("most"), F.sum("count").alias("rows")).first()
    if counts and (counts["most"] or 0) > 1:
        check_unique_ids(rows)
    return int(counts["rows"] or 0) if counts else 0


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
