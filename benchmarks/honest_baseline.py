"""The honest baseline of the Spark per-file job (issue 44): its whole work, one process, no Spark.

``timealign run --sources-per-file`` (``run_batch(per_file=True)``) reads a folder of Parquet
files, one source per file in arrival order (SP-R18), checks that no id repeats within a
source (SP-R22), replays every file on the algorithm's fast path, writes the ``groups/`` and
``outcomes/`` tables (SP-R4, SP-R5) into staging folders, checks that every input row has
exactly one outcome row (SP-R6, SP-D6) and only then publishes the tables (SP-R21). This
program does the same work with the best tools outside Spark, so that the job is charged
only for what Spark adds:

- pyarrow reads each file in batches (``ParquetFile.iter_batches``: memory flat in the
  file's length, as the job's worker);
- the replay is the project's own, the one the job's Python workers run
  (:func:`timealign.spark.replay.replay` over a :class:`timealign.spark.outcomes.SourceRun`,
  the algorithm's fast path): no rule is written here;
- the checks a single reader still needs: the source constant within a file and in one
  file only (SP-R18), no null in a required column and the canonical column types (SP-R1,
  through the replay module's own checks), no id repeated within a source (SP-R22: the
  distinct ids of the file against its rows), and after the writes the outcome rows per
  source against the input rows (SP-R6, SP-D6; the replay also checks it id by id). A
  single reader reads each file whole, in order, so the job's checks that a task saw a file
  whole and in order (the ``order_file`` and ``order_row`` columns, SP-R10's tie-break) have
  nothing to check here; the driver still checks the arrival order (DRV-R1);
- pyarrow writes the two tables with the job's columns and types (``GROUP_COLUMNS``,
  ``OUTCOME_COLUMNS`` of :mod:`timealign.spark.schema`), unpartitioned, snappy-compressed
  Parquet part files as Spark writes them, into staging folders moved into place once the
  no-loss check has passed.

``tests/spark/test_spark_honest_baseline.py`` checks that its tables hold the same rows as
the job's on the same input. ``benchmarks/bench_spark.py`` runs it in the same run as the
job (``--baseline-only``, in a process of its own) and prints the job's CPU per row and
wall time against it.

    python benchmarks/honest_baseline.py INPUT OUTPUT [--algorithm A] [--config JSON]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from timealign import registry
from timealign.algorithm import Algorithm, Columns
from timealign.errors import InvalidInput
from timealign.spark import schema
from timealign.spark.outcomes import GROUPED, GROUPS, OUTCOMES, DuplicateIdError, LossError
from timealign.spark.replay import REQUIRED_VALUES, replay, require_values

#: Rows per batch read (pyarrow's default; the job's Arrow batches are Spark's 10,000).
BATCH_ROWS = 65_536
TABLES = ("groups", "outcomes")
CANONICAL: dict[str, pa.DataType] = {"source": pa.string(), "id": pa.string(),
                                     "topic": pa.string(), "stamp": pa.int64(),
                                     "arrival": pa.int64()}
#: Optional columns passed on when a file has them (the batchers' ``kind`` and ``poll``).
OPTIONAL: dict[str, pa.DataType] = {"kind": pa.string(), "poll": pa.int64()}
_COMBINED_TYPES = {field.name: field.type for field in schema.ARROW_COMBINED}


def table_schema(columns: tuple[str, ...]) -> pa.Schema:
    """A table's Arrow schema: the combined output's fields of these columns (the job
    selects them from the combined output; every written column is nullable)."""
    return pa.schema([pa.field(name, _COMBINED_TYPES[name]) for name in columns])


GROUP_SCHEMA = table_schema(schema.GROUP_COLUMNS)
OUTCOME_SCHEMA = table_schema(schema.OUTCOME_COLUMNS)


def input_files(folder: Path) -> list[Path]:
    """The Parquet files of the input, in path order (as the job lists them: hidden and
    ``_`` names skipped)."""
    if folder.is_file():
        return [folder]
    found: list[Path] = []
    for top, subfolders, names in os.walk(folder):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith((".", "_")))
        found += [Path(top) / n for n in sorted(names)
                  if not n.startswith((".", "_")) and n.endswith(".parquet")]
    return found


def file_batches(file: Path) -> tuple[str, Iterator[pa.RecordBatch]]:
    """The file's source and its batches of the canonical columns (SP-R1: a file without a
    ``source`` column is the source named by the file, SP-R18; no ``topic``: ``""``; no
    ``arrival``: the stamp, SP-D2)."""
    handle = pq.ParquetFile(file)
    present = set(handle.schema_arrow.names)
    for field in schema.REQUIRED:
        if field not in present:
            raise InvalidInput(field, "SP-R1", f"file {file}: required column for "
                               f"{field!r} is missing", sorted(present))
    wanted = [name for name in (*CANONICAL, *OPTIONAL) if name in present]
    kinds = {**CANONICAL, **{name: OPTIONAL[name] for name in OPTIONAL if name in present}}

    def batches() -> Iterator[pa.RecordBatch]:
        for batch in handle.iter_batches(batch_size=BATCH_ROWS, columns=wanted):
            arrays = {name: batch.column(name) for name in wanted}
            rows = batch.num_rows
            if "source" not in arrays:
                arrays["source"] = pa.repeat(pa.scalar(file.stem), rows)
            if "topic" not in arrays:
                arrays["topic"] = pa.repeat(pa.scalar(""), rows)
            if "arrival" not in arrays:
                arrays["arrival"] = arrays["stamp"]
            yield pa.RecordBatch.from_arrays(
                [arrays[name].cast(kind) for name, kind in kinds.items()], names=list(kinds))

    stream = batches()
    first = next(stream, None)
    if first is None:
        return file.stem, iter(())
    source = first.column("source")[0].as_py() if first.num_rows else file.stem

    def chained() -> Iterator[pa.RecordBatch]:
        yield first
        yield from stream

    return str(source) if source is not None else "", chained()


class FileRead:
    """What was read of one file, for the checks after its replay: its rows and ids."""

    def __init__(self, file: Path, source: str) -> None:
        self.file, self.source = file, source
        self.rows = 0
        self.ids: list[pa.Array] = []

    def columns(self, batches: Iterator[pa.RecordBatch]) -> Iterator[Columns]:
        """The batches as the replay's columns of values, checked on the way (SP-R1 nulls,
        SP-R18 a constant source); the ids kept for SP-R22."""
        for batch in batches:
            if not batch.num_rows:
                continue
            require_values(self.source, [f for f in REQUIRED_VALUES
                                         if batch.column(f).null_count])
            sources = batch.column("source")
            if sources.null_count or pc.count_distinct(sources).as_py() != 1 \
                    or sources[0].as_py() != self.source:
                raise InvalidInput("source", "SP-R18", f"file {self.file}: the source must "
                                   f"be constant within a file (first {self.source!r})",
                                   None)
            self.rows += batch.num_rows
            ids = batch.column("id")
            self.ids.append(ids)
            kinds, polls = (None if name not in batch.schema.names
                            or batch.column(name).null_count == batch.num_rows
                            else batch.column(name).to_pylist() for name in OPTIONAL)
            yield (ids.to_pylist(), batch.column("topic").to_pylist(),
                   batch.column("stamp").to_pylist(), batch.column("arrival").to_pylist(),
                   kinds, polls)

    def check_unique(self) -> None:
        """SP-R22: no id repeats within the source (the file's distinct ids, its rows)."""
        if not self.ids:
            return
        ids = pa.chunked_array(self.ids, pa.string())
        if pc.count_distinct(ids).as_py() != self.rows:
            counts = pc.value_counts(ids)
            repeated = [(v["values"], v["counts"]) for v in counts.to_pylist()
                        if v["counts"] > 1][:5]
            raise DuplicateIdError(f"ids must be unique within a source (SP-R1, SP-R22); "
                                   f"repeated in source {self.source!r}: {repeated}")


def split(combined: pa.RecordBatch) -> tuple[pa.Table, pa.Table]:
    """The groups table's and the outcomes table's rows of a combined output batch, as
    :func:`timealign.spark.schema.groups_of` and ``outcomes_of`` select them: the group rows,
    and the settled rows plus a ``grouped`` row per member of each group (SP-R5)."""
    table = combined.column("table")
    groups = pa.Table.from_batches([combined]).filter(pc.equal(table, GROUPS))
    settled = pa.Table.from_batches([combined]).filter(pc.equal(table, OUTCOMES))
    members = groups.column("ids").combine_chunks() if groups.num_rows else pa.array(
        [], _COMBINED_TYPES["ids"])
    parents = pc.list_parent_indices(members)
    member_ids = pc.list_flatten(members)
    grouped = pa.table({
        "source": groups.column("source").take(parents),
        "id": member_ids,
        "outcome": pa.repeat(pa.scalar(GROUPED), len(member_ids)),
        "seq": groups.column("seq").take(parents),
        "reason": pa.nulls(len(member_ids), pa.string()),
        "at": groups.column("at").take(parents),
        "input": groups.column("input").take(parents),
    }, schema=OUTCOME_SCHEMA)
    outcomes = pa.concat_tables([settled.select(list(schema.OUTCOME_COLUMNS)).cast(
        OUTCOME_SCHEMA), grouped])
    return groups.select(list(schema.GROUP_COLUMNS)).cast(GROUP_SCHEMA), outcomes


def run(algorithm: Algorithm[Any, Any, Any, Any], config: Any, input_path: Path,
        output: Path) -> dict[str, int]:
    """The per-file job's work on ``input_path``; the tables go to ``output/groups`` and
    ``output/outcomes``, published only once every check passed. Returns the input rows
    and the rows of each table."""
    fast = algorithm.fast_path()
    staging = output / "_staging"
    if staging.exists():
        shutil.rmtree(staging)
    for name in TABLES:
        (staging / name).mkdir(parents=True)
    writers = {name: pq.ParquetWriter(staging / name / "part-00000.parquet", kind,
                                      compression="snappy")
               for name, kind in (("groups", GROUP_SCHEMA), ("outcomes", OUTCOME_SCHEMA))}
    counts = {"rows": 0, "groups": 0, "outcomes": 0}
    seen: dict[str, Path] = {}
    try:
        for file in input_files(input_path):
            source, batches = file_batches(file)
            if source in seen:  # SP-R18
                raise InvalidInput("source", "SP-R18", f"with per_file=True every source "
                                   f"must be in one file; {source!r} in {seen[source]} "
                                   f"and {file}", source)
            seen[source] = file
            read = FileRead(file, source)
            written = 0
            for combined in replay(fast, config, source, read.columns(batches)):
                if not combined.num_rows:
                    continue
                groups, outcomes = split(combined)
                writers["groups"].write_table(groups)
                writers["outcomes"].write_table(outcomes)
                counts["groups"] += groups.num_rows
                written += outcomes.num_rows
            read.check_unique()  # SP-R22
            if written != read.rows:  # SP-R6, SP-D6: per source, the job's reconcile
                raise LossError(f"source {source!r}: {read.rows} row(s), {written} "
                                f"outcome(s) (SP-R6)")
            counts["rows"] += read.rows
            counts["outcomes"] += written
    finally:
        for writer in writers.values():
            writer.close()
    for name in TABLES:  # SP-R21: published once the job has succeeded
        target = output / name
        if target.exists():
            shutil.rmtree(target)
        os.replace(staging / name, target)
    staging.rmdir()
    return counts


def measured(algorithm_name: str, config_json: str, input_path: str,
             output: str) -> dict[str, Any]:
    """:func:`run` timed: rows, wall seconds, CPU seconds and peak RSS of this process."""
    algorithm = registry.get(algorithm_name)
    config = algorithm.codec.config_from_json(json.loads(config_json))
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    counts = run(algorithm, config, Path(input_path), Path(output))
    seconds = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (usage.ru_utime + usage.ru_stime) - (before.ru_utime + before.ru_stime)
    return {**counts, "seconds": seconds, "cpu": cpu, "peak_bytes": usage.ru_maxrss * 1024,
            "load": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--algorithm", default="approximate_time")
    parser.add_argument("--config", default=json.dumps(
        {"topics": ["camera", "lidar", "imu"], "queue_size": 30,
         "max_interval_duration": 40_000_000}))
    args = parser.parse_args(argv)
    print(json.dumps(measured(args.algorithm, args.config, args.input, args.output)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
