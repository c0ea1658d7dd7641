"""Shared helpers of the event-time batcher tests: running inputs, plain-tuple outputs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tests.event_time_batcher.literal_model import LiteralBatcher, Out
from timealign.algorithm import run
from timealign.event_time_batcher import (
    ALGORITHM,
    Batch,
    Config,
    Dropped,
    Flush,
    Input,
    Message,
    Output,
    Rejected,
    Tick,
    Timer,
)


def plain(output: Output) -> Out:
    """The literal model's tuple form of a reference output."""
    if isinstance(output, Batch):
        return ("batch", output.start, output.end, output.ids)
    if isinstance(output, Timer):
        return ("timer", output.at)
    if isinstance(output, Rejected):
        return ("rejected", output.id, output.reason)
    assert isinstance(output, Dropped)
    return ("dropped", output.id, output.reason)


def outputs(config: Config, inputs: Sequence[Input]) -> list[tuple[int, Out]]:
    """Run the reference from the initial state; outputs as (input index, tuple)."""
    return [(k, plain(o)) for k, o in run(ALGORITHM, config, inputs)[1]]


def literal(config: Config, inputs: Sequence[Input]) -> list[tuple[int, Out]]:
    """Run the literal model over the same inputs."""
    model = LiteralBatcher(config.batching_window, config.max_message_delay,
                           config.message_leap_limit)
    produced: list[tuple[int, Out]] = []
    for k, item in enumerate(inputs):
        if isinstance(item, Message):
            out = model.event(item.at, item.key, item.event_time, item.id)
        elif isinstance(item, Tick):
            out = model.time(item.at)
        else:
            out = model.flush()
        produced += [(k, o) for o in out]
    return produced


def m(id: str, t: int, at: int) -> Message:
    """Message ``id`` whose key is its letters: ``a1`` and ``a2`` share key ``a``."""
    return Message(id.rstrip("0123456789'"), t, at, id)


def batches(produced: list[tuple[int, Out]]) -> list[tuple[int, Any, Any, Any]]:
    """The (input, start, end, ids) of every batch output."""
    return [(k, o[1], o[2], o[3]) for k, o in produced if o[0] == "batch"]


FLUSH = Flush()
