"""The jobs on a real Spark standalone cluster (SP-R17), run by ``make test-cluster``.

A master and one worker start on 127.0.0.1 from the PySpark installation
(:mod:`tests.spark.standalone`). The executors' Python is an environment that has
pyspark, pyarrow, pandas and numpy only, neither ``timealign`` nor ``attrs``: the jobs must
ship the package and its pure-Python dependency themselves (SP-R17, SP-R34).
``timealign run`` and ``timealign stream --available-now`` run as separate
driver processes with ``--master spark://…`` and must write the same tables as
``local[2]``, row for row after sorting.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from tests.spark.bare import cluster_python
from tests.spark.machines import CASES
from tests.spark.standalone import Cluster, start_cluster
from timealign.spark.streaming import read_table, run_stream

pytestmark = pytest.mark.cluster

CASE = next(c for c in CASES if c.name == "approximate_time")
# A tiny table on a 2-core worker: two shuffle partitions (as local[2]), not 200 (a stream's
# state store keeps one RocksDB instance per partition), executors small and quick.
SMALL = ["--conf", "spark.sql.shuffle.partitions=2", "--conf", "spark.default.parallelism=2",
         "--conf", "spark.executor.memory=1g", "--conf", "spark.ui.enabled=false"]


@pytest.fixture(scope="module")
def executor_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return cluster_python(tmp_path_factory.mktemp("bare") / "venv")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with start_cluster(tmp_path_factory.mktemp("cluster-logs"), cores=2, memory="1g") as up:
        yield up


def driver(cluster: Cluster, python: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    """``timealign ARGS --master URL`` as its own driver process, executors on ``python``
    (no PYTHONPATH: nothing of this checkout reaches the executors but the shipped zip)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update({"PYSPARK_PYTHON": str(python), "SPARK_LOCAL_IP": "127.0.0.1"})
    return subprocess.run(
        [sys.executable, "-m", "timealign", *args, "--master", cluster.url, "--quiet", *SMALL,
         "--config", json.dumps(CASE.algorithm.codec.config_to_json(CASE.config))],
        env=env, capture_output=True, text=True, timeout=600, check=False)


def rows(frame: Any) -> list[tuple[Any, ...]]:
    """Every column of every row, sorted (ids as tuples)."""
    return sorted((tuple(tuple(v) if isinstance(v, list) else v for v in r)
                   for r in frame.select(*sorted(frame.columns)).collect()), key=repr)


def test_sp_r17_executor_python_lacks_timealign(executor_python: Path) -> None:
    """SP-R17, SP-R34: the executors' Python has the data libraries but cannot import
    timealign nor attrs."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    ok = subprocess.run([str(executor_python), "-c", "import pyspark, pyarrow, pandas, numpy"],
                        env=env, capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stderr
    for module in ("timealign", "attrs", "attr"):
        missing = subprocess.run([str(executor_python), "-c", f"import {module}"], env=env,
                                 capture_output=True, text=True, check=False)
        assert f"No module named '{module}'" in missing.stderr


def test_sp_r17_cluster_run_equals_local(spark: SparkSession, fleet: Path, batch_output: Any,
                                         cluster: Cluster, executor_python: Path,
                                         tmp_path: Path) -> None:
    """SP-R17, SP-I2: `timealign run --master spark://…` on a standalone cluster whose
    executors lack timealign writes the same tables as the local[2] run. SP-D31: the run is
    short, so its executors were started with C1 alone (the worker writes each executor's
    command at the head of its stderr)."""
    before = set(cluster.logs.glob("worker-*/app-*"))
    done = driver(cluster, executor_python, ["run", CASE.name, "--input", str(fleet),
                                             "--output", str(tmp_path / "out")])
    assert done.returncode == 0, done.stderr[-3000:]
    assert "no loss" in done.stdout
    commands = [line for app in set(cluster.logs.glob("worker-*/app-*")) - before
                for stderr in app.glob("*/stderr")
                for line in stderr.read_text(errors="replace").splitlines()
                if line.startswith("Spark Executor Command:")]
    assert commands and all("-XX:TieredStopAtLevel=1" in line for line in commands), commands
    local = batch_output(CASE)
    for table in ("groups", "outcomes"):
        got = rows(spark.read.parquet(str(tmp_path / "out" / table)))
        assert got == rows(spark.read.parquet(str(local / table)))
        assert len(got) > 100


def test_sp_r17_spark_submit_form_ships_the_zip(spark: SparkSession, fleet: Path,
                                                batch_output: Any, cluster: Cluster,
                                                executor_python: Path, tmp_path: Path) -> None:
    """SP-R17: the README's `spark-submit --py-files timealign.zip timealign_submit.py run …`
    (files written by `python -m timealign.spark.ship`) runs on the cluster from the zip
    alone (the driver's Python is the bare one too) and writes the local[2] tables; SP-R33:
    with the shipped log settings, none of Spark's start-up log lines reach stderr."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update({"PYSPARK_PYTHON": str(executor_python), "SPARK_LOCAL_IP": "127.0.0.1"})
    made = subprocess.run([sys.executable, "-m", "timealign.spark.ship", str(tmp_path / "ship")],
                          env=env, capture_output=True, text=True, check=True)
    archive, entry, log_config = made.stdout.split()
    submit = Path(sys.executable).parent / "spark-submit"
    done = subprocess.run(
        [str(submit), "--master", cluster.url,
         "--driver-java-options", f"-Dlog4j2.configurationFile={log_config}",
         *SMALL[2:], "--conf", f"spark.pyspark.python={executor_python}",  # SP-R34: the
         # shuffle partitions are the job's choice, as for `run`
         "--conf", f"spark.pyspark.driver.python={executor_python}",
         "--py-files", archive, entry, "run", CASE.name, "--input", str(fleet),
         "--output", str(tmp_path / "out"), "--quiet",
         "--config", json.dumps(CASE.algorithm.codec.config_to_json(CASE.config))],
        env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not re.search(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d (INFO|WARN) |^Using Spark's default "
                         "log4j profile", done.stderr, re.M), done.stderr[:3000]
    local = batch_output(CASE)
    for table in ("groups", "outcomes"):
        assert rows(spark.read.parquet(str(tmp_path / "out" / table))) == \
            rows(spark.read.parquet(str(local / table)))


def test_sp_r17_cluster_stream_equals_local(spark: SparkSession, fleet: Path,
                                            cluster: Cluster, executor_python: Path,
                                            tmp_path: Path) -> None:
    """SP-R17, SP-I3: `timealign stream --available-now --master spark://…` on the cluster
    writes the same tables as the same stream on local[2]."""
    done = driver(cluster, executor_python, [
        "stream", CASE.name, "--source", str(fleet), "--output", str(tmp_path / "out"),
        "--checkpoint", str(tmp_path / "checkpoint"), "--available-now"])
    assert done.returncode == 0, done.stderr[-3000:]
    run_stream(spark, CASE.algorithm, CASE.config, str(fleet), str(tmp_path / "local"),
               str(tmp_path / "local-checkpoint"), available_now=True, report=False)
    for table in ("groups", "outcomes"):
        got = rows(read_table(spark, str(tmp_path / "out"), table))
        assert got == rows(read_table(spark, str(tmp_path / "local"), table))
        assert len(got) > 100
