"""Configuration, inputs, outputs and state of the rate-aware batcher (spec RB-R1, RB-R17 to
RB-R19, RB-D1 to RB-D4, section "State").

Small frozen classes whose constructors validate what they are given (h11 style), so a
bad value is refused with :class:`timealign.InvalidInput` before any state is touched.
Seconds are floats as upstream takes them; everything stored about time is integer ns.
The state is the spec's: the one ``machine.py`` folds and the Spark checkpoint stores
(``fast.py`` keeps a private form and converts).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

import attrs

from timealign.errors import INT64_MAX, InvalidInput, require, require_ns
from timealign.rate_aware_batcher.grid import Grid, from_seconds
from timealign.rulebook import Book, rule

DEFAULT_TIMEOUT_FACTOR = 1.2
#: Timestamps and clock readings are signed int64 nanoseconds (RB-D3, RB-D18).
MIN_TIMESTAMP = -(2**63)
MAX_TIMESTAMP = 2**63
#: The behaviour profiles (RB-R17): the card revision (default) and the upstream head.
CARD = "card"
HEAD = "esslivedata-head"
PROFILES = (CARD, HEAD)
#: The rule functions a profile may replace and each profile's table (RB-R17): the
#: card's is empty, head's is declared at the end of ``machine.py``.
BOOK = Book(__name__, "profile", PROFILES)
#: Head's timeout factors lie in (0, MAX_HEAD_TIMEOUT_FACTOR] or are +inf (RB-R19).
MAX_HEAD_TIMEOUT_FACTOR = 3.0

#: Upstream ``StreamKind`` values (RB-R1); anything else is bad input (RB-D3).
STREAM_KINDS = (
    "unknown", "monitor_counts", "monitor_events", "detector_events", "area_detector", "log",
    "livedata_commands", "livedata_responses", "livedata_data", "livedata_roi",
    "livedata_status", "run_control", "device", "livedata_nicos_data",
)
#: Kinds upstream added after the card revision (RB-R27): refused in the card profile.
HEAD_ONLY_KINDS = frozenset({"device", "livedata_nicos_data"})
#: Kinds whose streams are rate-estimated and may gate a close (RB-R1).
GATED_KINDS = frozenset({"detector_events", "monitor_events", "monitor_counts", "area_detector"})
_KINDS = frozenset(STREAM_KINDS)
#: Consecutive closes with an empty bucket after which a stream is evicted (RB-R14).
ABSENT_BATCHES_FOR_EVICTION = 5


@rule("RB-D1")
def batch_length_ns(seconds: object, field: str) -> int:
    """Upstream ``Duration.from_seconds`` of a batch length: a finite number of seconds
    (``bool`` refused), refused unless >= 1 ns (RB-D1)."""
    ok = isinstance(seconds, int | float) and not isinstance(seconds, bool)
    require(ok and math.isfinite(seconds), field, "RB-D1",  # type: ignore[arg-type]
            "must be a finite number of seconds", seconds)
    value = float(seconds)  # type: ignore[arg-type]
    require(math.isfinite(value * 1_000_000_000), field, "RB-D1", "is too large", seconds)
    length = from_seconds(value)
    require(length >= 1, field, "RB-D1", "must be at least 1 ns once truncated", seconds)
    # DRV-D9, RB-D23: a batch's end is its start + L, an instant the machine emits
    require(length <= INT64_MAX, field, "RB-D1", "must fit in int64 ns once truncated (at "
            "most 2**63 - 1 ns, about 292 years)", seconds)
    return length


def timeout_fits(factor: float, length: int) -> bool:
    """Whether the timeout distance of ``factor`` at length ``length`` is a finite number
    (upstream's ``int()`` of an infinite product raises ``OverflowError``) within int64
    (RB-D23: the state keeps it, and an int64 implementation could not); ``+inf`` is the
    head profile's "no timeout" (RB-R19) and always fits."""
    if factor == math.inf:
        return True
    product = factor * (length / 1e9) * 1_000_000_000
    return math.isfinite(product) and -INT64_MAX - 1 <= int(product) <= INT64_MAX


def head_factor_valid(factor: float) -> bool:
    """RB-R19: head accepts a factor in ``(0, 3]`` (its clamp reaches 3L) or ``+inf``."""
    return factor == math.inf or 0.0 < factor <= MAX_HEAD_TIMEOUT_FACTOR


@rule("RB-R17")
def check_profile(profile: object) -> None:
    """The profile is one of :data:`PROFILES`."""
    require(isinstance(profile, str) and profile in PROFILES, "profile", "RB-R17",
            f"must be one of {list(PROFILES)}", profile)


@rule("RB-D2")
def _one_timeout(timeout_s: object, timeout_factor: object) -> None:
    """The timeout is given as seconds or as a factor, not both."""
    if timeout_s is not None and timeout_factor is not None:
        raise InvalidInput("timeout_s", "RB-D2", "give timeout_s or timeout_factor, not both",
                           timeout_s)


@rule("RB-D2")
def _timeout_number(value: object, field: str) -> float:
    """A timeout in seconds or as a factor is a number (``+inf`` and NaN included: the
    profile's factor check decides them)."""
    require(isinstance(value, int | float) and not isinstance(value, bool), field, "RB-D2",
            "must be a finite number of seconds", value)
    return float(value)  # type: ignore[arg-type]


@rule("RB-D2")
def _require_timeout_fits(factor: float, length: int, field: str, given: object) -> None:
    """The timeout distance of the factor is a finite number of ns within int64."""
    require(timeout_fits(factor, length), field, "RB-D2",
            "gives an infinite timeout or one beyond int64 ns", given)


@BOOK.slot
@rule("RB-D2")
def _check_factor(factor: float, length: int, field: str, given: object) -> None:
    """The card keeps any finite factor whose timeout is a finite number of ns (upstream
    crashes on ``inf`` at its first completion check)."""
    require(math.isfinite(factor), field, "RB-D2",
            "gives an infinite timeout or one beyond int64 ns", given)
    _require_timeout_fits(factor, length, field, given)


@rule("RB-R19")
def _head_factor(factor: float, length: int, field: str, given: object) -> None:
    """Head's factor lies in ``(0, 3]`` or is ``+inf`` (no timeout)."""
    require(head_factor_valid(factor), field, "RB-R19",
            "must give a timeout factor in (0, 3] or inf", given)
    _require_timeout_fits(factor, length, field, given)


@attrs.frozen
class Config:
    """``batch_length_s`` and either ``timeout_s`` or ``timeout_factor`` (RB-R1, RB-D2).

    ``timeout_s`` is turned into the factor ``timeout_s / batch_length_s`` with the caller's
    floats, as upstream does; neither given means the factor 1.2. The profile's factor
    check (:data:`BOOK`, RB-R17) decides the factor: in ``card`` it must be finite (upstream
    crashes on ``inf`` at its first completion check) and any finite factor is kept,
    including the ones above 3 that can never fire (hazard RB-H3); in ``esslivedata-head``
    it must lie in ``(0, 3]`` or be ``+inf``, which turns the timeout off (RB-R19).
    """

    batch_length_s: float = 1.0
    timeout_s: float | None = None
    timeout_factor: float | None = None
    profile: str = CARD
    batch_length: int = attrs.field(init=False)
    factor: float = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        length = batch_length_ns(self.batch_length_s, "batch_length_s")
        seconds = float(self.batch_length_s)  # a number: batch_length_ns took it
        _one_timeout(self.timeout_s, self.timeout_factor)
        check_profile(self.profile)
        if self.timeout_s is not None:
            factor = _timeout_number(self.timeout_s, "timeout_s") / seconds
        elif self.timeout_factor is not None:
            factor = _timeout_number(self.timeout_factor, "timeout_factor")
        else:
            factor = DEFAULT_TIMEOUT_FACTOR
        field = "timeout_factor" if self.timeout_factor is not None else "timeout_s"
        BOOK.rules(self.profile).of(_check_factor)(factor, length, field,
                                                    getattr(self, field))
        object.__setattr__(self, "batch_length", length)
        object.__setattr__(self, "factor", factor)

    @property
    def head(self) -> bool:
        """Whether this is the head profile: for the checks and tests that pick a profile's
        properties; the rule text and the fast path read their profile's table instead."""
        return self.profile == HEAD


@attrs.frozen
class Polled:
    """One message inside a poll: stream kind and name, timestamp (ns) and a unique id."""

    kind: str
    name: str
    timestamp: int
    id: str

    @rule("RB-D3")
    def __attrs_post_init__(self) -> None:
        require(self.kind in _KINDS if isinstance(self.kind, str) else False, "kind", "RB-D3",
                f"must be an upstream StreamKind value: {', '.join(STREAM_KINDS)} (the last "
                f"two in the esslivedata-head profile only, RB-R27)", self.kind)
        require(isinstance(self.name, str), "name", "RB-D3", "must be a string", self.name)
        require_ns(self.timestamp, "timestamp", "RB-D3", minimum=MIN_TIMESTAMP)
        require(self.timestamp < MAX_TIMESTAMP, "timestamp", "RB-D3",
                "must fit a signed 64-bit nanosecond count", self.timestamp)
        require(isinstance(self.id, str) and self.id != "", "id", "RB-D3",
                "must be a non-empty string", self.id)


def _messages(value: Iterable[Polled]) -> tuple[Polled, ...]:
    """RB-D3: a poll holds messages only; ``Poll("abc")`` is refused here rather than
    failing later inside ``step``."""
    require(isinstance(value, list | tuple), "messages", "RB-D3",
            "must be a list of messages", value)
    for position, message in enumerate(value):
        require(isinstance(message, Polled), f"messages[{position}]", "RB-D3",
                "must be a message (kind, name, timestamp, id)", message)
    return tuple(value)


def clock_reading(value: object) -> int | None:
    """A poll's clock reading (RB-R18): none, or an integer ns in the signed int64 range."""
    if value is None:
        return None
    require_ns(value, "now", "RB-R18", minimum=MIN_TIMESTAMP)
    require(value < MAX_TIMESTAMP, "now", "RB-R18",  # type: ignore[operator]
            "must fit a signed 64-bit nanosecond count", value)
    return value  # type: ignore[return-value]


# registered as called (a decorated function is no converter to mypy's attrs plugin)
rule("RB-D3")(_messages)
rule("RB-R18")(clock_reading)


@attrs.frozen
class Poll:
    """One call of upstream ``batch(messages)``: the messages in list order (may be empty)
    and, optionally, the caller's wall-clock reading ``now`` in ns (RB-R18)."""

    messages: tuple[Polled, ...] = attrs.field(converter=_messages, default=())
    now: int | None = attrs.field(default=None, converter=clock_reading)


@attrs.frozen
class SetBatchLength:
    """Upstream ``set_batch_length(seconds)``: applied at the next close (RB-R15)."""

    seconds: float
    length: int = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "length", batch_length_ns(self.seconds, "seconds"))


