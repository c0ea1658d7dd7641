"""Verify a finished batch run from what it wrote (``python -m timealign.spark.verify``,
whose options are parsed by :func:`timealign.commands.spark.verify_main`).

Three checks, all over every source and all failing loudly:

1. no loss (SP-R6): the written ``outcomes/`` reconcile with the input rows;
2. invariants: each source's rows are driven again (spec/drivers.md) and the machine's run
   is checked by the algorithm's executable invariants
   (``timealign.algorithm.check_invariants``, the descriptor's ``check``);
3. the written tables are exactly the accounts of that run (SP-I2).

The re-run happens in a grouped Arrow UDF, so the check is as parallel as the job itself.
The input is read as ``timealign run`` reads it, tables or ROS bags with the run's bag
options (:func:`timealign.spark.inputs.read_rows`, BAG-R10), so the rows checked are the
rows the run replayed.
"""

from __future__ import annotations

import functools
import os
import zlib
from collections.abc import Callable, Generator, Iterator
from contextlib import AbstractContextManager
from typing import Any

import attrs
import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from timealign.algorithm import Algorithm, Columns, check_invariants
from timealign.command import one_line
from timealign.errors import ConsistencyError
from timealign.outputs import is_local, resolved
from timealign.spark import schema
from timealign.spark.batch import no_phase
from timealign.spark.census import check_no_loss, check_unique_ids
from timealign.spark.failures import marked
from timealign.spark.paths import TABLES, PathError
from timealign.spark.replay import (
    collector_paused,
    columns_from_batches,
    replay,
    source_of,
    to_batch,
)


class VerificationFailed(AssertionError):
    """A verify check failed; the message names what (a real check, kept under ``-O``)."""


def _recording(
    algorithm: Algorithm[Any, Any, Any, Any],
) -> tuple[Algorithm[Any, Any, Any, Any], list[Any], list[tuple[int, Any]]]:
    """The same algorithm with a step that also keeps every input and output (with its
    input's index) for the invariants: recorded at the machine boundary, so every driver
    path is seen."""
    inputs: list[Any] = []
    outputs: list[tuple[int, Any]] = []
    step = algorithm.machine.step

    def recording_step(config: Any, state: Any, item: Any) -> tuple[Any, tuple[Any, ...]]:
        state, produced = step(config, state, item)
        if produced:  # most steps produce nothing: no generator built for them
            index = len(inputs)
            outputs.extend([(index, output) for output in produced])
        inputs.append(item)
        return state, produced

    return (attrs.evolve(algorithm, machine=attrs.evolve(algorithm.machine, step=recording_step)),
            inputs, outputs)


#: The re-run's own rows besides the tables' (:func:`verify_function`): a source's
#: invariant violations, and its count of rows fed and of repeated ids (SP-D29).
PROBLEMS, FED = "problems", "fed"


def _counted(columns: Iterator[Columns], seen: set[str], fed: list[int]) -> Iterator[Columns]:
    """SP-D29: ``columns`` as they are, counting into ``fed`` the rows (``fed[0]``) and the
    rows whose id an earlier row of the source had (``fed[1]``, SP-R22), by the set of
    ids ``seen``."""
    for batch in columns:
        before, ids = len(seen), batch[0]
        seen.update(ids)
        fed[0] += len(ids)
        fed[1] += len(ids) - (len(seen) - before)
        yield batch


def _checked(algorithm: Algorithm[Any, Any, Any, Any], config: Any, source: str,
             columns: Iterator[Columns]) -> Generator[pa.RecordBatch, None, list[str]]:
    """One source replayed on the rule text, every step recorded: its rows, then (the
    return value) up to 20 violations of the executable invariants by that run. The record
    is freed when this returns."""
    recorded, inputs, outputs = _recording(algorithm)
    yield from replay(recorded, config, source, columns)
    return check_invariants(algorithm.checks, config, inputs, outputs)[:20]


