"""The per-file path of the batch job (SP-R18): one source per file, no shuffle, no sort."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from tests.pairs_toy import PAIRS, PairsConfig
from tests.spark.machines import CASES, Case, make_fleet
from timealign.algorithm import Fast
from timealign.cli import main
from timealign.errors import InvalidInput
from timealign.spark import schema
from timealign.spark.batch import run_batch
from timealign.spark.census import Census
from timealign.spark.failures import OrderError
from timealign.spark.generate import Plan
from timealign.spark.outcomes import DuplicateIdError, LossError
from timealign.spark.per_file import (
    CENSUS,
    ONE_FILE_PER_TASK,
    TASKS_PER_CORE,
    FileTally,
    checked,
    file_pieces,
    replay_files_frame,
)
from timealign.spark.session import session_conf

REAL = next((c for c in CASES if c.name == "approximate_time"), CASES[0])


@pytest.fixture(scope="module")
def robot_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session fleet's rows (same plan and seed), one file per robot."""
    return make_fleet(tmp_path_factory.mktemp("robots"),
                      Plan(robots=12, seconds=3.0, seed=7, files=3, per_robot=True))


def all_rows(spark: SparkSession, output: Path, table: str,
             sources: set[str] | None = None) -> list[tuple[Any, ...]]:
    """Every column of every row (of ``sources`` only, if given), sorted."""
    frame = spark.read.parquet(str(output / table))
    if sources is not None:
        frame = frame.where(frame["source"].isin(sorted(sources)))
    return sorted((tuple(tuple(v) if isinstance(v, list) else v for v in r)
                   for r in frame.select(*sorted(frame.columns)).collect()), key=repr)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_sp_r18_per_file_equals_shuffled(spark: SparkSession, robot_files: Path,
                                         batch_output: Any, case: Case,
                                         tmp_path: Path) -> None:
    """SP-R18, SP-I2: replaying each robot's file as read gives exactly the tables of the
    shuffled path over the same rows in rotated files."""
    assert len(list(robot_files.glob("robot-*.parquet"))) == 12
    run_batch(spark, case.algorithm, case.config, str(robot_files), str(tmp_path),
              per_file=True)
    for table in ("groups", "outcomes"):
        got = all_rows(spark, tmp_path, table)
        assert got == all_rows(spark, batch_output(case), table)
        assert len(got) > 50


def test_sp_r18_source_from_the_file_name(spark: SparkSession, robot_files: Path,
                                          batch_output: Any, tmp_path: Path) -> None:
    """SP-R18: without a source column, the source is the file name without extension."""
    folder = tmp_path / "in"
    folder.mkdir()
    for path in robot_files.glob("*.parquet"):
        pq.write_table(pq.read_table(path).drop(["source"]), folder / path.name)
    run_batch(spark, REAL.algorithm, REAL.config, str(folder), str(tmp_path / "out"),
              per_file=True)
    assert all_rows(spark, tmp_path / "out", "outcomes") == \
        all_rows(spark, batch_output(REAL), "outcomes")


def test_sp_r18_csv_files_per_source(spark: SparkSession, robot_files: Path,
                                     batch_output: Any, tmp_path: Path) -> None:
    """SP-R18, SP-R2, SP-R3: CSV files (no row index: positions counted per file block) read
    one per task give each source's rows of the shuffled Parquet run."""
    folder = tmp_path / "csv"
    folder.mkdir()
    chosen = sorted(robot_files.glob("*.parquet"))[:3]
    for path in chosen:
        pq.read_table(path).to_pandas().to_csv(folder / f"{path.stem}.csv", index=False)
    run_batch(spark, REAL.algorithm, REAL.config, str(folder), str(tmp_path / "out"), "csv",
              per_file=True)
    sources = {path.stem for path in chosen}
    want = all_rows(spark, batch_output(REAL), "outcomes", sources)
    assert all_rows(spark, tmp_path / "out", "outcomes") == want
    assert len(want) > 300


