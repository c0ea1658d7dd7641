"""Every path a command writes is checked before any work starts (CLI-R4, issue 22 items 3,
4, 7, 12, 17): never a path it reads or another of its outputs, a file where a file goes,
a folder that can be written, a name the file system allows; files written through a
temporary sibling.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from timealign import outputs
from timealign.cli import main
from timealign.errors import InvalidInput

ROOT = Path(__file__).resolve().parent.parent
AT_VECTORS = ROOT / "vectors" / "approximate_time"
ADAPTER = f"{sys.executable} -m timealign.conformance.adapter approximate_time"


def _digest(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _vectors(tmp_path: Path) -> Path:
    folder = tmp_path / "vecs"
    folder.mkdir()
    for name in ("config_rejects_queue_size_zero.json", "basic_pair.json"):
        source = AT_VECTORS / name
        if source.exists():
            (folder / name).write_bytes(source.read_bytes())
    assert list(folder.iterdir())
    return folder


@pytest.mark.parametrize("case", ["report_is_a_vector", "report_in_missing_folder",
                                  "save_is_the_vectors_folder", "save_inside_vectors",
                                  "save_is_a_file", "save_name_too_long", "report_is_save",
                                  "save_in_unwritable_place"])
def test_cli_r4_conform_targets_refused_before_any_trace(
        case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R4: `conform --report V --vectors V` used to overwrite the vector file, `--save`
    into the vectors' folder a vector of the same name, and a `--save` that is a file, a
    300-character name or `--report /nonexistent/r.json` failed only after the whole run,
    losing the report. Each is refused (exit 2) before the adapter is started (it would
    create a marker file), and no file read changes."""
    folder = _vectors(tmp_path)
    vector = next(folder.iterdir())
    marker = tmp_path / "started"
    plain = tmp_path / "plain.txt"
    plain.write_text("mine\n", encoding="utf-8")
    extra = {
        "report_is_a_vector": ["--report", str(vector)],
        "report_in_missing_folder": ["--report", str(tmp_path / "nonexistent" / "r.json")],
        "save_is_the_vectors_folder": ["--save", str(folder)],
        "save_inside_vectors": ["--save", str(folder / "saved")],
        "save_is_a_file": ["--save", str(plain)],
        "save_name_too_long": ["--save", str(tmp_path / ("s" * 300))],
        "report_is_save": ["--save", str(tmp_path / "out"), "--report",
                           str(tmp_path / "out")],
        "save_in_unwritable_place": ["--save", "/proc/o1"],
    }[case]
    before = _digest(tmp_path)
    code = main(["conform", "approximate_time", "--cmd", f"touch {marker}; {ADAPTER}",
                 "--vectors", str(folder), "--quiet", *extra])
    captured = capsys.readouterr()
    assert code == 2, captured
    assert "CLI-R4" in captured.err and "Traceback" not in captured.err
    assert not marker.exists()
    assert _digest(tmp_path) == before


def test_cli_r4_conform_report_written_through_a_sibling(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[
                                                             str]) -> None:
    """CLI-R4: the accepted case still runs and writes its report (no temporary file left
    beside it)."""
    folder = _vectors(tmp_path)
    report = tmp_path / "r.json"
    code = main(["conform", "approximate_time", "--cmd", ADAPTER, "--vectors", str(folder),
                 "--quiet", "--report", str(report), "--save", str(tmp_path / "saved")])
    capsys.readouterr()
    assert code == 0 and report.is_file()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_cli_r4_check_targets_rules(tmp_path: Path) -> None:
    """CLI-R4: the one check: overlaps between reads and writes and among writes, after
    resolving symlinks; a file target's folder must exist; a folder target is no file."""
    data = tmp_path / "data"
    data.mkdir()
    (tmp_path / "link").symlink_to(data)
    outputs.check_targets({"--input": data}, {"--summary": tmp_path / "s.json"},
                          {"--output": tmp_path / "out"})
    for reads, files, folders, option in [
        ({"--input": data}, {}, {"--output": tmp_path / "link" / "x"}, "--output"),
        ({"--input": data / "sub"}, {}, {"--output": data}, "--output"),
        ({"--config": tmp_path / "at.json"}, {"--summary": tmp_path / "at.json"}, {},
         "--summary"),
        ({}, {"--summary": tmp_path / "o" / "s.json"}, {"--output": tmp_path / "o"},
         "--summary"),
        ({}, {"--summary": tmp_path / "missing" / "s.json"}, {}, "--summary"),
        ({}, {"--summary": data}, {}, "--summary"),
        ({}, {}, {"--output": tmp_path / "link" / ("x" * 256)}, "--output"),
    ]:
        with pytest.raises(InvalidInput) as error:
            outputs.check_targets(reads, files, folders)
        assert error.value.field == option and error.value.rule == "CLI-R4"