def verify_function(
    algorithm: Algorithm[Any, Any, Any, Any], config: Any
) -> Callable[[tuple[pa.Scalar, ...], Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """UDF: the run's combined rows, one ``problems`` row per invariant violation and one
    ``fed`` row: the source's rows (``input``) and repeated ids (``seq``)."""

    def verify_source(
        key: tuple[pa.Scalar, ...], batches: Iterator[pa.RecordBatch]
    ) -> Iterator[pa.RecordBatch]:
        with marked("verify"):
            source = source_of(key)
        fed = [0, 0]
        # SP-D30: the collector stays off until the record of the run is freed: on while
        # the record lived, its first pass walked every recorded message and output (about
        # a tenth of the worker's time; benchmarks/README.md).
        with collector_paused():
            problems = yield from _checked(algorithm, config, source, _counted(
                columns_from_batches(source, batches), set(), fed))
        count = len(problems) + 1
        rows: dict[str, list[Any]] = {name: [None] * count
                                      for name in schema.ARROW_COMBINED.names}
        rows["table"] = [PROBLEMS] * len(problems) + [FED]
        rows["source"] = [source] * count
        rows["reason"] = [*problems, None]
        rows["input"][-1], rows["seq"][-1] = fed
        yield to_batch(rows)

    return verify_source


def verify(
    spark: SparkSession, algorithm: Algorithm[Any, Any, Any, Any], config: Any,
    input_path: str, output: str, fmt: str = "parquet",
    columns: schema.ColumnMap | None = None,
) -> dict[str, int]:
    """Run the three checks over a table input; raise :class:`VerificationFailed` (an
    ``AssertionError``) naming what failed (the duplicate ids of SP-R22 raise the batch
    job's own ``DuplicateIdError``)."""
    rows = schema.read_input(spark, input_path, fmt, columns or schema.ColumnMap())
    return verify_rows(spark, algorithm, config, rows, output)


#: SP-R40: the phases of ``verify`` in the order they run, for its progress line: one pass
#: over the input, the re-run and the written tables (SP-D29).
PHASES: tuple[str, ...] = ("re-run: unique ids, no loss, invariants, tables compared",)


def verify_rows(
    spark: SparkSession, algorithm: Algorithm[Any, Any, Any, Any], config: Any,
    rows: DataFrame, output: str,
    phase: Callable[[str], AbstractContextManager[object]] = no_phase,
) -> dict[str, int]:
    """The three checks of :func:`verify` over canonical ``rows`` (SP-R1 columns plus the
    input order, SP-R2), as any reader of ``run`` gives them (tables, bags); ``phase`` is
    entered around each of :data:`PHASES` (the progress line, SP-R40).

    SP-D29: one action re-runs every source, counting its rows and its repeated ids and
    checking the executable invariants on the way, and compares, per source and table, a
    fingerprint of the re-run's rows with one of the written rows (the count and the sums
    of two 64-bit hashes of every row). A re-run whose accounting settles each of its input
    rows once (SourceRun's own check) and that equals the written tables leaves no loss in
    them (SP-R6). A repeated id is named by the batch job's exact check (SP-R22), before
    anything else, as the batch job does; only the sources whose fingerprints differ are
    checked again the exact way (SP-D26): no loss per (source, id), then the rows of the
    re-run missing and unexpected, per table. Every failure names what it did before, in
    the same order: repeated ids, loss, invariant violations, differing rows."""
    try:
        written_groups, written_outcomes = (_written(spark, output, t) for t in TABLES)
    except (PathError, VerificationFailed):
        check_unique_ids(rows)  # SP-R22 first, as the batch job: it wrote no tables then
        raise
    with phase(PHASES[0]):
        try:
            found = _fingerprinted(_rerun(rows, algorithm, config), written_groups,
                                   written_outcomes)
        except Exception:
            check_unique_ids(rows)  # SP-R22 first (a repeat still open fails the re-run)
            raise
        if found.repeats:
            check_unique_ids(rows)  # names them: SP-R22's own error, as the batch job's
        within = None if found.sources is None else _of_sources(found.sources)
        differ = found.sources is None or bool(found.sources)
        if differ:  # SP-R6 first, as it always came first
            check_no_loss(*_where(within, rows, written_outcomes))
        if found.problems:
            raise VerificationFailed(f"invariant violations: {found.problems}")
        if differ:
            checked, groups, outcomes = _where(within, rows, written_groups,
                                               written_outcomes)
            _, differences = _compared(_rerun(checked, algorithm, config), groups, outcomes)
            if differences:
                raise VerificationFailed("; ".join(differences))
    return {"rows": found.rows, "invariants": int(algorithm.checks.check is not None)}


def _rerun(rows: DataFrame, algorithm: Algorithm[Any, Any, Any, Any], config: Any
           ) -> DataFrame:
    """Every source of ``rows`` replayed again in its input order (SP-R10), with its
    invariant violations as ``problems`` rows (:func:`verify_function`). SP-D30: the
    sources are split among the partitions by ranges of their names, drawn from a sample
    of the rows, so that each partition re-runs about as many rows; a source's rows stay
    in one partition either way."""
    count = int(rows.sparkSession.conf.get("spark.sql.shuffle.partitions") or 2)
    return rows.repartitionByRange(count, "source").sortWithinPartitions(
        "source", "arrival", schema.FILE, schema.POSITION).groupBy("source").applyInArrow(
        verify_function(algorithm, config), schema.COMBINED)


#: SP-D29: at most this many differing sources are named to the exact comparison; more
#: and it compares every source.
NAMED_SOURCES = 1000


def _of_sources(sources: list[str | None]) -> Column:
    """The rows of these sources (a null source too, when one is listed)."""
    source = F.col("source")
    named = source.isin([s for s in sources if s is not None])
    return named | source.isNull() if None in sources else named


def _where(within: Column | None, *frames: DataFrame) -> list[DataFrame]:
    return [frame if within is None else frame.where(within) for frame in frames]


#: SP-D29: the halves of a row's two 64-bit hashes, each summed per (source, table) as a
#: long; a half is below 2**32, so no sum of fewer than 2**31 rows can overflow (ANSI
#: mode would fail the sum, not wrap it).
_HALVES = ("first low", "first high", "second low", "second high")


def _hashes(frame: DataFrame, copies: int) -> DataFrame:
    """``frame`` (:data:`_ROW` columns) as ``table``, ``source``, the row's ``copies``
    (+1 for the re-run, -1 for a written table), the four 32-bit halves of two 64-bit
    hashes of the row (Spark's ``xxhash64`` from two seeds: the second starts from a
    constant), each over :data:`_HASHED` and a mask of the null ones (a hash skips a
    null: the mask tells ``start`` null from ``end`` null, an empty array from a missing
    one), the ``problem`` of an invariant violation's row, and a ``fed`` row's counts."""
    columns = [F.col(name) for name in _HASHED]
    mask = sum((F.col(name).isNull().cast("long") * (1 << bit)
                for bit, name in enumerate(_HASHED)), F.lit(0).cast("long"))
    low = F.lit(0xFFFFFFFF).cast("long")
    first, second = F.xxhash64(*columns, mask), F.xxhash64(F.lit("SP-D29"), *columns, mask)
    halves = (first.bitwiseAND(low), F.shiftrightunsigned(first, 32),
              second.bitwiseAND(low), F.shiftrightunsigned(second, 32))
    table = F.col("table")
    return frame.select("table", "source", F.lit(copies).alias("copies"),
                        *(value.alias(name) for name, value in zip(_HALVES, halves,
                                                                   strict=True)),
                        F.when(table == PROBLEMS, F.col("reason")).alias("problem"),
                        F.when(table == FED, F.col("input")).alias("fed"),
                        F.when(table == FED, F.col("seq")).alias("repeats"))


@attrs.frozen
class Fingerprinted:
    """What :func:`_fingerprinted` found: the input's rows and repeated ids, as the re-run
    counted them; up to 20 invariant violations (source, problem); the sources whose rows
    of a table differ from the re-run's, or None when more than :data:`NAMED_SOURCES` do."""

    rows: int
    repeats: int
    problems: list[tuple[str, str]]
    sources: list[str | None] | None


def _fingerprinted(again: DataFrame, written_groups: DataFrame, written_outcomes: DataFrame
                   ) -> Fingerprinted:
    """SP-D29, in one action over the re-run (read once) and the written tables. Per
    (source, table), each copy of a row counts +1 in the re-run and -1 in a written table,
    and the halves of its hashes (:func:`_hashes`) are summed with the same sign: all zero
    when the two multisets of rows are equal; a few rows per source leave each task (the
    partial aggregation), and one row (the totals) reaches the driver."""
    written = _tagged(written_groups, "groups").unionByName(
        _tagged(written_outcomes, "outcomes"))
    signed = F.col("copies")
    net = _hashes(_expected(again), 1).unionByName(_hashes(written, -1)) \
        .groupBy("table", "source", "problem").agg(
            F.sum(signed).alias("copies"),
            *(F.sum(F.col(name) * signed).alias(name) for name in _HALVES),
            F.sum("fed").alias("fed"), F.sum("repeats").alias("repeats"))
    differs = F.col("table").isin(*TABLES) & functools.reduce(
        Column.__or__, (F.col(name) != 0 for name in ("copies", *_HALVES)))
    problem = F.col("table") == PROBLEMS
    found = net.agg(
        F.sum("fed").alias("fed"), F.sum("repeats").alias("repeats"),
        F.slice(F.collect_list(F.when(differs, F.struct("source"))), 1,
                NAMED_SOURCES + 1).alias("sources"),
        F.slice(F.collect_list(F.when(problem, F.struct("source", "problem", "copies"))),
                1, 20).alias("problems")).first()
    assert found is not None  # a global aggregation has one row
    problems = [(str(p["source"]), str(p["problem"])) for p in found["problems"]
                for _ in range(p["copies"])][:20]
    sources = {s["source"] for s in found["sources"]}
    return Fingerprinted(int(found["fed"] or 0), int(found["repeats"] or 0), problems,
                         None if len(sources) > NAMED_SOURCES else
                         sorted(sources, key=lambda s: (s is None, s or "")))


#: The columns of a row of either table, as the comparison tags them (SP-R4, SP-R5).
_ROW = ("table", "source", "seq", "start", "end", "ids", "at", "input", "id", "outcome",
        "reason")
#: SP-D29: what a row's hashes cover: its columns but the fingerprint's key (``table``,
#: ``source``), which every row summed into one fingerprint shares.
_HASHED = tuple(name for name in _ROW if name not in ("table", "source"))


def _expected(again: DataFrame) -> DataFrame:
    """The re-run's rows as the tables' rows (:data:`_ROW`): a group row itself and one
    ``grouped`` outcome per member, as :func:`timealign.spark.schema.outcomes_of` derives
    them; a settled row itself; the re-run's own rows (``problems``, ``fed``) as they
    are. One ``explode`` of a row's members (a null first: the row itself), so one read
    of the re-run, and no structs built per row."""
    table = F.col("table")
    group = table == "groups"
    nothing = F.lit(None).cast("string")
    member = F.explode(F.when(group, F.concat(F.array(nothing), F.col("ids")))
                       .otherwise(F.array(nothing))).alias("member")
    one = group & F.col("member").isNotNull()  # a member's own outcome row (SP-R5)

    def kept(name: str) -> Column:
        return F.when(one, F.lit(None)).otherwise(F.col(name)).alias(name)

    return again.select(*again.columns, member).select(
        F.when(one, F.lit("outcomes")).otherwise(table).alias("table"), "source", "seq",
        kept("start"), kept("end"), kept("ids"), "at", "input",
        F.when(one, F.col("member")).otherwise(F.col("id")).alias("id"),
        F.when(one, F.lit("grouped")).otherwise(F.col("outcome")).alias("outcome"),
        kept("reason"))


def _tagged(written: DataFrame, table: str) -> DataFrame:
    """A written table's rows in the comparison's form (:data:`_ROW`)."""
    kinds = {f.name: f.dataType for f in schema.COMBINED.fields}
    return written.select(*(
        F.lit(table).alias(name) if name == "table" else
        F.col(name) if name in written.columns else F.lit(None).cast(kinds[name]).alias(name)
        for name in _ROW))


def _compared(again: DataFrame, written_groups: DataFrame, written_outcomes: DataFrame
              ) -> tuple[list[tuple[str, str]], list[str]]:
    """SP-I2 and the invariants in one action: every distinct row counted +1 per copy in
    the re-run and -1 per copy in a written table (a multiset difference both ways, as two
    ``exceptAll`` per table computed); returns up to 20 invariant violations (source,
    problem) and the tables' differences (rows of the re-run missing, rows unexpected)."""
    both = _expected(again).withColumn("copies", F.lit(1)).unionByName(
        _tagged(written_groups, "groups").unionByName(_tagged(written_outcomes, "outcomes"))
        .withColumn("copies", F.lit(-1)))
    net = both.groupBy(*_ROW).agg(F.sum("copies").alias("net"))
    table, count = F.col("table"), F.col("net")
    sums = [F.sum(F.when((table == name) & (count > 0), count).otherwise(0)).alias(
                f"{name} missing") for name in TABLES] + \
        [F.sum(F.when((table == name) & (count < 0), -count).otherwise(0)).alias(
            f"{name} extra") for name in TABLES]
    problem = F.when(table == "problems", F.struct("source", "reason"))
    found = net.agg(*sums, F.slice(F.collect_list(problem), 1, 20).alias("problems")).first()
    if found is None:
        return [], []
    problems = [(str(p["source"]), str(p["reason"])) for p in found["problems"]]
    differences = [f"{name}: {found[f'{name} missing']} row(s) of the re-run missing, "
                   f"{found[f'{name} extra']} unexpected" for name in TABLES
                   if found[f"{name} missing"] or found[f"{name} extra"]]
    return problems, differences


def _stray(folder: str) -> str | None:
    """The first file of a local table folder that no job writes (a job writes Parquet part
    files, in a stream's ``batch=N`` folders too; names starting with "." or "_" are
    Spark's own: checksums, ``_SUCCESS``)."""
    for at, subfolders, names in os.walk(folder):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith((".", "_")))
        for name in sorted(names):
            if not name.startswith((".", "_")) and not name.endswith(".parquet"):
                return os.path.relpath(os.path.join(at, name), os.path.dirname(folder))
    return None


def read_written(spark: SparkSession, output: str, table: str, rule: str,
                 missing: str) -> DataFrame:
    """SP-R4: the written ``table`` of ``output``, or the one thing wrong with it: no such
    table (``missing`` says what to do), a file in it no job writes (a stray ``notes.txt``),
    or a part file Spark cannot read (rewritten after the run, so that its ``.crc`` checksum
    no longer matches), each named; all three used to read "no readable table here"."""
    folder = f"{output}/{table}"
    local = is_local(output)
    if local and not os.path.isdir(resolved(folder)):
        raise PathError("output", rule, [f"no {table}/ table here: {missing}"], output)
    stray = _stray(resolved(folder)) if local else None
    if stray is not None:
        raise VerificationFailed(f"{stray}: a file the run never writes is in its {table}/ "
                                 f"table (rule {rule}): the table changed after the run; "
                                 f"remove that file, or run again")
    try:
        return spark.read.parquet(folder)
    except Exception as error:  # AnalysisException, a checksum error: say which
        text = one_line(error)
    if not local:
        raise PathError("output", rule, [f"no readable {table}/ table here ({text[:300]})"],
                        output)
    changed = _unchecked(resolved(folder))
    if changed is not None:
        raise VerificationFailed(f"{table}/{changed} changed after the run: it no longer "
                                 f"matches its checksum file (.{os.path.basename(changed)}"
                                 f".crc), so Spark refuses to read it (rule {rule}); run again")
    raise VerificationFailed(f"the {table}/ table cannot be read: {text[:300]} (rule "
                             f"{rule}); run again")


def _unchecked(folder: str) -> str | None:
    """The first file of ``folder`` whose bytes differ from its Hadoop checksum file
    (``.NAME.crc``: ``crc\\0``, the bytes per checksum, then a big-endian CRC-32 per piece),
    as Spark's local file system finds when it reads it; relative to ``folder``."""
    for at, subfolders, names in os.walk(folder):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith((".", "_")))
        for name in sorted(names):
            crc = os.path.join(at, f".{name}.crc")
            if name.startswith(".") or not os.path.isfile(crc):
                continue
            with open(crc, "rb") as sums, open(os.path.join(at, name), "rb") as data:
                head = sums.read(8)
                if head[:4] != b"crc\0":
                    continue
                size = int.from_bytes(head[4:], "big")
                while piece := data.read(size):
                    if sums.read(4) != zlib.crc32(piece).to_bytes(4, "big"):
                        return os.path.relpath(os.path.join(at, name), folder)
                if sums.read(4):
                    return os.path.relpath(os.path.join(at, name), folder)
    return None


