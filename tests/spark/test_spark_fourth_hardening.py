"""The reproducers of the fourth hardening round (issue 43) about what reaches a job from
files: two objects on a JSON line (SP-R72), RFC 4180 quotes in CSV (SP-R73), a storage file a
rosbag2 folder does not list (BAG-R30), FIFOs and devices (SP-R70), linked subfolders
(SP-R71), a full disk (CLI-R21), `generate` too large for memory (CLI-R20), `verify` of a
table changed after the run (SP-R4) and a `--config` naming a key twice (VEC-R20). A refused
case costs no Spark job; the cases that run one share it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from tests.rosbag.bags import plan, write_rosbag2
from timealign.cli import main

AT = json.dumps({"topics": ["a", "b"], "queue_size": 2})
BAG_CONFIG = json.dumps({"topics": ["/imu", "/camera_info"], "queue_size": 10,
                         "max_interval_duration": 8_000_000})


def _rows(count: int, first: int = 0) -> pa.Table:
    return pa.table({"source": ["s"] * count, "id": [f"m{first + i}" for i in range(count)],
                     "topic": ["a", "b"] * (count // 2),
                     "stamp": [10_000 * (first + i) for i in range(count)]})


def _one_line(err: str) -> str:
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


def _run(folder: Path, out: Path, fmt: str = "parquet", config: str = AT) -> list[str]:
    return ["run", "approximate_time", "--input", str(folder), "--output", str(out),
            "--config", config, "--format", fmt, "--quiet"]


def test_sp_r72_a_json_line_holds_one_object(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R72: `{"id":"o1",...} {"id":"o2",...}` on one line used to end with exit 0, "no
    loss: every one of 2 rows" and no outcome for o2; a line holding an array gave exit 3
    ("read more rows than the input holds"). Each is refused before Spark starts, exit 2,
    naming the file and the line; so is a scalar line and trailing text after an object."""
    first = '{"source": "s", "id": "o1", "topic": "a", "stamp": 1}'
    second = '{"source": "s", "id": "o2", "topic": "b", "stamp": 2}'
    lines = {"two-objects": f"{first} {second}", "glued": f"{first}{second}",
             "array": f"[{first}, {second}]", "number": "7", "trailing": f"{first} x"}
    for case, bad in lines.items():
        folder = tmp_path / case
        folder.mkdir()
        (folder / "a.jsonl").write_text(f"{first}\n\n{second}\n{bad}\n", encoding="utf-8")
        out = tmp_path / f"out-{case}"
        got = main(_run(folder, out, "json"))
        err = _one_line(capsys.readouterr().err)
        assert got == 2, (case, err)
        assert "a.jsonl" in err and "line 4" in err and "SP-R72" in err, (case, err)
        assert "damaged" not in err and "SP-R1" not in err, err
        assert not out.exists(), case


def _fifo_case(tmp_path: Path, case: str) -> tuple[list[str], str]:
    """An input with a FIFO or a link to /dev/zero among its files: (argv, its name)."""
    folder = tmp_path / case
    folder.mkdir()
    if case.startswith("csv"):
        for name, first in (("a", 0), ("b", 4)):
            _rows(4, first).to_pandas().to_csv(folder / f"{name}.csv", index=False)
        fmt, odd = "csv", folder / "c.csv"
    elif case.startswith("json"):
        _rows(4).to_pandas().to_json(folder / "a.json", orient="records", lines=True)
        fmt, odd = "json", folder / "z.json"
    else:  # a bag folder holding a FIFO as a storage file
        write_rosbag2(folder / "r1", plan(1, 30), "mcap")
        fmt, odd = "rosbag", folder / "r2.mcap"
    if case.endswith("fifo"):
        os.mkfifo(odd)
    else:
        odd.symlink_to("/dev/zero")
    config = BAG_CONFIG if fmt == "rosbag" else AT
    return _run(folder, tmp_path / f"out-{case}", fmt, config), odd.name


def test_sp_r70_fifos_and_devices_are_refused_before_they_are_opened(tmp_path: Path) -> None:
    """SP-R70: a FIFO in a CSV input folder used to hang `run` forever (blocked in open() of
    the header check), a link to /dev/zero grew memory until MemoryError. Only regular files
    are read: each is exit 2 within seconds, naming the file, with no output written. In a
    process of its own, so that a hang fails the test instead of the suite."""
    for case in ("csv-fifo", "json-device", "bag-fifo", "bag-device"):
        argv, name = _fifo_case(tmp_path, case)
        ran = subprocess.run([sys.executable, "-m", "timealign", *argv], capture_output=True,
                             text=True, timeout=120, check=False)
        assert ran.returncode == 2, (case, ran.stderr)
        err = _one_line(ran.stderr)
        assert name in err and "SP-R70" in err and "not a regular file" in err, (case, err)
        assert not (tmp_path / f"out-{case}").exists(), case


