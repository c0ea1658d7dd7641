"""The input inventory (issue 30, part 1): "no loss" counted against what the input holds,
taken before it is read, not against what the reader yielded (SP-R41 to SP-R45). Several
cases share one test: each Spark test costs seconds."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from timealign.cli import main
from timealign.spark.inventory import Inventory, Stored, Unit
from timealign.spark.outcomes import LossError

AT = json.dumps({"topics": ["a", "b"], "queue_size": 2})


def _rows(count: int, first: int = 0) -> pa.Table:
    return pa.table({"source": ["s"] * count, "id": [f"m{first + i}" for i in range(count)],
                     "topic": ["a", "b"] * (count // 2),
                     "stamp": [10_000 * (first + i) for i in range(count)]})


def _one_line(err: str) -> str:
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def _run(data: Path, out: Path, *more: str) -> int:
    return main(["run", "approximate_time", "--input", str(data), "--output", str(out),
                 "--config", AT, "--quiet", *more])


def test_sp_r41_r42_subfolders_read_whole_and_empty_input_refused(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R43, SP-R41, SP-R42: `in/day1.parquet` and `in/day2/part.parquet`: 6 of 12 rows
    were read and "no loss" said; now all 12 are read, and the manifest keeps the inventory
    (each file's size, SHA-256 and footer count). Files only in subfolders were Spark's
    "Unable to infer schema"; a zero-row Parquet input read "no loss: every one of 0 rows";
    a refused file's message printed a literal `{input}`."""
    data = tmp_path / "in"
    (data / "day2").mkdir(parents=True)
    pq.write_table(_rows(6), data / "day1.parquet")
    pq.write_table(_rows(6, 6), data / "day2" / "part.parquet")
    assert _run(data, tmp_path / "out") == 0
    printed = capsys.readouterr().out
    assert "every one of 12 rows" in printed, printed
    assert spark.read.parquet(str(tmp_path / "out" / "outcomes")).count() == 12
    manifest = json.loads((tmp_path / "out" / "_timealign.json").read_text(encoding="utf-8"))
    inventory = manifest["inventory"]
    assert inventory["rows"] == 12 and inventory["format"] == "parquet"
    units = {u["name"]: u for u in inventory["units"]}
    assert set(units) == {"day1.parquet", "day2/part.parquet"}
    part = units["day2/part.parquet"]
    assert part["rows"] == 6 and part["counted_by"] == "Parquet footer"
    assert part["files"][0]["bytes"] == (data / "day2" / "part.parquet").stat().st_size
    assert len(part["files"][0]["sha256"]) == 64

    nested = tmp_path / "only"
    (nested / "d").mkdir(parents=True)
    pq.write_table(_rows(4), nested / "d" / "p.parquet")
    assert _run(nested, tmp_path / "out-nested") == 0
    assert "every one of 4 rows" in capsys.readouterr().out

    for name, table in (("zero", _rows(0)),):
        empty = tmp_path / name
        empty.mkdir()
        pq.write_table(table, empty / "e.parquet")
        assert _run(empty, tmp_path / f"out-{name}") == 2
        err = _one_line(capsys.readouterr().err)
        assert "--input" in err and "holds nothing to replay" in err and "SP-R41" in err, err
        assert not (tmp_path / f"out-{name}").exists()

    (data / "notes.txt").write_text("mine\n", encoding="utf-8")
    assert _run(data, tmp_path / "out-notes") == 2
    err = _one_line(capsys.readouterr().err)
    assert "{input}" not in err and "remove it from --input" in err, err


