"""SP-D31: a short job's JVMs compile with C1 alone, chosen from the rows the inventory
counted before Spark starts; a user's ``--conf`` replaces the choice. No session is started
here: the settings are what the session is built with (PySpark's launcher passes each of
them to ``spark-submit`` as ``--conf``)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest

from timealign.cli import main
from timealign.errors import EXIT_BAD_INPUT, InvalidInput
from timealign.spark import session
from timealign.spark.generate import Plan, generate
from timealign.spark.session import SHORT_JOB_JIT, SHORT_JOB_ROWS, session_settings

DRIVER, EXECUTOR = "spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"
DRIVER_DEFAULT, EXECUTOR_DEFAULT = (f"spark.{side}.defaultJavaOptions"
                                    for side in ("driver", "executor"))


def test_sp_d31_a_short_local_job_compiles_with_c1_alone() -> None:
    """Below the bound the driver JVM (which runs a local job's tasks) gets C1 alone beside
    the throughput collector; at the bound, and when the rows were not counted, C2 too."""
    short = session_settings("local[2]", {}, rows=2_000)[DRIVER].split()
    assert short == ["-XX:+UseParallelGC", SHORT_JOB_JIT]
    assert SHORT_JOB_JIT == "-XX:TieredStopAtLevel=1"
    for rows in (SHORT_JOB_ROWS, SHORT_JOB_ROWS * 10, None):
        assert session_settings("local[2]", {}, rows=rows)[DRIVER] == "-XX:+UseParallelGC"
    assert SHORT_JOB_JIT in session_settings(None, {}, rows=SHORT_JOB_ROWS - 1)[DRIVER]


def test_sp_d31_a_short_job_on_a_cluster_sets_its_executors_jit() -> None:
    """On a standalone master the executors run the tasks: they get C1 alone too, as the
    JVMs' default options, so that a cluster's own ``extraJavaOptions`` (set by its
    administrators in ``spark-defaults.conf``) still apply, after it; a long job's settings
    name no JVM option (the cluster's own)."""
    short = session_settings("spark://127.0.0.1:7077", {}, rows=10)
    assert short[EXECUTOR_DEFAULT] == short[DRIVER_DEFAULT] == SHORT_JOB_JIT
    assert EXECUTOR not in short and DRIVER not in short
    long = session_settings("spark://127.0.0.1:7077", {}, rows=SHORT_JOB_ROWS)
    assert not {EXECUTOR, DRIVER, EXECUTOR_DEFAULT, DRIVER_DEFAULT} & set(long)


def test_sp_d31_a_users_conf_replaces_the_choice() -> None:
    """``--conf spark.driver.extraJavaOptions=...`` is the JVM's options, whole: the user
    keeps C2 (or anything else) for a short job by saying so."""
    given = {DRIVER: "-XX:+UseParallelGC", EXECUTOR: "-Xss4m"}
    assert session_settings("local[2]", given, rows=10)[DRIVER] == "-XX:+UseParallelGC"
    on_cluster = session_settings("spark://127.0.0.1:7077", {
        EXECUTOR_DEFAULT: "-XX:TieredStopAtLevel=4"}, rows=10)
    assert on_cluster[EXECUTOR_DEFAULT] == "-XX:TieredStopAtLevel=4"


def _run(robots: Path, out: Path) -> list[str]:
    """A per-file ``timealign run`` of ``robots`` into ``out``."""
    return ["run", "approximate_time", "--input", str(robots), "--output", str(out),
            "--config", '{"topics": ["camera", "lidar", "imu"], "queue_size": 30}',
            "--sources-per-file", "--quiet"]


def _sessions_refused(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """The ``rows`` each session start is given from now on; every start is refused (no
    JVM), as a bad ``--master`` is (exit 2)."""
    seen: list[int | None] = []

    def stop(master: Any, app: Any, conf: Any = None, verbose: bool = False,
             rows: int | None = None) -> Any:
        seen.append(rows)
        raise InvalidInput("master", "SP-R39", "stopped by the test", master)

    monkeypatch.setattr(session, "build_session", stop)
    return seen


def test_sp_d31_run_starts_spark_with_the_inventorys_rows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``timealign run`` gives the session the rows its inventory counted (SP-R41) before
    Spark starts; the session is stopped at its start here (no JVM)."""
    robots = tmp_path / "robots"
    rows = generate(Plan(robots=3, seconds=2.0, seed=5, per_robot=True), robots)
    seen = _sessions_refused(monkeypatch)
    assert main(_run(robots, tmp_path / "out")) == EXIT_BAD_INPUT
    assert seen == [rows] and rows > 100


def test_sp_d31_verify_starts_spark_with_the_rows_of_the_inventory_taken_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``timealign verify OUT`` takes the input's inventory again before Spark starts
    (SP-R44) and gives the session the rows it counted, as ``run`` does (issue 42: verify
    kept C2 where the run it checks had C1 alone)."""
    robots = tmp_path / "robots"
    rows = generate(Plan(robots=3, seconds=2.0, seed=5, per_robot=True), robots)
    out = tmp_path / "out"
    assert main(_run(robots, out)) == 0
    seen = _sessions_refused(monkeypatch)
    assert main(["verify", str(out), "--quiet"]) == EXIT_BAD_INPUT
    assert seen == [rows] and rows > 100


def test_sp_d31_the_benchmarks_fixed_cost_has_the_long_jobs_jit() -> None:
    """``bench_spark.py``'s cold table takes a fixed cost (a cold job over a tiny input)
    from each job's CPU to give its marginal CPU per row: for a job at or above the bound
    the tiny job must run with the JIT the long job gets (C2 too), not SP-D31's C1 alone,
    or the marginal cost would carry C2's compilation."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    bench_spark: Any = importlib.import_module("bench_spark")  # a script, not a package
    for master in ("local[2]", "standalone-2"):
        assert bench_spark.jit_conf(master, SHORT_JOB_ROWS - 1) == ()
        given = dict(item.split("=", 1)
                     for item in bench_spark.jit_conf(master, SHORT_JOB_ROWS))
        url = master if master.startswith("local") else "spark://127.0.0.1:7077"
        tiny = session_settings(url, given, rows=2_000)
        for key in (DRIVER_DEFAULT, EXECUTOR_DEFAULT) if url.startswith("spark") else (DRIVER,):
            assert SHORT_JOB_JIT not in tiny[key] and "TieredStopAtLevel=4" in tiny[key]
        if url.startswith("local"):
            assert tiny[DRIVER].startswith("-XX:+UseParallelGC")
    job = {"rows": 2_000_000, "cpu": 47.0, "seconds": 26.8}
    fixed = {"rows": 2_000, "cpu": 25.0, "seconds": 15.0}
    assert bench_spark.marginal(job, fixed) == pytest.approx(22.0 / 1_998_000 * 1e6)
    baseline = {"rows": 2_000_000, "cpu": 5.3, "seconds": 5.2, "load": (1.0, 1.1)}
    table = bench_spark.scale_table(["2M:200"], {("2M:200", "local[2]"): {
        **job, "baseline": baseline, "fixed": fixed, "clock": "12:12", "load": (1.0, 2.1)}},
        {})
    cells = table.splitlines()[2].split(" | ")
    assert cells[3] == "26.8 s" and cells[5] == f"{5.2 / 26.8:.2f}"  # wall, speed-up
    assert cells[6] == f"{5.2 / 26.8 / 2:.2f}"  # parallel efficiency on 2 cores
    assert cells[8] == f"{47.0 / 5.3:.2f}"  # CPU per row over the baseline's