def test_sp_r71_a_linked_subfolder_is_refused(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R71: Spark's recursive listing follows a linked subfolder and the inventory's walk
    did not, so its rows were "read but not in the inventory" (exit 3 blaming SP-R42). A
    linked folder is refused by name, exit 2, by `run` and `verify` alike; a linked file is
    read as its target (as Spark reads it)."""
    folder, elsewhere = tmp_path / "in", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    pq.write_table(_rows(4), folder / "a.parquet")
    pq.write_table(_rows(4, 4), elsewhere / "b.parquet")
    (folder / "more").symlink_to(elsewhere)
    out = tmp_path / "out"
    assert main(_run(folder, out)) == 2
    err = _one_line(capsys.readouterr().err)
    assert "more" in err and "SP-R71" in err and "is a link" in err, err
    assert not out.exists()
    out.mkdir()
    assert main(["verify", "--algorithm", "approximate_time", "--input", str(folder),
                        "--config", AT, str(out)]) == 2
    err = _one_line(capsys.readouterr().err)
    assert "SP-R71" in err, err


def test_bag_r30_a_storage_file_the_metadata_does_not_list_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """BAG-R30: a second `.mcap` copied into a rosbag2 folder was neither read nor counted
    (the inventory took the bag's count from metadata.yaml): "no loss: every one of 260
    rows" over 524 messages. Refused, exit 2, naming the file, before Spark starts; `bags
    info` says the same."""
    folder = tmp_path / "bags"
    bag = write_rosbag2(folder / "r1", plan(1, 30), "mcap")
    other = write_rosbag2(tmp_path / "r2", plan(2, 30), "mcap")
    storage = next(other.glob("*.mcap"))
    shutil.copy(storage, bag / "extra.mcap")
    out = tmp_path / "out"
    assert main(_run(folder, out, "rosbag", BAG_CONFIG)) == 2
    err = _one_line(capsys.readouterr().err)
    assert "extra.mcap" in err and "BAG-R30" in err and "metadata.yaml" in err, err
    assert not out.exists()
    assert main(["bags", "info", str(folder)]) == 2
    err = _one_line(capsys.readouterr().err)
    assert "extra.mcap" in err and "BAG-R30" in err, err


def test_vec_r20_a_config_naming_a_key_twice_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """VEC-R20: `--config '{"queue_size": 2, "queue_size": 5}'` was accepted, the last value
    winning; inline or as a file, `run` and `verify` refuse it, exit 2, naming
    `--config` and the key."""
    folder = tmp_path / "in"
    folder.mkdir()
    pq.write_table(_rows(4), folder / "a.parquet")
    twice = '{"topics": ["a", "b"], "queue_size": 2, "queue_size": 5}'
    (tmp_path / "twice.json").write_text(twice, encoding="utf-8")
    out = tmp_path / "out"
    for config in (twice, str(tmp_path / "twice.json")):
        assert main(_run(folder, out, config=config)) == 2
        err = _one_line(capsys.readouterr().err)
        assert "--config" in err and "'queue_size' twice" in err and "VEC-R20" in err, err
        assert not out.exists()
    out.mkdir()
    assert main(["verify", "--algorithm", "approximate_time", "--input", str(folder),
                        "--config", twice, str(out)]) == 2
    assert "VEC-R20" in _one_line(capsys.readouterr().err)


def test_cli_r20_generate_refuses_a_plan_larger_than_memory(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R20: `generate --messages 100000000000` (inside the option's range) used to
    allocate 16 GiB up front and fail; a plan whose data cannot fit in the memory available
    is refused at once, exit 2, naming the option that sized it, with nothing written."""
    for option, value in (("--messages", str(10**11)), ("--seconds", str(10**7))):
        out = tmp_path / f"out{option}"
        assert main(["generate", option, value, "--output", str(out)]) == 2
        err = _one_line(capsys.readouterr().err)
        assert err.startswith(f"timealign: error: {option}:") and "CLI-R20" in err, err
        assert "GiB" in err, err
        assert not out.exists()


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs, nearly filled (mounting needs root: skipped otherwise)."""
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(where)],
                             capture_output=True, check=False)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root); the write path is covered by "
                    "tests/test_fourth_hardening.py")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


def _fill(where: Path, leave: int) -> None:
    """Fill ``where`` but ``leave`` bytes."""
    free = shutil.disk_usage(where).free
    with open(where / "filler", "wb") as out:
        out.write(b"\0" * max(0, free - leave))


def test_cli_r21_a_full_disk_names_the_option_and_leaves_no_lock(
        full_disk: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R21: on a full disk every writer exited 2 with "[Errno 28] No space left on
    device", naming neither file nor option, and left a 0-byte `.NAME.timealign-lock` that
    refused the rerun for 60 s. Now: exit 2 naming the option and the path, no lock and no
    staging folder left, and the rerun after space is freed succeeds."""
    vector = Path("vectors/approximate_time").glob("*.json")
    picture = full_disk / "p.svg"
    cases = [
        ("--output", ["generate", "--messages", "3000", "--output", str(full_disk / "g")]),
        ("--out", ["plot", str(next(vector)), "--out", str(picture)]),
    ]
    for leave in (0, 8192):  # nothing left (the lock fails), a little (the data fails)
        for option, argv in cases:
            _fill(full_disk, leave)
            assert main(argv) == 2
            err = _one_line(capsys.readouterr().err)
            assert f"error: {option}:" in err and "no space left" in err, (leave, err)
            assert "CLI-R21" in err and str(full_disk) in err, err
            assert sorted(p.name for p in full_disk.iterdir()) == ["filler"], (leave, option)
            (full_disk / "filler").unlink()
    for _, argv in cases:  # space freed: the rerun goes through at once
        assert main(argv) == 0, capsys.readouterr().err


def _table_run(spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str],
               folder: Path, fmt: str) -> Path:
    out = tmp_path / f"out-{fmt}"
    assert main(_run(folder, out, fmt)) == 0, capsys.readouterr().err
    capsys.readouterr()
    return out


def test_sp_r73_sp_r4_csv_quotes_and_verify_of_a_changed_table(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R73: a CSV id written with an RFC 4180 doubled quote, `"q""2"`, came back as
    `"q""2"`, so joining outcomes back on (source, id) failed; it is `q"2` now, a backslash
    stays a character, a quoted comma stays inside its field. SP-R4: `verify` of that
    run with a stray `notes.txt` in a table, or with a part file rewritten after the run
    (its `.crc` stale), said "no readable outcomes/ table here: run the batch job first";
    it names the file and what is wrong (exit 3)."""
    folder = tmp_path / "csv"
    folder.mkdir()
    (folder / "a.csv").write_text(
        'source,id,topic,stamp\ns,"q""2",a,10\ns,"a\\b",b,20\ns,"x,y",a,30\n'
        's,plain,b,40\n', encoding="utf-8")
    out = _table_run(spark, tmp_path, capsys, folder, "csv")
    ids = sorted(pq.read_table(out / "outcomes").column("id").to_pylist())
    assert ids == sorted(['q"2', "a\\b", "x,y", "plain"]), ids
    assert main(["verify", str(out), "--quiet"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    (out / "outcomes" / "notes.txt").write_text("mine\n", encoding="utf-8")
    assert main(["verify", str(out), "--quiet"]) == 3
    err = capsys.readouterr().err
    assert "outcomes/notes.txt" in err and "never writes" in err, err
    assert "no readable" not in err, err
    (out / "outcomes" / "notes.txt").unlink()
    part = sorted((out / "groups").glob("part-*.parquet"))[0]
    pq.write_table(pq.read_table(part), part)  # rewritten: same rows, other bytes
    assert main(["verify", str(out), "--quiet"]) == 3
    err = capsys.readouterr().err
    assert f"groups/{part.name} changed after the run" in err and ".crc" in err, err
    assert "no readable" not in err, err


def test_cli_r21_a_run_on_a_full_disk(spark: SparkSession, full_disk: Path, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R21: `run` whose tables do not fit on the output's device failed with exit 4,
    "Py4JJavaError: An error occurred while calling o317.parquet"; it is exit 2 naming
    `--output`, the folder it was writing and what to do, with no lock, staging folder or
    table left behind."""
    folder = tmp_path / "in"
    folder.mkdir()
    pq.write_table(_rows(40), folder / "a.parquet")
    _fill(full_disk, 16384)  # the lock fits, the tables do not
    out = full_disk / "out"
    assert main(_run(folder, out)) == 2
    err = capsys.readouterr().err
    assert "error: --output: cannot write" in err and str(out) in err, err
    assert "no space left" in err and "CLI-R21" in err, err
    left = sorted(p.name for p in full_disk.rglob("*"))
    assert not [name for name in left if name.endswith("timealign-lock")], left
    assert not [name for name in left if name in ("groups", "outcomes")], left


def test_sp_r72_a_stream_stops_at_a_json_line_of_two_objects(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R72: a stream takes no inventory before it reads, so a JSON line holding two
    objects lost the second with exit 0; the stream checks every file it took (SP-R45) and
    now stops with exit 3, naming the file and the line."""
    folder = tmp_path / "in"
    folder.mkdir()
    first = '{"source": "s", "id": "o1", "topic": "a", "stamp": 1}'
    second = '{"source": "s", "id": "o2", "topic": "b", "stamp": 2}'
    (folder / "a.jsonl").write_text(f"{first} {second}\n", encoding="utf-8")
    got = main(["stream", "approximate_time", "--source", str(folder), "--format", "json",
                "--output", str(tmp_path / "out"), "--checkpoint", str(tmp_path / "ck"),
                "--config", AT, "--quiet", "--available-now"])
    err = capsys.readouterr().err
    assert got == 3, err
    assert "a.jsonl" in err and "line 1" in err and "SP-R72" in err, err