def _written(spark: SparkSession, output: str, table: str) -> DataFrame:
    written = read_written(spark, output, table, "SP-R4", "run the batch job first")
    _require_schema(written, table)
    return written


#: The column a stream's tables add (its ``batch=N`` folders), which `run` never writes.
_STREAM_PARTITION = "batch"


def _require_schema(written: DataFrame, table: str) -> None:
    """SP-R4, SP-R5: the written table has exactly the columns and types the jobs write
    (nulls aside: types compared as ``simpleString`` shows them); a column of another type
    or an extra column fails the verification naming it, where comparing the selected
    columns' values alone accepted both."""
    names = schema.GROUP_COLUMNS if table == "groups" else schema.OUTCOME_COLUMNS
    rule = "SP-R4" if table == "groups" else "SP-R5"
    wanted = {f.name: f.dataType for f in schema.COMBINED.fields}
    found = {f.name: f.dataType for f in written.schema.fields}
    for name, kind in found.items():
        if name not in names and name != _STREAM_PARTITION:
            raise VerificationFailed(f"{table}/: a column {name!r} the run never writes "
                                     f"(rule {rule})")
        if name in names and kind.simpleString() != wanted[name].simpleString():
            raise VerificationFailed(f"{table}/: column {name!r} is "
                                     f"{kind.simpleString()}, the run writes "
                                     f"{wanted[name].simpleString()} (rule {rule})")
    for name in names:
        if name not in found:
            raise VerificationFailed(f"{table}/: no column {name!r} (rule {rule})")


class VerificationError(ConsistencyError):
    """The written tables are not what the run should have written (exit 3)."""
