"""The event-time batcher's values: configuration, inputs, outputs and state.

Everything is a frozen attrs class over integers, strings and tuples, so states hash and
compare by value (the bounded explorer relies on it). Configuration and inputs validate
themselves when built (rules EB-R1, EB-R2): a bad value raises
:class:`timealign.InvalidInput` before any state is touched. Times are integer nanoseconds.
"""

from __future__ import annotations

import attrs

from timealign.errors import INT64_MAX, require, require_ns
from timealign.rulebook import Book, rule

TOO_OLD = "too_old"
TOO_FAR_IN_FUTURE = "too_far_in_future"
DUPLICATE = "duplicate"
OVERWRITTEN = "overwritten"

#: The rule text's one profile: no config field names a profile (the batcher has one
#: behaviour, thin-edge.io's), so the book below holds the slots its catalogued variants
#: (CF-R41, :mod:`.variants`) replace, over this profile's empty table (``machine.py``).
PROFILE = "thin-edge"
BOOK = Book(__name__, None, (PROFILE,))


@attrs.frozen
class Config:
    """W, D and L of the upstream ``BatchConfig`` (EB-R1), in ns.

    ``batching_window`` (upstream ``event_jitter``) bounds how far apart event times of one
    batch lie; ``max_message_delay`` (``delivery_jitter``) how late a message may arrive and
    how long a batch stays open after its window ends; ``message_leap_limit`` how far an
    event time may lie ahead of the processing time.
    """

    batching_window: int
    max_message_delay: int
    message_leap_limit: int = 0

    @rule("EB-R1")
    def __attrs_post_init__(self) -> None:
        for name in ("batching_window", "max_message_delay", "message_leap_limit"):
            require_ns(getattr(self, name), name, "EB-R1")
        # DRV-D9: a batch's timeout (its end + D, its end at most an event time + W) is an
        # instant the machine emits; with W + D over int64 no message could have one
        require(self.batching_window + self.max_message_delay <= INT64_MAX,
                "max_message_delay", "EB-R1", "batching_window + max_message_delay (the "
                "latest timeout after an event time) must fit in int64 ns (at most 2**63 - 1)",
                self.max_message_delay)


@rule("EB-R2")
def _require_name(value: object, field: str) -> None:
    require(isinstance(value, str) and value != "", field, "EB-R2",
            "must be a non-empty string", value)


@attrs.frozen
class Message:
    """A measurement ``key`` generated at ``event_time`` and received at ``at`` (EB-R2)."""

    key: str
    event_time: int
    at: int
    id: str

    @rule("EB-R2")
    def __attrs_post_init__(self) -> None:
        key, event_time, at, identity = self.key, self.event_time, self.at, self.id
        # The common case in one test (exact types, both times within int64; issue 35: the
        # four checks below cost as much as a compiled step). It accepts only what they
        # accept; anything else goes through them, which name the field and the rule.
        if (type(key) is str and key and type(identity) is str and identity
                and type(event_time) is int and type(at) is int
                and 0 <= event_time <= INT64_MAX and 0 <= at <= INT64_MAX):
            return
        _require_name(self.key, "key")
        require_ns(self.event_time, "event_time", "EB-R2")
        require_ns(self.at, "at", "EB-R2")
        _require_name(self.id, "id")


@attrs.frozen
class Tick:
    """Processing time has reached ``at``: close every expired batch (EB-R14)."""

    at: int

    @rule("EB-R2")
    def __attrs_post_init__(self) -> None:
        require_ns(self.at, "at", "EB-R2")


@attrs.frozen
class Flush:
    """End of input: emit every open batch, newest first (EB-R15)."""


Input = Message | Tick | Flush


@attrs.frozen
class Batch:
    """A closed batch: its event-time window ``[start, end]`` and member ids by arrival."""

    start: int
    end: int
    ids: tuple[str, ...]


@attrs.frozen
class Timer:
    """The caller must deliver ``Tick(at)`` when processing time reaches ``at``."""

    at: int


@attrs.frozen
class Rejected:
    """A message not accepted on arrival: ``too_old``, ``too_far_in_future``, ``duplicate``."""

    id: str
    reason: str


@attrs.frozen
class Dropped:
    """An accepted member lost later: ``overwritten`` by a same-key member of a split (EB-R12)."""

    id: str
    reason: str


Output = Batch | Timer | Rejected | Dropped


@attrs.frozen
class Member:
    """A message held by an open batch."""

    key: str
    event_time: int
    id: str


@attrs.frozen
class OpenBatch:
    """An open batch: closed window ``[start, end]``, members in arrival order, one per key."""

    start: int
    end: int
    members: tuple[Member, ...]


@BOOK.slot
@rule("EB-R16")
def emitted(batches: tuple[OpenBatch, ...]) -> tuple[Batch, ...]:
    """The outputs of closing batches, in the order given: each its window at closing time
    and its member ids in arrival order, also when it has no member (EB-R16)."""
    return tuple(Batch(b.start, b.end, tuple(m.id for m in b.members)) for b in batches)


@attrs.frozen
class State:
    """Open batches in creation order (split parts appended last) and the last ``at`` seen.

    ``now`` is ``None`` until the first message or tick; it only ever grows (EB-R3).
    ``config`` is the config the state was built under: ``step`` refuses another (DRV-R10).
    """

    batches: tuple[OpenBatch, ...] = ()
    now: int | None = None
    config: Config = attrs.field(kw_only=True, repr=False)
