"""Throughput of the conformance harness (spec/conformance.md); figures only, no assertions.

1. Over the protocol: ApproximateTime traces of 30 inputs (3 topics, seeded random walk)
   checked against the Python reference adapter run as a command (harness and adapter
   pinned to one core when the OS allows), traces per second.
2. In process: the same traces, the fast path checked against the rule text, next to the
   time both machines alone take (what the harness adds is the difference) and the time
   the rule text alone takes (the reference: the ceiling of any check against it).
3. Fuzz end to end (Hypothesis generation + protocol), traces per second.
4. Shrinking: a seeded fault found by ``--fuzz`` in a trace of 190 to 200 inputs (shorter
   divergences are ignored until then), the minimal size and the seconds spent shrinking
   (Hypothesis, at most 20 s, then greedy deletion; CF-R7).

    python benchmarks/bench_conformance.py [TRACES]
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import attrs

from timealign import registry
from timealign.approximate_time import machine
from timealign.conformance import Command, InProcess, implementation, run_reference
from timealign.conformance.harness import Judge, Progress, Verdict, check_fuzz
from timealign.vectors import Vector

ALGORITHM = "approximate_time"
ROOT = Path(__file__).resolve().parent.parent  # the seeded faults live in tests/conformance
TARGET = 2_000  # issue 26: traces of 30 inputs per CPU second, in process


def walk(seed: int, length: int = 30) -> Vector:
    rng = random.Random(seed)
    clock = [0, 0, 0]
    inputs: list[dict[str, Any]] = []
    for k in range(length):
        topic = rng.randrange(3)
        clock[topic] += rng.choice([0, 1, 2, 3, 5, 10, 17, -2])
        clock[topic] = max(0, clock[topic])
        inputs.append({"op": "message", "topic": topic, "stamp": clock[topic], "id": f"m{k}"})
    config = {"topics": 3, "queue_size": rng.choice([2, 5, 50]), "age_penalty": 0.1}
    return Vector(algorithm=ALGORITHM, name=f"walk{seed}", config=config, inputs=tuple(inputs))


def group_cpu(group: int | None) -> float:
    """CPU seconds used so far by the processes of a process group (the adapter)."""
    if group is None:
        return 0.0
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group:  # pgrp
            total += int(fields[11]) + int(fields[12])  # utime + stime, in clock ticks
    return total / os.sysconf("SC_CLK_TCK")


def rate(judge: Judge, traces: list[Vector], command: Command | None = None) -> str:
    """Traces per second of wall time, and per second of CPU time (harness + adapter):
    the second is what an idle core would give on this shared, loaded machine."""
    judge(traces[0])  # warm up: the adapter's imports
    group = command.process.pid if command is not None and command.process else None
    wall, cpu, other = time.perf_counter(), time.process_time(), group_cpu(group)
    for trace in traces:
        assert judge(trace).status == "agree"
    wall = time.perf_counter() - wall
    cpu = time.process_time() - cpu + group_cpu(group) - other
    return f"{len(traces) / wall:8.0f} traces/s wall, {len(traces) / cpu:6.0f} per CPU second"


class LongFirst(Judge):
    """A judge that ignores divergences in traces shorter than ``LONG`` inputs until one is
    found, so the shrink starts from a trace of about 200 inputs."""

    LONG = 190
    armed = False

    def __call__(self, vector: Vector) -> Verdict:
        if not self.armed and len(vector.inputs) < self.LONG:
            return Verdict("agree", ())
        verdict = super().__call__(vector)
        self.armed = self.armed or verdict.status == "differ"
        return verdict


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    pinned = hasattr(os, "sched_setaffinity")
    if pinned:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # the adapter inherits it
    traces = [walk(seed) for seed in range(count)]
    registered = registry.get(ALGORITHM)
    if registered.machine.fast is not None:  # the fast path beside the rule text
        rule_text, fast_path = registered, registered.fast_path()
    else:  # the registry runs the fast step itself
        rule_text, fast_path = attrs.evolve(
            registered, machine=attrs.evolve(registered.machine, step=machine.step)), registered
    print(f"harness, {count} ApproximateTime traces of 30 inputs"
          f"{' (one core)' if pinned else ''}:")
    adapter = f"{sys.executable} -m timealign.conformance.adapter {ALGORITHM}"
    with Command(adapter) as process:
        print(f"  over the protocol   {rate(Judge(rule_text, process), traces, process)}")
    in_process = InProcess(implementation(fast_path))
    print(f"  in process          {rate(Judge(rule_text, in_process), traces)}; target "
          f">= {TARGET:,} per CPU second (issue 26)")
    started = time.process_time()
    for trace in traces:
        run_reference(rule_text, trace.config, trace.inputs)
        run_reference(fast_path, trace.config, trace.inputs)
    bare = len(traces) / (time.process_time() - started)
    print(f"  both machines alone {bare:38.0f} per CPU second (the in-process ceiling)")
    started = time.process_time()
    for trace in traces:
        run_reference(rule_text, trace.config, trace.inputs)
    alone = len(traces) / (time.process_time() - started)
    print(f"  the rule text alone {alone:38.0f} per CPU second (the reference's own run: "
          "no check against it can be faster)")
    with Command(adapter) as process:
        started = time.perf_counter()
        report = check_fuzz(Judge(rule_text, process), 1000, 0, Progress(False), size=30)
        seconds = time.perf_counter() - started
        print(f"  fuzz end to end     {report.run / seconds:8.0f} traces/s "
              f"({report.run} traces, Hypothesis generation included)")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("shrinking a fault found by --fuzz in a trace of 190 to 200 inputs:")
    for fault, algorithm, seed in (("at-tie-start-highest", "approximate_time", 4),
                                   ("eb-lookup-last-batch", "event_time_batcher", 4),
                                   ("rb-hwm-clamp-2l", "rate_aware_batcher", 4)):
        faulty = f"{sys.executable} -m tests.conformance.mutants {fault}"
        with Command(faulty, cwd=str(ROOT)) as process:
            judge = LongFirst(registry.get(algorithm), process)
            started = time.perf_counter()
            report = check_fuzz(judge, 1000, seed, Progress(False), size=200, most=1)
            seconds = time.perf_counter() - started
        if not report.differences:  # the seed's traces never reached the fault's case
            print(f"  {fault:24} not found in {report.run} traces ({seconds:5.1f} s)")
            continue
        found = report.differences[0]
        print(f"  {fault:24} found in {found.original_size:3} inputs after {report.run:4} "
              f"traces ({seconds:5.1f} s), minimal {len(found.vector.inputs):2}: {report.note}")


if __name__ == "__main__":
    main()
