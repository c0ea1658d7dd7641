"""The Spark worker's Python half in process, layer by layer (issue 26); no JVM.

One robot of the Spark benchmark's fleet (``timealign.spark.generate``, ApproximateTime
over three topics) as the Arrow batches a worker receives (``id``, ``topic``, ``stamp``,
``arrival``, ``kind``, ``poll`` and the order columns), replayed by what the worker runs
(:func:`timealign.spark.replay.columns_from_batches` then
:func:`timealign.spark.replay.replay`, the combined output built as Arrow batches), next to
the layers under it, each measured alone on the same rows (CPU time of one core, best of
five, alternated):

1. the bare fast step over messages built beforehand (the floor);
2. + the row mapping and the driver: :meth:`timealign.drive.Driver.feed_columns` over the
   batches' columns of values taken beforehand (DRV-R9 and DRV-R1 on the columns, the
   machine's ``inputs_from_columns``);
3. + the accounting and the output rows: :meth:`timealign.spark.outcomes.SourceRun.
   feed_columns` (SP-R6) over the same columns, the rows taken as columns;
4. + Arrow in and out: the worker's whole Python half.

Target (issue 26): the worker's Python CPU per row <= 2x the bare fast step's on the same
rows. The JVM's share and the whole job are ``bench_spark.py``'s.

    .venv/bin/python benchmarks/bench_spark_worker.py [--seconds S]
"""

from __future__ import annotations

import argparse
import collections
import gc
import math
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from timealign import registry
from timealign.drive import Driver
from timealign.spark import schema
from timealign.spark.generate import FLEET, Plan, generate
from timealign.spark.outcomes import SourceRun
from timealign.spark.replay import (
    CHUNK,
    collector_paused,
    columns_from_batches,
    records_from,
    replay,
)

TARGET = 2.0
BATCH = 10_000  # rows per Arrow batch, as Spark's default maxRecordsPerBatch
ROUNDS = 5


def rows_of_one_robot(seconds: float) -> pa.Table:
    """One robot's rows, in arrival order, with the worker's input columns."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "fleet"
        generate(Plan(robots=1, seconds=seconds, files=1), out)
        table = pq.read_table(next(out.glob("*.parquet")))
    count = table.num_rows
    return pa.table({
        "id": table["id"], "topic": table["topic"], "stamp": table["stamp"],
        "arrival": table["arrival"], "kind": pa.nulls(count, pa.string()),
        "poll": pa.nulls(count, pa.int64()), schema.FILE: pa.array(["f"] * count),
        schema.POSITION: pa.array(range(count), pa.int64()),
    })


def cpu(work: Callable[[], Any]) -> float:
    """CPU seconds of ``work``, with the cyclic collector paused as the worker pauses it
    (:func:`timealign.spark.replay.collector_paused`), so every layer runs alike."""
    gc.collect()
    with collector_paused():
        started = time.process_time()
        work()
        return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0)
    args = parser.parse_args()
    algorithm = registry.get("approximate_time")
    fast = algorithm.fast_path()
    config = algorithm.codec.config_from_json({"topics": [s.topic for s in FLEET], "queue_size": 30,
                                         "max_interval_duration": 40_000_000})
    table = rows_of_one_robot(args.seconds)
    rows = table.num_rows
    batches = table.to_batches(max_chunksize=BATCH)
    ids, topics, stamps, arrivals = (table[name].to_pylist()
                                     for name in ("id", "topic", "stamp", "arrival"))
    records = list(records_from(ids, topics, stamps, arrivals, [None] * rows, [None] * rows))
    batch_columns = list(columns_from_batches("robot", iter(batches)))
    inputs = list(fast.feeding.inputs_from_records(config, iter(records)))
    step, initial = fast.machine.step, fast.machine.initial

    def bare() -> None:
        state = initial(config)
        for item in inputs:
            state, _ = step(config, state, item)
        step(config, state, fast.machine.end(config))

    def driven() -> None:
        driver = Driver(fast, config)
        for piece in batch_columns:
            collections.deque(driver.feed_columns(piece, typed=True), maxlen=0)
        collections.deque(driver.finish(), maxlen=0)

    def accounted() -> None:
        run = SourceRun(fast, config, "robot")
        collections.deque(run.feed_columns(batch_columns, CHUNK, typed=True), maxlen=0)
        run.finish()
        run.rows.take_parts()

    def worker() -> None:
        collections.deque(replay(fast, config, "robot",
                                 columns_from_batches("robot", iter(batches))), maxlen=0)

    layers: list[tuple[str, Callable[[], None]]] = [
        ("bare fast step (messages built beforehand)", bare),
        ("+ row mapping and driver: feed_columns", driven),
        ("+ accounting and output rows: SourceRun (SP-R6)", accounted),
        ("+ Arrow in and out: the worker's Python half", worker),
    ]
    best = dict.fromkeys([name for name, _ in layers], math.inf)
    for _ in range(ROUNDS):
        for name, work in layers:
            best[name] = min(best[name], cpu(work))
    print(f"spark worker, Python half, in process: {rows:,} rows of one robot "
          f"(ApproximateTime, {len(FLEET)} topics, queue 30), Arrow batches of {BATCH:,}; "
          f"CPU time of one core, best of {ROUNDS}; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores")
    floor = best[layers[0][0]]
    previous = 0.0
    for name, _ in layers:
        per_row = best[name] / rows * 1e6
        print(f"  {name:<50} {per_row:6.2f} us/row (+{per_row - previous:5.2f}), "
              f"{best[name] / floor:4.2f}x the bare step")
        previous = per_row
    ratio = best[layers[-1][0]] / floor
    print(f"  target: worker Python CPU per row <= {TARGET:.0f}x the bare fast step's: "
          f"{ratio:.2f}x, {'met' if ratio <= TARGET else 'not met'}")


if __name__ == "__main__":
    main()
