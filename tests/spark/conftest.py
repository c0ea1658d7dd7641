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

import pytest

ROOT = Path(__file__).resolve().parents[2]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ["PYSPARK_PYTHON"] = sys.executable
    paths = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    from timealign.spark.session import build_session

    session = build_session("local[2]", "timealign-tests")
    yield session
    session.stop()
