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

import os
import zlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import attrs
import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from timealign.algorithm import Algorithm, check_invariants
from timealign.command import one_line
from timealign.errors import ConsistencyError
from timealign.outputs import is_local, resolved
from timealign.spark import schema
from timealign.spark.batch import no_phase
from timealign.spark.census import check_unique_and_no_loss, check_unique_ids
from timealign.spark.failures import marked
from timealign.spark.paths import TABLES, PathError
from timealign.spark.replay import columns_from_batches, replay, source_of, to_batch

PROBLEMS = pa.schema([pa.field("source", pa.string(), False),
                      pa.field("problem", pa.string(), False)])


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
        outputs.extend((len(inputs), output) for output in produced)
        inputs.append(item)
        return state, produced

    return (attrs.evolve(algorithm, machine=attrs.evolve(algorithm.machine, step=recording_step)),
            inputs, outputs)


def verify_function(
    algorithm: Algorithm[Any, Any, Any, Any], config: Any
) -> Callable[[tuple[pa.Scalar, ...], Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """UDF: the run's combined rows, plus one ``problems`` row per invariant violation."""

    def verify_source(
        key: tuple[pa.Scalar, ...], batches: Iterator[pa.RecordBatch]
    ) -> Iterator[pa.RecordBatch]:
        with marked("verify"):
            source = source_of(key)
        recorded, inputs, outputs = _recording(algorithm)
        yield from replay(recorded, config, source, columns_from_batches(source, batches))
        problems = check_invariants(algorithm.checks, config, inputs, outputs)[:20]
        if not problems:
            return
        rows: dict[str, list[Any]] = {name: [None] * len(problems)
                                      for name in schema.ARROW_COMBINED.names}
        rows["table"] = ["problems"] * len(problems)
        rows["source"] = [source] * len(problems)
        rows["reason"] = list(problems)
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
#: over the input and the written outcomes, then one over the re-run and the written tables.
PHASES: tuple[str, ...] = ("unique ids and no loss", "re-run, invariants and tables compared")


def verify_rows(
    spark: SparkSession, algorithm: Algorithm[Any, Any, Any, Any], config: Any,
    rows: DataFrame, output: str,
    phase: Callable[[str], AbstractContextManager[object]] = no_phase,
) -> dict[str, int]:
    """The three checks of :func:`verify` over canonical ``rows`` (SP-R1 columns plus the
    input order, SP-R2), as any reader of ``run`` gives them (tables, bags); ``phase`` is
    entered around each of :data:`PHASES` (the progress line, SP-R40).

    Two Spark passes (SP-D26; issue 42: four checks took four, plus four ``exceptAll``, and
    ``verify`` took longer than the run it checked): one aggregation over (source, id) of
    the input and the written outcomes settles both SP-R22 and SP-R6; then the re-run's rows
    are counted +1 and the written tables' rows -1 per distinct row, in one aggregation
    whose one action also gathers the re-run's invariant violations, so the re-run runs
    once and is never cached."""
    try:
        written_groups, written_outcomes = (_written(spark, output, t) for t in TABLES)
    except (PathError, VerificationFailed):
        check_unique_ids(rows)  # SP-R22 first, as the batch job: it wrote no tables then
        raise
    with phase(PHASES[0]):  # SP-R22 (the batch job's rule, so the two agree), then SP-R6
        total = check_unique_and_no_loss(rows, written_outcomes)
    count = int(rows.sparkSession.conf.get("spark.sql.shuffle.partitions") or 2)
    again = rows.repartition(count, "source").sortWithinPartitions(
        "source", "arrival", schema.FILE, schema.POSITION).groupBy("source").applyInArrow(
        verify_function(algorithm, config), schema.COMBINED)
    with phase(PHASES[1]):
        problems, differences = _compared(again, written_groups, written_outcomes)
    if problems:
        raise VerificationFailed(f"invariant violations: {problems}")
    if differences:
        raise VerificationFailed("; ".join(differences))
    return {"rows": total, "invariants": int(algorithm.checks.check is not None)}


#: The columns of a row of either table, as the comparison tags them (SP-R4, SP-R5).
_ROW = ("table", "source", "seq", "start", "end", "ids", "at", "input", "id", "outcome",
        "reason")


def _entry(table: str | Column, **given: Column) -> Column:
    """A row of the comparison (:data:`_ROW` but ``source``, ``seq``, ``at``, ``input``,
    which the generator's own columns carry): the given fields, null elsewhere."""
    kinds = {f.name: f.dataType for f in schema.COMBINED.fields}
    label = F.lit(table) if isinstance(table, str) else table
    return F.struct(label.alias("table"), *(
        given.get(name, F.lit(None)).cast(kinds[name]).alias(name)
        for name in ("start", "end", "ids", "id", "outcome", "reason")))


def _expected(again: DataFrame) -> DataFrame:
    """The re-run's rows as the tables' rows (a group row itself and one ``grouped`` outcome
    per member, as :func:`timealign.spark.schema.outcomes_of` derives them; a settled row
    itself) and its invariant violations (``problems``), all through one generator: one
    read of the re-run."""
    table = F.col("table")
    group = _entry("groups", start=F.col("start"), end=F.col("end"), ids=F.col("ids"))
    entries = F.when(table == "groups", F.concat(F.array(group), F.transform(
        "ids", lambda member: _entry("outcomes", id=member, outcome=F.lit("grouped"))))) \
        .when(table == "outcomes", F.array(_entry("outcomes", id=F.col("id"),
                                                  outcome=F.col("outcome"),
                                                  reason=F.col("reason")))) \
        .when(table == "problems", F.array(_entry("problems", reason=F.col("reason"))))
    # any other table (rows set aside) is no row of either table: null, so none
    return again.select("source", "seq", "at", "input", F.inline(entries)).select(*_ROW)


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
