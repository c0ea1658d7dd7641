"""The bounded explorer's small instances, as trace sources for the harness (CF-R8).

An instance is a config and an input alphabet (``moves(trace)``: the inputs allowed after
``trace``). The move builders here are the ones ``proofs/explore_*.py`` walk exhaustively
to check the invariants of the reference; the harness walks the same alphabets up to a
depth and sends every trace, closed by the end input, to the implementation under test,
shortest traces first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from timealign import registry
from timealign.approximate_time import Config as AtConfig
from timealign.approximate_time import Input as AtInput
from timealign.approximate_time import Message as AtMessage
from timealign.event_time_batcher import Config as EbConfig
from timealign.event_time_batcher import Input as EbInput
from timealign.event_time_batcher import Message as EbMessage
from timealign.event_time_batcher import Tick
from timealign.rate_aware_batcher import Config as RbConfig
from timealign.rate_aware_batcher import Input as RbInput
from timealign.rate_aware_batcher import Poll, Polled, SetBatchLength
from timealign.vectors import Vector

Trace = tuple[Any, ...]
Moves = Callable[[Trace], Sequence[Any]]

# --- ApproximateTime ---------------------------------------------------------------------


def any_order(topics: int, stamps: Sequence[int]) -> Callable[[Trace], list[AtInput]]:
    """Every topic with every stamp: ties, out-of-order stamps, bursts (overflow)."""
    def moves(trace: Trace) -> list[AtInput]:
        ident = f"m{len(trace)}"
        return [AtMessage(k, s, ident) for k in range(topics) for s in stamps]
    return moves


def in_order(topics: int, steps: Sequence[int]) -> Callable[[Trace], list[AtInput]]:
    """Per-topic stamps non-decreasing: each move advances one topic by a step."""
    def moves(trace: Trace) -> list[AtInput]:
        ident = f"m{len(trace)}"
        last = [0] * topics
        for item in trace:
            if isinstance(item, AtMessage):
                last[item.topic] = item.stamp
        return [AtMessage(k, last[k] + d, ident) for k in range(topics) for d in steps]
    return moves


# --- Event-time batcher ------------------------------------------------------------------


def eb_moves(config: EbConfig, steps: tuple[int, ...],
             keys: str) -> Callable[[Trace], list[EbInput]]:
    """Processing time staying or advancing by a step; event times from one unit below the
    too-old bound to one above the leap limit, per key; a tick at every reachable instant."""
    def moves(trace: Trace) -> list[EbInput]:
        now = max((x.at for x in trace if isinstance(x, EbMessage | Tick)), default=0)
        found: list[EbInput] = []
        for step in steps:
            at = now + step
            low = max(0, at - config.max_message_delay - 1)
            for t in range(low, at + config.message_leap_limit + 2):
                found += [EbMessage(key, t, at, f"{key}{len(trace)}") for key in keys]
            found.append(Tick(at))
        return found
    return moves


# --- Rate-aware batcher ------------------------------------------------------------------

# Time scaled down: L = 1000 ns and a pulse every 250 ns (four slots per window).
RB_BASE = 1_000_000
RB_PULSE = 250
RB_FAR = 1_000_000  # 1000 L ahead: beyond the clamp and the hold-back range
RB_STALL = 10_000  # 10 L of clock: the head profile's backstop threshold (RB-R26)


def rb_at(k: int) -> int:
    """The nominal pulse instant of step ``k``."""
    return RB_BASE + RB_PULSE * k


def rb_one(kind: str, name: str, stamp: int, ident: str) -> Poll:
    return Poll((Polled(kind, name, stamp, ident),))


RB_MOVES: dict[str, Callable[[int], RbInput]] = {
    "pulse": lambda k: rb_one("detector_events", "det", rb_at(k), f"p{k}"),
    "late": lambda k: rb_one("detector_events", "det", rb_at(k) - 900, f"l{k}"),
    "mon": lambda k: rb_one("monitor_events", "mon", rb_at(k) + 40, f"m{k}"),
    "log": lambda k: rb_one("log", "log", rb_at(k) + 100, f"g{k}"),
    "log_ahead": lambda k: rb_one("log", "log", rb_at(k) + 1500, f"a{k}"),
    "log_far": lambda k: rb_one("log", "log", rb_at(k) + RB_FAR, f"f{k}"),
    "det_far": lambda k: rb_one("detector_events", "det", rb_at(k) + RB_FAR, f"d{k}"),
    "empty": lambda k: Poll(()),
    "length_2L": lambda k: SetBatchLength(2e-6),
    "length_half": lambda k: SetBatchLength(5e-7),
    "stall": lambda k: Poll(()),  # its clock reading is added by ``rb_alphabet``
}


def rb_clock_of(trace: Trace) -> int:
    """The newest clock reading of ``trace`` (0 before any)."""
    return max((i.now for i in trace if isinstance(i, Poll) and i.now is not None), default=0)


def rb_alphabet(*names: str, clocked: bool = False) -> Callable[[Trace], list[RbInput]]:
    """The moves after ``trace``; with ``clocked`` every poll reads a clock one pulse
    period later than the last reading, a ``stall`` 10 L later (RB-R18)."""
    chosen = [(n, RB_MOVES[n]) for n in names]

    def moves(trace: Trace) -> list[RbInput]:
        out = [move(len(trace)) for _, move in chosen]
        if not clocked:
            return out
        now = rb_clock_of(trace)
        return [Poll(m.messages, now + (RB_STALL if n == "stall" else RB_PULSE))
                if isinstance(m, Poll) else m for (n, _), m in zip(chosen, out, strict=True)]
    return moves


# --- the harness's instances -------------------------------------------------------------

INSTANCES: dict[str, list[tuple[str, Any, Moves]]] = {
    "approximate_time": [
        ("at/n2-q1-any-order", AtConfig(2, 1), any_order(2, (0, 1, 2))),
        ("at/n3-q2-ties", AtConfig(3, 2), any_order(3, (0, 1))),
        ("at/n2-q1-interval", AtConfig(2, 1, max_interval_duration=1), any_order(2, (0, 1, 3))),
        ("at/n2-ros1-penalty", AtConfig(2, 2, age_penalty=0.7, arithmetic="ros1"),
         any_order(2, (0, 10, 17, 27))),
        ("at/n2-bounds", AtConfig(2, 9, inter_message_lower_bounds=[2, 1]), in_order(2, (2, 3))),
    ],
    "event_time_batcher": [
        ("eb/one-key-conflicts", EbConfig(4, 2, 1), eb_moves(EbConfig(4, 2, 1), (0, 2), "a")),
        ("eb/two-keys", EbConfig(3, 2, 0), eb_moves(EbConfig(3, 2, 0), (0, 2), "ab")),
        ("eb/zero-window", EbConfig(0, 1, 0), eb_moves(EbConfig(0, 1, 0), (0, 1), "ab")),
    ],
    "rate_aware_batcher": [
        ("rb/one-stream-late-log", RbConfig(batch_length_s=1e-6),
         rb_alphabet("pulse", "late", "log", "empty")),
        ("rb/length-changes", RbConfig(batch_length_s=1e-6),
         rb_alphabet("pulse", "empty", "length_2L", "length_half")),
        ("rb/far-outliers", RbConfig(batch_length_s=1e-6),
         rb_alphabet("pulse", "log_far", "det_far", "empty")),
        ("rb/factor-3.5", RbConfig(batch_length_s=1e-6, timeout_factor=3.5),
         rb_alphabet("pulse", "log", "empty")),
    ],
}


def walk(moves: Moves, depth: int) -> Iterator[Trace]:
    """Every input sequence of 1 to ``depth`` moves, shortest first."""
    layer: list[Trace] = [()]
    for _ in range(depth):
        layer = [(*trace, move) for trace in layer for move in moves(trace)]
        yield from layer


def traces(algorithm: str, depth: int) -> Iterator[tuple[str, Vector]]:
    """(instance name, trace closed by the end input) for every instance of ``algorithm``."""
    descriptor = registry.get(algorithm)
    for name, config, moves in INSTANCES.get(algorithm, []):
        encoded = descriptor.config_to_json(config)
        closing = descriptor.input_to_json(descriptor.end(config))
        for number, trace in enumerate(walk(moves, depth)):
            inputs = (*(descriptor.input_to_json(i) for i in trace), closing)
            yield name, Vector(algorithm=algorithm, name=f"{name.replace('/', '_')}_{number}",
                               config=encoded, inputs=inputs)

