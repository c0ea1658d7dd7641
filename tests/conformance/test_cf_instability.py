"""The adapter blamed only when it is at fault (CF-R37): an answer asked again is compared
as the target's profile sees it, so a port whose batches' ids come in another order each
time (thin-edge.io's ``HashMap``) and that has one real fault differs, never fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conformance import unordered
from timealign.cli import main


@pytest.mark.parametrize("source", [[], ["--no-vectors", "--fuzz", "100"],
                                    ["--no-vectors", "--explore", "2"]])
def test_ids_in_random_order_with_a_real_fault_differ_never_fail_cf_r37(
        source: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CF-R37, CF-R12: under ``--target thin-edge`` (a batch's ids as a set) a port that
    answers every batch's ids in a fresh order and reports a batch of two ids or more twice
    is reported as differing (exit 1) on the suite, fuzz and explore: no trace failed, no
    "state leaking", and the difference shown is the batch reported twice."""
    report = tmp_path / "report.json"
    code = main(["conform", "event_time_batcher", "--target", "thin-edge", "--cmd",
                 unordered.command(), *source, "--quiet", "--report", str(report)])
    out = capsys.readouterr().out
    body = json.loads(report.read_text(encoding="utf-8"))
    assert code == 1, out
    assert "state leaking" not in out and "FAILED" not in out, out
    [found] = body["sources"].values()
    assert found["failed"] == 0 and found["differ"] > 0, out
    for difference in found["differences"]:
        assert difference["status"] == "differ"
        batches = [json.dumps(sorted(o["ids"])) for o in difference["observed"]
                   if o["kind"] == "batch" and len(o["ids"]) >= 2]
        assert batches and all(batches.count(b) == 2 for b in batches), difference
