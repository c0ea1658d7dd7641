"""The driver alone over one robot's rows: a batch of columns mapped at once (DRV-R13)
against the same rows fed as records (issue 35, target 3); no Spark, no accounting.

One robot of the Spark benchmark's fleet (``timealign.spark.generate``), in batches of
10,000 rows (Spark's default ``maxRecordsPerBatch``), driven by each algorithm's fast path:

- records: what ``Driver.feed_columns`` did for a machine without a columnar mapping (the
  batchers before DRV-R13): a ``Record`` per row (``records_of``), then ``Driver.feed``,
  keeping the steps with outputs;
- columns: ``Driver.feed_columns`` (the columns checked at once, the machine's
  ``inputs_from_columns``, the ticks fired between its inputs, a poll cut by a batch held).

The rate-aware batcher runs twice: on the fleet's rows as the Spark benchmark generates them
(no kind, no poll: every row a poll of its own, RB-D22) and with the kinds and polls of
``tests/spark/machines.py`` (a poll per 100 ms of arrivals, about 20 rows each). Printed:
CPU microseconds per row (one core, best of five, alternated), the ratio, the load average.

    .venv/bin/python benchmarks/bench_drive_columns.py [--seconds S]
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from timealign import registry
from timealign.algorithm import Columns, records_of
from timealign.drive import Driver
from timealign.spark.generate import Plan, generate

BATCH = 10_000
ROUNDS = 5
CONFIGS: dict[str, dict[str, Any]] = {  # tests/spark/machines.py's, tuned to the fleet
    "approximate_time": {"topics": ["camera", "lidar", "imu"], "queue_size": 30,
                         "max_interval_duration": 40_000_000},
    "event_time_batcher": {"batching_window": 100_000_000, "max_message_delay": 50_000_000},
    "rate_aware_batcher": {"batch_length_s": 0.5},
}
KINDS = {"camera": "area_detector", "lidar": "detector_events", "imu": "log"}
POLL_NS = 100_000_000


def robot_columns(seconds: float, polled: bool) -> list[Columns]:
    """One robot's rows in arrival order, as batches of columns of values."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "fleet"
        generate(Plan(robots=1, seconds=seconds, files=1), out)
        table = pq.read_table(next(out.glob("*.parquet")))
    ids, topics, stamps, arrivals = (table[name].to_pylist()
                                     for name in ("id", "topic", "stamp", "arrival"))
    kinds = [KINDS[topic] for topic in topics] if polled else None
    polls = [arrival // POLL_NS for arrival in arrivals] if polled else None
    return [(ids[a:a + BATCH], topics[a:a + BATCH], stamps[a:a + BATCH],
             arrivals[a:a + BATCH], None if kinds is None else kinds[a:a + BATCH],
             None if polls is None else polls[a:a + BATCH])
            for a in range(0, len(ids), BATCH)]


def cpu(work: Callable[[], Any]) -> float:
    gc.collect()
    gc.disable()
    try:
        started = time.process_time()
        work()
        return time.process_time() - started
    finally:
        gc.enable()


def measure(name: str, batches: list[Columns], label: str) -> None:
    algorithm = registry.get(name).fast_path()
    config = algorithm.codec.config_from_json(CONFIGS[name])
    rows = sum(len(columns[0]) for columns in batches)

    def by_records() -> list[Any]:
        driver = Driver(algorithm, config)
        steps = [step for columns in batches
                 for step in driver.feed(records_of(columns)) if step[2]]
        return steps + list(driver.finish())

    def by_columns() -> list[Any]:
        driver = Driver(algorithm, config)
        steps = [step for columns in batches for step in driver.feed_columns(columns, True)]
        return steps + list(driver.finish())

    assert by_records() == by_columns()  # DRV-R13, before timing anything
    best = {"records": math.inf, "columns": math.inf}
    for _ in range(ROUNDS):
        best["records"] = min(best["records"], cpu(by_records))
        best["columns"] = min(best["columns"], cpu(by_columns))
    per_row = {way: seconds / rows * 1e6 for way, seconds in best.items()}
    print(f"  {label:<38} {rows:>9,} rows  records {per_row['records']:5.2f} us/row  "
          f"columns {per_row['columns']:5.2f} us/row  "
          f"({best['records'] / best['columns']:.2f}x)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0)
    args = parser.parse_args()
    print(f"driver loop, one robot ({args.seconds:.0f} s), batches of {BATCH:,}; CPU of one "
          f"core, best of {ROUNDS}; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores", flush=True)
    plain = robot_columns(args.seconds, polled=False)
    measure("approximate_time", plain, "approximate_time")
    measure("event_time_batcher", plain, "event_time_batcher")
    measure("rate_aware_batcher", plain, "rate_aware_batcher (no poll: a row each)")
    measure("rate_aware_batcher", robot_columns(args.seconds, polled=True),
            "rate_aware_batcher (polls of 100 ms)")
    print(f"  load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
