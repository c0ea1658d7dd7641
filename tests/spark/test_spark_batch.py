"""The batch job (spec/spark.md) on the shared local SparkSession."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from tests.pairs_toy import PAIRS, TIMED_PAIRS, PairsConfig
from tests.spark.expected import expected_tables, spark_tables
from tests.spark.formats import write_formats
from tests.spark.machines import CASES, Case
from timealign import registry
from timealign.cli import main
from timealign.errors import InvalidInput
from timealign.spark.batch import run_batch
from timealign.spark.census import check_counts, check_no_loss
from timealign.spark.outcomes import LossError
from timealign.spark.schema import ColumnMap, read_input
from timealign.spark.summary import summarize
from timealign.spark.verify import verify

CONFIG = PairsConfig(window=3_000_000, timeout=20_000_000)


def tables(spark: SparkSession, output: Path) -> tuple[Any, Any]:
    return (spark.read.parquet(str(output / "groups")),
            spark.read.parquet(str(output / "outcomes")))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_sp_i2_r3_every_source_equals_replay(spark: SparkSession, fleet: Path,
                                             batch_output: Any, case: Case) -> None:
    """SP-I2, SP-R3, SP-R4, SP-R5, SP-R7: per source, the tables equal `timealign.iter_outputs`
    of that source's driven inputs, on a generated fleet of 12 sources; SP-D9: the
    `grouped` rows Spark derives from the groups equal those built from the outputs."""
    output = batch_output(case)
    want_groups, want_outcomes = expected_tables(case.algorithm, case.config, fleet)
    got_groups, got_outcomes = spark_tables(*tables(spark, output))
    assert len(want_outcomes) == len(got_outcomes) > 1000
    assert len(got_groups) > 10
    assert got_groups == want_groups
    assert got_outcomes == want_outcomes


def test_sp_r2_ties_broken_by_file_then_row(spark: SparkSession, tmp_path: Path) -> None:
    """SP-R2: equal arrivals replay in (file path, row position) order; SP-D3: a table
    without a ``source`` column is one source, named ""."""
    data = tmp_path / "in"
    data.mkdir()
    rows = {"a.parquet": [("x1", "x", 0, 5), ("y1", "y", 1, 5)],
            "b.parquet": [("y2", "y", 10, 7), ("x2", "x", 9, 7)],
            "c.parquet": [("x3", "x", 20, 6)]}
    for name, content in rows.items():
        pq.write_table(pa.table({"id": [r[0] for r in content], "topic": [r[1] for r in content],
                                 "stamp": [r[2] for r in content],
                                 "arrival": [r[3] for r in content]}), data / name)
    run_batch(spark, PAIRS, PairsConfig(window=2), str(data), str(tmp_path / "out"))
    groups, outcomes = tables(spark, tmp_path / "out")
    assert [list(r["ids"]) for r in groups.orderBy("seq").collect()] == [["x1", "y1"],
                                                                          ["y2", "x2"]]
    assert {r["source"] for r in outcomes.collect()} == {""}  # SP-D3


def test_sp_r1_r2_formats_and_column_mapping_agree(spark: SparkSession, fleet: Path,
                                                   tmp_path: Path) -> None:
    """SP-R1, SP-R2: Parquet, CSV and JSON lines with mapped column names give the same
    canonical rows in the same replay order."""
    mapping = ColumnMap.parse(["source=robot", "id=msg", "stamp=t_ns"])
    orders = []
    for fmt, path in write_formats(fleet, tmp_path).items():
        rows = read_input(spark, path, fmt, mapping).orderBy(
            "source", "arrival", "order_file", "order_row")
        orders.append([tuple(r) for r in rows.select(
            "source", "id", "topic", "stamp", "arrival", "kind", "poll").collect()])
    assert orders[0] == orders[1] == orders[2]
    assert len(orders[0]) == 3000 and orders[0][0][5:] == (None, None)


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_sp_r2_text_files_split_in_blocks_keep_file_order(
        spark: SparkSession, fleet: Path, tmp_path: Path, fmt: str) -> None:
    """SP-R2: a CSV or JSON-lines file read as many blocks (4 KiB splits, several tasks)
    still yields its rows in file order by (file part, position)."""
    path = write_formats(fleet, tmp_path)[fmt]
    mapping = ColumnMap.parse(["source=robot", "id=msg", "stamp=t_ns"])
    in_file = pq.read_table(Path(write_formats(fleet, tmp_path / "again")["parquet"]),
                            columns=["msg"]).column("msg").to_pylist()
    spark.conf.set("spark.sql.files.maxPartitionBytes", "4096")
    try:
        rows = read_input(spark, path, fmt, mapping)
        assert rows.rdd.getNumPartitions() > 10
        ordered = rows.orderBy("order_file", "order_row").select("id").collect()
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    assert [r["id"] for r in ordered] == in_file


def test_sp_r1_d2_timestamps_and_missing_arrival(spark: SparkSession, tmp_path: Path) -> None:
    """SP-R1, SP-D2: a timestamp column is read as ns; without arrival, stamps order rows."""
    stamps = pa.array([2_000, 1_000, 3_000], pa.timestamp("us"))
    pq.write_table(pa.table({"id": ["b", "a", "c"], "topic": ["y", "x", "x"], "when": stamps}),
                   tmp_path / "t.parquet")
    rows = read_input(spark, str(tmp_path / "t.parquet"), "parquet",
                      ColumnMap.parse(["stamp=when"]))
    got = [(r["id"], r["stamp"], r["arrival"]) for r in rows.orderBy("arrival").collect()]
    assert got == [("a", 1_000_000, 1_000_000), ("b", 2_000_000, 2_000_000),
                   ("c", 3_000_000, 3_000_000)]


def test_sp_r1_bad_columns_are_invalid_input(spark: SparkSession, tmp_path: Path) -> None:
    """SP-R1, SP-R36: missing required column, bad mapping, a 32-bit float time column (a
    64-bit one is read as its decimal text, tests/spark/test_spark_parquet_times.py)."""
    pq.write_table(pa.table({"id": ["a"], "stamp": pa.array([1.5], pa.float32())}),
                   tmp_path / "f.parquet")
    with pytest.raises(InvalidInput) as caught:
        read_input(spark, str(tmp_path), "parquet", ColumnMap.parse(["stamp=nope"]))
    assert (caught.value.field, caught.value.rule) == ("nope", "SP-R1")
    with pytest.raises(InvalidInput) as caught:
        read_input(spark, str(tmp_path), "parquet", ColumnMap())
    assert (caught.value.field, caught.value.rule) == ("stamp", "SP-R36")
    with pytest.raises(InvalidInput, match="FIELD=COLUMN"):
        ColumnMap.parse(["weight=w"])


def test_sp_d4_a_row_the_machine_rejects_fails_the_job(spark: SparkSession,
                                                       tmp_path: Path) -> None:
    """SP-D4: the machine's InvalidInput comes back as InvalidInput naming field and rule."""
    pq.write_table(pa.table({"source": ["s", "s"], "id": ["a", "b"], "topic": ["x", ""],
                             "stamp": [1, 2], "arrival": [1, 2]}), tmp_path / "f.parquet")
    with pytest.raises(InvalidInput) as caught:
        run_batch(spark, PAIRS, CONFIG, str(tmp_path / "f.parquet"), str(tmp_path / "out"))
    assert (caught.value.field, caught.value.rule) == ("topic", "TOY-R1")
    assert "source 's'" in str(caught.value)


