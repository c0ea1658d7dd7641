"""Ctrl-C of a live Spark job, and `stream --quiet`, as a user sees them (CLI-R2, SP-R33).

Each test starts the real console entry (`python -m timealign`) in its own process, with
its own JVM, and sends SIGINT once the job is running (after its first progress line):
exit 130, the one line `timealign: interrupted`, no traceback, no partial table left in
`--output`. A JVM per process does not fit the time of `make test`: these run under
`make test-cluster` (marked `cluster`), which CI runs after `make test`.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from timealign.cli import main

pytestmark = pytest.mark.cluster
ROOT = Path(__file__).resolve().parents[2]
CONFIG = json.dumps({"topics": ["camera", "lidar", "imu"], "queue_size": 30,
                     "max_interval_duration": 40_000_000})


def _start(argv: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    return subprocess.Popen([sys.executable, "-m", "timealign", *argv], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _interrupt_after(process: subprocess.Popen[str], marker: str,
                     limit: float = 600.0) -> tuple[list[str], str]:
    """Read stderr until a line holding ``marker``, then SIGINT the process (as Ctrl-C
    does: the whole foreground group); return the lines before it and the rest."""
    assert process.stderr is not None
    before: list[str] = []
    selector = selectors.DefaultSelector()
    selector.register(process.stderr, selectors.EVENT_READ)
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if not selector.select(timeout=5):
            continue
        line = process.stderr.readline()
        if not line:
            break
        before.append(line)
        if marker in line:
            break
    assert before and marker in before[-1], f"the job never started: {before}"
    os.killpg(process.pid, signal.SIGINT)
    _, rest = process.communicate(timeout=180)
    return before, rest


def _fleet(tmp_path: Path, messages: int) -> Path:
    fleet = tmp_path / "fleet"
    assert main(["generate", "--output", str(fleet), "--messages", str(messages),
                 "--robots", "4", "--files", "2"]) == 0
    return fleet


def _no_partial_tables(out: Path) -> list[str]:
    """Paths under ``out`` that are a half-written table: a staging or aside folder of the
    batch job (SP-R21) or Spark's `_temporary` of an unfinished write."""
    if not out.exists():
        return []
    return [str(p) for p in out.rglob("*") if p.name == "_temporary"
            or "-staging-" in p.name or "-previous-" in p.name]


def test_cli_r2_ctrl_c_of_a_live_run(tmp_path: Path) -> None:
    """CLI-R2, SP-R21: SIGINT while `run` replays: exit 130, one line, no traceback (it used
    to print two py4j tracebacks), no table and no staging folder in --output."""
    fleet = _fleet(tmp_path, 400_000)
    out = tmp_path / "out"
    process = _start(["run", "approximate_time", "--input", str(fleet), "--output",
                      str(out), "--config", CONFIG, "--master", "local[2]"])
    # a phase line ("  0%  census"): Spark is working; the first line is now SP-R40's
    # "starting Spark", printed while the session starts
    _, rest = _interrupt_after(process, "%  ")
    assert process.returncode == 130, rest
    assert "Traceback" not in rest and "Exception" not in rest, rest
    assert rest.strip().splitlines() == ["timealign: interrupted"], rest
    assert _no_partial_tables(out) == []
    assert not (out / "groups").exists() and not (out / "outcomes").exists()


def test_cli_r2_sp_r33_ctrl_c_of_a_live_stream_and_quiet(tmp_path: Path) -> None:
    """CLI-R2: SIGINT to a live `stream` (no --available-now) after its first micro-batch:
    exit 130 (it used to exit 0 with four tracebacks), one line, no traceback, no
    half-written batch. SP-R33: `stream --quiet` prints nothing of Spark's or its Python
    workers' on stderr (issue 22 item 19)."""
    fleet = _fleet(tmp_path, 20_000)
    out, checkpoint = tmp_path / "out", tmp_path / "ck"
    common = ["stream", "approximate_time", "--source", str(fleet), "--config", CONFIG,
              "--master", "local[2]"]
    process = _start([*common, "--output", str(out), "--checkpoint", str(checkpoint),
                      "--trigger-seconds", "1"])
    _, rest = _interrupt_after(process, "[timealign stream] batch 0")
    assert process.returncode == 130, rest
    assert "Traceback" not in rest and "Exception" not in rest, rest
    assert rest.strip().splitlines() == ["timealign: interrupted"], rest
    assert _no_partial_tables(out) == []
    quiet = _start([*common, "--output", str(tmp_path / "quiet"), "--checkpoint",
                    str(tmp_path / "ck-quiet"), "--available-now", "--quiet"])
    printed, err = quiet.communicate(timeout=600)
    assert quiet.returncode == 0, err
    assert err == "", err
    assert "stream stopped after" in printed
