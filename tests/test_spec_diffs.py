"""The "What changes between profiles" sections are current (CF-R26)."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("hypothesis")

from timealign.conformance.diff import DiffReport
from tools import spec_diffs


@pytest.fixture(scope="module")
def reports() -> dict[spec_diffs.Run, DiffReport]:
    """Each committed run's report, computed once for both tests (the runs are seeded)."""
    return {run: spec_diffs.report_of(run) for run in spec_diffs.RUNS}


def test_profile_sections_and_figures_are_current_cf_r26(
        reports: dict[spec_diffs.Run, DiffReport]) -> None:
    """Regenerating every section and figure in memory changes nothing (run `make
    spec-diffs`, then `make spec-index`, when this fails)."""
    texts, figures = spec_diffs.generated(reports.__getitem__)
    for path, text in texts.items():
        assert path.read_text("utf-8") == text, f"{path.name} is stale: run make spec-diffs"
    for path, data in figures.items():
        assert path.exists() and path.read_bytes() == data, f"{path.name} is stale"
    committed = set(spec_diffs.FOLDER.glob("*.svg"))
    assert committed == set(figures), "figures no section shows: run make spec-diffs"


def test_known_differences_are_shown_within_8_inputs_cf_r26(
        reports: dict[spec_diffs.Run, DiffReport]) -> None:
    """The committed runs find the ROS 1/ROS 2 rounding and the head's anchor and
    backstop, each with a trace of at most 8 inputs."""
    by_algorithm = {run.algorithm: report for run, report in reports.items()}
    at = by_algorithm["approximate_time"].divergences
    assert any("AT-D23" in d.only_a and "AT-R16" in d.only_b and len(d.vector.inputs) <= 8
               for d in at)
    rb = by_algorithm["rate_aware_batcher"].divergences
    for rule in ("RB-R20", "RB-R26"):
        assert any(rule in d.only_b and len(d.vector.inputs) <= 8 for d in rb), rule