def doctored(spark: SparkSession, fleet: Path, batch_output: Any) -> tuple[Any, Any, Any, Any]:
    """The fleet's input rows, the batch outcomes, one outcome row (the victim) and the
    outcomes without it."""
    rows = read_input(spark, str(fleet), "parquet", ColumnMap())
    _, outcomes = tables(spark, batch_output(CASES[0]))
    victim = outcomes.first()
    assert victim is not None
    lost = outcomes.where(~((F.col("source") == victim["source"])
                            & (F.col("id") == victim["id"])))
    return rows, outcomes, victim, lost


def test_sp_r6_i1_reconciliation_catches_lost_and_duplicated_rows(
        spark: SparkSession, fleet: Path, batch_output: Any) -> None:
    """SP-R6, SP-I1: the Spark-side check fails on a missing or a duplicated outcome."""
    rows, outcomes, _, missing = doctored(spark, fleet, batch_output)
    assert check_no_loss(rows, outcomes) == rows.count()
    with pytest.raises(LossError, match="1 \\(source, id\\)"):
        check_no_loss(rows, missing)
    with pytest.raises(LossError, match="SP-R6"):
        check_no_loss(rows, outcomes.unionByName(outcomes.limit(2)))


def test_sp_d6_batch_job_reconciles_counts_per_source(
        spark: SparkSession, fleet: Path, batch_output: Any) -> None:
    """SP-D6, SP-R6: the batch job's check counts per source: it catches a lost or a
    duplicated outcome row, but not an id swapped for another within the same source
    (the UDF's id-level check covers that); the verification join does catch the swap."""
    rows, outcomes, victim, lost = doctored(spark, fleet, batch_output)
    assert check_counts(rows, outcomes) == rows.count()
    with pytest.raises(LossError, match=r"1 source\(s\) .*SP-R6"):
        check_counts(rows, lost)
    with pytest.raises(LossError, match="SP-R6"):
        check_counts(rows, outcomes.unionByName(outcomes.limit(1)))
    swapped = lost.unionByName(outcomes.where(
        (F.col("source") == victim["source"]) & (F.col("id") != victim["id"])).limit(1))
    assert check_counts(rows, swapped) == rows.count()
    with pytest.raises(LossError, match=r"2 \(source, id\)"):
        check_no_loss(rows, swapped)


