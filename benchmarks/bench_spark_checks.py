"""What the batch job's row checks cost: its census of the input (SP-R22 over hashes of
(source, id), SP-D10; the rows per source) and the count reconciliation (SP-D6), next to the
exact duplicate-id check on the two strings (what verification runs, and the census's
fallback).

A fleet is generated, the batch job runs once on ``local[2]``, then each check is timed
on its own over the same input and tables (best of ``--repeat`` runs, after a warm-up).

    python benchmarks/bench_spark_checks.py                  # 1M messages, 100 sources
    python benchmarks/bench_spark_checks.py --messages 200000 --robots 10
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from timealign import registry
from timealign.spark.batch import run_batch
from timealign.spark.census import Census, check_unique_ids
from timealign.spark.generate import Plan, generate
from timealign.spark.schema import ColumnMap, read_input
from timealign.spark.session import build_session

CONFIG = {"topics": ["camera", "lidar", "imu"], "queue_size": 30,
          "max_interval_duration": 40_000_000}


def best(action: Callable[[], object], repeat: int) -> float:
    action()  # warm-up: JIT, file listing cache
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--robots", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    spark = build_session("local[2]", "bench checks")
    algorithm = registry.get("approximate_time")
    config = algorithm.codec.config_from_json(CONFIG)
    with tempfile.TemporaryDirectory() as folder:
        data, out = Path(folder) / "fleet", Path(folder) / "out"
        rows_written = generate(Plan.for_messages(args.messages, args.robots), data)
        started = time.perf_counter()
        run_batch(spark, algorithm, config, str(data), str(out))
        job = time.perf_counter() - started
        rows = read_input(spark, str(data), "parquet", ColumnMap())
        outcomes = spark.read.parquet(str(out / "outcomes"))
        census = Census(rows)
        taken = best(census.check_input, args.repeat)
        counts = best(lambda: census.check_outcomes(outcomes), args.repeat)
        census.close()
        exact = best(lambda: check_unique_ids(rows), args.repeat)
    print(f"{rows_written} rows, {args.robots} sources, local[2]: whole job {job:.1f} s; "
          f"census {taken:.2f} s ({taken / job:.1%} of the job); count reconciliation "
          f"{counts:.2f} s; exact duplicate check on the strings {exact:.2f} s")
    spark.stop()


if __name__ == "__main__":
    main()
