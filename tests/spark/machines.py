"""The machines the Spark tests run, and the generated fleet they run on.

The test-only pairs algorithms always; every real machine whose package is importable (so
the tests grow as ApproximateTime and the batchers land), each with a config that suits the
generated robot fleet. The fleet gets ``kind`` and ``poll`` columns for the rate-aware
batcher; the other machines ignore them.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import attrs
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from tests.pairs_toy import PAIRS, TIMED_PAIRS, PairsConfig
from timealign import registry
from timealign.algorithm import Algorithm
from timealign.spark.generate import Plan, generate


@attrs.frozen
class Case:
    name: str
    algorithm: Algorithm[Any, Any, Any, Any]
    config: Any
    clocked: bool


# The vector format's `config` objects, tuned to the fleet.
REAL_CONFIGS: dict[str, dict[str, Any]] = {
    "approximate_time": {"topics": ["camera", "lidar", "imu"], "queue_size": 30,
                         "max_interval_duration": 40_000_000},
    "event_time_batcher": {"batching_window": 100_000_000, "max_message_delay": 50_000_000},
    "rate_aware_batcher": {"batch_length_s": 0.5},
}
KINDS = {"camera": "area_detector", "lidar": "detector_events", "imu": "log"}
POLL_NS = 100_000_000


def _real() -> list[Case]:
    found = []
    for name, raw in REAL_CONFIGS.items():
        try:
            algorithm = registry.get(name)
        except (ImportError, ValueError):
            continue  # not landed on this branch yet
        found.append(Case(name, algorithm, algorithm.codec.config_from_json(raw),
                          algorithm.feeding.clocked))
    return found


CASES: list[Case] = [
    Case("pairs", PAIRS, PairsConfig(window=3_000_000), False),
    Case("timed_pairs", TIMED_PAIRS, PairsConfig(window=3_000_000, timeout=20_000_000), True),
    *_real(),
]


def make_fleet(folder: Path, plan: Plan) -> Path:
    """Generate a fleet and add the rate-aware batcher's `kind` and `poll` columns."""
    generate(plan, folder)
    # Spark's file source takes new files in modification-time order; give the files
    # distinct, ascending times (a minute apart, in the past) so micro-batches are
    # deterministic and copies made with `shutil.copy2` keep that order.
    base = time.time_ns() - 3_600 * 10**9
    for number, path in enumerate(sorted(folder.glob("*.parquet"))):
        table = pq.read_table(path)
        kinds = pa.array([KINDS[t] for t in table.column("topic").to_pylist()], pa.string())
        polls = pc.divide(table.column("arrival"), pa.scalar(POLL_NS, pa.int64()))
        pq.write_table(table.append_column("kind", kinds).append_column("poll", polls), path)
        stamp = base + number * 60 * 10**9
        os.utime(path, ns=(stamp, stamp))
    return folder
