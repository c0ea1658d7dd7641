"""Throughput of the conformance harness (spec/conformance.md); figures only, no assertions.

1. Over the protocol: ApproximateTime traces of 30 inputs (3 topics, seeded random walk)
   checked against the Python reference adapter run as a command (harness and adapter
   pinned to one core when the OS allows), traces per second.
2. In process: the same traces, the fast path checked against the rule text, next to the
   time both machines alone take (what the harness adds is the difference).
3. Fuzz end to end (Hypothesis generation + protocol), traces per second.
4. Shrinking: a seeded fault found by ``--fuzz`` in traces of up to 200 inputs, the size
   of the trace it was found in, the minimal size and the seconds spent shrinking.

    python benchmarks/bench_conformance.py [TRACES]
"""

from __future__ import annotations

import os
import random
import sys
import time
from typing import Any

import attrs

from tests.conformance.mutants import command
from timealign import registry
from timealign.approximate_time import machine
from timealign.conformance import Command, InProcess, implementation, run_reference
from timealign.conformance.harness import Judge, Progress, check_fuzz
from timealign.vectors import Vector

ALGORITHM = "approximate_time"


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


def rate(judge: Judge, traces: list[Vector]) -> float:
    judge(traces[0])  # warm up: the adapter's imports
    started = time.perf_counter()
    for trace in traces:
        assert judge(trace).status == "agree"
    return len(traces) / (time.perf_counter() - started)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    pinned = hasattr(os, "sched_setaffinity")
    if pinned:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # the adapter inherits it
    traces = [walk(seed) for seed in range(count)]
    registered = registry.get(ALGORITHM)
    fast = getattr(registered, "fast", None) or registered.step
    rule_text = attrs.evolve(registered, step=machine.step)
    print(f"harness, {count} ApproximateTime traces of 30 inputs"
          f"{' (one core)' if pinned else ''}:")
    adapter = f"{sys.executable} -m timealign.conformance.adapter {ALGORITHM}"
    with Command(adapter) as process:
        print(f"  over the protocol   {rate(Judge(rule_text, process), traces):8.0f} traces/s")
    fast_path = attrs.evolve(registered, step=fast)
    in_process = InProcess(implementation(fast_path))
    print(f"  in process          {rate(Judge(rule_text, in_process), traces):8.0f} traces/s")
    started = time.perf_counter()
    for trace in traces:
        run_reference(rule_text, trace.config, trace.inputs)
        run_reference(fast_path, trace.config, trace.inputs)
    bare = len(traces) / (time.perf_counter() - started)
    print(f"  both machines alone {bare:8.0f} traces/s (the ceiling of the in-process check)")
    with Command(adapter) as process:
        started = time.perf_counter()
        report = check_fuzz(Judge(rule_text, process), 1000, 0, Progress(False), size=30)
        seconds = time.perf_counter() - started
        print(f"  fuzz end to end     {report.run / seconds:8.0f} traces/s "
              f"({report.run} traces, Hypothesis generation included)")
    print("shrinking a fault found by --fuzz in traces of up to 200 inputs:")
    for fault, algorithm, seed in (("at-tie-start-highest", "approximate_time", 4),
                                   ("eb-lookup-last-batch", "event_time_batcher", 4),
                                   ("rb-hwm-clamp-2l", "rate_aware_batcher", 4)):
        with Command(command(fault)) as process:
            judge = Judge(registry.get(algorithm), process)
            started = time.perf_counter()
            report = check_fuzz(judge, 1000, seed, Progress(False), size=200)
            seconds = time.perf_counter() - started
        [found] = report.differences
        print(f"  {fault:24} found in {found.original_size:3} inputs, minimal "
              f"{len(found.vector.inputs):2}, {seconds:5.1f} s ({report.note})")


if __name__ == "__main__":
    main()