def test_sp_r44_verify_checks_the_inventory_and_sees_a_changed_input(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R44: `verify OUT` takes the inventory again: an unchanged input verifies and says
    so; a file rewritten after the run (rows appended) is exit 3 naming it with its old and
    new size and digest, before any Spark job; a CSV input is counted by records, a quoted
    newline inside its record."""
    data = tmp_path / "in"
    data.mkdir()
    (data / "a.csv").write_text(
        'source,id,topic,stamp,note\ns,m0,a,0,"two\nlines"\ns,m1,b,10000,x\n'
        's,m2,a,20000,y\ns,m3,b,30000,z\n', encoding="utf-8")
    code = _run(data, tmp_path / "out-csv", "--format", "csv")
    err = capsys.readouterr().err
    # Spark reads a CSV file line by line: the quoted newline splits a record, and the
    # inventory's record count says so (exit 3 naming the file) or the line is refused
    assert code in (2, 3), err
    assert "a.csv" in _one_line(err), err

    pq.write_table(_rows(6), data / "b.parquet")
    (data / "a.csv").unlink()
    out = tmp_path / "out"
    assert _run(data, out) == 0
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "the input is as the run's inventory recorded it (6 rows in 1 file," in printed

    before = (data / "b.parquet").stat().st_size
    pq.write_table(_rows(8), data / "b.parquet")
    assert main(["verify", str(out)]) == 3
    err = _one_line(capsys.readouterr().err)
    assert "SP-R44" in err and "b.parquet changed" in err and f"{before} bytes" in err, err
    assert f"now {(data / 'b.parquet').stat().st_size} bytes" in err, err


def test_sp_r45_stream_file_grown_after_it_was_taken(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R45: a stream records each file it took (size, SHA-256); rows appended to a file
    already taken were never read and nothing said so. The next start of the stream is
    exit 3 naming the file, its size when taken and now; the manifest keeps the record."""
    source, out, checkpoint = tmp_path / "incoming", tmp_path / "out", tmp_path / "ck"
    source.mkdir()
    pq.write_table(_rows(6), source / "a.parquet")
    argv = ["stream", "approximate_time", "--source", str(source), "--output", str(out),
            "--checkpoint", str(checkpoint), "--config", AT, "--quiet", "--available-now"]
    assert main(argv) == 0
    capsys.readouterr()
    manifest = json.loads((out / "_timealign.json").read_text(encoding="utf-8"))
    (taken,) = manifest["taken"]
    assert taken["path"].endswith("a.parquet") and len(taken["sha256"]) == 64
    assert taken["bytes"] == (source / "a.parquet").stat().st_size

    time.sleep(0.01)
    pq.write_table(_rows(10), source / "a.parquet")  # rows appended: the file rewritten
    os.utime(source / "a.parquet", ns=(time.time_ns(), time.time_ns() + 5_000_000))
    assert main(argv) == 3
    err = _one_line(capsys.readouterr().err)
    assert "a.parquet changed after the stream took it" in err and "SP-R45" in err, err
    assert f"{taken['bytes']} bytes" in err, err


def test_sp_r42_reconcile_names_the_file_and_spares_refused_bags() -> None:
    """SP-R42: the rows read must equal the inventory's, per file or bag: a difference is
    `LossError` naming the file and both counts; a bag the reader refused by name (BAG-R6,
    skipped) needs none; a file not counted (a codec Python cannot read) is compared per
    file with what was read of the others."""
    stored = (Stored("x", 1, "0" * 64),)
    inventory = Inventory("/in", "parquet", (Unit("day1.parquet", 6, "Parquet footer", stored),
                                             Unit("day2/part.parquet", 6, "Parquet footer",
                                                  stored)))
    inventory.reconcile(12, dict)  # equal totals: no per-file count asked
    with pytest.raises(LossError, match=r"day2/part\.parquet holds 6 rows \(Parquet footer"
                                        r"\), the run read 0.*SP-R42"):
        inventory.reconcile(6, lambda: {"day1.parquet": 6})
    bags = Inventory("/in", "rosbag", (Unit("r1", 40, "bag", stored),
                                       Unit("r3.bag", None, "not counted", stored)))
    bags.reconcile(40, lambda: {"r1": 40}, {"r3.bag": "cannot read the bag"})
    with pytest.raises(LossError, match=r"r1 holds 40 rows"):
        bags.reconcile(39, lambda: {"r1": 39}, {"r3.bag": "cannot read the bag"})


def test_sp_r1_csv_files_with_columns_in_another_order_are_refused_by_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R1: Spark reads every CSV file's columns by position under the first file's
    header, so a file whose columns come in another order was refused as "stamp … got
    'string'" (or read with values under other names); it is refused before Spark starts,
    naming the file and both headers."""
    data = tmp_path / "in"
    data.mkdir()
    (data / "a.csv").write_text("source,id,topic,stamp\ns,m0,a,0\ns,m1,b,10\n",
                                encoding="utf-8")
    (data / "b.csv").write_text("id,source,stamp,topic\nm2,s,20,a\nm3,s,30,b\n",
                                encoding="utf-8")
    assert _run(data, tmp_path / "out", "--format", "csv") == 2
    err = _one_line(capsys.readouterr().err)
    assert "b.csv" in err and "its columns come in the order id, source, stamp, topic" in err, err
    assert "SP-R49" in err and not (tmp_path / "out").exists(), err
