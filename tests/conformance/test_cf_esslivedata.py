"""The ESS adapter (examples/esslivedata/adapter.py) behind ``timealign conform``, against a
stand-in with upstream's interface (tests/conformance/ess_standin; the ESS package is not
published): it must agree on both targets, so its translation (messages, clock, batch
length, timeout factor, revision detection) is right. Small budgets; README has the runs
against the real revisions."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from timealign.conformance import Command, check

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = ROOT / "examples" / "esslivedata" / "adapter.py"
STANDIN = Path(__file__).resolve().parent / "ess_standin"


def adapter(*options: str) -> str:
    return " ".join([sys.executable, str(ADAPTER), "--upstream", str(STANDIN), *options])


@pytest.mark.parametrize(("revision", "target", "options"), [
    ("card", "esslivedata-card", ()),
    ("head", "esslivedata-head", ("--exact-clock",)),
])
def test_ess_adapter_agrees_with_the_stand_in_cf_r18(
        revision: str, target: str, options: tuple[str, ...],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIMEALIGN_ESS_STANDIN", revision)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), *sys.path]))
    with Command(adapter(*options)) as command:
        report = check("rate_aware_batcher", command, fuzz=60, seed=2, explore=2, target=target)
    assert report.ok, report.text()
    by_source = {s.source: s for s in report.sources}
    assert all(s.run > 0 and s.refused == 0 for s in report.sources), report.text()
    assert by_source["vectors"].agree >= 7, report.text()


def test_ess_adapter_refuses_the_other_revision_cf_r3(monkeypatch: pytest.MonkeyPatch) -> None:
    """A head trace sent to a card checkout is refused as a whole, naming both."""
    monkeypatch.setenv("TIMEALIGN_ESS_STANDIN", "card")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), *sys.path]))
    with Command(adapter()) as command:
        report = check("rate_aware_batcher", command, target="esslivedata-head")
    [source] = report.sources
    assert source.refused > 0 and not report.ok
    assert "this checkout is the card revision" in report.text()