@attrs.frozen
class End:
    """End of a finite input: every message still held is reported ``pending`` (RB-R16)."""


Input = Poll | SetBatchLength | End


@attrs.frozen
class Batch:
    """One emitted batch: window start and end (ns) and member ids in drain order."""

    start: int
    end: int
    ids: tuple[str, ...]


@attrs.frozen
class Pending:
    """A message still held when the input ended (nothing is lost silently)."""

    id: str


Output = Batch | Pending


@attrs.frozen
class Stream:
    """One registered gated stream, named by ``(kind, name)`` (RB-R1).

    ``last``/``diffs`` are the period estimator (RB-R2); ``grid`` is ``None`` while the
    stream does not gate; ``bucket`` holds its messages of the active window in routing
    order; ``max_slot`` is the highest slot seen in the window (-1 after a drain) and
    ``absent`` counts consecutive closes with an empty bucket (RB-R14).
    """

    kind: str
    name: str
    last: int | None = None
    diffs: tuple[int, ...] = ()
    grid: Grid | None = None
    bucket: tuple[Polled, ...] = ()
    max_slot: int = -1
    absent: int = 0


@attrs.frozen
class State:
    """The batcher state of the spec's section "State".

    ``window`` is the active window's start (``None`` before the first non-empty poll); its
    end is always ``window + batch_length``. ``timeout`` caches the integer timeout
    distance of the current batch length, so no float is computed per poll (``None``: no
    timeout, head's infinite factor, RB-R19). ``streams`` are in registration order;
    ``held`` is the ids currently buffered (RB-D4); ``ended`` is set by the end input
    (RB-R16); ``clock`` is the caller's latest clock reading and ``last_close`` the reading
    at the last close, bootstrap or backstop re-arm (RB-R18, RB-R26). ``config`` is the
    config the state was built under: ``step`` refuses another (DRV-R10).
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
    config: Config = attrs.field(kw_only=True, repr=False)

    def buffered(self) -> Iterator[Polled]:
        """Every held message: non-gated, then each bucket, then overflow, then future."""
        yield from self.non_gated
        for stream in self.streams:
            yield from stream.bucket
        yield from self.overflow
        yield from self.future
