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
STEPS = (0, 0, 1, 2, 3, 5, 10, 17, 40)
EPOCH = 1_700_000_000_123_456_789  # a realistic epoch stamp: above 2^53, odd


@st.composite
def at_configs(draw: st.DrawFn, max_topics: int = 3) -> at.Config:
    """ApproximateTime configs: 1 to ``max_topics`` topics, tiny queues (overflow), every
    age penalty class, strict and absent interval bounds, lower bounds, both arithmetics."""
    n = draw(st.integers(1, max_topics))
    return at.Config(
        topics=n,
        queue_size=draw(st.sampled_from([1, 2, 3, 4, 50])),
        age_penalty=draw(st.sampled_from(PENALTIES)),
        max_interval_duration=draw(st.sampled_from([None, 0, 5, 20])),
        inter_message_lower_bounds=draw(
            st.none() | st.lists(st.sampled_from([0, 1, 5, 20]), min_size=n, max_size=n)),
        arithmetic=draw(st.sampled_from(["ros2", "ros2", "ros1"])),
    )


@st.composite
def at_runs(draw: st.DrawFn, max_topics: int = 3, max_inputs: int = 25,
            out_of_order: bool = True, epoch: bool = False) -> Run:
    """A config and inputs: per-topic stamps mostly increasing, with ties, backsteps and
    ends; with ``epoch``, stamps may start at a realistic epoch (beyond float precision)."""
    config = draw(at_configs(max_topics))
    base = draw(st.sampled_from([0, 0, EPOCH])) if epoch else 0
    clock = [0] * config.topics
    inputs: list[at.Input] = []
    for k in range(draw(st.integers(0, max_inputs))):
        if draw(st.integers(0, 19)) == 0:
            inputs.append(at.End())
            continue
        topic = draw(st.integers(0, config.topics - 1))
        delta = draw(st.sampled_from(STEPS))
        if out_of_order and draw(st.integers(0, 9)) == 0:
            delta = -draw(st.integers(1, 10))
        clock[topic] = max(0, clock[topic] + delta)
        inputs.append(at.Message(topic, base + clock[topic], f"m{k}"))
    return config, inputs


# --- Event-time batcher ------------------------------------------------------------------

ADVANCE = (0, 0, 0, 1, 2, 5, 13, 30)


@st.composite
def eb_configs(draw: st.DrawFn) -> eb.Config:
    """Windows from 0 (every conflict splits at once) to 40, delays 0 to 25, leaps 0 to 6."""
    return eb.Config(draw(st.integers(0, 40)), draw(st.integers(0, 25)), draw(st.integers(0, 6)))


@st.composite
def eb_runs(draw: st.DrawFn, max_inputs: int = 25) -> Run:
    """Messages and ticks at equal and increasing processing times (tick before message and
    message before tick at one instant), event times around the acceptance band and around
    the times already seen (duplicates, 1 and 2 ns conflicts, split points), re-deliveries
    with a new id, re-used ids, ticks at the requested timer instants, and flushes."""
    config = draw(eb_configs())
    now, seen = 0, [("a", 0)]
    timers: list[int] = []
    inputs: list[eb.Input] = []
    for k in range(draw(st.integers(0, max_inputs))):
        move = draw(st.sampled_from(["message", "message", "near", "near", "tick", "timer",
                                     "flush", "reuse"]))
        advance = draw(st.sampled_from(ADVANCE))
        if move == "flush":
            inputs.append(eb.Flush())
            continue
        if move in ("tick", "timer"):
            due = [t for t in timers if t >= now]
            now = draw(st.sampled_from(due)) if move == "timer" and due else now + advance
            inputs.append(eb.Tick(now))
            continue
        now += advance
        if move == "message":
            key, t = draw(st.sampled_from("abc")), max(0, now + draw(st.integers(-30, 8)))
        else:
            key, t = draw(st.sampled_from(seen))
            t = max(0, t + draw(st.sampled_from([0, 0, -1, 1, -2, 2])))
        ident = f"{key}{k}" if move != "reuse" or k == 0 else f"{key}{draw(st.integers(0, k - 1))}"
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


@st.composite
def rb_configs(draw: st.DrawFn) -> tuple[rb.Config, int]:
    """A config and the pulse period its traces use."""
    length, pulse = draw(st.sampled_from(SCALES))
    timeout = draw(st.sampled_from([None, None, 0.9, 3.5]))
    return rb.Config(batch_length_s=length, timeout_factor=timeout), pulse


@st.composite
def rb_runs(draw: st.DrawFn, max_inputs: int = 25) -> Run:
    """Polls of pulsed streams: on-time pulses with jitter, missing pulses, late and
    ahead messages, far outliers (gaps), log lines, empty polls, batch length changes and
    re-used ids; the end input closes the run."""
    (config, pulse), base = draw(rb_configs()), draw(st.sampled_from(RB_BASES))
    length = config.batch_length_s
    inputs: list[rb.Input] = []
    used: list[str] = []
    for k in range(draw(st.integers(0, max_inputs))):
        kind = draw(st.sampled_from(["poll"] * 6 + ["empty", "length"]))
        if kind == "empty":
            inputs.append(rb.Poll(()))
            continue
        if kind == "length":
            inputs.append(rb.SetBatchLength(length * draw(st.sampled_from([0.5, 1.0, 2.0]))))
            continue
        messages = []
        for j in range(draw(st.integers(1, 3))):
            stream_kind, name = draw(st.sampled_from(STREAMS))
            nanoseconds, tenths = draw(st.sampled_from(OFFSETS))
            stamp = max(0, base + pulse * k + nanoseconds + pulse * tenths // 10)
            ident = f"{name}{k}_{j}"
            if used and draw(st.integers(0, 19)) == 0:
                ident = draw(st.sampled_from(used))
            used.append(ident)
            messages.append(rb.Polled(stream_kind, name, stamp, ident))
        inputs.append(rb.Poll(tuple(messages)))
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
