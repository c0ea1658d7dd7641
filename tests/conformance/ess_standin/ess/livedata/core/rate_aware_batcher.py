"""A stand-in for ``ess.livedata.core.rate_aware_batcher`` (scipp/esslivedata, unpublished):
the same interface the adapter ``examples/esslivedata/adapter.py`` uses, computed by the
reference machine, so the adapter's translation is tested in ``make test``.

Only the names the adapter touches exist: ``RateAwareMessageBatcher`` (``batch``,
``set_batch_length``, ``timeout_factor``), ``Message``, ``StreamId``, ``StreamKind``,
``Timestamp``, ``MessageBatch``. ``TIMEALIGN_ESS_STANDIN=head`` gives the head revision's
constructor (a ``clock`` returning seconds); otherwise the card revision's (no clock).

Like head, whose stall backstop logs a structlog warning through structlog's default
logger, which prints to **standard output** (the protocol's channel), the head stand-in
prints a line to standard output when a poll's stall recovery (RB-R26) re-places the
window (no batch closed): an adapter that answers on standard output fails on it (CF-R1).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from typing import Any

from timealign.rate_aware_batcher import (
    STREAM_KINDS,
    Batch,
    Config,
    Poll,
    Polled,
    SetBatchLength,
    initial,
    step,
)

HEAD = os.environ.get("TIMEALIGN_ESS_STANDIN") == "head"

StreamKind = StrEnum("StreamKind", {k.upper(): k for k in sorted(STREAM_KINDS)})  # type: ignore[misc]


@dataclass(frozen=True)
class Timestamp:
    ns: int

    @classmethod
    def from_ns(cls, ns: int) -> Timestamp:
        return cls(ns)

    def to_ns(self) -> int:
        return self.ns


@dataclass(frozen=True, kw_only=True)
class StreamId:
    kind: Any
    name: str


@dataclass(frozen=True, kw_only=True)
class Message:
    timestamp: Timestamp
    stream: StreamId
    value: Any


@dataclass
class MessageBatch:
    start_time: Timestamp
    end_time: Timestamp
    messages: list[Message]


class _Batcher:
    """The reference machine behind upstream's methods: one ``batch()`` is one poll."""

    def __init__(self, batch_length_s: float, timeout_s: float | None,
                 clock: Callable[[], Any] | None) -> None:
        self._args = {"batch_length_s": batch_length_s, "timeout_s": timeout_s,
                      "profile": "esslivedata-head" if HEAD else "card"}
        self._factor: float | None = None
        self._clock = clock
        self._machine: tuple[Config, Any] | None = None
        self._held: dict[str, Message] = {}

    @property
    def timeout_factor(self) -> float:
        return math.nan if self._factor is None else self._factor

    @timeout_factor.setter
    def timeout_factor(self, value: float) -> None:
        self._factor = value

    def _step(self, item: Any) -> tuple[Any, ...]:
        if self._machine is None:
            config = Config(**self._args, timeout_factor=self._factor)  # type: ignore[arg-type]
            self._machine = config, initial(config)
        config, before = self._machine
        state, outputs = step(config, before, item)
        self._machine = config, state
        if HEAD and before.last_close is not None and state.last_close != before.last_close \
                and state.window != before.window \
                and not any(isinstance(o, Batch) for o in outputs):
            # What head's structlog warning looks like on standard output.
            print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} [warning  ] batcher_stall_recovery"
                  f" last_close={before.last_close} clock={state.clock}", flush=True)
        return outputs

    def set_batch_length(self, batch_length_s: float) -> None:
        self._step(SetBatchLength(batch_length_s))

    def batch(self, messages: list[Message]) -> MessageBatch | None:
        polled = tuple(Polled(str(m.stream.kind), m.stream.name, m.timestamp.to_ns(),
                              m.value) for m in messages)
        for m in messages:
            self._held[m.value] = m
        now = None
        if self._clock is not None:
            reading = Fraction(self._clock()) * 10**9
            now = int(reading)
        for output in self._step(Poll(polled, now)):
            if isinstance(output, Batch):
                return MessageBatch(Timestamp(output.start), Timestamp(output.end),
                                    [self._held.pop(i) for i in output.ids])
        return None


if HEAD:
    class RateAwareMessageBatcher(_Batcher):
        def __init__(self, batch_length_s: float = 1.0, timeout_s: float | None = None,
                     clock: Callable[[], float] = time.monotonic) -> None:
            super().__init__(batch_length_s, timeout_s, clock)
else:
    class RateAwareMessageBatcher(_Batcher):  # type: ignore[no-redef]
        def __init__(self, batch_length_s: float = 1.0, timeout_s: float | None = None) -> None:
            super().__init__(batch_length_s, timeout_s, None)
