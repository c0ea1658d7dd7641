"""Shared test set-up: Hypothesis profiles, the Spark tests' dependency gate, assertions.

``ci`` (the default) is derandomized with no deadline and no example database, so a run is
repeatable; ``nightly`` explores far more. Choose with ``--hypothesis-profile=nightly`` or
``HYPOTHESIS_PROFILE=nightly``.

Without the ``spark`` extra (``pip install timealign[dev]`` only) the Spark and ROS bag
tests (``tests/spark``, ``tests/rosbag``) are not collected, and the report header says
why, instead of failing at collection. The helper modules of the tests are registered for
pytest's assertion rewriting, so their ``assert`` statements run under ``python -O`` too
(test modules are rewritten anyway).
"""

from __future__ import annotations

import importlib
import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    parent=settings.get_profile("ci"),
    derandomize=True,
    deadline=None,
    database=None,
    print_blob=True,
    max_examples=100,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "nightly",
    deadline=None,
    max_examples=5000,
    stateful_step_count=100,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def _missing(modules: tuple[str, ...]) -> list[str]:
    missing = []
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    return missing


#: What the Spark adapter and its tests import (the ``spark`` extra of pyproject.toml).
SPARK_MISSING = _missing(("pyspark", "pyarrow", "pandas", "numpy", "rosbags"))
collect_ignore = ["spark", "rosbag"] if SPARK_MISSING else []


def pytest_report_header() -> str | None:
    if SPARK_MISSING:
        return (f"Spark and ROS bag tests skipped: the 'spark' extra is not installed "
                f"(missing {', '.join(SPARK_MISSING)})")
    return None


pytest.register_assert_rewrite(
    "tests.approximate_time.literal_model", "tests.approximate_time.support",
    "tests.event_time_batcher.support", "tests.event_time_batcher.literal_model",
    "tests.rate_aware_batcher.literal_model", "tests.rate_aware_batcher.support",
    "tests.spark.expected", "tests.spark.machines",
)
