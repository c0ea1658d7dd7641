"""Shared test set-up: Hypothesis profiles, the Spark tests' dependency gate, assertions.

``ci`` (the default) is derandomized with no deadline and no example database, so a run is
repeatable; ``nightly`` explores far more. Choose with ``--hypothesis-profile=nightly`` or
``HYPOTHESIS_PROFILE=nightly``.

Without an extra (``pip install timealign[dev]`` only) the tests that need it (the Spark and
ROS bag tests without ``spark``, the pictures without ``plot``) are not collected, and the
report header says why, instead of failing at collection. The helper modules of the tests
are registered for pytest's assertion rewriting, so their ``assert`` statements run under
``python -O`` too (test modules are rewritten anyway).
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

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


#: Per extra of pyproject.toml: the modules it brings, and the test folders and files that
#: need it. Without an extra (``pip install timealign[dev]`` only) its tests are not
#: collected and the report header names the extra and the missing modules: the suite
#: skips them with a reason instead of failing at collection.
EXTRAS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "spark": (("pyspark", "pyarrow", "pandas", "numpy", "rosbags"),
              ("spark", "rosbag", "mqtt/test_mq_live.py", "mqtt/test_mq_stop_live.py",
               "mqtt/test_mq_verify.py")),
    "plot": (("matplotlib", "markdown"),
             ("plot", "spark/test_spark_pictures.py", "test_docs_site_browser.py")),
    "mqtt": (("paho",), ("mqtt/test_mq_live.py", "mqtt/test_mq_stop_live.py",
                         "mqtt/test_mq_live_receiver.py")),
}
MISSING = {extra: missing for extra, (modules, _) in EXTRAS.items()
           if (missing := _missing(modules))}
SPARK_MISSING = MISSING.get("spark", [])
IGNORED = tuple(Path(__file__).parent / path for extra in MISSING for path in EXTRAS[extra][1])


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    """Leave out the tests of a missing extra, even when named on the command line."""
    if any(collection_path == path or path in collection_path.parents for path in IGNORED):
        return True
    return None


def pytest_report_header() -> str | None:
    if not MISSING:
        return None
    return "; ".join(f"{extra} tests skipped ({', '.join(EXTRAS[extra][1])}): the "
                     f"'{extra}' extra is not installed (missing {', '.join(missing)})"
                     for extra, missing in MISSING.items())


pytest.register_assert_rewrite(
    "tests.approximate_time.literal_model", "tests.approximate_time.support",
    "tests.event_time_batcher.support", "tests.event_time_batcher.literal_model",
    "tests.rate_aware_batcher.literal_model", "tests.rate_aware_batcher.support",
    "tests.spark.expected", "tests.spark.machines",
)
