"""The console of a job speaks for the job (spec/spark.md SP-R33): Spark's lines left out,
one progress line with the fraction and the time left, a summary at the end of every job."""

from __future__ import annotations

import io
import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tests.spark.machines import REAL_CONFIGS
from timealign.cli import main
from timealign.progress import Progress
from timealign.spark.progress import PHASES, StageWatch, clock, estimate
from timealign.spark.session import NOISE, log_level, quiet_py4j

SPARK_LINES = (
    "WARNING: Using incubator modules: jdk.incubator.vector",
    "Using Spark's default log4j profile: org/apache/spark/log4j2-defaults.properties",
    'Setting default log level to "WARN".',
    "To adjust logging level use sc.setLogLevel(newLevel). For SparkR, use setLogLevel(x).",
    "26/11/26 17:08:52 WARN NativeCodeLoader: Unable to load native-hadoop library",
    "INFO:pyspark: Streaming TransformWithStateInPandas Python worker started",
    "\r[Stage 0:>                                                          (0 + 1) / 1]",
    "                                                                                ",
)


def test_sp_r33_spark_noise_is_recognised_and_the_job_lines_are_not() -> None:
    """SP-R33: the banner, log4j lines and worker notices are noise; the job's are not."""
    assert all(NOISE.match(line) for line in SPARK_LINES)
    for line in ("[timealign run]  40%  replay (2/6), 12 s elapsed, about 18 s left",
                 "rows 19972  sources 4  groups 1427", "timealign: error: --input: ..."):
        assert NOISE.match(line) is None
    assert log_level(False, False, {}) == "OFF" and log_level(True, False, {}) == "WARN"
    assert log_level(False, True, {}) == "ERROR"
    assert log_level(False, False, {"spark.log.level": "info"}) == "INFO"


def test_cli_r2_py4j_records_never_reach_stderr_unless_verbose() -> None:
    """CLI-R2, SP-R33: Ctrl-C during a call into the JVM makes py4j log on the root logger
    (which installs a root handler) and on ``py4j.clientserver`` (tracebacks of the broken
    connection). Neither reaches a root handler once quieted; ``--verbose`` lets both through.
    (CI caught the second route: a root filter does not see records propagated from a child.)"""
    root, py4j = logging.getLogger(), logging.getLogger("py4j")
    seen: list[str] = []

    class Names(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.name)

    handler = Names()
    root.addHandler(handler)
    propagate = py4j.propagate
    try:
        quiet_py4j(False)
        logging.getLogger("py4j.clientserver").error("Exception occurred while shutting down")
        logging.getLogger("py4j.java_gateway").exception("KeyboardInterrupt")
        logging.getLogger("timealign.other").error("kept")
        assert seen == ["timealign.other"]
        quiet_py4j(True)
        logging.getLogger("py4j.clientserver").error("Exception occurred while shutting down")
        assert seen == ["timealign.other", "py4j.clientserver"]
    finally:
        root.removeHandler(handler)
        quiet_py4j(True)
        py4j.propagate = propagate


def test_sp_r33_progress_estimate_and_line() -> None:
    """SP-R33: phases weigh the same; the time left scales the elapsed time."""
    assert estimate(0, 4, 0, 0, 10.0) == (0.0, None)
    assert estimate(1, 4, 1, 2, 30.0) == (0.375, 50.0)
    assert estimate(3, 4, 2, 2, 40.0) == (1.0, 0.0)
    assert clock(None) == "?" and clock(42.4) == "42 s" and clock(185) == "3 min 05 s"
    assert clock(3720) == "1 h 02 min"


class _Tracker:
    def getActiveStageIds(self) -> list[int]:
        return [3]

    def getStageInfo(self, _stage: int) -> object:
        return type("Info", (), {"numCompletedTasks": 1, "numTasks": 4})()


class _Context:
    def statusTracker(self) -> _Tracker:
        return _Tracker()