def write_robot(folder: Path, name: str, ids: list[str], arrivals: list[int],
                sources: list[str] | None = None) -> None:
    folder.mkdir(exist_ok=True)
    count = len(ids)
    pq.write_table(pa.table({
        "source": sources or [name] * count, "id": ids,
        "topic": ["camera", "lidar", "imu"] * (count // 3) + ["camera"] * (count % 3),
        "stamp": arrivals, "arrival": arrivals}), folder / f"{name}.parquet")


def test_sp_r18_r10_file_out_of_order_fails_naming_file_and_row(
        tmp_path: Path, spark: SparkSession, capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R18, SP-R10, SP-D7: `timealign run --sources-per-file` (the user states the layout,
    the job checks it) over a file whose rows are not in arrival order fails (exit 3),
    naming the file and the first offending row."""
    write_robot(tmp_path / "in", "r1", ["a", "b", "c", "d"], [10, 20, 30, 40])
    write_robot(tmp_path / "in", "r2", ["e", "f", "g", "h", "i"], [10, 20, 35, 30, 40])
    config = json.dumps({"topics": ["camera", "lidar", "imu"], "queue_size": 5})
    code = main(["run", REAL.name, "--input", str(tmp_path / "in"), "--output",
                 str(tmp_path / "out"), "--config", config, "--quiet", "--sources-per-file"])
    error = capsys.readouterr().err
    assert code == 3
    assert "r2.parquet is not in arrival order: row 3 (id 'h', source 'r2')" in error
    assert "below 35" in error and "SP-R10" in error
    assert "run without --sources-per-file to sort" in error  # the command's own flag
    with pytest.raises(OrderError) as caught:  # the library's entry names its parameter
        run_batch(spark, REAL.algorithm, REAL.algorithm.codec.config_from_json(json.loads(config)),
                  str(tmp_path / "in"), str(tmp_path / "out-lib"), per_file=True)
    assert "run without per_file=True to sort" in str(caught.value)
    assert "--sources-per-file" not in str(caught.value)


def test_sp_r18_source_must_be_constant_and_in_one_file(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R18: a file holding two sources, or a source spread over two files, is refused,
    in the words of the caller (`per_file=True` for the library, the flag for `run`)."""
    write_robot(tmp_path / "mixed", "r1", ["a", "b", "c"], [1, 2, 3], ["r1", "r1", "r9"])
    with pytest.raises(InvalidInput) as caught:
        run_batch(spark, REAL.algorithm, REAL.config, str(tmp_path / "mixed"),
                  str(tmp_path / "out1"), per_file=True)
    assert (caught.value.field, caught.value.rule) == ("source", "SP-R18")
    assert "r1.parquet: row 2 has source 'r9'" in str(caught.value)
    assert "with per_file=True the source" in str(caught.value)  # the library's words
    write_robot(tmp_path / "spread", "r1", ["a", "b", "c"], [1, 2, 3])
    write_robot(tmp_path / "spread", "r1-more", ["d", "e", "f"], [4, 5, 6], ["r1"] * 3)
    with pytest.raises(InvalidInput, match="every source must be in one file") as caught:
        run_batch(spark, REAL.algorithm, REAL.config, str(tmp_path / "spread"),
                  str(tmp_path / "out2"), per_file=True)
    assert "r1-more.parquet" in str(caught.value) and caught.value.rule == "SP-R18"
    assert "with per_file=True every source" in str(caught.value)
    # SP-D23: found after the replay, yet nothing published and no staging left behind
    assert not (tmp_path / "out2").exists() or not list((tmp_path / "out2").iterdir())
    assert "--" not in str(caught.value)
    capsys.readouterr()
    assert main(["run", REAL.name, "--input", str(tmp_path / "spread"), "--output",
                 str(tmp_path / "out3"), "--config", json.dumps(REAL.algorithm.codec.config_to_json(
                     REAL.config)), "--quiet", "--sources-per-file"]) == 2
    assert "with --sources-per-file every source" in capsys.readouterr().err


def test_sp_r18_positions_prove_a_whole_file_per_task() -> None:
    """SP-R18: the task's batches are cut where the file changes, and a file whose positions
    do not count 0, 1, 2, … (split between tasks, or read out of order) fails."""
    def batch(files: list[str], positions: list[int]) -> pa.RecordBatch:
        return pa.record_batch({schema.FILE: files, schema.POSITION: positions,
                                "source": ["s"] * len(files)})

    pieces = list(file_pieces(iter([batch(["f", "f", "g"], [0, 1, 0]),
                                    batch(["g", "h"], [1, 0])])))
    assert [(f, p.column(schema.POSITION).to_pylist()) for f, p in pieces] == [
        ("f", [0, 1]), ("g", [0]), ("g", [1]), ("h", [0])]
    assert len(list(checked("g", iter([pieces[1][1], pieces[2][1]]), "s"))) == 2
    with pytest.raises(OrderError, match="split between tasks"):
        list(checked("g", iter([pieces[2][1]]), "s"))


def test_sp_d25_the_path_on_a_files_first_row_only() -> None:
    """SP-D25, SP-R18: with the path on each file's first row only (null after it), the
    task's batches are cut where a row names a file, a file's rows run on across batches,
    and rows that reach a task before any row naming their file (the file began in another
    task) fail as a split file."""
    def batch(files: list[str | None], positions: list[int]) -> pa.RecordBatch:
        return pa.record_batch({schema.FILE: pa.array(files, pa.string()),
                                schema.POSITION: positions, "source": ["s"] * len(files)})

    pieces = list(file_pieces(iter([batch(["f", None, "g"], [0, 1, 0]),
                                    batch([None, None], [1, 2]),
                                    batch([None, "h", None], [3, 0, 1])])))
    assert [(f, p.column(schema.POSITION).to_pylist()) for f, p in pieces] == [
        ("f", [0, 1]), ("g", [0]), ("g", [1, 2]), ("g", [3]), ("h", [0, 1])]
    assert len(list(checked("g", iter(p for f, p in pieces if f == "g"), "s"))) == 3
    with pytest.raises(OrderError, match=r"position 5 of a file.*split between tasks"):
        list(file_pieces(iter([batch([None, "h"], [5, 0])])))


def _paths_named(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """A stand-in replay: per task, how many rows arrived and how many carried a path."""
    named = rows = 0
    for batch in batches:
        named += batch.column(schema.FILE).is_valid().true_count
        rows += batch.num_rows
    values: dict[str, list[Any]] = {n: [None] for n in schema.ARROW_COMBINED.names}
    values.update(table=["census"], source=["s"], id=[str(named)], input=[rows])
    yield pa.RecordBatch.from_pydict(values, schema=schema.ARROW_COMBINED)


@pytest.mark.parametrize("first_row_only", [True, False])
def test_sp_d25_per_file_replay_reads_the_path_on_first_rows_only(
        spark: SparkSession, robot_files: Path, monkeypatch: pytest.MonkeyPatch,
        first_row_only: bool) -> None:
    """SP-D25: the rows the per-file replay reads hold each file's path on the file's first
    row only (one path per file reaches the tasks); with it off (the benchmark's
    comparison) every row's."""
    from timealign.spark import per_file

    monkeypatch.setattr(per_file, "FIRST_ROW_PATH", first_row_only)
    monkeypatch.setattr(per_file, "replay_files_function", lambda *a, **k: _paths_named)
    rows = schema.read_input(spark, str(robot_files), "parquet", schema.ColumnMap(),
                             source_from_file=True)
    with session_conf(spark, ONE_FILE_PER_TASK):
        tasks = replay_files_frame(rows, REAL.algorithm, REAL.config).collect()
    total = sum(r["input"] for r in tasks)
    assert total == rows.count() > 12
    assert sum(int(r["id"]) for r in tasks) == (12 if first_row_only else total)


def test_sp_r18_bag_positions_may_have_gaps_but_only_increase() -> None:
    """SP-R18: a bag's rows (``dense=False``) may skip positions (rows of other topics set
    aside) but must increase, within and across batches."""
    def batch(positions: list[int]) -> pa.RecordBatch:
        return pa.record_batch({schema.FILE: ["b"] * len(positions),
                                schema.POSITION: positions, "source": ["s"] * len(positions)})

    assert len(list(checked("b", iter([batch([0, 2, 5]), batch([9])]), "s", False))) == 2
    with pytest.raises(OrderError, match="split between tasks"):
        list(checked("b", iter([batch([0, 2, 5])]), "s"))  # dense: gaps refused
    for bad in ([[0, 5, 5]], [[0, 7], [3]]):
        with pytest.raises(OrderError):
            list(checked("b", iter(batch(p) for p in bad), "s", False))


def _fast_step_that_says_so(config: Any, state: Any, item: Any) -> Any:
    raise InvalidInput("fast", "SP-R10", "the fast path stepped this row", None)


@pytest.mark.parametrize("per_file", [False, True], ids=["shuffled", "per-file"])
def test_sp_r10_r18_both_paths_step_the_fast_path(spark: SparkSession, tmp_path: Path,
                                                  per_file: bool) -> None:
    """SP-R10, SP-R18: the shuffled and the per-file paths both run the algorithm's fast
    path (``Algorithm.fast_path``), never the rule text (the per-file path once ran the
    rule text, at twice the Python CPU per row)."""
    flagged = attrs.evolve(PAIRS, machine=attrs.evolve(
        PAIRS.machine, fast=Fast(PAIRS.machine.initial, _fast_step_that_says_so)))
    write_robot(tmp_path / "in", "r1", ["a", "b"], [1, 2])
    with pytest.raises(InvalidInput, match="the fast path stepped this row"):
        run_batch(spark, flagged, PairsConfig(window=3), str(tmp_path / "in"),
                  str(tmp_path / "out"), per_file=per_file)


def test_sp_d23_the_per_file_census_comes_from_the_replay(
        spark: SparkSession, tmp_path: Path) -> None:
    """SP-D23, SP-R38, SP-R6: a file's census row counts the rows its replay was fed and the
    configured topics among them; the job's per-source counts and missing topics come from
    these rows, which reach neither table; rows that do not add up to the input's count
    fail the run (LossError) before anything is published. SP-R22: a repeated id still
    fails the per-file job with the census's error, nothing published."""
    tally = FileTally(["camera", "imu"])
    batches = [pa.record_batch({"topic": ["camera", "gps"]}), pa.record_batch({"topic": ["imu"]})]
    assert [b.num_rows for b in tally.count(iter(batches))] == [2, 1]
    assert tally.row("r1", "f.parquet").to_pylist() == [
        {**dict.fromkeys(schema.ARROW_COMBINED.names), "table": CENSUS, "source": "r1",
         "id": "f.parquet", "input": 3, "ids": ["camera", "imu"]}]
    folder = tmp_path / "in"
    write_robot(folder, "r1", ["a", "b", "c", "d", "e", "f"], [1, 2, 3, 4, 5, 6])
    write_robot(folder, "r2", ["x", "y"], [1, 2])  # camera only: lacks lidar and imu
    result = run_batch(spark, REAL.algorithm, REAL.config, str(folder),
                       str(tmp_path / "out"), per_file=True)
    assert (result.rows, result.missing_sources) == (8, 1)
    assert result.missing_topics == ({"source": "r2", "topics": ["imu", "lidar"]},)
    outcomes = spark.read.parquet(str(tmp_path / "out" / "outcomes"))
    assert sorted((r["source"], r["id"]) for r in outcomes.collect()) == [
        ("r1", i) for i in "abcdef"] + [("r2", "x"), ("r2", "y")]
    assert spark.read.parquet(str(tmp_path / "out" / "groups")).where(
        "source is null or seq is null").count() == 0
    write_robot(tmp_path / "twice", "r1", ["a", "b", "a"], [1, 2, 3])  # SP-R22 unchanged
    with pytest.raises(DuplicateIdError, match=r"source 'r1' id 'a' \(2 rows\)"):
        run_batch(spark, REAL.algorithm, REAL.config, str(tmp_path / "twice"),
                  str(tmp_path / "out2"), per_file=True)
    assert not (tmp_path / "out2").exists() or not list((tmp_path / "out2").iterdir())
    census = Census(schema.read_input(spark, str(folder), "parquet", schema.ColumnMap(),
                                      source_from_file=True), one_file=True, folded=True)
    rows = [{"source": "r1", "file": "r1.parquet", "rows": 6, "topics": ["camera"]},
            {"source": "r2", "file": "r2.parquet", "rows": 1, "topics": ["camera"]}]
    with pytest.raises(LossError, match=r"replay read 7 row\(s\) of an input of 8"):
        census.take_files(rows, 8)
    with pytest.raises(InvalidInput, match="every source must be in one file") as caught:
        census.take_files([*rows, {**rows[1], "file": "r3.parquet"}], 8)  # r2 in two files
    assert (caught.value.rule, caught.value.value) == ("SP-R18", "r2")


def test_sp_d24_sp_r18_whole_files_packed_into_two_tasks_per_core(
        spark: SparkSession, robot_files: Path) -> None:
    """SP-D24, SP-R18: the replay's scan reads each file as one partition, and ``coalesce``
    packs those into two tasks per core, each file whole in one of them (its census row
    once, counting all its rows); the census's scan keeps Spark's packing by bytes."""
    rows = schema.read_input(spark, str(robot_files), "parquet", schema.ColumnMap(),
                             source_from_file=True)
    files = len(list(robot_files.glob("*.parquet")))
    tasks = TASKS_PER_CORE * spark.sparkContext.defaultParallelism
    assert (TASKS_PER_CORE, files) == (2, 12) and tasks < files
    # a new frame each time: a frame's rdd, planned once, is kept with it
    assert rows.select("*").rdd.getNumPartitions() < files  # packed by bytes
    with session_conf(spark, ONE_FILE_PER_TASK):
        assert rows.select("*").rdd.getNumPartitions() == files
        replayed = replay_files_frame(rows, REAL.algorithm, REAL.config)
        assert replayed.rdd.getNumPartitions() == tasks
        census = replayed.where(replayed["table"] == CENSUS).select("id", "input").collect()
    per_file = {Path(r["id"]).name: r["input"] for r in census}
    assert len(census) == len(per_file) == files
    assert per_file == {p.name: pq.read_metadata(p).num_rows
                        for p in robot_files.glob("*.parquet")}
