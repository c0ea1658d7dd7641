"""The honest baseline of the benchmarks (``benchmarks/honest_baseline.py``, issue 44) does the
per-file job's work: on the same input it writes the same tables (SP-R4, SP-R5), with the
same columns and types, and refuses what the job refuses for the no-loss rules (SP-R22,
SP-R18). Without this the benchmark's "against the baseline" figures would compare the job
with a program doing less (or other) work."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from tests.spark.machines import CASES, Case, make_fleet
from timealign.errors import InvalidInput
from timealign.spark.batch import run_batch
from timealign.spark.generate import Plan, generate
from timealign.spark.outcomes import DuplicateIdError

# The benchmarks are scripts, not a package: the baseline is imported from its folder.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
honest_baseline: Any = importlib.import_module("honest_baseline")


def rows_of(folder: Path) -> list[tuple[Any, ...]]:
    """Every row of a written table, columns in name order, sorted (no table's row order is
    part of SP-R4 or SP-R5)."""
    table = pq.read_table(folder)
    names = sorted(table.column_names)
    return sorted((tuple(tuple(v) if isinstance(v, list) else v for v in (r[n] for n in names))
                   for r in table.to_pylist()), key=repr)


def columns_of(folder: Path) -> list[tuple[str, pa.DataType]]:
    table = pq.read_table(folder)
    return [(field.name, field.type) for field in table.schema]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_sp_r18_baseline_tables_equal_the_jobs(spark: SparkSession, case: Case,
                                               tmp_path: Path) -> None:
    """SP-R4, SP-R5, SP-R18: the baseline's groups and outcomes equal the per-file job's,
    row for row and column for column, for every algorithm of the Spark tests' fleet."""
    robots = make_fleet(tmp_path / "robots", Plan(robots=4, seconds=3.0, seed=11,
                                                  per_robot=True))
    run_batch(spark, case.algorithm, case.config, str(robots), str(tmp_path / "job"),
              per_file=True)
    counts = honest_baseline.run(case.algorithm, case.config, robots, tmp_path / "base")
    assert not (tmp_path / "base" / "_staging").exists()
    for table in ("groups", "outcomes"):
        expected = rows_of(tmp_path / "job" / table)
        assert len(expected) > 20
        assert rows_of(tmp_path / "base" / table) == expected
        assert columns_of(tmp_path / "base" / table) == columns_of(tmp_path / "job" / table)
    assert counts["outcomes"] == counts["rows"] == pq.read_table(robots).num_rows


def test_sp_r22_baseline_refuses_a_repeated_id(tmp_path: Path) -> None:
    """SP-R22: an id repeated within a source fails the baseline as it fails the job, and
    nothing is published (SP-R21)."""
    generate(Plan(robots=2, seconds=1.0, seed=1, per_robot=True), tmp_path / "in")
    file = sorted((tmp_path / "in").glob("*.parquet"))[0]
    table = pq.read_table(file)
    ids = table.column("id").to_pylist()
    ids[-1] = ids[0]
    pq.write_table(table.set_column(1, "id", pa.array(ids)), file)
    case = next(c for c in CASES if c.name == "approximate_time")
    with pytest.raises(DuplicateIdError, match="SP-R22"):
        honest_baseline.run(case.algorithm, case.config, tmp_path / "in", tmp_path / "out")
    assert not (tmp_path / "out" / "groups").exists()


def test_sp_r18_baseline_refuses_a_source_in_two_files(tmp_path: Path) -> None:
    """SP-R18: a source whose rows are in two files is refused, naming both files."""
    generate(Plan(robots=2, seconds=1.0, seed=1, per_robot=True), tmp_path / "in")
    first, second = sorted((tmp_path / "in").glob("*.parquet"))
    table = pq.read_table(second)
    renamed = pa.array([pq.read_table(first).column("source")[0].as_py()] * table.num_rows)
    pq.write_table(table.set_column(0, "source", renamed), second)
    case = next(c for c in CASES if c.name == "approximate_time")
    with pytest.raises(InvalidInput, match="SP-R18") as refused:
        honest_baseline.run(case.algorithm, case.config, tmp_path / "in", tmp_path / "out")
    assert first.name in str(refused.value) and second.name in str(refused.value)
