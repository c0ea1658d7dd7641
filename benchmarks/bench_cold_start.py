"""What a cold per-file job spends before and around its rows (issue 44): the fixed cost of
``timealign run --sources-per-file`` split, and cuts of it measured in pairs.

``split``: one cold job run in this process (a fresh interpreter, so a fresh JVM) through the
command's own entry point, with each step marked by wall clock and by the CPU of this
process's whole tree (the driver, its JVM, the Python workers; sampled every 0.2 s): the
imports, the inventory (SP-R41), the session's start (JVM and SparkContext), the read of
the input's schema, each phase of the job (census, replay, outcomes, reconcile, publish),
the summary and the manifest; then the JVM's CPU by thread kind (the C1 and C2 JIT
compilers, the garbage collector, the task threads, the py4j threads on which Spark plans
and generates code) and the Python worker processes started.

``pairs``: fresh ``timealign run`` processes, one per variant (``NAME=spark.KEY=VALUE;...``,
given as ``--conf``; ``NAME=`` for the code's own settings), in turn A/B/A/B for
``--rounds`` rounds: wall and tree CPU, the load at start and end.

    python benchmarks/bench_cold_start.py split --size 2k:10
    python benchmarks/bench_cold_start.py pairs --size 2k:10 --rounds 2 code= \\
        'c2=spark.driver.extraJavaOptions=-XX:+UseParallelGC'
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench_spark import DEFAULT_CONFIG, parse_size, timealign_command
from bench_verify import TICK, TreeCpu, timed

from timealign.spark.generate import Plan, generate


def run_arguments(data: Path, out: Path, master: str, conf: list[str]) -> list[str]:
    """The words after ``timealign`` of the per-file job measured."""
    return ["run", "approximate_time", "--input", str(data), "--output", str(out),
            "--config", json.dumps(DEFAULT_CONFIG), "--sources-per-file", "--master", master,
            "--quiet", *(word for item in conf for word in ("--conf", item))]


class Threads:
    """The CPU seconds of every JVM thread and every Python process under this process,
    sampled every 0.25 s (a thread's last reading is kept after it ends)."""

    def __init__(self, tree: TreeCpu) -> None:
        self.tree = tree
        self.jvm: dict[tuple[int, str], tuple[str, float]] = {}
        self.pythons: set[int] = set()
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self) -> None:
        while True:
            time.sleep(0.25)
            self.sample()

    def sample(self) -> None:
        for pid in list(self.tree.seen):
            try:
                name = Path(f"/proc/{pid}/comm").read_text().strip()
                tids = os.listdir(f"/proc/{pid}/task") if name == "java" else []
            except OSError:
                continue
            if "python" in name and pid != os.getpid():
                self.pythons.add(pid)
            for tid in tids:
                try:
                    text = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
                except OSError:
                    continue
                fields = text[text.rindex(")") + 2:].split()
                self.jvm[(pid, tid)] = (text[text.index("(") + 1:text.rindex(")")],
                                        (int(fields[11]) + int(fields[12])) / TICK)

    def kinds(self) -> dict[str, float]:
        """CPU seconds by thread kind (the thread's name without its number)."""
        found: dict[str, float] = defaultdict(float)
        for name, cpu in self.jvm.values():
            found[name.rstrip("0123456789#-").strip() or name] += cpu
        return dict(found)


