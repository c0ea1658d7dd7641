"""Hypothesis strategies for random event-time batcher traces (CF-R9).

Shared by the stateful tests of the reference and ``timealign conform --fuzz`` (through
:mod:`.traces`). Each input is three small draws, so Hypothesis shrinks a trace by deleting
and simplifying inputs. Covered: messages and ticks at equal and increasing instants in
both orders, ticks at requested timer instants, event times across the acceptance band,
0/1/2 ns conflicts, re-deliveries, re-used ids and flushes.

This module needs Hypothesis (``pip install 'timealign[conform]'``).
"""

from __future__ import annotations

from hypothesis import strategies as st

from timealign.event_time_batcher.model import Config, Flush, Input, Message, Tick
from timealign.strategies import sequence
from timealign.traces import Run

ADVANCE = (0, 0, 0, 1, 2, 5, 13, 30)


def eb_configs(unit: int = 1) -> st.SearchStrategy[Config]:
    """Windows from 0 (every conflict splits at once) to 40 units, delays 0 to 25, leaps 0
    to 6; ``unit`` ns each (1 ms for an upstream whose config is whole milliseconds)."""
    return st.builds(Config, st.integers(0, 40).map(lambda w: w * unit),
                     st.integers(0, 25).map(lambda d: d * unit),
                     st.integers(0, 6).map(lambda leap: leap * unit))


EB_MOVES = ("message_a", "message_b", "message_c", "near", "near_b", "tick", "timer",
            "flush", "reuse")
_EB_STEP = st.tuples(st.sampled_from(EB_MOVES), st.sampled_from(ADVANCE), st.integers(-30, 8))


@st.composite
def eb_runs(draw: st.DrawFn, max_inputs: int = 25, unit: int = 1, reuse: bool = True) -> Run:
    """Messages and ticks at equal and increasing processing times (tick before message and
    message before tick at one instant), event times around the acceptance band and around
    the times already seen (duplicates, 1 and 2 ns conflicts, split points), re-deliveries
    with a new id, re-used ids, ticks at the requested timer instants, and flushes.

    Each input is three draws (move, processing-time advance, detail); the detail is the
    event-time offset of a message, or picks the seen time, timer or id a move re-uses.
    Advances, offsets and the config are in ``unit`` ns; the near moves stay 0 to 2 ns
    from a seen time. Processing time never goes backwards; without ``reuse`` every id is
    fresh (EB-D13).
    """
    config = draw(eb_configs(unit))
    now, seen = 0, [("a", 0)]
    timers: list[int] = []
    inputs: list[Input] = []
    for k, (move, advance, detail) in enumerate(sequence(draw, _EB_STEP, max_inputs)):
        if move == "flush":
            inputs.append(Flush())
            continue
        if move in ("tick", "timer"):
            due = [t for t in timers if t >= now]
            now = due[detail % len(due)] if move == "timer" and due else now + advance * unit
            inputs.append(Tick(now))
            continue
        now += advance * unit
        if move.startswith("message"):
            key, t = move[-1], max(0, now + detail * unit)
        else:
            key, t = seen[detail % len(seen)]
            key = "b" if move == "near_b" else key
            t = max(0, t + (0, 0, -1, 1, -2, 2)[detail % 6])
        fresh = move != "reuse" or k == 0 or not reuse
        ident = f"{key}{k}" if fresh else f"{key}{detail % k}"
        seen.append((key, t))
        timers.append(t + config.max_message_delay)
        inputs.append(Message(key, t, now, ident))
    return config, inputs
