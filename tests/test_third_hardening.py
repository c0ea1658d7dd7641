"""The reproducers of the third hardening round (issue 22, item 19) that need no Spark:
`plot` of a vector refuses what it cannot honour (PL-R6) and says when two vectors share
the name asked for (VEC-R1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from timealign import vectors
from timealign.cli import main

ROOT = Path(__file__).resolve().parent.parent
AT_VECTORS = ROOT / "vectors" / "approximate_time"


@pytest.mark.parametrize("options, words", [
    (["--from", "abc"], ["--from", "duration"]),
    (["--from", "5s", "--to", "1s"], ["--to", "before --from"]),
    (["--from", "1s"], ["--from", "only for a run's picture"]),
    (["--source", "r1"], ["--source", "only for a run's picture"]),
    # a run's input options: a vector has its own config and inputs (they were ignored)
    *[(option, [option[0], "only for a run's picture"]) for option in (
        ["--time-unit", "s"], ["--format", "csv"], ["--column", "id=x"], ["--input", "in"],
        ["--config", "{}"], ["--master", "local[1]"], ["--stamp", "log"],
        ["--source-from", "folder"], ["--skip-bad-files"])],
])
def test_pl_r6_plot_of_a_vector_refuses_window_options(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str],
        words: list[str]) -> None:
    """PL-R6: `plot` of a vector used to ignore `--from abc` and `--from 5s --to 1s` (and
    any window): a vector is drawn whole, so the options are refused (exit 2)."""
    pytest.importorskip("matplotlib", reason="the plot extra is not installed")
    vector = sorted(AT_VECTORS.glob("*.json"))[0]
    out = tmp_path / "p.svg"
    assert main(["plot", str(vector), "--out", str(out), *options]) == 2
    err = capsys.readouterr().err
    assert all(word in err for word in words), err
    assert not out.exists()


def test_pl_r6_vec_r1_two_vectors_of_the_asked_name_are_said(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """VEC-R1: `--name X` with two vectors named X used to say "give --name to choose
    one"; it says that two vectors share the name (the file is refused as it is loaded,
    since the second round; kept as the item's reproducer)."""
    pytest.importorskip("matplotlib", reason="the plot extra is not installed")
    [vector] = vectors.load(sorted(AT_VECTORS.glob("*.json"))[0])
    line = json.dumps(vector.to_json())
    suite = tmp_path / "twice.jsonl"
    suite.write_text(f"{line}\n{line}\n", encoding="utf-8")
    out = tmp_path / "p.svg"
    assert main(["plot", str(suite), "--out", str(out), "--name", vector.name]) == 2
    err = capsys.readouterr().err
    assert "a second vector of this name" in err and "VEC-R1" in err, err
    assert "give --name" not in err and not out.exists()


def test_pl_r6_name_is_refused_with_a_run(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """PL-R6: `--name` chooses a vector of a .jsonl file; with `--run` it was ignored: now
    exit 2 naming it, before the run is read."""
    pytest.importorskip("matplotlib", reason="the plot extra is not installed")
    pytest.importorskip("pyspark", reason="the spark extra is not installed")
    out = tmp_path / "p.svg"
    assert main(["plot", "approximate_time", "--run", str(tmp_path / "run"), "--source", "r1",
                 "--name", "v", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--name: only for a vector file, not with --run" in err and "PL-R6" in err, err
    assert not out.exists()
