"""A run remembers itself (spec/spark.md SP-R32, SP-R35): `run` writes a manifest in its
output; `plot --run` and `timealign verify OUT` need nothing else."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from tests.spark.machines import REAL_CONFIGS
from timealign.cli import main
from timealign.commands.spark import verify_main
from timealign.outputs import MANIFEST, read_manifest

CONFIG = REAL_CONFIGS["approximate_time"]


@pytest.fixture(scope="module")
def recorded(spark: Any, fleet: Path, tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[Path, Path]:
    """A run with --report, through the command line (so with its manifest)."""
    base = tmp_path_factory.mktemp("recorded")
    out, report = base / "out", base / "report"
    assert main(["run", "approximate_time", "--input", str(fleet), "--output", str(out),
                 "--config", json.dumps(CONFIG), "--report", str(report), "--quiet"]) == 0
    return out, report


def test_sp_r32_run_writes_its_manifest(recorded: tuple[Path, Path], fleet: Path) -> None:
    """SP-R32: algorithm, canonical config, input and options, version and build, master,
    start and end, counts; the report page shows it."""
    out, report = recorded
    manifest = read_manifest(out, "--output")
    assert manifest is not None and manifest["command"] == "run"
    assert {"groups", "outcomes"} <= set(manifest["files"])
    run = manifest["run"]
    assert run["algorithm"] == "approximate_time" and run["input"] == str(fleet)
    assert run["input_format"] == "parquet" and run["config"]["queue_size"] == \
        CONFIG["queue_size"]
    assert manifest["timealign"]["build"] in ("pure", "compiled", "mixed")
    assert manifest["spark"]["master"].startswith("local")
    assert manifest["started"] <= manifest["ended"]
    assert manifest["counts"]["rows"] > 0 and manifest["counts"]["sources"] > 0
    page = (report / "index.html").read_text(encoding="utf-8")
    assert "<h2>Run</h2>" in page and manifest["timealign"]["version"] in page
    assert str(fleet) in page


def test_pl_r15_report_shows_the_command_line_and_ships_its_rules(
        recorded: tuple[Path, Path], fleet: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """PL-R15: the Run section's command line reruns the run (same tables); the rules the
    page links to are in rules.html beside it."""
    import html
    import re
    import shlex

    out, report = recorded
    page = (report / "index.html").read_text(encoding="utf-8")
    found = re.search(r'<code class="command">(.*?)</code>', page)
    assert found is not None
    words = shlex.split(html.unescape(found.group(1)))
    assert words[:3] == ["timealign", "run", "approximate_time"]
    assert words[words.index("--output") + 1] == str(out)
    again = tmp_path / "again"
    words[words.index("--output") + 1] = str(again)
    assert main([*words[1:], "--quiet"]) == 0, capsys.readouterr().err
    assert main(["verify", str(again)]) == 0
    first, second = read_manifest(out, "--output"), read_manifest(again, "--output")
    assert first is not None and second is not None
    assert first["counts"] == second["counts"] and first["run"] == second["run"]
    rules = (report / "rules.html").read_text(encoding="utf-8")
    for anchor in set(re.findall(r'href="rules\.html#([a-z0-9-]+)"', page)):
        assert f'id="{anchor}"' in rules


def test_sp_r32_verify_and_plot_from_the_manifest_alone(
        recorded: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
        ) -> None:
    """SP-R32: `timealign verify OUT`, its module alias and `plot ALGORITHM --run OUT
    --source S` need no other option; an explicit option that differs is refused, naming
    it; a wrong --source lists the sources (PL-R6)."""
    out, _ = recorded
    assert main(["verify", str(out)]) == 0, capsys.readouterr().err
    assert "verified:" in capsys.readouterr().out
    assert verify_main(["approximate_time", "--output", str(out)]) == 0
    capsys.readouterr()
    picture = tmp_path / "p.svg"
    assert main(["plot", "approximate_time", "--run", str(out), "--source", "robot-001",
                 "--out", str(picture)]) == 0, capsys.readouterr().err
    assert picture.is_file()
    other = json.dumps({**CONFIG, "queue_size": CONFIG["queue_size"] + 1})
    assert main(["verify", str(out), "--config", other]) == 2
    err = capsys.readouterr().err
    assert "--config" in err and "differs from the run's manifest" in err
    assert main(["plot", "event_time_batcher", "--run", str(out), "--source", "robot-001",
                 "--out", str(tmp_path / "q.svg")]) == 2
    assert "ALGORITHM" in capsys.readouterr().err
    assert main(["verify", str(out), "--config", json.dumps(CONFIG)]) == 0  # same: fine
    capsys.readouterr()
    assert main(["plot", "approximate_time", "--run", str(out), "--source", "nobody",
                 "--out", str(tmp_path / "r.svg")]) == 2
    err = capsys.readouterr().err
    assert "the run has no source 'nobody'" in err and "'robot-000', 'robot-001'" in err
    assert "PL-R17" in err  # checked from the run's outcomes before Spark starts
    assert not (tmp_path / "r.svg").exists()


def test_sp_r32_a_run_without_manifest_needs_its_options(
        recorded: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
        ) -> None:
    """SP-R32: without a manifest, `verify OUT` says what to give."""
    out, _ = recorded
    bare = tmp_path / "bare"
    bare.mkdir()
    for table in ("groups", "outcomes"):
        (bare / table).symlink_to(out / table)
    assert main(["verify", str(bare)]) == 2
    assert "no manifest" in capsys.readouterr().err
    (bare / MANIFEST).write_text("{", encoding="utf-8")
    assert main(["verify", str(bare)]) == 2
    assert "SP-R32" in capsys.readouterr().err


def test_sp_r32_verify_and_plot_of_a_missing_folder_say_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R32: `verify OUT` and `plot --run OUT` of a folder that does not exist (a typo)
    exit 2 saying so, before Spark starts, not that the run has no manifest."""
    missing = tmp_path / "nothere"
    for argv in (["verify", str(missing)],
                 ["verify", str(missing), "--algorithm", "approximate_time",
                  "--input", str(tmp_path)],
                 ["plot", "approximate_time", "--run", str(missing), "--source", "s",
                  "--out", str(tmp_path / "p.svg")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "no such folder" in err and str(missing) in err and "manifest" not in err, err
        assert len(err.splitlines()) == 1 and "SP-R32" in err
    assert not missing.exists() and not (tmp_path / "p.svg").exists()


def test_sp_r35_a_missing_extra_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R35: `run`, `stream`, `verify`, `plot --run` and `generate` without the spark
    extra exit 2 naming it, before anything runs."""
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> Any:
        return None if name == "pyarrow" else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    out = str(tmp_path / "out")
    for argv in (["run", "approximate_time", "--input", str(tmp_path), "--output", out],
                 ["stream", "approximate_time", "--source", str(tmp_path), "--output", out,
                  "--checkpoint", str(tmp_path / "cp")],
                 ["verify", out],
                 ["plot", "approximate_time", "--run", out, "--source", "a", "--out",
                  str(tmp_path / "a.svg")],
                 ["generate", "--output", out]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "pip install 'timealign[spark]'" in err and "pyarrow" in err, err
    assert not (tmp_path / "out").exists()
