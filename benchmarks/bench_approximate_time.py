"""Throughput and memory of the ApproximateTime reference on a realistic trace.

Three topics at 30 Hz, 10 Hz and 100 Hz, each stamp jittered by up to +-2 ms (in order per
topic), about 1 % of messages lost, arrivals in stamp order with a per-topic transport
delay. Prints messages per second of ``timealign.replay`` over about one million messages
(one core, inputs built beforehand) and the peak traced memory of the machine over a lazy
input stream at two lengths: flat memory means the two peaks match.

    python benchmarks/bench_approximate_time.py [--messages N]
"""

from __future__ import annotations

import argparse
import heapq
import os
import random
import time
import tracemalloc
from collections.abc import Iterator

from timealign import replay
from timealign.approximate_time import ALGORITHM, Config, Message, Published

RATES_HZ = (30, 10, 100)
DELAY_NS = (3_000_000, 8_000_000, 1_000_000)
JITTER_NS = 2_000_000
LOSS = 0.01
CONFIG = Config(topics=["camera", "lidar", "imu"], queue_size=30)


def trace(messages: int, seed: int = 7) -> Iterator[Message]:
    """Lazily yield ``messages`` messages in arrival order."""
    rng = random.Random(seed)
    arrivals: list[tuple[int, int, int, int]] = []
    counters = [0] * len(RATES_HZ)

    def schedule(topic: int) -> None:
        period = 1_000_000_000 // RATES_HZ[topic]
        n = counters[topic]
        counters[topic] += 1
        stamp = 1_000_000_000 + n * period + rng.randint(-JITTER_NS, JITTER_NS)
        heapq.heappush(arrivals, (stamp + DELAY_NS[topic], topic, n, stamp))

    for topic in range(len(RATES_HZ)):
        schedule(topic)
    produced = 0
    while produced < messages:
        _, topic, n, stamp = heapq.heappop(arrivals)
        schedule(topic)
        if rng.random() < LOSS:
            continue
        produced += 1
        yield Message(topic, stamp, f"{topic}:{n}")


def throughput(messages: int) -> tuple[float, int]:
    """Messages per CPU second of this process (``process_time``: the figure for one core,
    less sensitive than wall time to other jobs on a shared machine)."""
    inputs = list(trace(messages))
    started = time.process_time()
    published = sum(1 for _, output in replay(ALGORITHM, CONFIG, inputs)
                    if isinstance(output, Published))
    return len(inputs) / (time.process_time() - started), published


def peak_memory(messages: int) -> int:
    tracemalloc.start()
    for _ in replay(ALGORITHM, CONFIG, trace(messages)):
        pass
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=1_000_000)
    args = parser.parse_args()
    rate, published = throughput(args.messages)
    load = os.getloadavg()[0]
    print(f"approximate_time: {args.messages} messages, {published} sets published, "
          f"{rate:,.0f} msgs/s (replay, CPU time of one core, queue_size "
          f"{CONFIG.queue_size}; load average {load:.1f} on {os.cpu_count()} cores)")
    short, long = args.messages // 20, args.messages // 2
    for length in (short, long):
        print(f"approximate_time: peak traced memory over {length} messages "
              f"(lazy input): {peak_memory(length) / 1024:,.0f} KiB")


if __name__ == "__main__":
    main()
