"""Hypothesis strategies for random rate-aware batcher traces (CF-R9).

Shared by the tests of the reference and ``timealign conform --fuzz`` (through
:mod:`.traces`). One integer draw per input keeps generation cheap, and Hypothesis shrinks
a trace by deleting and simplifying inputs. Covered: 1 µs windows with 4 or 10 pulses and
the real 14 Hz stream with a 1 s window; on-time, 1 ns-jittered, half-pulse, late, ahead
and far-ahead messages of gated and non-gated streams, empty polls, batch length changes,
re-used ids, the end input; for the head profile, clock readings (RB-R18).

This module needs Hypothesis (``pip install 'timealign[conform]'``).
"""

from __future__ import annotations

import math

from hypothesis import strategies as st

from timealign.rate_aware_batcher.model import (
    CARD,
    Config,
    End,
    Input,
    Poll,
    Polled,
    SetBatchLength,
)
from timealign.strategies import sequence
from timealign.traces import Run

# (batch_length_s, pulse period in ns): L = 1000 ns with 4 or 10 slots per window (the
# bounded explorer's scale), and the real 14 Hz stream with a 1 s window.
SCALES = ((1e-6, 250), (1e-6, 100), (1.0, 71_428_571))
RB_BASES = (1_000_000, 1_700_000_000 * 10**9)
# Offsets from the nominal pulse instant: (ns, tenths of a pulse): on time, 1 ns jitter,
# half a pulse (a rounding tie), late by 3.6 pulses, ahead by 6 and far ahead by 4000.
OFFSETS = ((0, 0), (0, 0), (0, 0), (1, 0), (-1, 0), (0, 5), (0, -36), (0, 60), (0, 40_000))
STREAMS = (("detector_events", "det"), ("monitor_events", "mon"), ("log", "log"))
#: Timeout factors per profile: head takes (0, 3] or +inf (RB-R19).
FACTORS = {CARD: (None, None, 0.9, 3.5), "esslivedata-head": (None, None, 0.9, math.inf)}
#: The clock of a clocked trace starts here (small, so float seconds stay exact to far
#: below a nanosecond, RB-D17).
CLOCK_BASE = 1_000_000
#: Clock steps of a poll, in pulses (``None``: no reading; ``"stall"``: 10 L and a pulse).
CLOCK_STEPS: tuple[int | str | None, ...] = (1, 1, 0, None, "stall")


@st.composite
def rb_configs(draw: st.DrawFn, profile: str = CARD) -> tuple[Config, int]:
    """A config and the pulse period its traces use."""
    length, pulse = draw(st.sampled_from(SCALES))
    return Config(batch_length_s=length, timeout_factor=draw(st.sampled_from(
        FACTORS[profile])), profile=profile), pulse


RB_MESSAGES = tuple((stream, offset) for offset in OFFSETS for stream in STREAMS)
RB_KINDS = ("poll", "poll", "poll", "poll", "poll", "poll", "empty", "length", "reuse")


def digits(number: int, *radices: int) -> list[int]:
    """``number`` as mixed-radix digits, least significant first."""
    found = []
    for radix in radices:
        number, digit = divmod(number, radix)
        found.append(digit)
    return found


@st.composite
def rb_runs(draw: st.DrawFn, max_inputs: int = 25, profile: str = CARD, reuse: bool = True,
            clocked: bool = False) -> Run:
    """Polls of pulsed streams: on-time pulses with jitter, missing pulses, late and
    ahead messages, far outliers (gaps), log lines, empty polls, batch length changes and
    (with ``reuse``) re-used ids; the end input closes the run. A poll at step ``k`` holds
    one to three messages stamped relative to the nominal pulse instant of ``k``; with
    ``clocked`` it may carry a clock reading one pulse or 10 L and a pulse after the last
    one (RB-R18), never going back.

    One integer per input, read as mixed-radix digits (kind, message count, three messages,
    clock step): one choice per input keeps generation cheap, and 0 is the simplest poll."""
    (config, pulse), base = draw(rb_configs(profile)), draw(st.sampled_from(RB_BASES))
    length = config.batch_length_s
    kinds = RB_KINDS if reuse else tuple(k for k in RB_KINDS if k != "reuse")
    size, steps = len(RB_MESSAGES), len(CLOCK_STEPS) if clocked else 1
    choices = st.integers(0, len(kinds) * 3 * size ** 3 * steps - 1)
    inputs: list[Input] = []
    now = CLOCK_BASE
    for k, number in enumerate(sequence(draw, choices, max_inputs)):
        choice, count, *picked, tick = digits(number, len(kinds), 3, size, size, size, steps)
        kind, messages = kinds[choice], [RB_MESSAGES[p] for p in picked[: count + 1]]
        reading: int | None = None
        step = CLOCK_STEPS[tick]
        if clocked and step is not None:
            now += 10 * int(length * 1e9) + pulse if step == "stall" else pulse * int(step)
            reading = now
        if kind == "empty":
            inputs.append(Poll((), reading))
            continue
        if kind == "length":
            inputs.append(SetBatchLength(length * (0.5, 1.0, 2.0)[len(messages) - 1]))
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
            polled.append(Polled(stream_kind, name, stamp, ident))
        inputs.append(Poll(tuple(polled), reading))
    inputs.append(End())
    return config, inputs
