"""``timealign conform``: report, JSON report, saved vectors, progress and exit status
(CF-R15 to CF-R17)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conformance.mutants import command
from timealign.cli import main
from timealign.conformance.harness import Progress, SourceReport

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = f"{sys.executable} -m timealign.conformance.adapter"


def test_reference_adapter_agrees_exit_0_cf_r17(capsys: pytest.CaptureFixture[str]) -> None:
    """CF-R17: everything agrees -> exit 0 and the report says so."""
    code = main(["conform", "approximate_time", "--cmd", f"{ADAPTER} approximate_time",
                 "--explore", "1", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    suite = len((ROOT / "reference/timealign/suites/approximate_time.jsonl").read_text()
                .splitlines())  # every vector of the installed suite was run and agreed
    assert f"vectors  run {suite:6d}  agree {suite:6d}" in out, out
    assert out.rstrip().endswith("AGREES")


def test_fault_exit_1_with_report_and_saved_vectors_cf_r15_cf_r16_cf_r17(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CF-R15, CF-R16, CF-R17: a fault -> exit 1, the JSON report and the saved vectors."""
    report, saved = tmp_path / "report.json", tmp_path / "found"
    code = main(["conform", "event_time_batcher", "--cmd", command("eb-flush-in-creation-order"),
                 "--vectors", str(ROOT / "vectors" / "event_time_batcher"),
                 "--save", str(saved), "--report", str(report), "--quiet"])
    out = capsys.readouterr().out
    assert code == 1
    assert "DIFFERS on EB-R13, EB-R14, EB-R15, EB-R16" in out
    body = json.loads(report.read_text(encoding="utf-8"))
    [difference] = body["sources"]["vectors"]["differences"]
    assert difference["saved"] and Path(difference["saved"]).parent == saved
    assert difference["expected"] == difference["observed"][::-1]
    assert main(["check", str(saved)]) == 0


@pytest.mark.parametrize(("argv", "message"), [
    (["--observe", "ros3"], "CF-R10"),
    (["--vectors", str(ROOT / "vectors" / "rate_aware_batcher" / "end_reports_pending.json")],
     "a vector of another algorithm"),
    (["--vectors", str(ROOT / "no-such-folder.json")], "No such file"),
    (["--fuzz", "-1"], "--fuzz: must be at least 0"),
    (["--timeout", "0"], "--timeout: must be at least 0.001"),
])
def test_usage_errors_exit_2_without_report_cf_r17(
        argv: list[str], message: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """CF-R17: bad usage -> exit 2, a message on stderr, no report written."""
    report = tmp_path / "report.json"
    code = main(["conform", "approximate_time", "--cmd", f"{ADAPTER} approximate_time",
                 "--report", str(report), *argv])
    captured = capsys.readouterr()
    assert code == 2 and message in captured.err and not report.exists()
    assert "AGREES" not in captured.out


def test_progress_line_on_stderr_cf_r15(capsys: pytest.CaptureFixture[str]) -> None:
    """CF-R15: the progress line names the source and its counts."""
    report = SourceReport("fuzz", run=40, agree=39, differ=1)
    Progress(True, every=0.0)(report, 100)
    assert capsys.readouterr().err == "conform: fuzz 40/100 traces, 1 differ, 0 failed\n"


def test_hypothesis_is_needed_only_for_fuzz_cf_d3() -> None:
    """CF-D3: without Hypothesis, vectors and explore run; --fuzz is a usage error."""
    script = (
        "import sys; sys.modules['hypothesis'] = None\n"
        "from timealign.cli import main\n"
        f"cmd = {ADAPTER + ' approximate_time'!r}\n"
        "print(main(['conform', 'approximate_time', '--cmd', cmd, '--explore', '1', '--quiet']))\n"
        "print(main(['conform', 'approximate_time', '--cmd', cmd, '--fuzz', '5']))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    assert done.stdout.split()[-1] == "2" and "AGREES\n0" in done.stdout
    assert "needs Hypothesis: pip install 'timealign[conform]'" in done.stderr
