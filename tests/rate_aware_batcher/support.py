"""Realistic pulse trains for the rate-aware batcher tests (and the benchmark's shape).

A :class:`Source` is a pulsed stream (kind, name, rate, phase); :class:`Clock` turns
intervals of data time into polls with jitter, missing pulses, split (duplicated)
messages and irregular log lines, drawing details from a seeded ``random.Random`` so
Hypothesis only has to choose a handful of parameters. Also: helpers to run the reference
and the literal model side by side.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import attrs

from tests.rate_aware_batcher.literal_model import LiteralBatcher, LiteralHeadBatcher
from timealign.lockstep import run_lockstep
from timealign.rate_aware_batcher import (
    ALGORITHM,
    Batch,
    Config,
    Input,
    Output,
    Pending,
    Poll,
    Polled,
    SetBatchLength,
)

T0 = 1_700_000_000 * 10**9
SECOND = 10**9


@attrs.define
class Source:
    kind: str
    name: str
    rate: float
    phase: int = 0
    next_pulse: int = 0

    def __attrs_post_init__(self) -> None:
        self.next_pulse = T0 + self.phase


@attrs.define
class Clock:
    """Generates polls over data time; mutable, owned by one test run."""

    sources: list[Source]
    rnd: random.Random
    jitter: int = 0
    missing: float = 0.0
    split: float = 0.0
    log_rate: float = 0.0
    now: int = T0
    serial: int = 0

    def fresh(self, prefix: str) -> str:
        self.serial += 1
        return f"{prefix}{self.serial}"

    def poll(self, interval: int) -> Poll:
        """Every pulse due in ``(now, now + interval]``, with jitter, gaps and splits."""
        end = self.now + interval
        messages: list[Polled] = []
        for source in self.sources:
            period = round(SECOND / source.rate)
            while source.next_pulse <= end:
                t = source.next_pulse
                source.next_pulse += period
                if self.rnd.random() < self.missing:
                    continue
                stamp = max(0, t + self.rnd.randint(-self.jitter, self.jitter))
                copies = 2 if self.rnd.random() < self.split else 1
                messages += [Polled(source.kind, source.name, stamp, self.fresh(source.name[0]))
                             for _ in range(copies)]
        if self.log_rate and self.rnd.random() < self.log_rate * interval / SECOND:
            stamp = self.rnd.randint(self.now, end)
            messages.append(Polled("log", "log", stamp, self.fresh("l")))
        self.now = end
        return Poll(tuple(messages))

    def silence(self, duration: int) -> None:
        """No traffic for ``duration``: every source skips its pulses."""
        self.now += duration
        for source in self.sources:
            period = round(SECOND / source.rate)
            while source.next_pulse <= self.now:
                source.next_pulse += period


def literal_model(config: Config) -> LiteralBatcher:
    kind = LiteralHeadBatcher if config.head else LiteralBatcher
    model = kind(config.batch_length_s, config.timeout_s)
    if config.timeout_factor is not None:
        model.factor = config.timeout_factor
    return model


def literal_step(model: LiteralBatcher, item: Input) -> list[Output]:
    """Feed one machine input to the literal model; its outputs in the machine's classes."""
    if isinstance(item, Poll):
        messages = [(m.kind, m.name, m.timestamp, m.id) for m in item.messages]
        if isinstance(model, LiteralHeadBatcher):
            got = model.batch(messages, item.now)
        else:
            got = model.batch(messages)
        return [] if got is None else [Batch(got[0], got[1], tuple(got[2]))]
    if isinstance(item, SetBatchLength):
        model.set_batch_length(item.seconds)
        return []
    return [Pending(i) for i in model.held()]


def literal_outputs(config: Config, inputs: Sequence[Input]) -> list[tuple[int, Output]]:
    """Run the literal model over machine inputs; outputs in the machine's classes."""
    model = literal_model(config)
    return [(k, o) for k, item in enumerate(inputs) for o in literal_step(model, item)]


def reference_outputs(config: Config, inputs: Sequence[Input]) -> list[tuple[int, Output]]:
    """The rule text's outputs, its fast path stepped alongside (equal state and outputs
    after every input, or :class:`timealign.lockstep.Divergence`)."""
    return list(run_lockstep(ALGORITHM, config, inputs)[1])