def split(data: Path, out: Path, master: str, conf: list[str]) -> None:
    """``split``: one cold job in this process, each step marked (see the docstring)."""
    tree = TreeCpu(os.getpid())
    began = time.perf_counter()
    marks: list[tuple[str, float, float]] = []

    def mark(label: str) -> None:
        marks.append((label, time.perf_counter() - began, tree.total()))

    import timealign.commands.spark as commands
    import timealign.spark.inputs as inputs
    from timealign.commands.main import main
    from timealign.spark import progress, schema

    threads = Threads(tree)
    mark("imports (Python: timealign, pyspark, pyarrow)")

    def marked(owner: Any, name: str, label: str) -> None:
        real: Callable[..., Any] = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            mark(f"before {label}")
            try:
                return real(*args, **kwargs)
            finally:
                mark(label)
        setattr(owner, name, wrapper)

    marked(inputs, "take_inventory", "inventory (SP-R41: the files' own row counts)")
    marked(commands, "_session", "session (JVM, SparkContext, SQL settings)")
    marked(schema, "read_input", "the input's schema read")
    marked(commands, "_summarized", "summary (SP-R31)")
    marked(inputs, "remember", "manifest (SP-R32)")
    phase = progress.StageWatch.phase

    @contextmanager
    def marked_phase(self: Any, name: str) -> Iterator[None]:
        mark(f"before phase {name}")
        with phase(self, name):
            yield
        mark(f"phase {name}")

    setattr(progress.StageWatch, "phase", marked_phase)  # noqa: B010
    shutil.rmtree(out, ignore_errors=True)
    code = main(run_arguments(data, out, master, conf))
    threads.sample()
    mark("command returned")
    shutil.rmtree(out, ignore_errors=True)
    print(f"exit {code}; steps (wall since start, CPU of the tree since start, CPU of the step):")
    last = 0.0
    for label, wall, cpu in marks:
        if not label.startswith("before ") or cpu - last >= 0.05:
            print(f"  {wall:7.2f} s {cpu:7.2f} s CPU  +{cpu - last:5.2f} s  {label}")
        last = cpu
    kinds = threads.kinds()
    print(f"JVM threads: {sum(kinds.values()):.2f} s CPU in all; by kind:")
    for name, cpu in sorted(kinds.items(), key=lambda kv: -kv[1])[:12]:
        print(f"  {cpu:6.2f} s  {name}")
    python = sum(tree.seen.get(pid, 0.0) for pid in threads.pythons)
    print(f"Python processes started under the driver (daemon and workers): "
          f"{len(threads.pythons)}, {python:.2f} s CPU; the driver's own "
          f"{tree.seen.get(os.getpid(), 0.0):.2f} s; load {os.getloadavg()[0]:.1f}")


def pairs(data: Path, out: Path, master: str, rounds: int, variants: list[str]) -> None:
    """``pairs``: fresh processes, the variants in turn, ``rounds`` times."""
    results: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for number in range(rounds):
        for variant in variants:
            name, _, items = variant.partition("=")
            conf = [item for item in items.split(";") if item]
            shutil.rmtree(out, ignore_errors=True)
            load, clock = os.getloadavg()[0], time.strftime("%H:%M:%S", time.gmtime())
            wall, cpu = timed([*timealign_command(), *run_arguments(data, out, master, conf)])
            results[name].append((wall, cpu))
            print(f"{clock} round {number} {name}: {wall:.1f} s wall, {cpu:.1f} s CPU, load "
                  f"{load:.1f}>{os.getloadavg()[0]:.1f}", flush=True)
    shutil.rmtree(out, ignore_errors=True)
    for name, runs in results.items():
        print(f"{name}: CPU {' '.join(f'{c:.1f}' for _, c in runs)} s (mean "
              f"{sum(c for _, c in runs) / len(runs):.1f}), wall "
              f"{' '.join(f'{w:.1f}' for w, _ in runs)} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     allow_abbrev=False)
    parser.add_argument("mode", choices=["split", "pairs"])
    parser.add_argument("variants", nargs="*", help="pairs: NAME=spark.KEY=VALUE;...")
    parser.add_argument("--size", help="MESSAGES:SOURCES (default 2k:10)")
    parser.add_argument("--input", type=Path, help="a per-file input instead of --size")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--conf", action="append", default=[], help="split: spark.KEY=VALUE")
    parser.add_argument("--rounds", type=int, help="pairs: rounds of the variants (default 2)")
    args = parser.parse_intermixed_args(argv)
    if args.size and args.input:  # every option applied or refused (CLI-R1's scripts too)
        parser.error("--size and --input: give one")
    if args.mode == "split" and (args.variants or args.rounds is not None):
        parser.error("split runs one job: variants and --rounds are for pairs")
    if args.mode == "pairs" and args.conf:
        parser.error("pairs: give each variant's settings in the variant, not --conf")
    args.size = args.size or "2k:10"
    work = Path(tempfile.mkdtemp(prefix="bench-cold-"))
    try:
        data = args.input
        if data is None:
            data = work / "robots"
            rows = generate(Plan.for_messages(*parse_size(args.size), per_robot=True), data)
            print(f"input: {rows:,} rows in {parse_size(args.size)[1]} files")
        if args.mode == "split":
            split(data, work / "out", args.master, args.conf)
        else:
            pairs(data, work / "out", args.master, args.rounds or 2,
                  args.variants or ["code="])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
