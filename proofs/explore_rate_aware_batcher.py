"""Bounded exhaustive exploration of the rate-aware batcher on small instances.

Time is scaled down: L = 1000 ns and a "14 Hz" stream becomes a 4 MHz stream (a pulse
every 250 ns, four slots per window), so a handful of inputs covers bootstrap, convergence
(4 diffs), gating, closes, gap jumps and evictions. At step ``k`` the alphabet offers
messages stamped relative to the nominal pulse instant ``T(k) = BASE + 250 k``; ids are
unique per trace (``<move><k>``).

Every prefix is checked for RB-I1, RB-I2, RB-I3, RB-I5 and RB-I7 (``invariants.check``)
and for RB-I4 (HWM monotone, by replaying the prefix). ``python -m
proofs.explore_rate_aware_batcher`` additionally runs the liveness probes recorded in the
spec: after every maximal trace, do empty polls alone deliver everything (*drain*), and do
16 further on-time pulses (*progress*)?
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from proofs.explore import Instance, Trace
from timealign.algorithm import run
from timealign.conformance.instances import rb_alphabet, rb_at, rb_one
from timealign.rate_aware_batcher import (
    ALGORITHM,
    Batch,
    Config,
    End,
    Input,
    Pending,
    Poll,
    invariants,
)


def check(config: Config, inputs: Trace, outputs: Any) -> list[str]:
    problems = invariants.check(config, list(inputs), list(outputs))
    hwms, state = [], ALGORITHM.initial(config)
    for item in inputs:
        if isinstance(item, End):
            break
        state, _ = ALGORITHM.step(config, state, item)
        hwms.append(state.hwm)
    return problems + invariants.hwm_monotone(hwms)


def instance(name: str, moves: Sequence[str], depth: int, **config: Any) -> Instance:
    settings = Config(batch_length_s=1e-6, **config)
    factor = f", factor {settings.factor}" if config else ""
    return Instance(
        name=name,
        algorithm=ALGORITHM,
        config=settings,
        moves=rb_alphabet(*moves),
        depth=depth,
        check=check,
        bounds=f"L=1000 ns, pulse 250 ns{factor}; moves {', '.join(moves)}",
    )


INSTANCES = [
    instance("rb/one-stream-late-log", ["pulse", "late", "log", "empty"], 8),
    instance("rb/two-streams-ahead", ["pulse", "mon", "log_ahead", "empty"], 7),
    instance("rb/length-changes", ["pulse", "empty", "length_2L", "length_half"], 8),
    instance("rb/far-outliers", ["pulse", "log_far", "det_far", "empty"], 7),
    instance("rb/factor-3.5", ["pulse", "log", "empty"], 9, timeout_factor=3.5),
]


def probes(item: Instance, depth: int = 6) -> tuple[int, int, int, list[Input]]:
    """Liveness probes over every trace of ``depth`` inputs: (traces, traces drained by 16
    empty polls, traces whose messages 16 further on-time pulses deliver, one stuck trace)."""
    traces = drained = progressed = 0
    stuck: list[Input] = []

    def delivered(inputs: list[Input]) -> bool:
        _, outputs = run(ALGORITHM, item.config, [*inputs, End()])
        return not any(isinstance(o, Pending) for _, o in outputs)

    def walk(trace: list[Input]) -> None:
        nonlocal traces, drained, progressed
        if len(trace) == depth:
            traces += 1
            drained += delivered([*trace, *[Poll(()) for _ in range(16)]])
            n = len(trace)
            fresh = [rb_one("detector_events", "det", rb_at(n + j), f"q{j}") for j in range(16)]
            ok = delivered_of_trace(trace, fresh)
            progressed += ok
            if not ok and (not stuck or len(trace) < len(stuck)):
                stuck[:] = trace
            return
        for move in item.moves(tuple(trace)):
            walk([*trace, move])

    def delivered_of_trace(trace: list[Input], fresh: list[Input]) -> bool:
        ids = {m.id for p in trace if isinstance(p, Poll) for m in p.messages}
        _, outputs = run(ALGORITHM, item.config, [*trace, *fresh])
        emitted = {i for _, o in outputs if isinstance(o, Batch) for i in o.ids}
        return ids <= emitted

    walk([])
    return traces, drained, progressed, stuck


def main(argv: Sequence[str] = ()) -> int:
    print(f"{'instance':28} {'traces':>7} {'drained':>8} {'progress':>9}  first stuck trace")
    for item in INSTANCES:
        if argv and not any(a in item.name for a in argv):
            continue
        traces, drained, progressed, stuck = probes(item)
        shown = [_short(i) for i in stuck]
        print(f"{item.name:28} {traces:>7} {drained:>8} {progressed:>9}  {shown}", flush=True)
    return 0


def _short(item: Input) -> str:
    if isinstance(item, Poll):
        return "+".join(m.id for m in item.messages) or "empty"
    return type(item).__name__


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
