"""Throughput and memory of (a) plain replay and (b) the Spark batch job on ``local[2]``.

For each size ``MESSAGES:SOURCES`` a robot fleet is generated (``timealign generate``), then:

(a) plain replay, in a separate process on one core: read the Parquet files with pyarrow,
    order each source's rows (SP-R2) and drive the machine through them (spec/drivers.md);
(b) the batch job (``timealign.spark.batch.run_batch``): read, shuffle, sort, replay in the
    grouped Arrow UDF, write both tables and run the no-loss check.

Printed: messages per second of each, the ratio b/a, the peak RSS of (a) and of the whole
Spark process tree (JVM plus Python workers) and of the largest Python worker in (b), and
the CPU seconds each spent: (a) in its one process, (b) in the JVM and in the Python
workers. On ``local[2]`` the job can at best run (jvm + python) / 2 seconds, so the CPU
columns show where a ratio below 2 comes from.

    python benchmarks/bench_spark.py                      # quick: 200k messages, 10 sources
    python benchmarks/bench_spark.py --sizes 1M:10 1M:1000 10M:1000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq

from timealign import registry
from timealign.algorithm import Record
from timealign.drive import drive
from timealign.spark.generate import Plan, generate

DEFAULT_CONFIG = {"topics": ["camera", "lidar", "imu"], "queue_size": 30,
                  "max_interval_duration": 40_000_000}


def parse_size(text: str) -> tuple[int, int]:
    messages, _, sources = text.partition(":")
    scale = {"k": 1_000, "M": 1_000_000}.get(messages[-1], 1)
    count = int(float(messages.rstrip("kM")) * scale)
    return count, int(sources or 10)


def plain_replay(algorithm_name: str, config_json: str, folder: str) -> dict[str, Any]:
    """(a): one process, one core, no Spark; the fast path, as the Spark job runs it."""
    algorithm = registry.get(algorithm_name).fast_path()
    config = algorithm.config_from_json(json.loads(config_json))
    started = time.perf_counter()
    table = pq.read_table(folder, columns=["source", "id", "topic", "stamp", "arrival"])
    table = table.take(pc.sort_indices(table, [("source", "ascending"),
                                               ("arrival", "ascending")]))
    rows = table.num_rows
    sources = table.column("source").to_pylist()
    ids, topics, stamps, arrivals = (table.column(n).to_pylist()
                                     for n in ("id", "topic", "stamp", "arrival"))
    del table
    start = 0
    outputs = 0
    while start < rows:
        end = start
        while end < rows and sources[end] == sources[start]:
            end += 1
        records = (Record(ids[k], topics[k], stamps[k], arrivals[k]) for k in range(start, end))
        outputs += sum(len(out) for _, _, out in drive(algorithm, config, records))
        start = end
    seconds = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"rows": rows, "seconds": seconds, "peak_bytes": usage.ru_maxrss * 1024,
            "cpu": usage.ru_utime + usage.ru_stime, "outputs": outputs}


TICKS = os.sysconf("SC_CLK_TCK")


def _tree(root: int) -> dict[int, tuple[bool, int, float]]:
    """pid -> (is a Python process, RSS bytes, CPU seconds incl. reaped children) for every
    process under ``root`` (the Spark JVM, the Python daemon and its workers)."""
    found: dict[int, tuple[bool, int, float]] = {}
    pending = [root]
    while pending:
        pid = pending.pop()
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                try:
                    with open(f"/proc/{pid}/task/{task}/children") as handle:
                        pending.extend(int(c) for c in handle.read().split())
                except OSError:  # a thread that ended meanwhile: the process is still here
                    continue
            if pid == root:
                continue
            with open(f"/proc/{pid}/status") as handle:
                rss = next(int(line.split()[1]) * 1024 for line in handle
                           if line.startswith("VmRSS:"))
            with open(f"/proc/{pid}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            cpu = sum(int(x) for x in fields[11:15]) / TICKS  # utime stime cutime cstime
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                python = b"python" in handle.read().split(b"\0")[0]
        except (OSError, StopIteration, IndexError):
            continue
        found[pid] = (python, rss, cpu)
    return found


class Sampler:
    """Samples the RSS of this process's descendants (the Spark JVM and its workers) and
    measures the CPU seconds they spend: JVM and Python workers separately."""

    def __init__(self) -> None:
        self.total = self.worker = 0
        self.jvm_cpu = self.python_cpu = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._before: dict[int, tuple[bool, int, float]] = {}

    def _loop(self) -> None:
        while not self._stop.wait(0.2):
            tree = _tree(os.getpid())
            self.total = max(self.total, sum(rss for _, rss, _ in tree.values()))
            self.worker = max([self.worker, *(rss for py, rss, _ in tree.values() if py)])

    def __enter__(self) -> Sampler:
        self._before = _tree(os.getpid())
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        for pid, (python, _, cpu) in _tree(os.getpid()).items():
            spent = cpu - self._before.get(pid, (python, 0, 0.0))[2]
            if python:
                self.python_cpu += spent
            else:
                self.jvm_cpu += spent


def spark_job(spark: Any, algorithm_name: str, config: Any, folder: str,
              output: str) -> dict[str, Any]:
    """(b): the batch job end to end on the shared local[2] session."""
    from timealign.spark.batch import run_batch

    algorithm = registry.get(algorithm_name)
    with Sampler() as sampler:
        started = time.perf_counter()
        result = run_batch(spark, algorithm, algorithm.config_from_json(config), folder,
                           output)
        seconds = time.perf_counter() - started
    return {"rows": result.rows, "seconds": seconds, "tree_peak_bytes": sampler.total,
            "worker_peak_bytes": sampler.worker, "jvm_cpu": sampler.jvm_cpu,
            "python_cpu": sampler.python_cpu}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["200k:10"],
                        help="MESSAGES:SOURCES, e.g. 1M:10 10M:1000 (default 200k:10)")
    parser.add_argument("--algorithm", default="approximate_time")
    parser.add_argument("--config", default=json.dumps(DEFAULT_CONFIG))
    parser.add_argument("--workdir", help="keep data here (default: a temporary folder)")
    parser.add_argument("--replay-only", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.replay_only:
        print(json.dumps(plain_replay(args.algorithm, args.config, args.replay_only)))
        return 0
    if args.algorithm not in registry.names():
        print(f"bench_spark: {args.algorithm} is not registered yet; nothing to measure")
        return 0
    from timealign.spark.session import build_session

    spark = build_session("local[2]", "timealign bench")
    config = json.loads(args.config)
    base = Path(args.workdir or tempfile.mkdtemp(prefix="bench-spark-"))
    print(f"{'messages':>10} {'sources':>7} {'replay msg/s':>13} {'spark msg/s':>12} "
          f"{'b/a':>5} {'replay peak':>12} {'spark tree peak':>16} {'worker peak':>12} "
          f"{'replay cpu':>11} {'spark jvm cpu':>14} {'spark py cpu':>13}")
    for size in args.sizes:
        messages, sources = parse_size(size)
        data = base / f"data-{size.replace(':', '-')}"
        rows = generate(Plan.for_messages(messages, sources), data)
        replay = json.loads(subprocess.run(
            [sys.executable, __file__, "--replay-only", str(data), "--algorithm",
             args.algorithm, "--config", args.config],
            check=True, capture_output=True, text=True).stdout)
        job = spark_job(spark, args.algorithm, config, str(data), str(base / "out"))
        assert replay["rows"] == job["rows"] == rows
        a, b = rows / replay["seconds"], rows / job["seconds"]
        print(f"{rows:>10} {sources:>7} {a:>13,.0f} {b:>12,.0f} {b / a:>5.2f} "
              f"{replay['peak_bytes'] / 2**20:>10.0f}MB {job['tree_peak_bytes'] / 2**20:>14.0f}MB "
              f"{job['worker_peak_bytes'] / 2**20:>10.0f}MB {replay['cpu']:>10.1f}s "
              f"{job['jvm_cpu']:>13.1f}s {job['python_cpu']:>12.1f}s", flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
