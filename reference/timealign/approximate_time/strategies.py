"""Hypothesis strategies for random ApproximateTime traces (CF-R9).

They serve the stateful and differential tests of the reference and ``timealign conform
--fuzz`` (through :mod:`.traces`), which runs the same traces against another
implementation and lets Hypothesis shrink a divergence. Every input is one small draw, so
Hypothesis shrinks a trace by deleting and simplifying inputs; ids are fresh per position.
Covered: ties, out-of-order stamps, overflow, every age-penalty class, both arithmetics,
interval bounds, lower bounds, end inputs mid-run, stamps near 0 and at a realistic epoch
above 2^53 (float precision).

This module needs Hypothesis (``pip install 'timealign[conform]'``).
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from timealign.approximate_time.model import Config, End, Input, Message
from timealign.strategies import sequence
from timealign.traces import Run

PENALTIES = (0.0, 0.1, 0.25, 0.7, 1.5)
EPOCH = 1_700_000_000_123_456_789  # a realistic epoch stamp: above 2^53, odd
ARITHMETICS = ("ros2", "ros2", "ros1")

_QUEUES = st.sampled_from([1, 2, 3, 4, 50])
_PENALTY = st.sampled_from(PENALTIES)
_INTERVAL = st.sampled_from([None, 0, 5, 20])
_BOUND = st.sampled_from([0, 1, 5, 20])
_AT_BASE = st.sampled_from([0, 0, EPOCH])


@st.composite
def at_configs(draw: st.DrawFn, max_topics: int = 3, min_topics: int = 1,
               arithmetics: Sequence[str] = ARITHMETICS) -> Config:
    """ApproximateTime configs: ``min_topics`` to ``max_topics`` topics, tiny queues
    (overflow), every age penalty class, strict and absent interval bounds, lower bounds,
    the given arithmetics."""
    arithmetic = draw(st.sampled_from(list(arithmetics)))
    # ROS 1's policy takes two topics or more (AT-R19).
    n = draw(st.integers(max(min_topics, 2 if arithmetic == "ros1" else 1), max_topics))
    return Config(
        topics=n,
        queue_size=draw(_QUEUES),
        age_penalty=draw(_PENALTY),
        max_interval_duration=draw(_INTERVAL),
        inter_message_lower_bounds=draw(
            st.none() | st.lists(_BOUND, min_size=n, max_size=n)),
        arithmetic=arithmetic,
    )


# One draw per input: (topic, stamp step) or the end; simplest first, so Hypothesis
# shrinks toward ties on topic 0. Negative steps are out-of-order stamps.
AT_MOVES: tuple[tuple[int, int] | None, ...] = (
    *((k, d) for d in (0, 1, 2, 3, 5, 10, 17, 40, -1, -4, -10) for k in range(3)), None)
_AT_ANY = st.sampled_from(AT_MOVES)
_AT_IN_ORDER = st.sampled_from([m for m in AT_MOVES if m is None or m[1] >= 0])
# ros1 traces that mix time bases: a topic may also jump from near 0 to the epoch.
_AT_MIXED = st.sampled_from([*AT_MOVES, *((k, EPOCH) for k in range(3))])
_AT_MIXED_IN_ORDER = st.sampled_from(
    [m for m in AT_MOVES if m is None or m[1] >= 0] + [(k, EPOCH) for k in range(3)])


@st.composite
def at_runs(draw: st.DrawFn, max_topics: int = 3, max_inputs: int = 25,
            out_of_order: bool = True, epoch: bool = False, min_topics: int = 1,
            arithmetics: Sequence[str] = ARITHMETICS) -> Run:
    """A config and inputs: per-topic stamps mostly increasing, with ties, backsteps and
    ends; with ``epoch``, stamps may start at a realistic epoch (beyond float precision).
    Stamps are never negative (AT-R2). A ros2 trace never mixes stamps near 0 with epoch
    stamps, so every age stays far below 10^12 ns (AT-H2); with ``epoch``, a ros1 trace
    may (sim time near 0 next to wall-clock stamps, each topic starting at either and
    possibly jumping to the epoch), where ROS 1's 32-bit time is at stake (AT-R19)."""
    config = draw(at_configs(max_topics, min_topics, arithmetics))
    n = config.topics
    if epoch and config.arithmetic == "ros1" and draw(st.booleans()):
        bases = draw(st.lists(_AT_BASE, min_size=n, max_size=n))
        moves = _AT_MIXED if out_of_order else _AT_MIXED_IN_ORDER
    else:
        bases = [draw(_AT_BASE) if epoch else 0] * n
        moves = _AT_ANY if out_of_order else _AT_IN_ORDER
    clock = [0] * n
    inputs: list[Input] = []
    for k, move in enumerate(sequence(draw, moves, max_inputs)):
        if move is None:
            inputs.append(End())
            continue
        topic = move[0] % n
        clock[topic] = max(0, clock[topic] + move[1])
        inputs.append(Message(topic, bases[topic] + clock[topic], f"m{k}"))
    return config, inputs
