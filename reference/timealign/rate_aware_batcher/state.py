"""The immutable state of the rate-aware batcher (spec section "State").

Everything upstream keeps in mutable attributes is a field here: the batch length and the
one pending for the next close, the active window, the high-water mark, the registered
gated streams in registration order (estimator, grid, bucket, highest slot, absence
count), and the three side buffers (non-gated messages, gridded overflow, ungridded
messages held back as future). ``held`` is the set of ids currently buffered, used to
refuse a re-used id in bounded memory (RB-D4).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from timealign.rate_aware_batcher.events import Polled
from timealign.rate_aware_batcher.grid import Grid


class Stream(NamedTuple):
    """One registered gated stream. A named tuple because one is rebuilt per routed pulse.

    ``last``/``diffs`` are the period estimator (RB-R2) up to the timestamps in ``seen``,
    routed since and folded in, in order, before the estimator is read (at a close): the
    same result as observing each at once, without copying the ring per message. ``grid``
    is ``None`` while the
    stream does not gate, ``bucket`` holds its messages of the active window in routing
    order, ``max_slot`` is the highest slot seen in the window (-1 after a drain) and
    ``absent`` counts consecutive closes with an empty bucket (RB-R14).
    """

    kind: str
    name: str
    last: int | None
    diffs: tuple[int, ...]
    seen: tuple[int, ...]
    grid: Grid | None
    bucket: tuple[Polled, ...]
    max_slot: int
    absent: int


def new_stream(kind: str, name: str) -> Stream:
    """A freshly registered stream: no estimate, no grid, nothing buffered."""
    return Stream(kind, name, None, (), (), None, (), -1, 0)


class State(NamedTuple):
    """Immutable batcher state; ``window`` is the active window's start (``None`` before
    the first non-empty poll); its end is always ``window + batch_length``.

    ``timeout`` caches the integer timeout distance of the current batch length, so no
    float is computed per poll (``None``: no timeout, head's infinite factor, RB-R19);
    ``ended`` is set by the end input; ``clock`` is the caller's latest clock reading and
    ``last_close`` the reading at the last close, bootstrap or backstop re-arm (RB-R18,
    RB-R26). A named tuple, not an
    attrs class: one is built per poll, and a frozen attrs ``__init__`` (one
    ``object.__setattr__`` per field) measured five times slower here.
    """

    batch_length: int
    timeout: int | None
    pending_length: int | None = None
    window: int | None = None
    hwm: int | None = None
    streams: tuple[Stream, ...] = ()
    non_gated: tuple[Polled, ...] = ()
    overflow: tuple[Polled, ...] = ()
    future: tuple[Polled, ...] = ()
    held: frozenset[str] = frozenset()
    ended: bool = False
    clock: int | None = None
    last_close: int | None = None

    def buffered(self) -> Iterator[Polled]:
        """Every held message: non-gated, then each bucket, then overflow, then future."""
        yield from self.non_gated
        for stream in self.streams:
            yield from stream.bucket
        yield from self.overflow
        yield from self.future
