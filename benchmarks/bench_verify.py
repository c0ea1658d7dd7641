"""What ``timealign verify`` costs next to the run it checks (issue 42 item 7): the demo's
commands (``make demo``: the ApproximateTime job over a generated fleet) run as a user runs
them, each timed by wall clock and by the CPU of its whole process tree (the driver, the
JVM, the Python workers, sampled every 0.2 s), then the checks of ``verify`` timed one
phase at a time in one session (SP-R40's phases), wall and CPU.

    python benchmarks/bench_verify.py                          # the demo: 1M messages
    python benchmarks/bench_verify.py --messages 200000 --robots 10
    python benchmarks/bench_verify.py --data demo-data/fleet --out demo-data/out
    python benchmarks/bench_verify.py --data demo-data/fleet --pairs 5 --no-phases
    python benchmarks/bench_verify.py --data demo-data/fleet --pairs 5 --no-phases --bare

The run is ``make demo``'s: with ``--summary`` and ``--report`` (``--bare``: without them,
the least a run does). ``--pairs N`` runs the run and its ``verify`` N times, in turn (each
a fresh process, as users run them: no warm-up), and prints each pair and the medians: on a
2-core machine one pair's wall times vary by a second or two from one pair to the next.

Prints the machine's load average at the start and the end: on a shared machine the wall
times follow the load, the CPU seconds much less.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CONFIG = {"topics": ["camera", "lidar", "imu"], "queue_size": 30,
          "max_interval_duration": 40_000_000}
TICK = os.sysconf("SC_CLK_TCK")


class TreeCpu:
    """CPU seconds of a process (or several: ``more``) and every process below it, sampled
    every 0.2 s by a thread: each process's own user and system time (``/proc/PID/stat``)
    at its last sample, processes that ended included (Spark's Python workers come and
    go)."""

    def __init__(self, root: int, *more: int) -> None:
        self.roots = (root, *more)
        self.seen: dict[int, float] = {}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.done.wait(0.2):
            self.sample()

    def sample(self) -> None:
        parents: dict[int, int] = {}
        used: dict[int, float] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                text = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = text[text.rindex(")") + 2:].split()
            parents[int(entry)] = int(fields[1])
            used[int(entry)] = (int(fields[11]) + int(fields[12])) / TICK
        stack = list(self.roots)
        while stack:
            pid = stack.pop()
            if pid in used:
                self.seen[pid] = max(self.seen.get(pid, 0.0), used[pid])
            stack.extend(child for child, parent in parents.items() if parent == pid)

    def total(self) -> float:
        self.sample()
        return sum(self.seen.values())

    def stop(self) -> float:
        self.done.set()
        self.thread.join()
        return sum(self.seen.values())


def timed(command: list[str]) -> tuple[float, float]:
    """Wall and tree CPU seconds of ``command``."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    cpu = TreeCpu(process.pid)
    process.wait()
    used = cpu.stop()
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {process.returncode}")
    return time.perf_counter() - started, used


def phases(data: Path, out: Path) -> list[tuple[str, float, float]]:
    """Each phase of ``verify_rows`` (SP-R40) with its wall and tree CPU seconds."""
    from timealign import registry
    from timealign.spark.schema import ColumnMap, read_input
    from timealign.spark.session import build_session
    from timealign.spark.verify import verify_rows

    spark = build_session("local[*]", "bench verify")
    algorithm = registry.get("approximate_time")
    config = algorithm.codec.config_from_json(CONFIG)
    measured: list[tuple[str, float, float]] = []

    tree = TreeCpu(os.getpid())

    @contextmanager
    def phase(name: str) -> Iterator[None]:
        wall, cpu = time.perf_counter(), tree.total()
        yield
        measured.append((name, time.perf_counter() - wall, tree.total() - cpu))

    rows = read_input(spark, str(data), "parquet", ColumnMap())
    verify_rows(spark, algorithm, config, rows, str(out), phase)
    tree.stop()
    spark.stop()
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--robots", type=int, default=20)
    parser.add_argument("--data", type=Path, help="an existing fleet (skips generate)")
    parser.add_argument("--out", type=Path, help="its run's output (skips run)")
    parser.add_argument("--no-phases", action="store_true")
    parser.add_argument("--pairs", type=int, default=1,
                        help="run and verify this many times in turn (default 1)")
    parser.add_argument("--bare", action="store_true",
                        help="time the run without make demo's --summary and --report (the "
                             "least a run does)")
    args = parser.parse_args()
    tool = str(Path(sys.executable).with_name("timealign"))
    print(f"load average at start: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as folder:
        data = args.data or Path(folder) / "fleet"
        out = args.out or Path(folder) / "out"
        if args.data is None:
            timed([tool, "generate", "--output", str(data), "--robots", str(args.robots),
                   "--messages", str(args.messages)])
        runs: list[tuple[float, float]] = []
        checks: list[tuple[float, float]] = []
        for _ in range(args.pairs):
            if args.out is None:
                shutil.rmtree(out, ignore_errors=True)
                shutil.rmtree(Path(folder) / "report", ignore_errors=True)
                demo = [] if args.bare else ["--summary", str(Path(folder) / "summary.json"),
                                             "--report", str(Path(folder) / "report")]
                runs.append(timed([tool, "run", "approximate_time", "--input", str(data),
                                   "--output", str(out), "--config", json.dumps(CONFIG),
                                   "--quiet", *demo]))
                print(f"run:    {runs[-1][0]:7.1f} s wall, {runs[-1][1]:7.1f} s CPU")
            checks.append(timed([tool, "verify", str(out), "--quiet"]))
            print(f"verify: {checks[-1][0]:7.1f} s wall, {checks[-1][1]:7.1f} s CPU")
        if args.pairs > 1:
            for name, times in (("run", runs), ("verify", checks)):
                if times:
                    print(f"median {name + ':':8}{statistics.median(t[0] for t in times):7.1f} "
                          f"s wall, {statistics.median(t[1] for t in times):7.1f} s CPU "
                          f"({len(times)} processes)")
        if not args.no_phases:
            for name, wall, cpu in phases(data, out):
                print(f"  {name:40} {wall:7.1f} s wall, {cpu:7.1f} s CPU")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
