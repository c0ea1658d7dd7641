"""A stream's start (SP-R55): on an empty folder it waits for the first file (or, with
--available-now, stops at once), and a start that fails leaves nothing behind."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.spark.machines import REAL_CONFIGS
from timealign.spark.schema import ColumnMap

CONFIG = json.dumps(REAL_CONFIGS["approximate_time"])


def test_sp_r55_an_empty_folder_is_waited_for() -> None:
    """SP-R55: with --available-now an empty folder has nothing to take (no wait); else the
    stream says it waits, and starts once a file is there."""
    import tempfile

    from timealign.spark.streaming import first_files

    with tempfile.TemporaryDirectory() as folder:
        said: list[str] = []
        assert not first_files(folder, "parquet", ColumnMap(), True, 60.0, said.append)
        assert said == []
        table = pa.table({"id": ["a"], "topic": ["t"], "stamp": [1]})
        timer = threading.Timer(0.3, pq.write_table, (table, f"{folder}/part-0.parquet"))
        timer.start()
        try:
            assert first_files(folder, "parquet", ColumnMap(), False, 0.05, said.append)
        finally:
            timer.cancel()
        assert said == [f"[timealign stream] no parquet file in {folder} yet: waiting for the "
                        f"first one, to take the columns from (SP-R55)"]


def _stream(source: Path, base: Path, *more: str) -> list[str]:
    return ["stream", "approximate_time", "--source", str(source), "--output",
            str(base / "out"), "--checkpoint", str(base / "ck"), "--available-now",
            "--config", CONFIG, *more]


def test_sp_r55_a_stream_starts_on_an_empty_folder(
        spark: object, fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R55 (issue 42 item 3): `stream --available-now` on an empty folder stops with 0
    micro-batches and exit 0 (it exited 2 after Spark started); the same stream run again
    once files came takes them all."""
    from timealign.cli import main

    source = tmp_path / "in"
    source.mkdir()
    code = main(_stream(source, tmp_path))
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "stream stopped after 0 micro-batches" in printed.out
    files = sorted(fleet.glob("*.parquet"))
    for path in files:
        shutil.copy2(path, source / path.name)
    code = main(_stream(source, tmp_path))
    printed = capsys.readouterr()
    assert code == 0, printed.err
    rows = sum(pq.read_metadata(path).num_rows for path in files)
    assert f"rows {rows} read = " in printed.out


