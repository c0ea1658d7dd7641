"""Configuration, inputs, outputs and the immutable state of ApproximateTime.

The state is the spec's (spec/approximate_time.md, "State"), mirroring the upstream
members: per topic the deque ``D[k]`` and the past buffer ``P[k]`` as tuples of messages;
the candidate with its recorded start and end; the pivot and pivot time; the drop and
warning flags. ``machine.py`` folds it; ``fast.py`` keeps a private form and converts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs

from timealign.approximate_time.arithmetic import ARITHMETICS, BOOK, scale_factor
from timealign.errors import require, require_count, require_ns
from timealign.rulebook import rule

INT64_MAX = 2**63 - 1
DEFAULT_AGE_PENALTY = 0.1
DEFAULT_MAX_INTERVAL = 2_147_483_647_999_999_999
NO_PIVOT = -1
#: The most topics a config may name (AT-R1): checked before the per-topic state is built,
#: so ``{"topics": 10**15}`` is refused at once instead of allocating without bound.
MAX_TOPICS = 1024

# Dropped reasons (AT-R18).
INTERVAL_TOO_WIDE = "interval_too_wide"
PIVOT_REFUSED = "pivot_refused"
QUEUE_OVERFLOW = "queue_overflow"
SUPERSEDED = "superseded"
# Warned reasons (AT-R4).
OUT_OF_ORDER = "out_of_order"
CLOSER_THAN_BOUND = "closer_than_bound"
# The reason of a message still held when the input ends (AT-R17, ``Pending``).
END_OF_INPUT = "end_of_input"


@rule("AT-R1")
def _topic_names(topics: object) -> tuple[str, ...]:
    if isinstance(topics, int) and not isinstance(topics, bool):
        require(topics >= 1, "topics", "AT-R1", "needs at least one topic", topics)
        require(topics <= MAX_TOPICS, "topics", "AT-R1", f"at most {MAX_TOPICS} topics", topics)
        return tuple(str(k) for k in range(topics))
    require(isinstance(topics, Sequence) and not isinstance(topics, str), "topics", "AT-R1",
            "must be a topic count or a list of topic names", topics)
    assert isinstance(topics, Sequence)
    names = tuple(topics)
    require(len(names) >= 1, "topics", "AT-R1", "needs at least one topic", topics)
    require(len(names) <= MAX_TOPICS, "topics", "AT-R1", f"at most {MAX_TOPICS} topics",
            len(names))
    require(all(isinstance(n, str) and n for n in names), "topics", "AT-R1",
            "topic names must be non-empty strings", topics)
    require(len(set(names)) == len(names), "topics", "AT-R1",
            "topic names must be distinct", topics)
    return names


@rule("AT-R1")
def _age_penalty(value: object) -> float:
    if value is None:
        return DEFAULT_AGE_PENALTY
    require(isinstance(value, int | float) and not isinstance(value, bool), "age_penalty",
            "AT-R1", "must be a number", value)
    assert isinstance(value, int | float)
    penalty = float(value)
    require(math.isfinite(penalty) and penalty >= 0.0, "age_penalty", "AT-R1",
            "must be finite and >= 0 (AT-D17)", value)
    return penalty


@rule("AT-R1")
def _bounds(value: object, count: int) -> tuple[int, ...]:
    if value is None:
        return (0,) * count
    require(isinstance(value, Sequence) and not isinstance(value, str),
            "inter_message_lower_bounds", "AT-R1", "must be a list of ns per topic", value)
    assert isinstance(value, Sequence)
    require(len(value) == count, "inter_message_lower_bounds", "AT-R1",
            f"must have one bound per topic ({count})", value)
    for k, bound in enumerate(value):
        require_ns(bound, f"inter_message_lower_bounds[{k}]", "AT-R1")
        require(bound <= INT64_MAX, f"inter_message_lower_bounds[{k}]", "AT-R1",
                "must fit in int64 ns", bound)
    return tuple(value)


@BOOK.slot
@rule("AT-R1")
def _durations_fit(topics: int, max_interval: int, bounds: tuple[int, ...]) -> None:
    """ROS 2's durations are int64 ns: AT-R1's bounds hold them (ros1 replaces this with
    its 32-bit check, AT-R19)."""
    del topics, max_interval, bounds


@attrs.frozen(init=False)
class Config:
    """A validated ApproximateTime configuration (AT-R1).

    ``topics`` is the topic count N; ``topic_names`` the names (``"0"..."N-1"`` when the
    constructor got a count). ``scale_numerator``/``scale_denominator`` hold the exact
    value of the binary64 ``1.0 + age_penalty`` (AT-D23). ``None`` means the default.
    """

    topics: int
    topic_names: tuple[str, ...]
    queue_size: int
    age_penalty: float
    max_interval_duration: int
    inter_message_lower_bounds: tuple[int, ...]
    arithmetic: str
    scale_numerator: int
    scale_denominator: int

    @rule("AT-R1")
    def __init__(
        self,
        topics: int | Sequence[str],
        queue_size: int,
        age_penalty: float | None = None,
        max_interval_duration: int | None = None,
        inter_message_lower_bounds: Sequence[int] | None = None,
        arithmetic: str | None = None,
    ) -> None:
        names = _topic_names(topics)
        require_count(queue_size, "queue_size", "AT-R1", minimum=1)
        penalty = _age_penalty(age_penalty)
        interval = DEFAULT_MAX_INTERVAL if max_interval_duration is None else require_ns(
            max_interval_duration, "max_interval_duration", "AT-R1")
        require(interval <= INT64_MAX, "max_interval_duration", "AT-R1",
                "must fit in int64 ns", interval)
        mode = "ros2" if arithmetic is None else arithmetic
        require(mode in ARITHMETICS, "arithmetic", "AT-R1",
                f"must be one of {ARITHMETICS}", arithmetic)
        numerator, denominator = scale_factor(penalty)
        bounds = _bounds(inter_message_lower_bounds, len(names))
        # ros1: ROS 1's policy and its 32-bit durations (AT-R19)
        BOOK.rules(mode).of(_durations_fit)(len(names), interval, bounds)
        self.__attrs_init__(
            topics=len(names),
            topic_names=names,
            queue_size=queue_size,
            age_penalty=penalty,
            max_interval_duration=interval,
            inter_message_lower_bounds=bounds,
            arithmetic=mode,
            scale_numerator=numerator,
            scale_denominator=denominator,
        )


@attrs.frozen
class Message:
    """A message of topic ``topic`` (index) with stamp ``stamp`` (ns) and unique ``id``."""

    topic: int
    stamp: int
    id: str


@attrs.frozen
class End:
    """End of a finite input: report what is still held, then start afresh (AT-R17)."""


Input = Message | End


@attrs.frozen
class Published:
    """A published set: one message per topic, in topic order (AT-R14)."""

    messages: tuple[Message, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple([m.id for m in self.messages])  # a list first: faster than a generator

    @property
    def stamps(self) -> tuple[int, ...]:
        return tuple(m.stamp for m in self.messages)


@attrs.frozen
class Dropped:
    """A message the upstream algorithm discards silently, with the reason (AT-R18)."""

    id: str
    reason: str


@attrs.frozen
class Warned:
    """The once-per-topic warning of the inter-message check (AT-R4); changes nothing.

    Named ``Warned`` so as not to shadow the builtin ``Warning``.
    """

    topic: int
    reason: str


@attrs.frozen
class Pending:
    """A message still held when the input ended (AT-R17)."""

    id: str


Output = Published | Dropped | Warned | Pending


@attrs.frozen
class State:
    """The synchronizer state between two inputs (spec/approximate_time.md, "State").

    Per topic k the deque ``deques[k]`` (``D[k]``) and the past buffer ``pasts[k]``
    (``P[k]``), each oldest first; the candidate with its recorded start and end, empty
    when there is no pivot (``pivot == NO_PIVOT``; ``candidate_start``/``candidate_end``/
    ``pivot_time`` are then 0); the drop and warning flags per topic. ``config`` is the
    config the state was built under (``initial``): ``step`` refuses another (DRV-R10).
    """

    deques: tuple[tuple[Message, ...], ...]
    pasts: tuple[tuple[Message, ...], ...]
    candidate: tuple[Message, ...] = ()
    candidate_start: int = 0
    candidate_end: int = 0
    pivot: int = NO_PIVOT
    pivot_time: int = 0
    dropped: tuple[bool, ...] = ()
    warned: tuple[bool, ...] = ()
    config: Config = attrs.field(kw_only=True, repr=False)

    def held(self, k: int) -> tuple[Message, ...]:
        """The messages topic ``k`` holds, oldest first: ``P[k]`` then ``D[k]``."""
        return self.pasts[k] + self.deques[k]

