"""The compiled steps alone, for ``perf`` and ``callgrind``: where a message's time goes (issue 44).

Runs one machine's fast path (``ALGORITHM.machine.fast``, the build installed) over the very
inputs its benchmark times, built beforehand: ApproximateTime (``at``) over
``bench_approximate_time.py``'s trace, the event-time batcher (``eb``) over
``bench_event_time_batcher.py``'s messages with its ticks every 10 ms. ``--no-step`` runs
the same program without the loop, so that instructions per message are the difference of
two runs (``benchmarks/README.md``, issue 44):

    PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=at.out \\
        python benchmarks/profile_steps.py at --messages 40000
    PYTHONHASHSEED=0 valgrind --tool=callgrind python benchmarks/profile_steps.py at \\
        --messages 40000 --no-step
    perf record -g python benchmarks/profile_steps.py eb --messages 400000
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from typing import Any

from bench_approximate_time import CONFIG as AT_CONFIG  # scripts run from their folder
from bench_approximate_time import trace
from bench_event_time_batcher import inputs_of, stream

from timealign import iter_outputs
from timealign.approximate_time import ALGORITHM as AT
from timealign.event_time_batcher import ALGORITHM as EB
from timealign.event_time_batcher import Config as EBConfig

MS = 1_000_000


def workload(machine: str, messages: int) -> tuple[Any, Any, list[Any]]:
    """(fast path, config, inputs) of a machine's benchmark."""
    if machine == "at":
        return AT.machine.fast, AT_CONFIG, list(trace(messages))
    config = EBConfig(50 * MS, 40 * MS, 0)  # bench_event_time_batcher.py's
    return EB.machine.fast, config, inputs_of(stream(messages))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("machine", choices=["at", "eb"])
    parser.add_argument("--messages", type=int, default=40_000)
    parser.add_argument("--no-step", action="store_true",
                        help="build the inputs only (the baseline run to subtract)")
    parser.add_argument("--fold", action="store_true",
                        help="step through iter_outputs and count the outputs, as "
                             "bench_approximate_time.py's throughput line does")
    args = parser.parse_args(argv)
    fast, config, inputs = workload(args.machine, args.messages)
    gc.collect()
    if args.no_step:
        return 0
    if args.fold:
        algorithm: Any = (AT if args.machine == "at" else EB).fast_path()
        started = time.process_time()
        outputs = sum(1 for _ in iter_outputs(algorithm, config, inputs))
        seconds = time.process_time() - started
        print(f"{args.machine}: {len(inputs)} inputs folded, {outputs} outputs, "
              f"{len(inputs) / seconds:,.0f} per CPU second", file=sys.stderr)
        return 0
    step = fast.step
    started = time.process_time()
    state = fast.initial(config)
    for item in inputs:
        state, _ = step(config, state, item)
    seconds = time.process_time() - started
    print(f"{args.machine}: {len(inputs)} inputs, {len(inputs) / seconds:,.0f} per CPU "
          f"second", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
