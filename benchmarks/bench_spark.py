"""Throughput, CPU and memory of the Spark batch job against plain replay, and how it scales.

For each size ``MESSAGES:SOURCES`` the same robot fleet is generated twice: in files
rotated by arrival time (all sources mixed: the shuffled path) and one file per robot (the
per-file path, ``--sources-per-file``). Then:

(a) plain replay, in a separate process on one core: read the Parquet files with pyarrow,
    order each source's rows (SP-R2) and drive the machine through them (spec/drivers.md);
(a') the honest baseline (``benchmarks/honest_baseline.py``, issue 44), in a separate
    process on one core: the per-file job's whole work without Spark (pyarrow reads the
    one-file-per-robot layout, the project's replay, pyarrow writes the same ``groups/`` and
    ``outcomes/`` tables, the no-loss check);
(b) the batch job (``timealign.spark.batch.run_batch``) on each master of ``--masters``
    (``local[1]``, ``local[2]``, and standalone clusters started on 127.0.0.1,
    :mod:`tests.spark.standalone`: ``standalone``, one executor of 2 cores;
    ``standalone-1``, one executor of 1 core; ``standalone-2``, two executors of 1 core
    each), for each path of ``--paths``.

(c) cold, as users run it (the developers' guide: one job in a fresh JVM, no warm-up; the
    headline, ``--modes cold``): on each master, first a cold job over a tiny input
    (``--fixed``, 2k rows in 10 files: the fixed cost of a cold job), then for each size
    the honest baseline (a') and right after it ``timealign run --sources-per-file
    --master M`` in a fresh process, timed by wall clock and by the CPU of its whole
    process tree (driver, JVM, Python workers); on a standalone master the master's and
    workers' trees too (the job's executors and their Python workers run on this machine)
    for the job's duration, less what the idle cluster burns (measured for 5 s just
    before). Such a job ships the pure-Python package to the executors (SP-R17), as a
    user's does.

After each cold job a line ``ROWS:SOURCES against the baseline: CPU per row Rx, wall Wx``
gives its CPU per row and wall time over (a')'s, with the load of both, and its marginal CPU
per row ((its CPU - the fixed cost's) / the rows beyond the tiny input's); the warm job's
line (``--modes warm``: the jobs in one session per master started and warmed before them)
is printed beside it, named "warm". ``--scale-table`` prints the scale-out table of issue
44, cold (rows per second per core, parallel efficiency: the speed-up over (a') divided by
the cores the master gives the tasks, the fixed cost, the marginal CPU per row), with the
warm figures in columns named so. The warm jobs' standalone executors run this interpreter
and the installed (compiled) package, as ``local[*]`` does: the warm session does not ship
the pure-Python zip of SP-R17.

Printed per run: messages per second and the ratio to (a); the CPU seconds of the JVMs and
of the Python workers; the CPU microseconds per row (JVM + Python), the scale-out
predictor: on N cores with nothing else running the job can reach about
N / (CPU seconds per row) rows per second, whatever this machine's 2 cores allow; the
peak RSS of the largest Python worker, of the JVM (in local mode the driver JVM runs the
executors' tasks too) with its peak heap, of the driver's Python process, and of the
whole Spark process tree; and the load average at the job's start and end (``load``).
``--table`` prints all of it at the end as the growth table of issue 35, in Markdown
(``benchmarks/README.md``). On 2 cores
``local[1]`` already uses both (the JVM task and its Python worker run side by side), so
wall-clock ratios between masters say little; the CPU per row does. Each session first
runs both paths on ``--warm`` rows (20k by default), so that start-up and JIT compilation
stay out of the figures; 20k rows is not enough for the JIT (the first measured job then
costs up to 1.6 times the third), so comparisons and target runs pass a larger ``--warm``.
The targets of the per-file path (issue 35) are checked at the end, for every size.

    python benchmarks/bench_spark.py                      # quick: 200k messages, 100 sources
    python benchmarks/bench_spark.py --sizes 1M:1000 10M:1000
    python benchmarks/bench_spark.py --sizes 1M:1 1M:100 1M:1000 --masters 'local[2]' --table
    python benchmarks/bench_spark.py --sizes 2M:200 4M:1 --paths per-file --warm 2M:200 \
        --masters 'local[1]' 'local[2]' standalone-1 standalone-2 --scale-table
    python benchmarks/bench_spark.py --sizes 200k:20 --paths per-file --masters 'local[2]' \
        standalone-2 --scale-table                        # quick check of the cold table
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
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
    config = algorithm.codec.config_from_json(json.loads(config_json))
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


def honest_baseline(algorithm_name: str, config_json: str, folder: Path,
                    output: Path) -> dict[str, Any]:
    """(a'): ``benchmarks/honest_baseline.py`` over the per-file layout, in a process of its
    own (one core, nothing shared with this process)."""
    script = Path(__file__).resolve().parent / "honest_baseline.py"
    load = os.getloadavg()[0]
    done = subprocess.run([sys.executable, str(script), str(folder), str(output),
                           "--algorithm", algorithm_name, "--config", config_json],
                          check=True, capture_output=True, text=True)
    return {**json.loads(done.stdout), "load": (load, os.getloadavg()[0]),
            "clock": time.strftime("%H:%M", time.gmtime())}


def against_baseline(size: str, job: dict[str, Any], baseline: dict[str, Any]) -> str:
    """Issue 44's line: the job's CPU per row and wall time over the honest baseline's."""
    cpu = cpu_per_row(job) / (baseline["cpu"] / baseline["rows"] * 1e6)
    wall = job["seconds"] / baseline["seconds"]
    return (f"{size} against the baseline: CPU per row {cpu:.2f}x, wall {wall:.2f}x "
            f"(job {cpu_per_row(job):.1f} us/row, {job['seconds']:.1f} s, load "
            f"{job['load'][0]:.1f}>{job['load'][1]:.1f}; baseline "
            f"{baseline['cpu'] / baseline['rows'] * 1e6:.1f} us/row, "
            f"{baseline['seconds']:.1f} s, load {baseline['load'][0]:.1f}>"
            f"{baseline['load'][1]:.1f})")


def timealign_command() -> list[str]:
    """The console script users run, beside this interpreter (else ``python -m``)."""
    script = Path(sys.executable).with_name("timealign")
    return [str(script)] if script.exists() else [sys.executable, "-m", "timealign"]


def cold_job(master: str, url: str, algorithm_name: str, config_json: str, folder: Path,
             output: Path, rows: int, cluster: tuple[int, ...] = (), conf: tuple[str, ...] = (),
             idle: float = 5.0) -> dict[str, Any]:
    """The per-file job as users run it (the developers' guide: one job in a fresh JVM, no
    warm-up): ``timealign run ALGORITHM --sources-per-file --master URL`` in a process of its
    own, timed by wall clock and by the CPU of its whole process tree (the driver, its JVM,
    the Python workers). On a standalone master the processes of ``cluster`` (the master
    and the workers, whose trees hold the job's executors and their Python workers, all on
    this machine) count too, for the job's duration, less what they burn idle (measured
    for ``idle`` seconds just before). ``conf``: ``--conf`` items given to the command."""
    from bench_verify import TreeCpu, timed

    shutil.rmtree(output, ignore_errors=True)
    trees = TreeCpu(*cluster) if cluster else None
    idle_rate = 0.0
    if trees is not None:
        before = trees.total()
        time.sleep(idle)
        idle_rate = (trees.total() - before) / idle
    start = trees.total() if trees is not None else 0.0
    load, clock = os.getloadavg()[0], time.strftime("%H:%M", time.gmtime())
    wall, cpu = timed([*timealign_command(), "run", algorithm_name, "--input", str(folder),
                       "--output", str(output), "--config", config_json,
                       "--sources-per-file", "--master", url, "--quiet",
                       *(word for item in conf for word in ("--conf", item))])
    spent = trees.stop() - start if trees is not None else 0.0
    cluster_cpu = max(0.0, spent - idle_rate * wall)
    shutil.rmtree(output, ignore_errors=True)
    return {"rows": rows, "seconds": wall, "cpu": cpu + cluster_cpu, "command_cpu": cpu,
            "cluster_cpu": cluster_cpu, "idle_rate": idle_rate, "master": master,
            "load": (load, os.getloadavg()[0]), "clock": clock, "commit": head_commit()}


def jit_conf(master: str, rows: int) -> tuple[str, ...]:
    """The ``--conf`` that gives a cold job over a tiny input the JIT a job over ``rows``
    rows gets (SP-D31: C1 alone below the bound, HotSpot's tiered C1 and C2 from it), so
    that the fixed cost taken from the marginal one is that of the same JVMs."""
    from timealign.spark.session import SHORT_JOB_ROWS, java_options

    if rows < SHORT_JOB_ROWS:
        return ()
    tiered = "-XX:TieredStopAtLevel=4"  # HotSpot's default: C1, then C2
    if master in STANDALONE:
        return (f"spark.driver.defaultJavaOptions={tiered}",
                f"spark.executor.defaultJavaOptions={tiered}")
    return (f"spark.driver.extraJavaOptions={java_options(None)} {tiered}",)


def marginal(job: dict[str, Any], fixed: dict[str, Any]) -> float:
    """CPU microseconds per row beyond a cold job's fixed cost: (the cold job's CPU less
    that of a cold job over a tiny input) / the rows beyond the tiny input's."""
    return float((job["cpu"] - fixed["cpu"]) / max(1, job["rows"] - fixed["rows"]) * 1e6)


def fixed_line(master: str, fixed: dict[str, Any], jit: tuple[str, ...]) -> str:
    """What a cold job costs before its first row: a cold job over a tiny input (``jit``:
    the ``--conf`` that gave it a long job's JIT, :func:`jit_conf`)."""
    cluster = (f" (command {fixed['command_cpu']:.1f} s + cluster {fixed['cluster_cpu']:.1f} s, "
               f"idle cluster {fixed['idle_rate']:.2f} s/s left out)"
               if fixed["cluster_cpu"] or fixed["idle_rate"] else "")
    how = "as the code runs it" if not jit else "with a long job's JIT, C1 and C2"
    return (f"{master}: fixed cost (a cold job over {fixed['rows']:,} rows, {how}): "
            f"{fixed['cpu']:.1f} s CPU{cluster}, {fixed['seconds']:.1f} s wall, load "
            f"{fixed['load'][0]:.1f}>{fixed['load'][1]:.1f}")


def cold_lines(size: str, job: dict[str, Any], warm: dict[str, Any] | None) -> list[str]:
    """The headline (the cold job, as users run it, against the baseline run just before
    it), its marginal CPU per row, and the warm figure of the same size and master, named so."""
    lines = [against_baseline(size, job, job["baseline"]) + " [cold: a fresh `timealign "
             "run`]", f"{size} cold: marginal CPU per row {marginal(job, job['fixed']):.2f} us "
             f"(fixed cost {job['fixed']['cpu']:.1f} s CPU, "
             f"{job['fixed']['seconds']:.1f} s wall)"]
    if warm is not None and "baseline" in warm:
        lines.append("warm (a session already started and warmed, not what users see): "
                     + against_baseline(size, warm, warm["baseline"]))
    return lines


#: The cores each master gives the tasks (task slots), for the scale-out table.
CORES = {"local[1]": 1, "local[2]": 2, "standalone": 2, "standalone-1": 1, "standalone-2": 2}
#: A standalone master's layout: (workers, cores per worker), one executor per worker.
STANDALONE = {"standalone": (1, 2), "standalone-1": (1, 1), "standalone-2": (2, 1)}


def cores_of(master: str) -> int:
    inside = master.partition("[")[2].rstrip("]")
    return CORES.get(master) or int(inside or os.cpu_count() or 1)


def scale_table(sizes: list[str], cold: dict[tuple[str, str], dict[str, Any]],
                warm: dict[tuple[str, str, str], dict[str, Any]]) -> str:
    """Issue 44's scale-out table in Markdown, cold as users run it (the developers' guide):
    per size and master, the cold per-file job's wall time, rows per second per core and
    parallel efficiency (speed-up over the honest baseline run just before it, divided by
    the cores), its CPU per row against the baseline's, the master's fixed cost (a cold job
    over a tiny input) and the marginal CPU per row beyond it; then the warm job's figures
    (a session already started and warmed), in columns named so."""
    out = ["| rows : sources | master (cores) | time (UTC), load | wall (cold) "
           "| rows/s per core | speed-up over the baseline | parallel efficiency "
           "| CPU per row | × baseline's CPU per row | fixed cost: CPU, wall "
           "| marginal CPU per row | warm: wall, efficiency, CPU per row (× baseline's) "
           "| baseline: wall, CPU per row, load |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for size in sizes:
        masters = [m for (at, m) in cold if at == size]
        masters += [m for (at, m, path) in warm if at == size and path == "per-file"
                    and m not in masters]
        for master in masters:
            cores = cores_of(master)
            job = cold.get((size, master))
            hot = warm.get((size, master, "per-file"))
            warm_cell = "-"
            if hot is not None and "baseline" in hot:
                hot_base = hot["baseline"]
                warm_cell = (f"{hot['seconds']:.1f} s, "
                             f"{hot_base['seconds'] / hot['seconds'] / cores:.2f}, "
                             f"{cpu_per_row(hot):.1f} µs "
                             f"({cpu_per_row(hot) / per_row(hot_base):.2f})")
            if job is None:
                out.append(f"| {size} | {master} ({cores}) | - | - | - | - | - | - | - | - "
                           f"| - | {warm_cell} | - |")
                continue
            base, fixed = job["baseline"], job["fixed"]
            speedup = base["seconds"] / job["seconds"]
            out.append(
                f"| {size} | {master} ({cores}) | {job['clock']}, {job['load'][0]:.1f} → "
                f"{job['load'][1]:.1f} | {job['seconds']:.1f} s "
                f"| {job['rows'] / job['seconds'] / cores:,.0f} | {speedup:.2f} "
                f"| {speedup / cores:.2f} | {cpu_per_row(job):.1f} µs "
                f"| {cpu_per_row(job) / per_row(base):.2f} "
                f"| {fixed['cpu']:.1f} s, {fixed['seconds']:.1f} s "
                f"| {marginal(job, fixed):.2f} µs | {warm_cell} | {base['seconds']:.1f} s, "
                f"{per_row(base):.1f} µs, {base['load'][0]:.1f} → {base['load'][1]:.1f} |")
    return "\n".join(out)


def per_row(baseline: dict[str, Any]) -> float:
    """The honest baseline's CPU microseconds per row."""
    return float(baseline["cpu"] / baseline["rows"] * 1e6)


TICKS = os.sysconf("SC_CLK_TCK")


def _tree(root: int) -> dict[int, tuple[bool, int, int, float]]:
    """pid -> (is a Python process, RSS bytes, peak RSS bytes (``VmHWM``, since the process
    started or since :func:`_reset_peaks`), CPU seconds incl. reaped children) for every
    process under ``root`` (the Spark JVM, the Python daemon and its workers)."""
    found: dict[int, tuple[bool, int, int, float]] = {}
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
            with open(f"/proc/{pid}/stat") as handle:
                name, _, rest = handle.read().partition("(")[2].rpartition(")")
            fields = rest.split()
            cpu = sum(int(x) for x in fields[11:15]) / TICKS  # utime stime cutime cstime
            # The command name, not the command line: a worker that exited and is not yet
            # reaped (a zombie) has no command line and no memory, but still its CPU time,
            # which moves to its daemon's reaped-children time only when it is reaped.
            python = "python" in name
            rss, peak = _memory(pid)
        except (OSError, IndexError, ValueError):
            continue
        found[pid] = (python, rss, peak, cpu)
    return found


def _memory(pid: int | str) -> tuple[int, int]:
    """(RSS, peak RSS) in bytes of a process, from ``/proc/PID/status``."""
    with open(f"/proc/{pid}/status") as handle:
        fields = dict(line.split(":", 1) for line in handle)
    if "VmRSS" not in fields:  # a zombie
        return 0, 0
    return (int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024)


def _reset_peaks(pids: list[int | str]) -> None:
    """Restart the peak RSS (``VmHWM``) of these processes at their current RSS (Linux's
    ``clear_refs`` 5), so that a peak read later belongs to the job measured, not to the
    data generation before it (this process) or an earlier job (the JVM, reused workers)."""
    for pid in pids:
        try:
            with open(f"/proc/{pid}/clear_refs", "w") as handle:
                handle.write("5")
        except OSError:  # gone meanwhile, or a kernel without it: the sampled RSS remains
            continue


class Sampler:
    """Measures the memory and CPU of a job: the peak RSS of this process (the driver's
    Python process, which in local mode sends the plan to the JVM and receives the
    results), of the largest JVM (in local mode the driver JVM, which also runs the
    executors' tasks) and of the largest Python worker, each the kernel's own peak
    (``VmHWM``, restarted when the job starts) so no short spike escapes the 0.2 s
    sampling; the peak of the whole Spark tree's summed RSS, sampled (forked Python workers
    share pages with their daemon, so the sum counts those twice); and the CPU seconds of
    the JVMs and of the Python workers, separately.

    Each process's CPU is its last sampled reading, kept after it exits: PySpark's daemon
    ignores ``SIGCHLD``, so the kernel reaps its workers without adding their time to the
    daemon's, and a worker stopped while the job runs (Spark stops one idle for a minute)
    would otherwise take all its CPU with it (a 10M-row run measured no Python CPU at all).
    What such a worker spends after its last sample, at most 0.2 s, is not counted."""

    def __init__(self) -> None:
        self.total = self.worker = self.jvm = self.driver = 0
        self.jvm_cpu = self.python_cpu = 0.0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._seen: dict[int, tuple[bool, float]] = {}
        self._start = (0.0, 0.0)

    def _sample(self) -> None:
        tree = _tree(os.getpid())
        with self._lock:
            self.total = max(self.total, sum(rss for _, rss, _, _ in tree.values()))
            self.worker = max([self.worker, *(pk for py, _, pk, _ in tree.values() if py)])
            self.jvm = max([self.jvm, *(pk for py, _, pk, _ in tree.values() if not py)])
            self._seen.update((pid, (py, cpu)) for pid, (py, _, _, cpu) in tree.items())

    def cpu(self) -> tuple[float, float]:
        """CPU seconds so far of every process seen under this one: (JVMs, Python)."""
        self._sample()
        with self._lock:
            return (sum(cpu for py, cpu in self._seen.values() if not py),
                    sum(cpu for py, cpu in self._seen.values() if py))

    def _loop(self) -> None:
        while not self._stop.wait(0.2):
            self._sample()

    def __enter__(self) -> Sampler:
        _reset_peaks(["self", *_tree(os.getpid())])
        self._start = self.cpu()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.driver = _memory("self")[1]
        jvm, python = self.cpu()
        self.jvm_cpu, self.python_cpu = jvm - self._start[0], python - self._start[1]


class Phases:
    """``run_batch(phase=...)``: the JVM and Python CPU seconds of each of the job's phases
    (census, replay, outcomes, reconcile, publish), read from the job's :class:`Sampler`."""

    def __init__(self, sampler: Sampler) -> None:
        self.sampler = sampler
        self.cpu: dict[str, tuple[float, float]] = {}

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        jvm, python = self.sampler.cpu()
        try:
            yield
        finally:
            after = self.sampler.cpu()
            self.cpu[name] = (after[0] - jvm, after[1] - python)


def heap_peak(spark: Any, reset: bool = False) -> tuple[int, int]:
    """(peak used, maximum) heap bytes of the driver JVM (in local mode it runs the tasks
    too; on a standalone cluster the executors' heaps are not counted), from the JVM's own
    memory pools (``java.lang.management``), whose peaks ``reset`` restarts. The peak is the
    sum of each heap pool's peak, which need not coincide in time: an upper bound."""
    management = spark._jvm.java.lang.management.ManagementFactory
    peak = 0
    for pool in management.getMemoryPoolMXBeans():
        if pool.getType().name() != "HEAP":
            continue
        if reset:
            pool.resetPeakUsage()
        else:
            peak += pool.getPeakUsage().getUsed()
    return peak, management.getMemoryMXBean().getHeapMemoryUsage().getMax()


@attrs.frozen
class Variant:
    """A variant of the per-file job, for ``--tasks-per-core``, ``--open-cost`` and
    ``--arrow-batch`` (SP-D24, SP-D25): the replay's tasks per core (``coalesce``,
    :data:`timealign.spark.per_file.TASKS_PER_CORE`), the file scans'
    ``spark.sql.files.openCostInBytes`` outside the replay (the census's hash count and the
    reconcile's read) and ``spark.sql.execution.arrow.maxRecordsPerBatch``; None: the
    code's own."""

    tasks_per_core: int | None = None
    open_cost: str | None = None
    arrow_batch: str | None = None
    first_row_path: str | None = None  # SP-D25: "on" (the code's) or "off"

    def label(self) -> str:
        """The path's name in the printed lines: ``per-file``, with what differs."""
        return " ".join(["per-file",
                         *([f"t{self.tasks_per_core}"] if self.tasks_per_core else []),
                         *([f"oc{self.open_cost}"] if self.open_cost else []),
                         *([f"ab{self.arrow_batch}"] if self.arrow_batch else []),
                         *([f"path-{self.first_row_path}"] if self.first_row_path else [])])

    @contextmanager
    def applied(self, spark: Any) -> Iterator[None]:
        from timealign.spark import per_file
        from timealign.spark.session import session_conf

        before, path_before = per_file.TASKS_PER_CORE, per_file.FIRST_ROW_PATH
        per_file.TASKS_PER_CORE = self.tasks_per_core or before
        if self.first_row_path:
            per_file.FIRST_ROW_PATH = self.first_row_path == "on"
        settings = {key: value for key, value in (
            ("spark.sql.files.openCostInBytes", self.open_cost),
            ("spark.sql.execution.arrow.maxRecordsPerBatch", self.arrow_batch)) if value}
        try:
            with session_conf(spark, settings):
                yield
        finally:
            per_file.TASKS_PER_CORE, per_file.FIRST_ROW_PATH = before, path_before


def spark_job(spark: Any, algorithm_name: str, config: Any, folder: str, output: str,
              per_file: bool, variant: Variant = Variant()) -> dict[str, Any]:
    """(b): the batch job end to end on ``spark``."""
    from timealign.spark.batch import run_batch

    algorithm = registry.get(algorithm_name)
    load, clock = os.getloadavg()[0], time.strftime("%H:%M", time.gmtime())
    heap_peak(spark, reset=True)
    with Sampler() as sampler, variant.applied(spark):
        phases = Phases(sampler)
        started = time.perf_counter()
        result = run_batch(spark, algorithm, algorithm.codec.config_from_json(config), folder,
                           output, per_file=per_file, phase=phases)
        seconds = time.perf_counter() - started
    heap, heap_max = heap_peak(spark)
    return {"rows": result.rows, "seconds": seconds, "tree_peak_bytes": sampler.total,
            "worker_peak_bytes": sampler.worker, "jvm_peak_bytes": sampler.jvm,
            "driver_peak_bytes": sampler.driver, "heap_peak_bytes": heap,
            "heap_max_bytes": heap_max, "jvm_cpu": sampler.jvm_cpu,
            "python_cpu": sampler.python_cpu, "phases": phases.cpu,
            "load": (load, os.getloadavg()[0]), "clock": clock, "commit": head_commit()}


def _drain(batches: Iterator[Any]) -> Iterator[Any]:
    """A ``mapInArrow`` step that takes every batch and returns nothing: the scan and the
    Arrow transfer to a Python worker, no replay (:func:`cost_split`)."""
    for _ in batches:
        pass
    yield from ()


def cost_split(spark: Any, algorithm_name: str, config: Any, folder: str,
               tasks: int = 200) -> dict[str, dict[str, float]]:
    """Issue 44's per-task costs of the per-file job, each a Spark job of its own measured as
    the job is (:class:`Sampler`: wall, JVM CPU, Python CPU): ``tasks`` empty Python tasks
    (a task's start, per task), then over the input, each written to Spark's ``noop`` sink:
    the scan with the replay's projection (one file per task, SP-R18, SP-D25), the scan and
    the Arrow transfer to the Python workers (:func:`_drain`), and the replay itself
    (:func:`timealign.spark.per_file.replay_files_frame`, no persist, no table written). The
    differences are the transfer and the replay; the job's phases give the rest."""
    from pyspark.sql import functions as F

    from timealign.spark import per_file, schema
    from timealign.spark.session import session_conf

    algorithm = registry.get(algorithm_name)
    parsed = algorithm.codec.config_from_json(config)
    rows = schema.read_input(spark, folder, "parquet", schema.ColumnMap(),
                             source_from_file=True)
    count = per_file.TASKS_PER_CORE * spark.sparkContext.defaultParallelism
    projected = rows.withColumn(schema.FILE, F.when(F.col(schema.POSITION) == 0,
                                                    F.col(schema.FILE))) \
        if per_file.FIRST_ROW_PATH else rows

    def noop(frame: Any) -> None:
        frame.write.format("noop").mode("overwrite").save()

    steps: dict[str, Callable[[], object]] = {
        "tasks": lambda: spark.sparkContext.parallelize(range(tasks), tasks)
        .map(lambda x: x).count(),
        "scan": lambda: noop(projected.coalesce(count)),
        "scan+transfer": lambda: noop(projected.coalesce(count).mapInArrow(
            _drain, schema.COMBINED)),
        "scan+transfer+replay": lambda: noop(per_file.replay_files_frame(
            rows, algorithm, parsed)),
    }
    costs: dict[str, dict[str, float]] = {}
    with session_conf(spark, per_file.ONE_FILE_PER_TASK):
        for name, run in steps.items():
            with Sampler() as sampler:
                started = time.perf_counter()
                run()
                seconds = time.perf_counter() - started
            costs[name] = {"seconds": seconds, "jvm": sampler.jvm_cpu,
                           "python": sampler.python_cpu, "load": os.getloadavg()[0]}
    return costs


def print_costs(size: str, master: str, rows: int, tasks: int,
                costs: dict[str, dict[str, float]]) -> None:
    """The per-task costs of :func:`cost_split`: per task for the empty tasks, per row (µs)
    for the scans."""
    empty = costs["tasks"]
    print(f"    costs at {size} on {master}: {tasks} empty Python tasks "
          f"{empty['seconds'] / tasks * 1e3:.1f} ms wall each, "
          f"{(empty['jvm'] + empty['python']) / tasks * 1e3:.1f} ms CPU each "
          f"(JVM {empty['jvm']:.1f} s + Python {empty['python']:.1f} s, load "
          f"{empty['load']:.1f})", flush=True)
    for name in ("scan", "scan+transfer", "scan+transfer+replay"):
        cost = costs[name]
        print(f"    costs at {size} on {master}: {name}: {cost['seconds']:.1f} s wall, CPU "
              f"{cost['jvm'] / rows * 1e6:.2f} + {cost['python'] / rows * 1e6:.2f} us/row "
              f"(JVM + Python), load {cost['load']:.1f}", flush=True)


class Masters:
    """One master at a time: ``local[N]`` or a standalone cluster started for the run (the
    cold jobs' ``--master``), and a session on it for the warm jobs."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.cluster: Any = None
        self.spark: Any = None
        self.master: str | None = None

    def session(self, master: str) -> Any:
        from timealign.spark.session import build_session

        if self.spark is not None or self.master != master:
            self.close()
        if master not in STANDALONE:
            self.spark = build_session(master, "timealign bench")
            return self.spark
        from timealign.spark import ship

        url = self.url(master)
        shipped, ship.ship_zip = ship.ship_zip, lambda spark, archive: None
        try:  # the executors import the installed, compiled package (see the docstring)
            parallel = str(2 * CORES[master])
            self.spark = build_session(url, "timealign bench", {
                "spark.sql.shuffle.partitions": parallel,
                "spark.default.parallelism": parallel,
                **dict(item.split("=", 1) for item in self.conf(master)),
                "spark.ui.enabled": "false"})
        finally:
            ship.ship_zip = shipped
        return self.spark

    def url(self, master: str) -> str:
        """The ``--master`` of a cold job: ``local[N]`` as given; for a standalone layout,
        the URL of its cluster, started now unless it runs already (no session on it, so
        the cold job's application gets every executor)."""
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' launcher
        from tests.spark.standalone import start_cluster

        if self.master == master and self.cluster is not None:
            return str(self.cluster.url)
        self.close()
        self.master = master
        if master not in STANDALONE:
            return master
        os.environ["PYSPARK_PYTHON"] = sys.executable
        workers, cores = STANDALONE[master]
        self.cluster = start_cluster(self.logs, workers=workers, cores=cores,
                                     memory="3g" if workers > 1 else "4g")
        return str(self.cluster.url)

    def cluster_processes(self) -> tuple[int, ...]:
        """The standalone master's and workers' PIDs (their trees hold the executors)."""
        return tuple(p.pid for p in self.cluster.processes) if self.cluster else ()

    @staticmethod
    def conf(master: str) -> tuple[str, ...]:
        """The memory a job on ``master`` is given (``--conf`` items; local: the code's)."""
        if master not in STANDALONE:
            return ()
        executor = "2g" if STANDALONE[master][0] > 1 else "3g"
        return (f"spark.executor.memory={executor}", "spark.driver.memory=2g")

    def close(self) -> None:
        if self.spark is not None:
            self.spark.stop()
            self.spark = None
        if self.cluster is not None:
            self.cluster.stop()
            self.cluster = None
        self.master = None


HEADER = (f"{'messages':>9} {'sources':>7} {'master':>10} {'path':>8} {'msg/s':>9} "
          f"{'x replay':>8} {'jvm cpu':>8} {'py cpu':>8} {'cpu/row':>8} {'x replay':>8} "
          f"{'worker':>7} {'jvm':>7} {'heap':>7} {'driver':>7} {'tree':>7} {'load':>9}")


def cpu_per_row(job: dict[str, Any]) -> float:
    """CPU microseconds per row of a job, JVM and Python workers together (a cold job:
    its whole process tree's, the cluster's included)."""
    cpu = job["cpu"] if "cpu" in job else job["jvm_cpu"] + job["python_cpu"]
    return float(cpu / job["rows"] * 1e6)


def line(sources: int, master: str, path: str, job: dict[str, Any],
         replay: dict[str, Any]) -> str:
    rows, mb = job["rows"], 2**20
    rate = rows / job["seconds"]
    cpu_row = cpu_per_row(job)
    return (f"{rows:>9} {sources:>7} {master:>10} {path:>8} {rate:>9,.0f} "
            f"{rate * replay['seconds'] / replay['rows']:>8.2f} {job['jvm_cpu']:>7.1f}s "
            f"{job['python_cpu']:>7.1f}s {cpu_row:>6.1f}us "
            f"{cpu_row * replay['rows'] / replay['cpu'] / 1e6:>8.2f} "
            f"{job['worker_peak_bytes'] / mb:>5.0f}MB {job['jvm_peak_bytes'] / mb:>5.0f}MB "
            f"{job['heap_peak_bytes'] / mb:>5.0f}MB {job['driver_peak_bytes'] / mb:>5.0f}MB "
            f"{job['tree_peak_bytes'] / mb:>5.0f}MB {job['load'][0]:>4.1f}>{job['load'][1]:<4.1f}")


def head_commit() -> str:
    """The checkout's commit, recorded with each cell (the code measured)."""
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, cwd=Path(__file__).parent).stdout.strip() or "unknown"


def growth_table(sizes: list[str], replays: dict[str, dict[str, Any]],
                 results: dict[tuple[str, str, str], dict[str, Any]]) -> str:
    """Issue 35's growth table in Markdown: per size, master and path the CPU per row and
    each process's peak memory, beside plain replay's, with the commit and the load."""
    commits = sorted({job.get("commit", "not recorded") for job in results.values()})
    mb = 2**20
    out = [f"Commit {', '.join(commits)}, {time.strftime('%Y-%m-%d', time.gmtime())} (UTC), "
           f"{os.cpu_count()} cores. CPU in µs per row (JVM + Python workers); memory is "
           "peak RSS in MB unless stated; load is the 1-minute load average at the job's "
           "start → end.", "",
           "| rows : sources | master, path | time (UTC), load | msg/s (× replay's) "
           "| CPU per row | × replay's | driver JVM RSS (heap used / max) "
           "| largest Python worker | driver Python | Spark tree (sum) "
           "| plain replay: CPU per row, peak |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for size in sizes:
        replay = replays[size]
        replay_row = replay["cpu"] / replay["rows"] * 1e6
        for (at, master, path), job in results.items():
            if at != size:
                continue
            out.append(
                f"| {size} | {master}, {path} | {job['clock']}, "
                f"{job['load'][0]:.1f} → {job['load'][1]:.1f} "
                f"| {job['rows'] / job['seconds']:,.0f} "
                f"({replay['seconds'] / job['seconds']:.2f}) "
                f"| {cpu_per_row(job):.1f} ({job['jvm_cpu'] / job['rows'] * 1e6:.1f} + "
                f"{job['python_cpu'] / job['rows'] * 1e6:.1f}) "
                f"| {cpu_per_row(job) / replay_row:.2f} "
                f"| {job['jvm_peak_bytes'] / mb:,.0f} ({job['heap_peak_bytes'] / mb:,.0f} / "
                f"{job['heap_max_bytes'] / mb:,.0f}) | {job['worker_peak_bytes'] / mb:,.0f} "
                f"| {job['driver_peak_bytes'] / mb:,.0f} | {job['tree_peak_bytes'] / mb:,.0f} "
                f"| {replay_row:.1f}, {replay['peak_bytes'] / mb:,.0f} |")
    return "\n".join(out)


def table_from(files: list[str]) -> str:
    """The growth table of cells saved by earlier runs, in the order they ran."""
    sizes: list[str] = []
    replays: dict[str, dict[str, Any]] = {}
    results: dict[tuple[str, str, str], dict[str, Any]] = {}
    for name in files:
        for text in Path(name).read_text().splitlines():
            cell = json.loads(text)
            if cell["size"] not in sizes:
                sizes.append(cell["size"])
            replays[cell["size"]] = cell["replay"]
            results[(cell["size"], cell["master"], cell["path"])] = cell["job"]
    return growth_table(sizes, replays, results)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["200k:100"],
                        help="MESSAGES:SOURCES, e.g. 1M:1000 10M:1000 (default 200k:100)")
    parser.add_argument("--masters", nargs="+", default=["local[1]", "local[2]", "standalone"],
                        help="local[N], standalone (one 2-core executor), standalone-1 "
                             "(one 1-core executor), standalone-2 (two 1-core executors)")
    parser.add_argument("--paths", nargs="+", default=["shuffled", "per-file"],
                        choices=["shuffled", "per-file"])
    parser.add_argument("--algorithm", default="approximate_time")
    parser.add_argument("--config", default=json.dumps(DEFAULT_CONFIG))
    parser.add_argument("--workdir", help="keep data here (default: a temporary folder)")
    parser.add_argument("--reuse", action="store_true",
                        help="reuse the data and plain replay figures an earlier run left "
                             "in --workdir (generating 10M rows twice takes minutes)")
    parser.add_argument("--table", action="store_true",
                        help="print the growth table (issue 35) in Markdown at the end")
    parser.add_argument("--table-from", nargs="+", metavar="RESULTS",
                        help="print the growth table from the results.jsonl of earlier runs "
                             "(each run appends its cells to WORKDIR/results.jsonl)")
    parser.add_argument("--tasks-per-core", nargs="+", type=int, default=[None],
                        help="run the per-file path with each of these replay tasks per "
                             "core (default: the code's, 2; SP-D24)")
    parser.add_argument("--open-cost", nargs="+", default=[None],
                        help="run the per-file path with each of these "
                             "spark.sql.files.openCostInBytes for the scans outside the "
                             "replay, e.g. 4m 0 (default: Spark's, 4m; SP-D24)")
    parser.add_argument("--arrow-batch", nargs="+", default=[None],
                        help="run the per-file path with each of these "
                             "spark.sql.execution.arrow.maxRecordsPerBatch (default: the "
                             "code's)")
    parser.add_argument("--first-row-path", nargs="+", default=[None], choices=["on", "off"],
                        help="run the per-file path with the file's path on each file's "
                             "first row only (on, the code's, SP-D25) or on every row "
                             "(off, the code before issue 44), in this order, e.g. on off "
                             "on off")
    parser.add_argument("--warm", default="20k:10",
                        help="MESSAGES:SOURCES of each session's warm-up job per path, run "
                             "before the measured ones (default 20k:10; the JVM's JIT still "
                             "compiles during the first measured jobs after it: see "
                             "benchmarks/README.md, \"Many small files in one task\")")
    parser.add_argument("--costs", nargs="*", default=[], metavar="MASTER",
                        help="on these masters, after each size's per-file job, split its "
                             "costs into a task's start, the scan, the Arrow transfer and "
                             "the replay (issue 44; four more Spark jobs per size)")
    parser.add_argument("--scale-table", action="store_true",
                        help="print the scale-out table (issue 44) in Markdown at the end")
    parser.add_argument("--modes", nargs="+", default=["cold", "warm"],
                        choices=["cold", "warm"],
                        help="cold: each per-file job as users run it, `timealign run "
                             "--sources-per-file --master M` in a fresh process, right after "
                             "the honest baseline (the headline; the developers' guide); "
                             "warm: the jobs in one session per master, after --warm "
                             "(default both)")
    parser.add_argument("--fixed", default="2k:10",
                        help="MESSAGES:SOURCES of the cold job whose CPU is the fixed cost "
                             "of a cold job on each master (default 2k:10)")
    parser.add_argument("--replay-only", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if "cold" not in args.modes and args.fixed != parser.get_default("fixed"):
        parser.error("--fixed is the fixed cost of the cold jobs: add --modes cold")
    warm_only = [f"--{name.replace('_', '-')}" for name in (
        "warm", "costs", "table", "tasks_per_core", "open_cost", "arrow_batch",
        "first_row_path") if getattr(args, name) != parser.get_default(name)]
    if args.modes == ["cold"] and "per-file" not in args.paths:
        parser.error("--modes cold times the per-file job: add --paths per-file")
    if "warm" not in args.modes and warm_only:
        parser.error(f"{', '.join(warm_only)}: for the warm jobs, add --modes warm")
    if args.table_from:
        print(table_from(args.table_from))
        return 0
    if args.replay_only:
        print(json.dumps(plain_replay(args.algorithm, args.config, args.replay_only)))
        return 0
    if args.algorithm not in registry.names():
        print(f"bench_spark: {args.algorithm} is not registered yet; nothing to measure")
        return 0
    config = json.loads(args.config)
    base = Path(args.workdir or tempfile.mkdtemp(prefix="bench-spark-"))
    masters = Masters(base / "cluster-logs")
    data: dict[str, dict[str, Path]] = {}
    replays: dict[str, dict[str, Any]] = {}
    baselines: dict[str, dict[str, Any]] = {}
    for size in args.sizes:
        messages, sources = parse_size(size)
        tag = size.replace(":", "-")
        data[size] = {"shuffled": base / f"data-{tag}", "per-file": base / f"robots-{tag}"}
        cached = base / f"replay-{tag}.json"
        if args.reuse and cached.exists():
            replays[size] = json.loads(cached.read_text())
        else:
            rows = generate(Plan.for_messages(messages, sources), data[size]["shuffled"])
            generate(Plan.for_messages(messages, sources, per_robot=True),
                     data[size]["per-file"])
            replays[size] = json.loads(subprocess.run(
                [sys.executable, __file__, "--replay-only", str(data[size]["shuffled"]),
                 "--algorithm", args.algorithm, "--config", args.config],
                check=True, capture_output=True, text=True).stdout)
            assert replays[size]["rows"] == rows
            cached.write_text(json.dumps(replays[size]))
        replay = replays[size]
        rows = replay["rows"]
        print(f"plain replay {size}: {rows / replay['seconds']:,.0f} msg/s, "
              f"{replay['cpu']:.1f} s CPU ({replay['cpu'] / rows * 1e6:.1f} us/row), "
              f"peak {replay['peak_bytes'] / 2**20:.0f} MB", flush=True)

    def baseline(size: str) -> dict[str, Any]:
        """(a') now (never cached: its figure shares the load of the job run next)."""
        honest = honest_baseline(args.algorithm, args.config, data[size]["per-file"],
                                 base / "baseline-out")
        rows = honest["rows"]
        assert rows == replays[size]["rows"]
        print(f"honest baseline {size}: {rows / honest['seconds']:,.0f} msg/s, "
              f"{honest['seconds']:.1f} s wall, {honest['cpu']:.1f} s CPU "
              f"({honest['cpu'] / rows * 1e6:.1f} us/row), peak "
              f"{honest['peak_bytes'] / 2**20:.0f} MB, load {honest['load'][0]:.1f}>"
              f"{honest['load'][1]:.1f}", flush=True)
        return honest

    print(HEADER, flush=True)
    results: dict[tuple[str, str, str], dict[str, Any]] = {}
    warm = {"shuffled": base / "warm-mixed", "per-file": base / "warm-robots"}
    warm_messages, warm_sources = parse_size(args.warm)
    generate(Plan.for_messages(warm_messages, warm_sources), warm["shuffled"])
    generate(Plan.for_messages(warm_messages, warm_sources, per_robot=True), warm["per-file"])
    runs = [(path, variant) for path in args.paths
            for variant in ([Variant(t, c, b, f) for f in args.first_row_path
                             for t in args.tasks_per_core
                             for c in args.open_cost for b in args.arrow_batch]
                            if path == "per-file" else [Variant()])]
    cold: dict[tuple[str, str], dict[str, Any]] = {}
    fixed_data = base / "fixed-robots"
    if "cold" in args.modes:
        fixed_rows = generate(Plan.for_messages(*parse_size(args.fixed), per_robot=True),
                              fixed_data)
    try:
        for master in args.masters:
            if "cold" in args.modes and "per-file" in args.paths:
                url = masters.url(master)
                conf = masters.conf(master)
                # the fixed cost, as the code runs a tiny job, then with each long JIT
                fixed_costs: dict[tuple[str, ...], dict[str, Any]] = {}
                for jit in [(), *(jit_conf(master, replays[at]["rows"]) for at in args.sizes)]:
                    if jit not in fixed_costs:
                        fixed_costs[jit] = cold_job(
                            master, url, args.algorithm, args.config, fixed_data,
                            base / "out", fixed_rows, masters.cluster_processes(),
                            (*conf, *jit))
                        print(fixed_line(master, fixed_costs[jit], jit), flush=True)
                for size in args.sizes:
                    fixed = fixed_costs[jit_conf(master, replays[size]["rows"])]
                    baselines[size] = baseline(size)
                    job = cold_job(master, url, args.algorithm, args.config,
                                   data[size]["per-file"], base / "out",
                                   replays[size]["rows"], masters.cluster_processes(), conf)
                    job |= {"baseline": baselines[size], "fixed": fixed}
                    cold[(size, master)] = job
                    with open(base / "results.jsonl", "a") as log:
                        log.write(json.dumps({"size": size, "master": master,
                                              "path": "per-file cold", "job": job,
                                              "replay": replays[size]}) + "\n")
                    for text in cold_lines(size, job, None):
                        print("    " + text, flush=True)
            if "warm" not in args.modes:
                continue
            started = time.perf_counter()
            spark = masters.session(master)
            print(f"{master}: session started in {time.perf_counter() - started:.1f} s (load "
                  f"{os.getloadavg()[0]:.1f}; not in the jobs' wall times below)", flush=True)
            for path in args.paths:  # start-up and JIT warm-up stay out of the figures
                spark_job(spark, args.algorithm, config, str(warm[path]), str(base / "out"),
                          path == "per-file")
            for size in args.sizes:
                _, sources = parse_size(size)
                replay = replays[size]
                for path, variant in runs:
                    if path == "per-file":  # (a') just before the job, at the same load
                        baselines[size] = baseline(size)
                    job = spark_job(spark, args.algorithm, config, str(data[size][path]),
                                    str(base / "out"), path == "per-file", variant)
                    assert job["rows"] == replay["rows"]
                    label = variant.label() if path == "per-file" else path
                    results[(size, master, label)] = job
                    if path == "per-file":
                        job["baseline"] = baselines[size]
                    print(line(sources, master, label, job, replay), flush=True)
                    with open(base / "results.jsonl", "a") as log:
                        log.write(json.dumps({"size": size, "master": master, "path": label,
                                              "job": job, "replay": replay}) + "\n")
                    print("    CPU us/row by phase (JVM+Python): " + ", ".join(
                        f"{name} {jvm / job['rows'] * 1e6:.1f}+{py / job['rows'] * 1e6:.1f}"
                        for name, (jvm, py) in job["phases"].items()), flush=True)
                    if path == "per-file":
                        print("    warm (a session already started and warmed, not what "
                              "users see): " + against_baseline(size, job, job["baseline"]),
                              flush=True)
                    if path == "per-file" and master in args.costs and variant == Variant():
                        job["costs"] = cost_split(spark, args.algorithm, config,
                                                  str(data[size][path]))
                        print_costs(size, master, job["rows"], 200, job["costs"])
    finally:
        masters.close()
    targets(args.sizes, replays, results)
    baseline_targets(args.sizes, cold, results)
    if cold:
        print("the cold jobs against the baseline (the headline) and the warm ones beside them:")
        for (size, master), job in cold.items():
            for text in cold_lines(size, job, results.get((size, master, "per-file"))):
                print(f"  {master}: {text}")
    if args.table:
        print(growth_table(args.sizes, replays, results))
    if args.scale_table:
        print(scale_table(args.sizes, cold, results))
    return 0


def cpu_target(sources: int) -> float:
    """Issue 35's ceiling on the per-file path's CPU per row, as a multiple of plain
    replay's: 2.0 for many small sources (2M:200), 1.5 for one large source (4M:1)."""
    return 1.5 if sources == 1 else 2.0


def targets(sizes: list[str], replays: dict[str, dict[str, Any]],
            results: dict[tuple[str, str, str], dict[str, Any]]) -> None:
    """Issue 35's targets for the per-file path, met or not, at every size run: CPU per row
    at most :func:`cpu_target` times plain replay's, and with many sources a wall time on
    ``local[2]`` no longer than plain replay's (run ``--sizes 2M:200 4M:1``)."""
    for size in sizes:
        _, sources = parse_size(size)
        replay = replays[size]
        print(f"targets at {size} (per-file path):")
        per_row = replay["cpu"] / replay["rows"]
        ceiling = cpu_target(sources)
        for (at, master, path), job in sorted(results.items()):
            if at != size or not path.startswith("per-file"):
                continue
            ratio = (job["jvm_cpu"] + job["python_cpu"]) / job["rows"] / per_row
            label = f"{master}, {path}" if path != "per-file" else master
            print(f"  {label}: CPU per row {ratio:.2f}x replay's (target <= {ceiling}): "
                  f"{'met' if ratio <= ceiling else 'NOT met'}")
            if master == "local[2]" and sources > 1:
                speed = replay["seconds"] / job["seconds"]
                print(f"  {label}: {speed:.2f}x plain replay's speed (target >= 1.0): "
                      f"{'met' if speed >= 1.0 else 'NOT met'}")
    peaks = {at: job["worker_peak_bytes"] for (at, master, path), job in results.items()
             if master == "local[2]" and path == "per-file"}
    if len(peaks) > 1:
        print("  worker peak by size (local[2], per-file): " + ", ".join(
            f"{at} {peak / 2**20:.0f} MB" for at, peak in peaks.items()))


def baseline_targets(sizes: list[str], cold: dict[tuple[str, str], dict[str, Any]],
                     warm: dict[tuple[str, str, str], dict[str, Any]]) -> None:
    """Issue 44's targets against the honest baseline, met or not, at every size run: the
    per-file job's CPU per row at most 1.5 times the baseline's, and with many sources a
    wall time on ``local[2]`` at most 0.8 times the baseline's (start-up included): judged
    on the cold job, as users run it; the warm job's figures are printed beside, named so."""
    jobs = [(at, master, "cold", job) for (at, master), job in cold.items()] + [
        (at, master, "warm", job) for (at, master, path), job in warm.items()
        if path == "per-file" and "baseline" in job]
    for size in sizes:
        _, sources = parse_size(size)
        print(f"issue 44 targets at {size} (per-file path, against the honest baseline):")
        for at, master, mode, job in sorted(jobs, key=lambda j: (j[1], j[2])):
            if at != size:
                continue
            base = job["baseline"]
            ratio = cpu_per_row(job) / per_row(base)
            print(f"  {master} ({mode}): CPU per row {ratio:.2f}x the baseline's (target <= "
                  f"1.5): {'met' if ratio <= 1.5 else 'NOT met'}")
            if master == "local[2]" and sources > 1:
                wall = job["seconds"] / base["seconds"]
                print(f"  {master} ({mode}): wall {wall:.2f}x the baseline's (target <= 0.8): "
                      f"{'met' if wall <= 0.8 else 'NOT met'}")


if __name__ == "__main__":
    sys.exit(main())
