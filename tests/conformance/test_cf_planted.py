"""``make planted`` (proofs/planted_upstreams.py): each planted line is upstream's at the
pinned commit, a line is planted exactly once, and a plant whose snapshot is missing is
skipped with the reason, never an error. The runs themselves need the toolchains and take
minutes (proofs/README.md has their results)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from proofs import planted_upstreams as planted


def test_each_planted_line_is_upstreams_once_at_the_pinned_commit() -> None:
    """The line each plant changes occurs exactly once in its file at the pinned commit, so
    the planted copy differs from upstream by that one line (skipped without the snapshot)."""
    checked = 0
    for plant in planted.PLANTS:
        if not plant.old:
            continue
        shown = subprocess.run(["git", "--git-dir", str(plant.snapshot.git_dir), "show",
                                f"{plant.snapshot.commit}:{plant.path}"],
                               capture_output=True, text=True)
        if shown.returncode != 0:
            continue
        assert shown.stdout.count(plant.old) == 1, plant.name
        assert plant.new != plant.old and plant.new not in shown.stdout, plant.name
        checked += 1
    if checked == 0:
        pytest.skip("no upstream snapshot here (proofs/planted_upstreams.py names them)")


def test_a_line_is_planted_once_or_the_plant_stops(tmp_path: Path) -> None:
    """``plant`` changes the one occurrence; a line found twice (or not at all: upstream
    moved on) stops the plant naming the file and the citation, not a silent second edit."""
    plant = planted.PLANTS[0]
    target = tmp_path / plant.path
    target.parent.mkdir(parents=True)
    target.write_text(f"before\n{plant.old}\nafter\n", encoding="utf-8")
    planted.plant(plant, tmp_path)
    assert target.read_text(encoding="utf-8") == f"before\n{plant.new}\nafter\n"
    target.write_text(f"{plant.old}\n{plant.old}\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="occurs 2 times"):
        planted.plant(plant, tmp_path)
    assert target.read_text(encoding="utf-8") == f"{plant.old}\n{plant.old}\n"


def test_a_missing_snapshot_skips_the_plant_with_the_reason(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without the upstream's snapshot the plant is skipped, saying which repository and
    commit and which variable names it; the run still ends with its summary, exit 0."""
    if shutil.which("git") is None:
        pytest.skip("no git")
    empty = tmp_path / "empty.git"
    subprocess.run(["git", "init", "-q", "--bare", str(empty)], check=True)
    monkeypatch.setenv("ESSLIVEDATA_GIT", str(empty))
    out = tmp_path / "out"
    assert planted.main(["--only", "ess-card-slots", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert (f"skipped ess-card-slots: no scipp/esslivedata @fb65e75e in {empty} "
            "(set ESSLIVEDATA_GIT") in printed
    assert (out / "summary.txt").read_text(encoding="utf-8").startswith(
        "ess-card-slots: skipped (no scipp/esslivedata @fb65e75e")
    assert not (out / "ess-card-slots" / "report.json").exists()


def test_the_summary_says_whether_the_planted_rule_is_named(tmp_path: Path) -> None:
    """A plant is *named* when a variant of its rule explains the run's differences
    (the report's ``explained_by``, a pair's halves included); a run without a diagnosis says
    whether the rule is only among the differing rules."""
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"differs_on": ["AT-R6", "AT-R12"], "unexplained": 1,
                                  "explained_by": ["AT-R8 ~ x + AT-R6 ~ ties-flipped"]}))
    assert planted.named(report, "AT-R6") == (
        "named (AT-R6): explained by AT-R8 ~ x + AT-R6 ~ ties-flipped; 1 unexplained")
    assert planted.named(report, "AT-R12").startswith("NOT named (AT-R12)")
    report.write_text(json.dumps({"differs_on": ["EB-R13"]}))
    assert planted.named(report, "EB-R13") == "no diagnosis; EB-R13 among the differing rules"
    assert planted.named(report, "EB-R7") == (
        "no diagnosis; EB-R7 not among the differing rules")
