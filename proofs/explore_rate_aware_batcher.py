"""Bounded exhaustive exploration of the rate-aware batcher on small instances.

Time is scaled down: L = 1000 ns and a "14 Hz" stream becomes a 4 MHz stream (a pulse
every 250 ns, four slots per window), so a handful of inputs covers bootstrap, convergence
(4 diffs), gating, closes, gap jumps and evictions. At step ``k`` the alphabet offers
messages stamped relative to the nominal pulse instant ``T(k) = BASE + 250 k``; ids are
unique per trace (``<move><k>``).

Both profiles (RB-R17). The ``rb/…`` instances run the card profile without a clock; each
``rb-head/…`` twin runs ``esslivedata-head`` on the same messages with a wall clock (RB-R18)
that advances one pulse period per poll, its ``stall`` move an empty poll 10 L of clock
later (the backstop's threshold, RB-R26).

Every prefix is checked for the profile's run invariants (``invariants.check``: RB-I1,
RB-I2, RB-I5, RB-I7 and RB-I3 or RB-I9) and, by replaying the prefix, for RB-I4 (card: the
HWM is monotone) or RB-I8 (head: it falls only at a due backstop). ``python -m
proofs.explore_rate_aware_batcher`` additionally runs the liveness probes recorded in the
spec: after every maximal trace, do 16 empty polls alone (head: each 10 L of clock later)
deliver everything (*drain*), and do 16 further on-time pulses (head: 48, so that the clock,
running with data time, passes the backstop's 10 L) (*progress*)?
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from proofs.explore import Instance, Trace
from timealign.algorithm import run
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
from timealign.rate_aware_batcher.traces import (
    EXPLORED,
    RB_PULSE,
    RB_STALL,
    Explored,
    rb_at,
    rb_clock_of,
    rb_one,
)


def check(config: Config, inputs: Trace, outputs: Any) -> list[str]:
    """The profile's run invariants and its HWM property (RB-I4 or RB-I8)."""
    problems = invariants.check(config, list(inputs), list(outputs))
    observed, state = [], ALGORITHM.machine.initial(config)
    for item in inputs:
        if isinstance(item, End):
            break
        state, _ = ALGORITHM.machine.step(config, state, item)
        observed.append((state.hwm, state.last_close))
    if config.head:
        return problems + invariants.hwm_falls_only_at_backstop(config, list(inputs), observed)
    return problems + invariants.hwm_monotone(h for h, _ in observed)


def instance(explored: Explored) -> Instance:
    """The package's instance (``rate_aware_batcher.traces.EXPLORED``, which ``timealign
    conform --target esslivedata-card``/``-head`` walk too) with its depth and checks."""
    settings, moves = explored.config, explored.moves
    factor = f", factor {settings.factor}" if settings.timeout_factor is not None else ""
    head = settings.head
    return Instance(
        name=explored.name,
        algorithm=ALGORITHM,
        config=settings,
        moves=explored.instance().moves,
        depth=explored.depth,
        check=check,
        bounds=(f"L=1000 ns, pulse 250 ns{factor}{', head, clock' if head else ''}; "
                f"moves {', '.join(moves)}"),
    )


INSTANCES = [instance(explored) for explored in EXPLORED]


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
            now = rb_clock_of(tuple(trace)) if item.config.head else None
            step = RB_STALL if now is not None else 0
            drained += delivered([*trace, *[Poll((), None if now is None else now + step * j)
                                            for j in range(1, 17)]])
            n = len(trace)
            fresh = [Poll(rb_one("detector_events", "det", rb_at(n + j), f"q{j}").messages,
                          None if now is None else now + RB_PULSE * (j + 1))
                     for j in range(16 if now is None else 48)]
            ok = delivered_of_trace(trace, fresh)
            progressed += ok
            if not ok and (not stuck or len(trace) < len(stuck)):
                stuck[:] = trace
            return
        for move in item.moves(tuple(trace)):
            walk([*trace, move])

    def delivered_of_trace(trace: list[Input], fresh: Sequence[Input]) -> bool:
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
