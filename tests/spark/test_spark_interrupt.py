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
    # SIGINT back to its default in the child: a test run started in the background (`make
    # test-cluster &`) inherits SIGINT ignored, and Python then never raises KeyboardInterrupt
    return subprocess.Popen([sys.executable, "-m", "timealign", *argv], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=_default_sigint)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _read_until(process: subprocess.Popen[str], marker: str,
                limit: float = 600.0) -> list[str]:
    """Read stderr until a line holding ``marker``; return the lines read."""
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
    return before


def _interrupt_after(process: subprocess.Popen[str], marker: str,
                     limit: float = 600.0, presses: int = 1) -> tuple[list[str], str]:
    """Read stderr until a line holding ``marker``, then SIGINT the process (as Ctrl-C
    does: the whole foreground group) ``presses`` times; return the lines before it and
    the rest."""
    before = _read_until(process, marker, limit)
    for press in range(presses):
        if press:
            time.sleep(0.3)
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


def _left(process: subprocess.Popen[str], wait: float = 30.0) -> list[str]:
    """The processes of the command's session still running (a JVM it started included;
    zombies, which run nothing, are not counted), after giving them ``wait`` seconds to
    end (a JVM ends on its own once its parent's pipe closes)."""
    deadline = time.monotonic() + wait
    while True:
        running = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rpartition(")")[2].split()
            except OSError:
                continue
            if len(fields) > 3 and fields[3] == str(process.pid) and fields[0] != "Z":
                running.append(stat.parent.name)
        if not running or time.monotonic() > deadline:
            return running
        time.sleep(1)


@pytest.mark.parametrize("presses", [1, 2])
def test_cli_r2_ctrl_c_while_spark_starts(tmp_path: Path, presses: int) -> None:
    """CLI-R2: SIGINT while the session starts (SP-R40's "starting Spark" line) used to end
    the command and leave its JVM running with no parent, holding stderr open (the test
    waited forever). Now the interrupt is held until Spark is up, then the session stops:
    exit 130, the waiting line and the one line, and no process left; a second Ctrl-C ends
    the start-up at once, also with nothing left."""
    fleet = _fleet(tmp_path, 2_000)
    out = tmp_path / "out"
    process = _start(["run", "approximate_time", "--input", str(fleet), "--output",
                      str(out), "--config", CONFIG, "--master", "local[2]"])
    _, rest = _interrupt_after(process, "starting Spark", presses=presses)
    assert process.returncode == 130, rest
    lines = [line for line in rest.strip().splitlines() if line]
    assert lines[-1] == "timealign: interrupted", rest
    assert "Traceback" not in rest, rest
    assert _left(process) == [], "a process of the command is still running"
    assert not (out / "groups").exists() and not (out / "outcomes").exists()


def test_cli_r2_sp_r33_ctrl_c_of_a_live_stream_and_quiet(tmp_path: Path) -> None:
    """CLI-R2, SP-R81: SIGINT to a live `stream` (no --available-now) after its first
    micro-batch: exit 130 (it used to exit 0 with four tracebacks), two lines (the stop said
    when the signal came, then `interrupted` after the summary), no traceback, no
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
    assert rest.strip().splitlines() == [
        "[timealign stream] Ctrl-C: stopping after the micro-batch that is running, if any; "
        "then the summary (SP-R81)", "timealign: interrupted"], rest
    assert _no_partial_tables(out) == []
    quiet = _start([*common, "--output", str(tmp_path / "quiet"), "--checkpoint",
                    str(tmp_path / "ck-quiet"), "--available-now", "--quiet"])
    printed, err = quiet.communicate(timeout=600)
    assert quiet.returncode == 0, err
    assert err == "", err
    assert "stream stopped after" in printed


def test_sp_r54_a_file_changed_while_an_unbounded_stream_runs_stops_it(tmp_path: Path) -> None:
    """SP-R54 through the command line: a live `stream` (no --available-now) whose taken file
    is appended to stops within seconds, exit 3, naming the file, with no traceback and no
    half-written batch; its process tree ends."""
    fleet = _fleet(tmp_path, 20_000)
    out, checkpoint = tmp_path / "out", tmp_path / "ck"
    process = _start(["stream", "approximate_time", "--source", str(fleet), "--config", CONFIG,
                      "--master", "local[2]", "--output", str(out), "--checkpoint",
                      str(checkpoint), "--trigger-seconds", "1"])
    try:
        _read_until(process, "[timealign stream] batch 0")
        changed = sorted(fleet.rglob("*.parquet"))[0]
        with changed.open("ab") as appended:
            appended.write(b"rows a recorder appended after the stream took the file")
        _, rest = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 3, rest
    assert changed.name in rest and "SP-R45" in rest, rest
    assert "Traceback" not in rest, rest
    assert _no_partial_tables(out) == []
    assert _left(process) == [], "a process of the command is still running"