def test_sp_r33_one_progress_line_per_change() -> None:
    """SP-R33: the line names the fraction, the phase and the time left."""
    out = io.StringIO()
    session = type("Session", (), {"sparkContext": _Context()})()
    progress = StageWatch(session, "run", Progress(True), stream=out)
    assert "starting" in progress.line()
    with progress.phase("replay"):
        line = progress.line()
    assert line.startswith("[timealign run]  21%  replay (2/6), ")  # (1 + 1/4) / 6
    assert line.endswith(" left") and "about" in line and len(PHASES) == 6
    fresh = StageWatch(session, "run", Progress(True), stream=out)
    with fresh.phase("census"):  # no task finished yet: no "about ? left"
        fresh.tasks = lambda: (0, 0)  # type: ignore[method-assign]
        line = fresh.line()
    assert line.startswith("[timealign run]   0%  census (1/6), ")
    assert line.endswith("time left not known yet") and "?" not in line


def test_sp_r40_progress_never_goes_back_and_keeps_a_heartbeat(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """SP-R40: a phase's next stage starting at 0 of its tasks does not take the fraction
    (nor the basis of the estimate) back: 25 % then 17 % was shown; off a terminal a line
    is written at least every HEARTBEAT seconds while nothing changes; a command without
    known phases shows its elapsed time and Spark's tasks."""
    import time

    from timealign.spark import progress as module

    session = type("Session", (), {"sparkContext": _Context()})()
    watch = StageWatch(session, "run", Progress(True), stream=io.StringIO())
    with watch.phase("replay"):
        watch.tasks = lambda: (2, 4)  # type: ignore[method-assign]
        assert watch.line().startswith("[timealign run]  25%  replay")
        watch.tasks = lambda: (0, 8)  # type: ignore[method-assign]  # the next stage
        assert watch.line().startswith("[timealign run]  25%  replay")
    monkeypatch.setattr(module, "HEARTBEAT", 0.2)
    out = io.StringIO()
    quiet = StageWatch(session, "verify", Progress(True, every=0.05), stream=out,
                       phases=None, doing="checking")
    with quiet:
        time.sleep(0.9)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 3, lines  # the same task count, yet a line every 0.2 s
    assert lines[0].startswith("[timealign verify] checking, 0 s elapsed (Spark: 1/4 tasks)")


# A job in a process of its own, its JVM started fresh: make test-cluster.
@pytest.mark.cluster
def test_sp_r33_run_console_holds_the_job_lines_only(fleet: Path, tmp_path: Path) -> None:
    """SP-R33: a fresh `timealign run` prints no Spark line on stderr, only its progress
    lines, then its summary with the verdict of SP-R31 on stdout."""
    done = subprocess.run(
        [sys.executable, "-m", "timealign", "run", "approximate_time", "--input", str(fleet),
         "--output", str(tmp_path / "out"), "--config",
         json.dumps(REAL_CONFIGS["approximate_time"])],
        capture_output=True, text=True, timeout=900, check=False,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert all(line.startswith("[timealign run]") for line in lines), lines
    assert "every outcome is normal for approximate_time" in done.stdout


def test_sp_r33_available_now_stream_ends_with_its_summary(
        spark: SparkSession, fleet: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R33: `stream --available-now` prints the summary of its tables when it stops,
    accounting for every row read: settled plus held (pending) make the rows read (SP-D1)."""
    code = main(["stream", "approximate_time", "--source", str(fleet), "--output",
                 str(tmp_path / "out"), "--checkpoint", str(tmp_path / "cp"), "--config",
                 json.dumps(REAL_CONFIGS["approximate_time"]), "--available-now", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    assert "stream stopped after" in out and "micro-batch(es)" not in out
    assert out.rstrip().splitlines()[-1] == "every outcome is normal for approximate_time"
    found = re.search(r"^rows (\d+) read = (\d+) settled \+ (\d+) held \(pending", out, re.M)
    assert found is not None, out
    read, settled, held = map(int, found.groups())
    assert read == settled + held == spark.read.parquet(str(fleet)).count() and held > 0
    assert f"  pending (held): {held}  " in out
    # SP-R32: the stream's manifest names what it was given, its end and its counts
    manifest = json.loads((tmp_path / "out" / "_timealign.json").read_text(encoding="utf-8"))
    assert manifest["command"] == "stream" and manifest["run"]["input"] == str(fleet)
    assert manifest["ended"] is not None and manifest["counts"]["rows"] == settled
    assert (manifest["counts"]["read"], manifest["counts"]["held"]) == (read, held)
