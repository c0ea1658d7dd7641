"""The reproducers of the third hardening round (issue 22, items 4, 5, 8, 11 and 19) that
need Spark: every configured column exists (SP-R1), every file of an input folder is read
or refused by name (SP-R1), a stream's output folder is its own (SP-R20), a late repeated
id is a duplicate (SP-R22). Several cases share one test: each Spark test costs seconds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from timealign import registry
from timealign.cli import main
from timealign.commands.spark import verify_main

CONFIG = json.dumps({"window": 3})


@pytest.fixture
def pairs_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry._ENTRIES, "pairs", "tests.pairs_toy:PAIRS")


def _table(path: Path, count: int = 4, **columns: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    base: dict[str, list[Any]] = {"src": ["s"] * count, "id": [f"m{i}" for i in range(count)],
                                  "topic": ["x", "y"] * (count // 2),
                                  "stamp": list(range(count)), "recv": list(range(count))}
    pq.write_table(pa.table({**base, **columns}), path)
    return path


def _renamed_stamp() -> bytes:
    """A Parquet file whose `stamp` column is called `rtamp` (as one flipped bit makes it)."""
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table({"src": ["s"], "id": ["r0"], "topic": ["x"], "rtamp": [0],
                             "recv": [0]}), sink)
    return bytes(sink.getvalue().to_pybytes())


def _one_line(err: str) -> str:
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_sp_r1_every_configured_column_exists(spark: SparkSession, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str],
                                              pairs_cli: None) -> None:
    """SP-R1: a mistyped `--column arrival=recv_typo` used to fall back to the stamp, and
    `source=src_typo` merged every source into ""; both are refused (exit 2) by `run`,
    `stream` and `verify` before the job runs, naming the column and the input's columns."""
    data = _table(tmp_path / "in" / "a.parquet").parent
    # verify is given the output of a finished run (a failed stream leaves none, SP-R55)
    finished = tmp_path / "finished"
    assert main(["run", "pairs", "--input", str(data), "--output", str(finished), "--config",
                 CONFIG, "--quiet", "--column", "source=src"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    manifest = finished / "_timealign.json"
    body = json.loads(manifest.read_text(encoding="utf-8"))
    for typo in ("arrival=recv_typo", "source=src_typo"):
        column = typo.split("=")[1]
        out = tmp_path / f"out-{column}"
        # the run's record names the typo (hand-made: no run with it finishes), so verify
        # reads the input with it and must refuse it by name
        body["run"]["column"] = ["source=src", typo] if typo.startswith("arrival") else [typo]
        manifest.write_text(json.dumps(body), encoding="utf-8")
        runs: list[tuple[str, list[str]]] = [
            ("run", ["run", "pairs", "--input", str(data), "--output", str(out), "--config",
                     CONFIG, "--quiet", "--column", typo]),
            ("stream", ["stream", "pairs", "--source", str(data), "--output", str(out),
                        "--checkpoint", str(tmp_path / f"ck-{column}"), "--config", CONFIG,
                        "--quiet", "--available-now", "--column", typo]),
            ("verify", ["pairs", "--output", str(finished)]),
        ]
        for name, argv in runs:
            got = verify_main(argv) if name == "verify" else main(argv)
            err = _one_line(capsys.readouterr().err)
            assert got == 2, (name, err)
            assert f"--column {typo}" in err and repr(column) in err and "SP-R1" in err, err
            assert "'recv'" in err and "'src'" in err, err  # the input's columns
            # no table; a failed stream leaves neither output nor checkpoint (SP-R55)
            assert not out.exists() or {p.name for p in out.iterdir()} <= {
                "_timealign.json"}, (name, list(out.iterdir()))
            assert name != "stream" or not (out.exists() or (tmp_path / f"ck-{column}").exists())


def test_sp_r1_every_file_of_an_input_folder_is_read_or_refused(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        pairs_cli: None) -> None:
    """SP-R1: a zero-byte `.parquet` used to be skipped silently (exit 0); a README.txt, a
    corrupt Parquet file and a corrupt `.csv.gz` gave "An error occurred while calling
    o54.load." without the file or the cause; a corrupt JSON line was a "null source"; a
    zero-byte `.csv.gz` was read as no rows; a file lacking a column the others have was
    "required column 'stamp' is missing" without its name. Each is exit 2 naming the file."""
    cases: dict[str, tuple[str, str, bytes, str]] = {  # name -> (format, file, bytes, cause)
        "zero-byte": ("parquet", "empty.parquet", b"", "zero bytes"),
        "readme": ("parquet", "README.txt", b"read me\n", "not a parquet file"),
        "corrupt-parquet": ("parquet", "bad.parquet", b"PAR1 not a footer", "Parquet"),
        "corrupt-gzip": ("csv", "bad.csv.gz", b"\x1f\x8b\x08\x00garbage", "gzip"),
        # a `.csv.gz` cut to nothing was read as no rows, exit 0 (the command-line fuzz)
        "empty-gzip": ("csv", "cut.csv.gz", b"", "zero bytes"),
        # a bit flip renamed a column of one file: "'stamp' is missing" named no file
        "other-columns": ("parquet", "renamed.parquet", _renamed_stamp(), "'stamp' is missing"),
        # a corrupt JSON line used to be reported as a "null source"
        "corrupt-json": ("json", "bad.json", b'{"src": "s", "id": "z", "sta\n', "Malformed"),
    }
    for case, (fmt, name, content, cause) in cases.items():
        folder = tmp_path / case
        good = _table(folder / "a.parquet")
        if fmt == "csv":
            pq.read_table(good).to_pandas().to_csv(folder / "a.csv", index=False)
            good.unlink()
        elif fmt == "json":
            pq.read_table(good).to_pandas().to_json(folder / "a.json", orient="records",
                                                    lines=True)
            good.unlink()
        (folder / name).write_bytes(content)
        out = tmp_path / f"out-{case}"
        for command in ("run", "verify"):
            if command == "verify":  # verify of a missing folder says so first (SP-R32)
                out.mkdir(exist_ok=True)
            argv = ["pairs", "--input", str(folder), "--output", str(out), "--config", CONFIG,
                    "--format", fmt, "--column", "source=src", "--column", "arrival=recv"]
            got = verify_main(argv) if command == "verify" else \
                main(["run", *argv, "--quiet"])
            err = _one_line(capsys.readouterr().err)
            assert got == 2, (case, command, err)
            assert name in err and cause in err and "o54" not in err, (case, command, err)
            assert "null source" not in err, err
            assert not out.exists() or not any(out.iterdir()), (case, list(out.iterdir()))


def test_cli_r3_sp_r22_stream_output_is_its_own_and_late_repeats_fail(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        pairs_cli: None) -> None:
    """CLI-R3: `stream --checkpoint NEW` into the output of an earlier stream used to
    overwrite `batch=0` and keep the old `batch=1` (one table of two runs, exit 0); it is
    refused before Spark starts, as is a folder of the user's files, while the stream
    resumed from its own checkpoint writes on. SP-R22: a late file (SP-R14) repeating an id
    used to give a second, `rejected`, outcome row for the id; it is the duplicate-id
    failure (exit 3)."""
    source, out = tmp_path / "in", tmp_path / "out"
    _table(source / "a.parquet", recv=[10, 11, 12, 13])

    def stream(checkpoint: str, output: Path = out) -> tuple[int, str]:
        got = main(["stream", "pairs", "--source", str(source), "--output", str(output),
                    "--checkpoint", str(tmp_path / checkpoint), "--config", CONFIG,
                    "--quiet", "--available-now", "--column", "source=src",
                    "--column", "arrival=recv"])
        return got, capsys.readouterr().err

    assert stream("ck1")[0] == 0
    before = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    assert "_timealign.json" in before and "groups" in before
    got, err = stream("ck2")
    assert got == 2 and "--output" in err and "CLI-R3" in err and "ck1" in err, err
    _one_line(err)
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == before
    assert not (tmp_path / "ck2").exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me", encoding="utf-8")
    got, err = stream("ck3", mine)
    assert got == 2 and "notes.txt" in err and "CLI-R3" in err, err
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]
    # a late file (arrival before the last accepted row) repeating the id m0
    _table(source / "b.parquet", count=2, id=["m0", "late1"], recv=[0, 1])
    got, err = stream("ck1")
    assert got == 3 and "'m0'" in err and "SP-R22" in err, err
    _one_line(err)
