"""Throughput of the event-time batcher reference: bare ``step`` and under the batch driver.

A synthetic collectd-like stream: ``KEYS`` measurement types sampled every 10 ms with a
delivery delay of 0-30 ms (so arrival order differs from event-time order), about 1% of
messages re-delivered (QoS 1 duplicates) and 0.5% arriving too late, W = 50 ms, D = 40 ms.
Prints messages per second and the outcome counts; figures only, no assertions.

    python benchmarks/bench_event_time_batcher.py [MESSAGES]
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter

from timealign.algorithm import Grouped, Record, Settled
from timealign.drive import drive
from timealign.event_time_batcher import ALGORITHM, Config, Flush, Message, Tick, initial, step
from timealign.event_time_batcher.invariants import check

MS = 1_000_000
KEYS = 20


def stream(count: int, seed: int = 7) -> list[Record]:
    rng = random.Random(seed)
    rows: list[tuple[int, int, str, str]] = []
    n = 0
    while len(rows) < count:
        tick = (n // KEYS) * 10 * MS
        key = f"k{n % KEYS}"
        delay = rng.randrange(0, 30 * MS)
        if rng.random() < 0.005:
            delay += 100 * MS
        rows.append((tick + delay, tick, key, f"m{n}"))
        if rng.random() < 0.01:
            rows.append((tick + delay + rng.randrange(MS), tick, key, f"m{n}r"))
        n += 1
    rows.sort()
    return [Record(id, key, stamp, arrival) for arrival, stamp, key, id in rows[:count]]


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    config = Config(50 * MS, 40 * MS, 0)
    records = stream(count)

    started = time.perf_counter()
    state = initial(config)
    now = 0
    for r in records:
        if r.arrival - now >= 10 * MS:  # a tick every 10 ms of processing time
            now = r.arrival
            state, _ = step(config, state, Tick(now))
        state, _ = step(config, state, Message(r.topic, r.stamp, r.arrival, r.id))
    step(config, state, Flush())
    bare = time.perf_counter() - started

    started = time.perf_counter()
    outcomes: Counter[str] = Counter()
    run = list(drive(ALGORITHM, config, records))
    for _, _, outputs in run:
        for output in outputs:
            account = ALGORITHM.account(output)
            if isinstance(account, Grouped):
                outcomes["batches"] += 1
                outcomes["batched messages"] += len(account.ids)
            elif isinstance(account, Settled):
                outcomes[f"{account.outcome} {account.reason}"] += 1
    driven = time.perf_counter() - started

    started = time.perf_counter()
    problems = check(config, [item for _, item, _ in run],
                     [(k, o) for k, _, outputs in run for o in outputs])
    checked = time.perf_counter() - started

    print(f"event_time_batcher: {count} messages, {KEYS} keys, W=50 ms D=40 ms")
    print(f"  bare step (tick every 10 ms): {count / bare:,.0f} messages/s")
    print(f"  batch driver (ticks at timers): {count / driven:,.0f} messages/s")
    print(f"  outcomes under the driver: {dict(sorted(outcomes.items()))}")
    print(f"  invariants EB-I1..I10 over that run: {checked:.2f} s, "
          f"{len(problems)} violations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
