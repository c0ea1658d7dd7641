"""One local SparkSession for the whole Spark part of the suite, and small shared data.

Every test under ``tests/spark/`` is marked ``spark``. The Python workers must import this
repository's ``tests`` package (the test-only algorithms live there), so the repository
root is put on ``PYTHONPATH`` before the JVM starts.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from timealign.spark.generate import Plan

if TYPE_CHECKING:  # pyspark is imported once the environment is set (spark below)
    from pyspark.sql import SparkSession

ROOT = Path(__file__).resolve().parents[2]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ["PYSPARK_PYTHON"] = sys.executable
    paths = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    from timealign.spark.session import build_session

    session = build_session("local[2]", "timealign-tests")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """12 robots, 3 s, 3 files (about 5,000 rows), with `kind` and `poll` columns."""
    from tests.spark.machines import make_fleet

    return make_fleet(tmp_path_factory.mktemp("fleet"), Plan(robots=12, seconds=3.0, seed=7,
                                                              files=3))


@pytest.fixture(scope="session")
def batch_output(spark: SparkSession, fleet: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``batch_output(case)``: the folder of the batch job's tables for ``case`` over the
    fleet, computed once per session and shared by the tests that read it."""
    from timealign.spark.batch import run_batch

    done: dict[str, Path] = {}

    def output(case: Any) -> Path:
        if case.name not in done:
            folder = tmp_path_factory.mktemp(f"batch-{case.name}")
            run_batch(spark, case.algorithm, case.config, str(fleet), str(folder))
            done[case.name] = folder
        return done[case.name]

    return output
