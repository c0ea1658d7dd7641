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
from typing import Any

import attrs
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from timealign.algorithm import Algorithm, check_invariants
from timealign.command import one_line
from timealign.errors import ConsistencyError
from timealign.outputs import is_local, resolved
from timealign.spark import schema
from timealign.spark.census import check_no_loss, check_unique_ids
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


def verify_rows(
    spark: SparkSession, algorithm: Algorithm[Any, Any, Any, Any], config: Any,
    rows: DataFrame, output: str,
) -> dict[str, int]:
    """The three checks of :func:`verify` over canonical ``rows`` (SP-R1 columns plus the
    input order, SP-R2), as any reader of ``run`` gives them (tables, bags)."""
    check_unique_ids(rows)  # SP-R22: the batch job's rule, so the two agree
    written_groups, written_outcomes = (_written(spark, output, t) for t in TABLES)
    total = check_no_loss(rows, written_outcomes)
    count = int(rows.sparkSession.conf.get("spark.sql.shuffle.partitions") or 2)
    again = rows.repartition(count, "source").sortWithinPartitions(
        "source", "arrival", schema.FILE, schema.POSITION).groupBy("source").applyInArrow(
        verify_function(algorithm, config), schema.COMBINED).cache()
    try:
        problems = [(r["source"], r["reason"]) for r in
                    again.where(F.col("table") == "problems").limit(20).collect()]
        if problems:
            raise VerificationFailed(f"invariant violations: {problems}")
        differences = _differences(schema.groups_of(again), written_groups, "groups") + \
            _differences(schema.outcomes_of(again), written_outcomes, "outcomes")
        if differences:
            raise VerificationFailed("; ".join(differences))
    finally:
        again.unpersist()
    return {"rows": total, "invariants": int(algorithm.checks.check is not None)}


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


def _differences(expected: DataFrame, written: DataFrame, name: str) -> list[str]:
    written = written.select(*expected.columns)
    missing = expected.exceptAll(written).count()
    extra = written.exceptAll(expected).count()
    if missing or extra:
        return [f"{name}: {missing} row(s) of the re-run missing, {extra} unexpected"]
    return []


class VerificationError(ConsistencyError):
    """The written tables are not what the run should have written (exit 3)."""