def test_sp_r9_cli_run_prints_summary(spark: SparkSession, fleet: Path, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R9: `timealign run` prints counts per outcome and percentiles, writes JSON."""
    monkeypatch.setitem(registry._ENTRIES, "timed_pairs", "tests.pairs_toy:TIMED_PAIRS")
    config = json.dumps({"window": 3_000_000, "timeout": 20_000_000})
    code = main(["run", "timed_pairs", "--input", str(fleet), "--output", str(tmp_path / "o"),
                 "--config", config, "--summary", str(tmp_path / "s.json"), "--quiet"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    summary = json.loads((tmp_path / "s.json").read_text())
    groups, outcomes = tables(spark, tmp_path / "o")
    assert summary == {"format": "timealign.summary/1",  # CLI-R5: its mark, first
                       "verdict": summary["verdict"], **summarize(groups, outcomes),
                       "seconds": summary["seconds"],
                       "rows_per_second": summary["rows_per_second"]}
    # CLI-R5: the summary's mark first; SP-R38: then its verdict, the first line printed
    assert list(summary)[:2] == ["format", "verdict"]
    assert printed.splitlines()[0] == summary["verdict"]["line"]
    counted = {(r["outcome"], r["reason"]): r["count"]
               for r in outcomes.groupBy("outcome", "reason").count().collect()}
    assert {(c["outcome"], c["reason"]): c["rows"] for c in summary["outcomes"]} == counted
    spreads = sorted(r["end"] - r["start"] for r in groups.collect())
    assert summary["spread_ns"]["p100"] == spreads[-1] and summary["groups"] == len(spreads)
    assert summary["sources"] == 12
    assert "grouped" in printed and "spread (ms)" in printed and "no loss" in printed
    assert TIMED_PAIRS.name == "timed_pairs"


VERIFIED = next((c for c in CASES if c.name == "approximate_time"), CASES[0])


def test_sp_i2_verify_rechecks_written_tables(spark: SparkSession, fleet: Path,
                                              batch_output: Any, tmp_path: Path) -> None:
    """SP-I2, SP-R6: `timealign.spark.verify` accepts a run's own tables (checking the
    machine's executable invariants on every source) and rejects doctored ones."""
    output = batch_output(VERIFIED)
    checked = verify(spark, VERIFIED.algorithm, VERIFIED.config, str(fleet), str(output))
    assert checked == {"rows": spark.read.parquet(str(fleet)).count(),
                       "invariants": int(VERIFIED.name != "pairs")}
    groups, outcomes = tables(spark, output)
    doctored = tmp_path / "doctored"
    groups.withColumn("seq", F.col("seq") + F.when(F.col("seq") == 3, 1).otherwise(0)) \
        .write.parquet(str(doctored / "groups"))
    outcomes.write.parquet(str(doctored / "outcomes"))
    with pytest.raises(AssertionError, match=r"groups: 12 row\(s\) of the re-run missing"):
        verify(spark, VERIFIED.algorithm, VERIFIED.config, str(fleet), str(doctored))


def _planted(spark: SparkSession, output: Path, folder: Path, plant: str) -> tuple[Any, Any]:
    """The run's tables with one corruption planted (``plant``), written under ``folder``."""
    groups, outcomes = tables(spark, output)
    first = outcomes.where(F.col("outcome") != "grouped").first()
    assert first is not None
    one = (F.col("source") == first["source"]) & (F.col("id") == first["id"])
    if plant == "group at":
        groups = groups.withColumn("at", F.col("at") + F.when(F.col("seq") == 3, 1)
                                   .otherwise(0))
    elif plant == "group twice":
        groups = groups.unionByName(groups.where(F.col("seq") == 3).limit(1))
    elif plant == "member dropped":  # a group loses a member; its outcome row stays
        groups = groups.withColumn("ids", F.when(F.col("seq") == 3, F.slice("ids", 2, 99))
                                   .otherwise(F.col("ids")))
    elif plant == "reason":
        outcomes = outcomes.withColumn("reason", F.when(one, F.lit("planted"))
                                       .otherwise(F.col("reason")))
    elif plant == "id swapped":  # the same rows per source, one id another source's
        outcomes = outcomes.withColumn("id", F.when(one, F.lit("planted"))
                                       .otherwise(F.col("id")))
    elif plant == "ghost source":  # an outcome row of a source the input does not have
        outcomes = outcomes.unionByName(outcomes.where(one).withColumn("source",
                                                                       F.lit("ghost")))
    groups.write.parquet(str(folder / "groups"))
    outcomes.write.parquet(str(folder / "outcomes"))
    return groups, outcomes


@pytest.mark.parametrize(("plant", "words"), [
    ("group at", r"groups: 12 row\(s\) of the re-run missing, 12 unexpected"),
    ("group twice", r"groups: 0 row\(s\) of the re-run missing, 1 unexpected"),
    ("member dropped", r"groups: 12 row\(s\) of the re-run missing, 12 unexpected$"),
    ("reason", r"^outcomes: 1 row\(s\) of the re-run missing, 1 unexpected$"),
    ("id swapped", r"2 \(source, id\) pair\(s\) without exactly one outcome"),
    ("ghost source", r"^1 \(source, id\) pair\(s\) without exactly one outcome per input "
                     r"row \(SP-R6\), e\.g\. \['ghost/[^:]+: 0 row\(s\), 1 outcome\(s\)'\]$"),
])
def test_sp_i2_verify_fails_on_each_planted_corruption(
        spark: SparkSession, fleet: Path, batch_output: Any, tmp_path: Path, plant: str,
        words: str) -> None:
    """SP-I2, SP-R6, SP-D26: each corruption planted in a run's tables fails `verify`, naming the
    table and how many rows of it differ from the re-run (issue 42 made the comparison one
    aggregation where it was four ``exceptAll``; these kept failing)."""
    _planted(spark, batch_output(VERIFIED), tmp_path / "planted", plant)
    failure = LossError if plant in ("id swapped", "ghost source") else AssertionError
    with pytest.raises(failure, match=words):
        verify(spark, VERIFIED.algorithm, VERIFIED.config, str(fleet),
               str(tmp_path / "planted"))


def test_sp_d30_verify_splits_the_sources_by_ranges_of_their_names(
        spark: SparkSession, fleet: Path) -> None:
    """SP-D30: verify's re-run spreads the sources over the partitions by ranges of their
    names (drawn from a sample of the rows, about as many rows per partition), where the
    run hashes them; each source still reaches the UDF whole, once (SP-R3)."""
    from timealign.spark import verify as module

    rows = read_input(spark, str(fleet), "parquet", ColumnMap())
    again = module._rerun(rows, VERIFIED.algorithm, VERIFIED.config)
    plan = again._jdf.queryExecution().executedPlan().toString()
    assert "rangepartitioning(source" in plan and "hashpartitioning(source" not in plan
    fed = again.where(F.col("table") == module.FED).groupBy("source").agg(
        F.count("*").alias("calls"), F.sum("input").alias("rows")).collect()
    assert {r["source"]: (r["calls"], r["rows"]) for r in fed} == {
        r["source"]: (1, r["count"]) for r in rows.groupBy("source").count().collect()}


def test_sp_d29_only_the_sources_whose_fingerprints_differ_are_compared_again(
        spark: SparkSession, fleet: Path, batch_output: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """SP-D29: the fingerprints of a run's own tables equal the re-run's in every source;
    a row changed in one source (its `reason`) differs in that source alone, and the
    exact comparison that names the rows is given that source's rows only; with more
    sources differing than it names (NAMED_SOURCES), every source's."""
    from timealign.spark import verify as module

    rows = read_input(spark, str(fleet), "parquet", ColumnMap())
    again = module._rerun(rows, VERIFIED.algorithm, VERIFIED.config)
    count = rows.count()
    assert module._fingerprinted(again, *tables(spark, batch_output(VERIFIED))) == \
        module.Fingerprinted(count, 0, [], [])
    groups, outcomes = _planted(spark, batch_output(VERIFIED), tmp_path / "planted", "reason")
    changed = outcomes.where(F.col("reason") == "planted").first()
    assert changed is not None
    assert module._fingerprinted(again, groups, outcomes) == \
        module.Fingerprinted(count, 0, [], [changed["source"]])
    compared: list[set[str]] = []
    exact = module._compared

    def spied(again: Any, groups: Any, outcomes: Any) -> Any:
        compared.append({r["source"] for r in outcomes.select("source").distinct().collect()})
        return exact(again, groups, outcomes)

    monkeypatch.setattr(module, "_compared", spied)
    words = r"^outcomes: 1 row\(s\) of the re-run missing, 1 unexpected$"
    for named, sources in ((module.NAMED_SOURCES, {changed["source"]}), (0, None)):
        monkeypatch.setattr(module, "NAMED_SOURCES", named)
        with pytest.raises(AssertionError, match=words):
            verify(spark, VERIFIED.algorithm, VERIFIED.config, str(fleet),
                   str(tmp_path / "planted"))
        assert compared.pop() == (sources or {r["source"] for r in outcomes.collect()})


def test_sp_d29_a_fingerprint_tells_which_column_is_null(spark: SparkSession) -> None:
    """SP-D29: Spark's hashes skip a null, so without the mask of null columns a group
    whose `start` is null and one whose `end` is null (the other holding the same value),
    or an empty `ids` and a missing one, would hash alike and pass as equal."""
    from timealign.spark import schema
    from timealign.spark.verify import _ROW, _hashes

    kinds = {f.name: f.dataType.simpleString() for f in schema.COMBINED.fields}
    ddl = ", ".join(f"`{name}` {kinds[name]}" for name in _ROW)

    def row(start: int | None, end: int | None, ids: list[str] | None) -> list[Any]:
        return ["groups", "r1", 1, start, end, ids, 10, 2, None, None, None]

    for left, right in ((row(5, None, ["a"]), row(None, 5, ["a"])),
                        (row(5, 6, []), row(5, 6, None))):
        hashed = [_hashes(spark.createDataFrame([r], ddl), 1).drop("problem").first()
                  for r in (left, right)]
        assert hashed[0] != hashed[1], (left, right)


@pytest.mark.parametrize("repeat", ["still open", "settled long before"])
def test_sp_r22_verify_names_a_repeated_id_before_the_loss_it_causes(
        spark: SparkSession, fleet: Path, batch_output: Any, tmp_path: Path,
        repeat: str) -> None:
    """SP-R22: an input whose id repeats within a source fails `verify` as the batch job
    fails, naming the id, though the same pass also finds its row without an outcome;
    SP-D29: whether the re-run refuses the repeat itself (its first row still open) or
    not (the source's last row repeating its first, settled long before)."""
    from timealign.spark.outcomes import DuplicateIdError

    folder = tmp_path / "input"
    folder.mkdir()
    for file in sorted(fleet.glob("*.parquet")):
        table = pq.read_table(file)
        if file == sorted(fleet.glob("*.parquet"))[0]:
            ids, sources = (table.column(name).to_pylist() for name in ("id", "source"))
            last = max(k for k, s in enumerate(sources) if s == sources[0])
            ids[1 if repeat == "still open" else last] = ids[0]
            table = table.set_column(table.schema.get_field_index("id"), "id", pa.array(ids))
            repeated = (table.column("source")[0].as_py(), ids[0])
        pq.write_table(table, folder / file.name)
    with pytest.raises(DuplicateIdError, match=rf"source {repeated[0]!r} id {repeated[1]!r} "
                                               r"\(2 rows\)"):
        verify(spark, VERIFIED.algorithm, VERIFIED.config, str(folder),
               str(batch_output(VERIFIED)))


def test_sp_i2_verify_reports_the_rerun_invariant_violations(
        spark: SparkSession, fleet: Path, batch_output: Any) -> None:
    """SP-I2: a violation the executable invariants find in the re-run fails `verify`,
    naming the source and the violation (here a check that finds one in every source)."""
    import attrs

    algorithm = VERIFIED.algorithm

    def planted(config: Any, inputs: Any, outputs: Any) -> list[str]:
        return [f"planted violation after {len(inputs)} inputs"]

    checked = attrs.evolve(algorithm, checks=attrs.evolve(algorithm.checks, check=planted))
    with pytest.raises(AssertionError, match=r"invariant violations: \[\('robot-\d+', "
                                             r"'planted violation after \d+ inputs'\)"):
        verify(spark, checked, VERIFIED.config, str(fleet), str(batch_output(VERIFIED)))


def test_sp_r40_verify_says_which_check_it_is_doing(spark: SparkSession, fleet: Path,
                                                    batch_output: Any) -> None:
    """SP-R40, SP-D26: `verify` enters each of its phases in order (its progress line
    names the one running, with its number of the two), where it showed only Spark's
    tasks."""
    from contextlib import contextmanager

    from timealign.spark.schema import ColumnMap, read_input
    from timealign.spark.verify import PHASES, verify_rows

    entered: list[str] = []

    @contextmanager
    def phase(name: str) -> Any:
        entered.append(name)
        yield

    rows = read_input(spark, str(fleet), "parquet", ColumnMap())
    verify_rows(spark, VERIFIED.algorithm, VERIFIED.config, rows,
                str(batch_output(VERIFIED)), phase)
    assert entered == list(PHASES) == [
        "re-run: unique ids, no loss, invariants, tables compared"]


@pytest.mark.parametrize("change", ["type", "extra"])
def test_sp_r4_r5_verify_refuses_a_changed_column_type_or_an_extra_column(
        spark: SparkSession, fleet: Path, batch_output: Any, tmp_path: Path,
        change: str) -> None:
    """SP-R4, SP-R5: `verify` compared only the selected columns' values, so a table whose
    `at` became a string, or that gained a column, verified; now either fails naming the
    column."""
    output = batch_output(VERIFIED)
    groups, outcomes = tables(spark, output)
    doctored = tmp_path / "doctored"
    if change == "type":
        groups = groups.withColumn("at", F.col("at").cast("string"))
    else:
        groups = groups.withColumn("note", F.lit("x"))
    groups.write.parquet(str(doctored / "groups"))
    outcomes.write.parquet(str(doctored / "outcomes"))
    words = ("column 'at' is string, the run writes bigint" if change == "type" else
             "a column 'note' the run never writes")
    with pytest.raises(AssertionError, match=words + r" \(rule SP-R4\)"):
        verify(spark, VERIFIED.algorithm, VERIFIED.config, str(fleet), str(doctored))
