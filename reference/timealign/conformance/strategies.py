"""Hypothesis strategies for random traces of every algorithm (CF-R9).

They serve two clients: the stateful and differential tests of the reference, and
``timealign conform --fuzz``, which runs the same traces against another implementation
and lets Hypothesis shrink a divergence. Every trace is built from small, independent
draws (one per input), so Hypothesis shrinks it by deleting and simplifying inputs; ids are
fresh per position, so a deletion never makes a trace invalid by accident. Each strategy
covers the adversarial corners its spec lists: ties, out-of-order stamps, overflow, large
epoch stamps (float precision), re-used ids, timer/message collisions, gaps and outliers.

This module needs Hypothesis (``pip install 'timealign[conform]'``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from timealign import approximate_time as at
from timealign import event_time_batcher as eb
from timealign import rate_aware_batcher as rb
from timealign.vectors import Vector

JSON = dict[str, Any]
Run = tuple[Any, list[Any]]

# --- ApproximateTime ---------------------------------------------------------------------

PENALTIES = (0.0, 0.1, 0.25, 0.7, 1.5)
EPOCH = 1_700_000_000_123_456_789  # a realistic epoch stamp: above 2^53, odd


_QUEUES = st.sampled_from([1, 2, 3, 4, 50])
_PENALTY = st.sampled_from(PENALTIES)
_INTERVAL = st.sampled_from([None, 0, 5, 20])
_BOUND = st.sampled_from([0, 1, 5, 20])
_ARITHMETIC = st.sampled_from(["ros2", "ros2", "ros1"])
_AT_BASE = st.sampled_from([0, 0, EPOCH])


@st.composite
def at_configs(draw: st.DrawFn, max_topics: int = 3) -> at.Config:
    """ApproximateTime configs: 1 to ``max_topics`` topics, tiny queues (overflow), every
    age penalty class, strict and absent interval bounds, lower bounds, both arithmetics."""
    n = draw(st.integers(1, max_topics))
    return at.Config(
        topics=n,
        queue_size=draw(_QUEUES),
        age_penalty=draw(_PENALTY),
        max_interval_duration=draw(_INTERVAL),
        inter_message_lower_bounds=draw(
            st.none() | st.lists(_BOUND, min_size=n, max_size=n)),
        arithmetic=draw(_ARITHMETIC),
    )


def sequence(draw: st.DrawFn, element: st.SearchStrategy[Any], max_size: int) -> list[Any]:
    """Up to ``max_size`` elements, about half of ``max_size`` on average (a plain
    ``st.lists`` averages five), one draw per element; shrinking shortens it."""
    size = draw(st.integers(0, max_size))
    found: list[Any] = draw(st.lists(element, min_size=size, max_size=size))
    return found


# One draw per input: (topic, stamp step) or the end; simplest first, so Hypothesis
# shrinks toward ties on topic 0. Negative steps are out-of-order stamps.
AT_MOVES: tuple[tuple[int, int] | None, ...] = (
    *((k, d) for d in (0, 1, 2, 3, 5, 10, 17, 40, -1, -4, -10) for k in range(3)), None)
_AT_ANY = st.sampled_from(AT_MOVES)
_AT_IN_ORDER = st.sampled_from([m for m in AT_MOVES if m is None or m[1] >= 0])


@st.composite
def at_runs(draw: st.DrawFn, max_topics: int = 3, max_inputs: int = 25,
            out_of_order: bool = True, epoch: bool = False) -> Run:
    """A config and inputs: per-topic stamps mostly increasing, with ties, backsteps and
    ends; with ``epoch``, stamps may start at a realistic epoch (beyond float precision)."""
    config = draw(at_configs(max_topics))
    base = draw(_AT_BASE) if epoch else 0
    moves = _AT_ANY if out_of_order else _AT_IN_ORDER
    clock = [0] * config.topics
    inputs: list[at.Input] = []
    for k, move in enumerate(sequence(draw, moves, max_inputs)):
        if move is None:
            inputs.append(at.End())
            continue
        topic = move[0] % config.topics
        clock[topic] = max(0, clock[topic] + move[1])
        inputs.append(at.Message(topic, base + clock[topic], f"m{k}"))
    return config, inputs


# --- Event-time batcher ------------------------------------------------------------------

ADVANCE = (0, 0, 0, 1, 2, 5, 13, 30)


def eb_configs() -> st.SearchStrategy[eb.Config]:
    """Windows from 0 (every conflict splits at once) to 40, delays 0 to 25, leaps 0 to 6."""
    return st.builds(eb.Config, st.integers(0, 40), st.integers(0, 25), st.integers(0, 6))


EB_MOVES = ("message_a", "message_b", "message_c", "near", "near_b", "tick", "timer",
            "flush", "reuse")
_EB_STEP = st.tuples(st.sampled_from(EB_MOVES), st.sampled_from(ADVANCE), st.integers(-30, 8))


@st.composite
def eb_runs(draw: st.DrawFn, max_inputs: int = 25) -> Run:
    """Messages and ticks at equal and increasing processing times (tick before message and
    message before tick at one instant), event times around the acceptance band and around
    the times already seen (duplicates, 1 and 2 ns conflicts, split points), re-deliveries
    with a new id, re-used ids, ticks at the requested timer instants, and flushes.

    Each input is three draws (move, processing-time advance, detail); the detail is the
    event-time offset of a message, or picks the seen time, timer or id a move re-uses.
    """
    config = draw(eb_configs())
    now, seen = 0, [("a", 0)]
    timers: list[int] = []
    inputs: list[eb.Input] = []
    for k, (move, advance, detail) in enumerate(sequence(draw, _EB_STEP, max_inputs)):
        if move == "flush":
            inputs.append(eb.Flush())
            continue
        if move in ("tick", "timer"):
            due = [t for t in timers if t >= now]
            now = due[detail % len(due)] if move == "timer" and due else now + advance
            inputs.append(eb.Tick(now))
            continue
        now += advance
        if move.startswith("message"):
            key, t = move[-1], max(0, now + detail)
        else:
            key, t = seen[detail % len(seen)]
            key = "b" if move == "near_b" else key
            t = max(0, t + (0, 0, -1, 1, -2, 2)[detail % 6])
        ident = f"{key}{k}" if move != "reuse" or k == 0 else f"{key}{detail % k}"
        seen.append((key, t))
        timers.append(t + config.max_message_delay)
        inputs.append(eb.Message(key, t, now, ident))
    return config, inputs


# --- Rate-aware batcher ------------------------------------------------------------------

# (batch_length_s, pulse period in ns): L = 1000 ns with 4 or 10 slots per window (the
# bounded explorer's scale), and the real 14 Hz stream with a 1 s window.
SCALES = ((1e-6, 250), (1e-6, 100), (1.0, 71_428_571))
RB_BASES = (1_000_000, 1_700_000_000 * 10**9)
# Offsets from the nominal pulse instant: (ns, tenths of a pulse): on time, 1 ns jitter,
# half a pulse (a rounding tie), late by 3.6 pulses, ahead by 6 and far ahead by 4000.
OFFSETS = ((0, 0), (0, 0), (0, 0), (1, 0), (-1, 0), (0, 5), (0, -36), (0, 60), (0, 40_000))
STREAMS = (("detector_events", "det"), ("monitor_events", "mon"), ("log", "log"))


_SCALE = st.sampled_from(SCALES)
_FACTOR = st.sampled_from([None, None, 0.9, 3.5])
_RB_BASE = st.sampled_from(RB_BASES)


@st.composite
def rb_configs(draw: st.DrawFn) -> tuple[rb.Config, int]:
    """A config and the pulse period its traces use."""
    length, pulse = draw(_SCALE)
    return rb.Config(batch_length_s=length, timeout_factor=draw(_FACTOR)), pulse


RB_MESSAGES = tuple((stream, offset) for offset in OFFSETS for stream in STREAMS)
RB_KINDS = ("poll", "poll", "poll", "poll", "poll", "poll", "empty", "length", "reuse")
# One integer per input, read as mixed-radix digits (kind, message count, three messages):
# one choice per input keeps generation cheap, and 0 is the simplest poll to shrink to.
_RB_POLL = st.integers(0, len(RB_KINDS) * 3 * len(RB_MESSAGES) ** 3 - 1)


def digits(number: int, *radices: int) -> list[int]:
    """``number`` as mixed-radix digits, least significant first."""
    found = []
    for radix in radices:
        number, digit = divmod(number, radix)
        found.append(digit)
    return found


@st.composite
def rb_runs(draw: st.DrawFn, max_inputs: int = 25) -> Run:
    """Polls of pulsed streams: on-time pulses with jitter, missing pulses, late and
    ahead messages, far outliers (gaps), log lines, empty polls, batch length changes and
    re-used ids; the end input closes the run. A poll at step ``k`` holds one to three
    messages stamped relative to the nominal pulse instant of ``k``."""
    (config, pulse), base = draw(rb_configs()), draw(_RB_BASE)
    length = config.batch_length_s
    inputs: list[rb.Input] = []
    size = len(RB_MESSAGES)
    for k, number in enumerate(sequence(draw, _RB_POLL, max_inputs)):
        choice, count, *picked = digits(number, len(RB_KINDS), 3, size, size, size)
        kind, messages = RB_KINDS[choice], [RB_MESSAGES[p] for p in picked[: count + 1]]
        if kind == "empty":
            inputs.append(rb.Poll(()))
            continue
        if kind == "length":
            inputs.append(rb.SetBatchLength(length * (0.5, 1.0, 2.0)[len(messages) - 1]))
            continue
        if kind == "reuse" and len(messages) == 1:
            messages = messages * 2
        polled = []
        for j, ((stream_kind, name), (nanoseconds, tenths)) in enumerate(messages):
            stamp = max(0, base + pulse * k + nanoseconds + pulse * tenths // 10)
            # A re-used id repeats within its poll, which RB-D4 refuses whatever the state.
            # Re-using an id of an earlier poll would make the trace depend on whether that
            # message was already emitted: re-use after emission breaks the precondition
            # of unique ids (RB-D4, caught by RB-I1), and a deletion while shrinking could
            # turn a refused re-use into such a trace.
            ident = f"reuse{k}" if kind == "reuse" else f"{name}{k}_{j}"
            polled.append(rb.Polled(stream_kind, name, stamp, ident))
        inputs.append(rb.Poll(tuple(polled)))
    inputs.append(rb.End())
    return config, inputs


# --- traces as vectors -------------------------------------------------------------------

RUNS: dict[str, Callable[..., st.SearchStrategy[Run]]] = {
    "approximate_time": lambda size: at_runs(max_inputs=size, epoch=True),
    "event_time_batcher": lambda size: eb_runs(max_inputs=size),
    "rate_aware_batcher": lambda size: rb_runs(max_inputs=size),
}


def traces(algorithm: str, size: int = 30) -> st.SearchStrategy[Vector]:
    """Random traces of ``algorithm`` (up to ``size`` inputs) as vectors without outputs."""
    from timealign import registry

    descriptor = registry.get(algorithm)
    if algorithm not in RUNS:
        raise KeyError(f"no fuzz strategy for {algorithm!r}")

    def encode(run: Run) -> Vector:
        config, inputs = run
        return Vector(algorithm=algorithm, name=f"{algorithm}_fuzz",
                      config=descriptor.config_to_json(config),
                      inputs=tuple(descriptor.input_to_json(i) for i in inputs))

    return RUNS[algorithm](size).map(encode)
