"""The one write rule (CLI-R5), one writer per target (CLI-R6) and no empty write (CLI-R7),
on the cases of issue 30 part 2 that need no Spark: each refused write leaves the user's
file or folder byte-identical; an earlier output of the same command is replaced.
The walk over every writing option is in tests/test_cli_fuzz.py and
tests/spark/test_spark_cli_fuzz.py."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from timealign import outputs
from timealign.cli import main

ROOT = Path(__file__).resolve().parent.parent
SUITES = ROOT / "reference" / "timealign" / "suites"
VECTOR = ROOT / "vectors" / "approximate_time" / "max_interval_is_strict.json"
ADAPTER = f"{sys.executable} -m timealign.conformance.adapter approximate_time"


def _tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            if p.is_file() else "<dir>" for p in sorted(folder.rglob("*"))}


def _conform(report: Path, command: str = ADAPTER) -> list[str]:
    return ["conform", "approximate_time", "--cmd", command, "--vectors", str(VECTOR),
            "--report", str(report), "--quiet"]


def test_cli_r5_conform_report_never_over_another_algorithms_suite(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R5: `conform approximate_time --report` naming the event-time batcher's suite
    (a copy of the installed one: the real one would be lost on a failing run) is refused
    before any trace, the suite byte-identical; it used to be replaced, and every `conform`
    and `diff` of that algorithm failed after."""
    suite = tmp_path / "event_time_batcher.jsonl"
    suite.write_bytes((SUITES / "event_time_batcher.jsonl").read_bytes())
    before = _tree(tmp_path)
    assert main(_conform(suite)) == 2
    err = capsys.readouterr().err
    assert "--report" in err and "CLI-R5" in err and "not an earlier output of conform" in err
    assert _tree(tmp_path) == before


