"""The Spark job's Python workers run the same build of the fast paths as the driver.

The UDFs run ``Algorithm.fast_path()`` in the workers, which import the installed package:
where the compiled build is installed, the workers run it (and ``TIMEALIGN_PURE=1`` in the
driver's environment reaches them too). A package shipped to executors as a zip runs the
pure fast paths (``tests/test_native_build.py`` imports one).
"""

from __future__ import annotations

from typing import Any

from timealign import native


def _worker_builds(_: Any) -> tuple[str, dict[str, str]]:
    from timealign import native

    return native.build(), native.describe()


def test_spark_workers_run_the_drivers_build(spark: Any) -> None:
    """The workers step the build the driver reports: compiled where it is installed."""
    seen = spark.sparkContext.parallelize([0, 1], 2).map(_worker_builds).collect()
    assert seen == [(native.build(), native.describe())] * 2
