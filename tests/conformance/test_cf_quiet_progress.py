"""``timealign conform --quiet`` is not minutes of silence: one line per source as it
finishes (CF-R15), on stderr, the report alone on stdout."""

from __future__ import annotations

import re
import sys

import pytest

from timealign.cli import main

ADAPTER = f"{sys.executable} -m timealign.conformance.adapter event_time_batcher"


def test_quiet_prints_one_line_per_finished_source_cf_r15(
        capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["conform", "event_time_batcher", "--cmd", ADAPTER, "--fuzz", "5",
                 "--explore", "1", "--quiet"])
    captured = capsys.readouterr()
    assert code == 0, captured.out
    lines = captured.err.splitlines()
    assert [re.sub(r"\d+", "N", line) for line in lines] == [
        "conform: vectors N traces, N differ, N failed (done, N s)",
        "conform: fuzz N traces, N differ, N failed (done, N s)",
        "conform: explore N traces, N differ, N failed (done, N s)"], captured.err
    assert "conform:" not in captured.out and captured.out.rstrip().endswith("AGREES")