def test_cli_r5_conform_report_never_over_the_adapters_source(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R5: `--report my_adapter.py`, the adapter the command runs, is refused and kept
    byte-identical."""
    adapter = tmp_path / "my_adapter.py"
    adapter.write_text("import runpy\nrunpy.run_module('timealign.conformance.adapter', "
                       "run_name='__main__')\n", encoding="utf-8")
    before = _tree(tmp_path)
    command = f"{sys.executable} {adapter} approximate_time"
    assert main(_conform(adapter, command)) == 2
    assert "CLI-R5" in capsys.readouterr().err
    assert _tree(tmp_path) == before


def test_cli_r5_report_replaces_only_its_own_earlier_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R5: a second `conform --report` over the first one's report replaces it (it
    carries conform's format); a `diff` report is not conform's, and is kept."""
    report = tmp_path / "r.json"
    assert main(_conform(report)) == 0
    first = report.read_bytes()
    assert first.startswith(b'{\n "format": "timealign.conformance/1"')
    report.write_bytes(first.replace(b'"ok": true', b'"ok": false'))
    assert main(_conform(report)) == 0
    assert report.read_bytes() == first
    other = tmp_path / "d.json"
    other.write_text('{"format": "timealign.diff/1"}\n', encoding="utf-8")
    assert main(_conform(other)) == 2
    assert other.read_text(encoding="utf-8") == '{"format": "timealign.diff/1"}\n'
    capsys.readouterr()


def test_cli_r5_plot_out_never_replaces_a_users_picture(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R5: `plot --out` over an existing picture it did not draw is refused; over its
    own picture (SVG or PNG, which carry its mark) it draws again."""
    pytest.importorskip("matplotlib", reason="the plot extra is not installed")
    for name in ("p.svg", "p.png"):
        out = tmp_path / name
        out.write_bytes(b"<svg>mine</svg>\n")
        assert main(["plot", str(VECTOR), "--out", str(out)]) == 2
        assert "CLI-R5" in capsys.readouterr().err and out.read_bytes() == b"<svg>mine</svg>\n"
        out.unlink()
        assert main(["plot", str(VECTOR), "--out", str(out)]) == 0
        drawn = out.read_bytes()
        assert main(["plot", str(VECTOR), "--out", str(out)]) == 0
        assert out.read_bytes() == drawn
    capsys.readouterr()


def test_cli_r5_save_folder_of_the_users_vectors_is_kept(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R5: `diff --save` into a folder of the user's vectors is refused before any
    trace; into its own earlier output it replaces it whole, the manifest naming its
    files, so `check` reads the folder without the manifest."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "approximate_time_diff_1_a.json").write_bytes(VECTOR.read_bytes())
    before = _tree(tmp_path)
    argv = ["diff", "approximate_time", "--a", "arithmetic=ros2", "--b", "arithmetic=ros1",
            "--fuzz", "0", "--explore", "0", "--no-pictures", "--quiet", "--save"]
    assert main([*argv, str(mine)]) == 2
    assert "--save" in capsys.readouterr().err and _tree(tmp_path) == before
    saved = tmp_path / "saved"
    assert main([*argv, str(saved)]) == 1
    first = _tree(saved)
    assert main([*argv, str(saved)]) == 1
    assert _tree(saved) == first and "_timealign.json" in first
    assert main(["check", str(saved)]) == 0
    capsys.readouterr()


def test_cli_r5_generate_into_the_current_empty_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R5: `generate --output .` in an empty folder writes its files there (its staging
    folder lives beside it, not inside the folder being checked); the folder itself is kept
    (the same inode: the user's shell stays in it), nothing is left beside it, and a second
    run replaces the first one's files."""
    pytest.importorskip("pyarrow", reason="the spark extra is not installed")
    here = tmp_path / "here"
    here.mkdir()
    inode = here.stat().st_ino
    monkeypatch.chdir(here)
    argv = ["generate", "--output", ".", "--messages", "300", "--robots", "1", "--files", "2"]
    assert main(argv) == 0, capsys.readouterr().err
    assert here.stat().st_ino == inode
    assert sorted(p.name for p in here.iterdir()) == [
        "_timealign.json", "part-00000.parquet", "part-00001.parquet"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["here"]
    assert main([*argv[:-1], "1"]) == 0
    assert sorted(p.name for p in here.iterdir()) == ["_timealign.json", "part-00000.parquet"]
    assert here.stat().st_ino == inode and sorted(p.name for p in tmp_path.iterdir()) == ["here"]
    capsys.readouterr()


def test_cli_r7_generate_refuses_to_write_no_message(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R7: `generate --messages 1` (a fleet of one robot sends about 139 messages a
    second, so the plan holds none) is refused naming --messages, nothing written; it used
    to say "wrote 0 messages" and exit 0."""
    pytest.importorskip("pyarrow", reason="the spark extra is not installed")
    code = main(["generate", "--output", str(tmp_path / "fleet"), "--messages", "1",
                 "--robots", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "--messages" in err and "CLI-R7" in err
    assert list(tmp_path.iterdir()) == []


_HOLDER = """
import sys, time
from timealign import outputs
outputs.claim(sys.argv[1], {"--output": sys.argv[2]})
print("held", flush=True)
time.sleep(60)
"""


def test_cli_r6_a_second_writer_is_told_who_writes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R6: while another command holds an output (its lock file beside it, made with
    O_EXCL), a second command writing there is refused, exit 2, naming the other command
    and its process; the lock goes when its holder ends, and a lock left by a process that
    has ended is taken over."""
    pytest.importorskip("pyarrow", reason="the spark extra is not installed")
    out = tmp_path / "fleet"
    argv = ["generate", "--output", str(out), "--messages", "300", "--robots", "1"]
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, "run", str(out)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"another run (process {holder.pid}" in err and "CLI-R6" in err, err
        assert not out.exists()
    finally:
        holder.kill()
        holder.wait()
    lock = outputs.lock_file(out)
    assert lock.exists()  # killed: nothing removed it
    assert main(argv) == 0, capsys.readouterr().err  # a stale lock is taken over
    assert not lock.exists() and (out / "_timealign.json").is_file()


def test_cli_r6_lock_is_released_and_never_left_behind(tmp_path: Path) -> None:
    """CLI-R6: a command's locks are removed when it ends, and the folders made only to
    hold them too."""
    target = tmp_path / "a" / "b" / "out"
    outputs.claim("generate", {"--output": target})
    lock = outputs.lock_file(target)
    assert lock.is_file() and lock.read_text().split()[0] == str(os.getpid())
    outputs.release()
    assert list(tmp_path.iterdir()) == []


def test_cli_r5_ship_needs_a_folder_and_fills_only_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R5: `python -m timealign.spark.ship` without a folder is a usage error (it used to
    fill the current folder); a second ship into its own earlier output replaces it."""
    from timealign.commands import spark_ship as ship

    monkeypatch.chdir(tmp_path)
    assert ship.main([]) == 2
    assert list(tmp_path.iterdir()) == []
    assert ship.main(["dist"]) == 0
    first = sorted(p.name for p in (tmp_path / "dist").iterdir())
    assert ship.main(["dist"]) == 0
    assert sorted(p.name for p in (tmp_path / "dist").iterdir()) == first == [
        "_timealign.json", "log4j2.properties", "timealign.zip", "timealign_submit.py"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dist"]
    capsys.readouterr()