@pytest.mark.parametrize("extra", [["--report", "VECTOR"], ["--save", "VECTORS"]])
def test_cli_r4_diff_targets_refused_before_any_trace(
        extra: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R4: `diff` writes `--report` and `--save` like `conform`: a report over a vector
    read, or saved differences among the vectors, are refused before any trace (exit 2)."""
    folder = _vectors(tmp_path)
    vector = next(folder.iterdir())
    extra = [str(vector) if a == "VECTOR" else str(folder) if a == "VECTORS" else a
             for a in extra]
    before = _digest(tmp_path)
    code = main(["diff", "approximate_time", "--a", "arithmetic=ros2", "--b",
                 "arithmetic=ros1", "--vectors", str(folder), "--quiet", *extra])
    captured = capsys.readouterr()
    assert code == 2 and "CLI-R4" in captured.err, captured
    assert _digest(tmp_path) == before


AT_CONFIG = '{"topics": ["a", "b"], "queue_size": 2}'


@pytest.mark.parametrize("case", ["summary_is_the_config", "checkpoint_in_output_groups",
                                  "output_in_proc", "output_under_a_file",
                                  "summary_inside_output", "checkpoint_is_output"])
def test_cli_r4_sp_r20_job_targets_refused_before_spark(
        case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R4, SP-R20: `run --config at.json --summary at.json` replaced the config by the
    summary; `stream --checkpoint OUT/groups` left a table Spark could not read;
    `--output /proc/o1` and `--output FILE/sub` ran the whole job and then failed. Each is
    refused before Spark starts (exit 2, the option named), nothing changed."""
    pytest.importorskip("pyspark", reason="the spark extra is not installed (SP-R35 first)")
    data = tmp_path / "data"
    data.mkdir()
    (data / "part-0.csv").write_text("source,id,topic,stamp\n", encoding="utf-8")
    config = tmp_path / "at.json"
    config.write_text(AT_CONFIG, encoding="utf-8")
    plain = tmp_path / "plain.txt"
    plain.write_text("mine\n", encoding="utf-8")
    out = tmp_path / "out"
    run = ["run", "approximate_time", "--input", str(data), "--format", "csv", "--config",
           str(config), "--quiet"]
    stream = ["stream", "approximate_time", "--source", str(data), "--format", "csv",
              "--config", str(config), "--quiet", "--available-now"]
    argv, option = {
        "summary_is_the_config": ([*run, "--output", str(out), "--summary", str(config)],
                                  "--summary"),
        "checkpoint_in_output_groups": ([*stream, "--output", str(out), "--checkpoint",
                                         str(out / "groups")], "--checkpoint"),
        "output_in_proc": ([*run, "--output", "/proc/o1"], "--output"),
        "output_under_a_file": ([*run, "--output", str(plain / "sub")], "--output"),
        "summary_inside_output": ([*run, "--output", str(out), "--summary",
                                   str(out / "s.json")], "--summary"),
        "checkpoint_is_output": ([*stream, "--output", str(out), "--checkpoint", str(out)],
                                 "--checkpoint"),
    }[case]
    before = _digest(tmp_path)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.split(":")[1].strip() == option or f"{option}:" in err, err
    assert "Traceback" not in err
    assert _digest(tmp_path) == before


def test_cli_r3_run_output_never_a_folder_of_the_users_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R3: `run --output MINE`, MINE holding the user's own `groups/`, used to publish
    the run's table over it (SP-R21 replaces a table folder whole): the user's file was
    deleted, exit 0 (found by tests/spark/test_spark_cli_fuzz.py). Refused before Spark
    starts, naming the file; an earlier run's output (its manifest) is accepted."""
    pytest.importorskip("pyspark", reason="the spark extra is not installed")
    data = tmp_path / "data"
    data.mkdir()
    (data / "part-0.csv").write_text("source,id,topic,stamp\n", encoding="utf-8")
    mine = tmp_path / "mine"
    (mine / "groups").mkdir(parents=True)
    (mine / "groups" / "part-important.parquet").write_bytes(b"precious")
    before = _digest(tmp_path)
    code = main(["run", "approximate_time", "--input", str(data), "--format", "csv",
                 "--config", AT_CONFIG, "--output", str(mine), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "--output" in err and "CLI-R3" in err and "groups" in err, err
    assert "Traceback" not in err and _digest(tmp_path) == before
    earlier = tmp_path / "earlier"
    (earlier / "groups").mkdir(parents=True)
    (earlier / ".outcomes-staging-0123").mkdir()  # a killed run's staging: left aside
    (earlier / outputs.MANIFEST).write_text(
        '{"format": "timealign.output/1", "command": "run", "files": ["groups"]}',
        encoding="utf-8")
    outputs.check_run_output(str(earlier))
    outputs.check_run_output(str(tmp_path / "new"))


@pytest.mark.parametrize("case", ["generate_below_a_file", "plot_into_the_run",
                                  "plot_name_too_long"])
def test_cli_r4_generate_and_plot_targets_checked_first(
        case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R4: `generate --output FILE/sub` failed with a bare "[Errno 17] File exists"
    naming no option; `plot --out` was written after the picture was drawn (an over-long
    name failed then), and into the run's own table folder if so given. Each is refused
    before any work, exit 2 naming the option, nothing written."""
    if case == "generate_below_a_file":
        pytest.importorskip("pyspark", reason="the spark extra is not installed (SP-R35 first)")
    plain = tmp_path / "plain.txt"
    plain.write_text("mine\n", encoding="utf-8")
    run = tmp_path / "run"
    (run / "groups").mkdir(parents=True)
    argv, option = {
        "generate_below_a_file": (["generate", "--output", str(plain / "sub"), "--messages",
                                   "50", "--robots", "1"], "--output"),
        "plot_into_the_run": (["plot", "approximate_time", "--run", str(run), "--source",
                               "s", "--out", str(run / "groups" / "p.svg")], "--out"),
        "plot_name_too_long": (["plot", str(AT_VECTORS / "max_interval_is_strict.json"),
                                "--out", str(tmp_path / ("p" * 300 + ".svg"))], "--out"),
    }[case]
    if case.startswith("plot"):
        pytest.importorskip("matplotlib", reason="the plot extra is not installed")
    before = _digest(tmp_path)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and option in err and "CLI-R4" in err, err
    assert "Traceback" not in err and _digest(tmp_path) == before