def test_sp_r16_trigger_seconds_is_refused_with_available_now(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R16: an available-now run's micro-batches have no interval: `--trigger-seconds`
    with `--available-now` is exit 2 naming it, before Spark starts and before anything is
    written (it was accepted and did nothing)."""
    from timealign.cli import main

    source = tmp_path / "in"
    source.mkdir()
    assert main(_stream(source, tmp_path, "--trigger-seconds", "5")) == 2
    err = capsys.readouterr().err
    assert "--trigger-seconds: not with --available-now" in err and "SP-R16" in err, err
    assert "Spark" not in err and sorted(p.name for p in tmp_path.iterdir()) == ["in"]


@pytest.mark.parametrize("option", [["--summary", "s.json"], ["--report", "report"],
                                    ["--fail-on", "rejected>1%"]])
def test_sp_r47_a_stream_that_never_stops_refuses_what_it_would_write_at_its_stop(
        tmp_path: Path, option: list[str], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """SP-R47: a file stream without --available-now never stops by itself (Ctrl-C ends it
    with no summary), so `--summary`, `--report` and `--fail-on` would never apply: each is
    exit 2 naming it, before Spark starts and before anything is written (each was
    accepted and ignored)."""
    import timealign.spark.session as session
    from timealign.cli import main

    def no_spark(*args: object, **kwargs: object) -> object:
        raise AssertionError("Spark started")  # a stream of an empty folder waits forever

    monkeypatch.setattr(session, "build_session", no_spark)
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "in"
    source.mkdir()
    words = [w for w in _stream(source, tmp_path, *option) if w != "--available-now"]
    assert main(words) == 2
    err = capsys.readouterr().err
    assert f"{option[0]}: only with --available-now" in err and "SP-R47" in err, err
    assert "Spark" not in err and sorted(p.name for p in tmp_path.iterdir()) == ["in"]


def test_sp_r55_a_failed_start_leaves_nothing_behind(
        spark: object, fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R55: a stream that fails before its first micro-batch (a column missing, found
    once Spark reads the files) leaves neither its output folder nor its checkpoint; in an
    output folder that was there (empty), what it added goes."""
    from timealign.cli import main

    source = tmp_path / "in"
    source.mkdir()
    shutil.copy2(sorted(fleet.glob("*.parquet"))[0], source)
    code = main(_stream(source, tmp_path, "--column", "id=no_such_column"))
    assert code == 2, capsys.readouterr().err
    assert not (tmp_path / "out").exists() and not (tmp_path / "ck").exists()
    (tmp_path / "out").mkdir()  # an empty folder given: it stays, empty
    assert main(_stream(source, tmp_path, "--column", "id=no_such_column")) == 2
    assert list((tmp_path / "out").iterdir()) == [] and not (tmp_path / "ck").exists()


def test_sp_r56_late_files_are_named_and_a_copy_is_taken_at_once(
        spark: object, fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R56 (issue 42 item 3): files whose modification times are not in name order
    (`cp -r`), split over micro-batches, have late rows: the batch line and the summary
    name each late file, why, and the way to take a copy at once. That way: a copy made
    under a name starting with "." is not taken; renamed, it is taken whole in one
    micro-batch, and no row is late."""
    import os

    from timealign.cli import main

    files = sorted(fleet.glob("*.parquet"))
    source = tmp_path / "in"
    source.mkdir()
    for number, path in enumerate(files):  # copied last file first
        shutil.copy(path, source / path.name)
        os.utime(source / path.name, (1_790_000_000 - number, 1_790_000_000 - number))
    summary = tmp_path / "summary.json"
    code = main(_stream(source, tmp_path, "--max-files-per-trigger", "1", "--summary",
                        str(summary)))
    printed = capsys.readouterr()
    assert code == 0, printed.err
    written = json.loads(summary.read_text(encoding="utf-8"))
    late = written["late_files"]
    assert {entry["file"] for entry in late} == {str(source / p.name) for p in files[:-1]}
    rejected = sum(c["rows"] for c in written["outcomes"] if c["reason"] == "late_file")
    assert sum(entry["rows"] for entry in late) == rejected > 0
    assert all(entry["first_arrival"] < entry["after"] for entry in late)
    assert f"late file {late[0]['file']}: {late[0]['rows']} rows of source " in printed.out
    assert "under a name starting with '.', then rename it (SP-R56)" in printed.out
    assert any(f"(late: {source}/" in line for line in printed.err.splitlines()
               if "needs a look: rejected (late_file) " in line)
    # the way: copy under a hidden name (not taken), then rename (taken whole)
    again = tmp_path / "again"
    hidden = again / "in" / ".copy"
    hidden.mkdir(parents=True)
    for number, path in enumerate(files):
        shutil.copy(path, hidden / path.name)
        os.utime(hidden / path.name, (1_790_000_000 - number, 1_790_000_000 - number))
    assert main(_stream(again / "in", again)) == 0
    assert "stream stopped after 0 micro-batches" in capsys.readouterr().out
    hidden.rename(again / "in" / "copy")
    assert main(_stream(again / "in", again, "--summary", str(again / "s.json"))) == 0
    printed = capsys.readouterr()
    taken = json.loads((again / "s.json").read_text(encoding="utf-8"))
    assert "late_files" not in taken and taken["read"] == sum(
        pq.read_metadata(path).num_rows for path in files), printed.out
