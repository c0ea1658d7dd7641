"""The Spark worker's replay loop over one robot's rows: a batch of columns mapped at once
(DRV-R13) against the same rows made records (issue 35, target 3); no Spark, no Arrow.

One robot of the Spark benchmark's fleet (``timealign.spark.generate``), in batches of
10,000 rows (Spark's default ``maxRecordsPerBatch``), run by each algorithm's fast path
twice: with its columnar mapping (``columns``), and with the mapping removed from its
``feeding`` (``records``: ``Driver.feed_columns`` then makes a ``Record`` per row and feeds
those, as it did for the batchers before DRV-R13). Two layers, each measured both ways:

- driver: ``Driver.feed_columns`` over the batches, then ``finish``;
- worker: ``SourceRun.feed_columns`` (the driver plus the accounting and the output rows,
  SP-R6), then ``finish``: the worker's replay without Arrow in and out;
- replay: ``timealign.spark.replay.replay`` over the batches as Arrow record batches (the
  worker's whole Python half, ``columns_from_batches`` in, the combined output out).

The rate-aware batcher runs on the fleet's rows as the Spark benchmark generates them (no
kind, no poll: every row a poll of its own, RB-D22) and with the kinds and polls of
``tests/spark/machines.py`` (a poll per 100 ms of arrivals, about 14 rows each). Printed:
CPU microseconds per row (one core, best of five, alternated), the ratio, the load average.

    .venv/bin/python benchmarks/bench_drive_columns.py [--seconds S]
"""

from __future__ import annotations

import argparse
import collections
import gc
import itertools
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pyarrow as pa
import pyarrow.parquet as pq

from timealign import registry
from timealign.algorithm import Algorithm, Columns
from timealign.drive import Driver
from timealign.spark import schema
from timealign.spark.generate import Plan, generate
from timealign.spark.outcomes import SourceRun
from timealign.spark.replay import CHUNK, columns_from_batches, replay

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the Spark tests' machines
from tests.spark.machines import KINDS, POLL_NS, REAL_CONFIGS

BATCH = 10_000
ROUNDS = 5


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


def arrow_batch(columns: Columns, start: int) -> pa.RecordBatch:
    """A batch of columns as the worker receives it (the input columns, then the order)."""
    ids, topics, stamps, arrivals, kinds, polls = columns
    count = len(ids)
    return pa.RecordBatch.from_pydict({
        "id": pa.array(ids, pa.string()), "topic": pa.array(topics, pa.string()),
        "stamp": pa.array(stamps, pa.int64()), "arrival": pa.array(arrivals, pa.int64()),
        "kind": pa.array(kinds or [None] * count, pa.string()),
        "poll": pa.array(polls or [None] * count, pa.int64()),
        schema.FILE: pa.array(["f"] * count), schema.POSITION: pa.array(
            range(start, start + count), pa.int64())})


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
    columnar = registry.get(name).fast_path()
    ways = {"columns": columnar,
            "records": attrs.evolve(columnar, feeding=attrs.evolve(
                columnar.feeding, inputs_from_columns=None, column_runs=None))}
    config = columnar.codec.config_from_json(REAL_CONFIGS[name])
    rows = sum(len(columns[0]) for columns in batches)

    def driver(algorithm: Algorithm[Any, Any, Any, Any]) -> Callable[[], list[Any]]:
        def run() -> list[Any]:
            driver = Driver(algorithm, config)
            steps = [step for columns in batches for step in driver.feed_columns(columns, True)]
            return steps + list(driver.finish())
        return run

    def worker(algorithm: Algorithm[Any, Any, Any, Any]) -> Callable[[], object]:
        def run() -> object:
            source = SourceRun(algorithm, config, "robot")
            collections.deque(source.feed_columns(batches, CHUNK, typed=True), maxlen=0)
            source.finish()
            return source.rows.take_parts()
        return run

    arrow = [arrow_batch(columns, start) for start, columns in
             zip(itertools.accumulate((len(c[0]) for c in batches), initial=0), batches,
                 strict=False)]

    def replayed(algorithm: Algorithm[Any, Any, Any, Any]) -> Callable[[], object]:
        def run() -> object:
            return list(replay(algorithm, config, "robot",
                               columns_from_batches("robot", iter(arrow))))
        return run

    layers: dict[str, Callable[[Algorithm[Any, Any, Any, Any]], Callable[[], object]]] = {
        "driver": driver, "worker": worker, "replay": replayed}
    for layer, make in layers.items():  # DRV-R13: the same, before timing anything
        assert make(ways["columns"])() == make(ways["records"])(), (name, layer)
    best = {(layer, way): math.inf for layer in layers for way in ways}
    for _ in range(ROUNDS):
        for (layer, way) in best:
            best[layer, way] = min(best[layer, way], cpu(layers[layer](ways[way])))
    for layer in layers:
        records, columns = best[layer, "records"], best[layer, "columns"]
        print(f"  {label:<40} {layer:<6} {rows:>7,} rows  records {records / rows * 1e6:5.2f}"
              f" us/row  columns {columns / rows * 1e6:5.2f} us/row  ({records / columns:.2f}x)",
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
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
