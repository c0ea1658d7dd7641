"""Executable invariants of ApproximateTime over a finished run (AT-I1 to AT-I10).

Every predicate takes ``(config, inputs, outputs)``: the config, the inputs in arrival
order (:class:`Message` and :class:`End`) and the outputs as ``(input_index, output)``
pairs, and returns a list of violation strings (empty when the property holds). They use
nothing but these values, so they check ANY implementation's output, e.g. one decoded
from a conformance vector with ``codec.output_from_json``. The relational properties (AT-I7,
AT-I8) compare two runs.

A *segment* is the part of a run up to and including an ``End`` (or the open tail): each
``End`` starts the machine afresh (AT-R17), so properties are stated per segment.
Properties that upstream guarantees only under conditions say so, and the predicates
check them only when the conditions hold (``in_order``, ``optimality_applies``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Protocol

from timealign.approximate_time.model import (
    Config,
    Dropped,
    End,
    Input,
    Message,
    Output,
    Pending,
    Published,
    Warned,
)

Outputs = Sequence[tuple[int, Output]]
Segment = tuple[int, int]  # input indices [first, last] of one segment


def segments(inputs: Sequence[Input]) -> list[Segment]:
    """Index ranges of the segments: each ends at an ``End`` or at the last input."""
    found: list[Segment] = []
    first = 0
    for index, item in enumerate(inputs):
        if isinstance(item, End):
            found.append((first, index))
            first = index + 1
    if first < len(inputs):
        found.append((first, len(inputs) - 1))
    return found


def _messages(inputs: Sequence[Input], segment: Segment) -> list[Message]:
    first, last = segment
    return [m for m in inputs[first:last + 1] if isinstance(m, Message)]


class Indexed:
    """One finished run indexed once for every predicate :func:`check` calls (a predicate
    called on its own indexes the run itself): its segments, its messages by id (the last
    input of an id) with their input positions, and its published sets with the index of
    the input that published each: built once, not once per predicate (``verify`` checks
    every source, ``benchmarks/README.md``, "verify next to the run it checks")."""

    __slots__ = ("by_id", "position", "published", "segments")

    def __init__(self, inputs: Sequence[Input], outputs: Outputs) -> None:
        self.segments = segments(inputs)
        self.by_id: dict[str, Message] = {}
        self.position: dict[str, int] = {}
        for index, item in enumerate(inputs):
            if isinstance(item, Message):
                self.by_id[item.id] = item
                self.position[item.id] = index
        self.published = [(k, o) for k, o in outputs if isinstance(o, Published)]

    def published_in(self, segment: Segment) -> list[tuple[int, Published]]:
        """The published sets of ``segment``, in output order."""
        first, last = segment
        return [(k, o) for k, o in self.published if first <= k <= last]


def _indexed(inputs: Sequence[Input], outputs: Outputs, run: Indexed | None) -> Indexed:
    return Indexed(inputs, outputs) if run is None else run


def in_order(inputs: Sequence[Input], segment: Segment | None = None) -> bool:
    """True when every topic's stamps are non-decreasing in arrival order (per segment)."""
    chosen = segments(inputs) if segment is None else [segment]
    for part in chosen:
        last: dict[int, int] = {}
        for m in _messages(inputs, part):
            if m.stamp < last.get(m.topic, m.stamp):
                return False
            last[m.topic] = m.stamp
    return True


def one_message_per_topic(config: Config, inputs: Sequence[Input], outputs: Outputs, *,
                          run: Indexed | None = None) -> list[str]:
    """AT-I1: a published set holds exactly one message of each topic, in topic order."""
    run = _indexed(inputs, outputs, run)
    by_id, wanted = run.by_id, list(range(config.topics))
    problems = []
    for index, output in run.published:
        topics = [by_id[i].topic if i in by_id else None for i in output.ids]
        if topics != wanted:
            problems.append(f"AT-I1: set {output.ids} at input {index} has topics {topics}")
    return problems


def single_outcome(config: Config, inputs: Sequence[Input], outputs: Outputs, *,
                   run: Indexed | None = None) -> list[str]:
    """AT-I2 (no loss, no reuse) and AT-I10 (causality).

    Every input id is unique; every message gets at most one terminal outcome (member of a
    published set, dropped, pending), never before its own input, and exactly one by the
    ``End`` that closes its segment. Outputs never name an unknown id.
    """
    problems = []
    arrived: dict[str, int] = {}  # each id's first input
    for index, item in enumerate(inputs):
        if isinstance(item, Message):
            if item.id in arrived:
                problems.append(f"AT-I2: input id {item.id!r} repeated at input {index}")
            else:
                arrived[item.id] = index
    settled: dict[str, int] = {}  # each id's first outcome
    for index, output in outputs:
        ids: tuple[str, ...] = ()
        if isinstance(output, Published):
            ids = output.ids
        elif isinstance(output, (Dropped, Pending)):
            ids = (output.id,)
        for ident in ids:
            first = arrived.get(ident)
            if first is None:
                problems.append(f"AT-I2: output at input {index} names unknown id {ident!r}")
            elif index < first:
                problems.append(f"AT-I10: {ident!r} settled at input {index} before arriving")
            if ident in settled:
                problems.append(f"AT-I2: {ident!r} settled twice (inputs {settled[ident]}, "
                                f"{index})")
            else:
                settled[ident] = index
    for first, last in _indexed(inputs, outputs, run).segments:
        if not isinstance(inputs[last], End):
            continue
        for m in _messages(inputs, (first, last)):
            if not first <= settled.get(m.id, -1) <= last:
                problems.append(f"AT-I2: {m.id!r} has no outcome by the End at input {last}")
    return problems


def sets_in_order(config: Config, inputs: Sequence[Input], outputs: Outputs, *,
                  run: Indexed | None = None) -> list[str]:
    """AT-I5: per topic, each set's message arrived after the previous set's (any input);
    with in-order stamps (AT-I3) consecutive sets are also stamp-ordered per topic, hence
    no two sets of a segment cross."""
    run = _indexed(inputs, outputs, run)
    by_id, position = run.by_id, run.position
    problems = []
    for segment in run.segments:
        ordered = in_order(inputs, segment)
        previous: Published | None = None
        for index, output in run.published_in(segment):
            if previous is not None and len(previous.ids) == len(output.ids):
                for a, b in zip(previous.ids, output.ids, strict=True):
                    if a in position and b in position and position[b] <= position[a]:
                        problems.append(f"AT-I5: set {output.ids} at input {index} reuses or "
                                        f"precedes {a!r} of the previous set")
                    if ordered and a in by_id and b in by_id \
                            and by_id[b].stamp < by_id[a].stamp:
                        problems.append(f"AT-I3: set {output.ids} at input {index} crosses "
                                        f"the previous set {previous.ids}")
            previous = output
    return problems


def spread_within_max(config: Config, inputs: Sequence[Input], outputs: Outputs, *,
                      run: Indexed | None = None) -> list[str]:
    """AT-I4: a published set spans at most max_interval_duration (any stamps)."""
    run = _indexed(inputs, outputs, run)
    by_id = run.by_id
    problems = []
    for segment in run.segments:
        for index, output in run.published_in(segment):
            stamps = [by_id[i].stamp for i in output.ids if i in by_id]
            if stamps and max(stamps) - min(stamps) > config.max_interval_duration:
                problems.append(f"AT-I4: set {output.ids} at input {index} spans "
                                f"{max(stamps) - min(stamps)} > {config.max_interval_duration}")
    return problems


def warnings_once(config: Config, inputs: Sequence[Input], outputs: Outputs, *,
                  run: Indexed | None = None) -> list[str]:
    """AT-I9: at most one warning per topic per segment, at an input of that topic."""
    problems = []
    for segment in _indexed(inputs, outputs, run).segments:
        first, last = segment
        seen: set[int] = set()
        for index, output in outputs:
            if first <= index <= last and isinstance(output, Warned):
                item = inputs[index]
                if not isinstance(item, Message) or item.topic != output.topic:
                    problems.append(f"AT-I9: warning for topic {output.topic} at input {index}")
                if output.topic in seen:
                    problems.append(f"AT-I9: second warning for topic {output.topic}")
                seen.add(output.topic)
    return problems


# --- optimality (AT-I6) ---------------------------------------------------------------------

OPTIMALITY_MAX_MESSAGES = 14


def optimality_applies(config: Config, inputs: Sequence[Input]) -> bool:
    """The conditions of AT-I6: ROS 2 arithmetic, age_penalty 0, in-order stamps, valid
    lower bounds, no queue overflow possible (queue_size >= messages of any topic per
    segment), max_interval_duration >= every stamp difference, a small run."""
    if config.age_penalty != 0.0 or config.arithmetic != "ros2" or not in_order(inputs):
        return False
    for segment in segments(inputs):
        messages = _messages(inputs, segment)
        if len(messages) > OPTIMALITY_MAX_MESSAGES:
            return False
        per_topic: dict[int, list[int]] = {}
        for m in messages:
            per_topic.setdefault(m.topic, []).append(m.stamp)
        for topic, stamps in per_topic.items():
            if len(stamps) > config.queue_size:
                return False
            bound = config.inter_message_lower_bounds[topic]
            if any(b - a < bound for a, b in itertools.pairwise(stamps)):
                return False
        if messages and max(m.stamp for m in messages) - min(m.stamp for m in messages) \
                > config.max_interval_duration:
            return False
    return True


def _spread(stamps: Sequence[int]) -> int:
    return max(stamps) - min(stamps)


def optimal_sets(config: Config, inputs: Sequence[Input], outputs: Outputs, *,
                 run: Indexed | None = None) -> list[str]:
    """AT-I6 (the ROS wiki's claims 4 and 5), checked by brute force when it applies.

    Let S be the previous published set of the segment (none at its start). Per topic,
    the *successors* are the messages of the segment arriving after S's message of that
    topic (all of them at the start). A set T of successors is *contiguous* to S when, for
    at least one topic, T holds the first successor. Each published set must be contiguous
    to S and have the minimal spread among all sets contiguous to S, over every message of
    the segment, including those arriving after the publication.
    """
    if not optimality_applies(config, inputs):
        return []
    run = _indexed(inputs, outputs, run)
    problems = []
    for segment in run.segments:
        messages = _messages(inputs, segment)
        streams = [[m for m in messages if m.topic == k] for k in range(config.topics)]
        used = [0] * config.topics  # per topic: index of the first successor
        by_id = {m.id: m for m in messages}
        for index, output in run.published_in(segment):
            chosen = [by_id[i] for i in output.ids if i in by_id]
            if len(chosen) != config.topics:
                break  # AT-I1 reports it
            positions = [streams[k].index(m) for k, m in enumerate(chosen)]
            if any(p < used[k] for k, p in enumerate(positions)):
                break  # AT-I5 reports it
            if all(p != used[k] for k, p in enumerate(positions)):
                problems.append(f"AT-I6: set {output.ids} at input {index} is not contiguous "
                                "to the previous set")
            best = _best_contiguous(streams, used)
            spread = _spread([m.stamp for m in chosen])
            if best is not None and best[0] < spread:
                problems.append(f"AT-I6: set {output.ids} at input {index} spans {spread}; "
                                f"the contiguous set {best[1]} spans {best[0]}")
            used = [p + 1 for p in positions]
    return problems


def _best_contiguous(streams: list[list[Message]], used: list[int]
                     ) -> tuple[int, tuple[str, ...]] | None:
    best: tuple[int, tuple[str, ...]] | None = None
    choices = [stream[first:] for stream, first in zip(streams, used, strict=True)]
    for combination in itertools.product(*choices):
        if all(m is not streams[k][used[k]] for k, m in enumerate(combination)):
            continue
        spread = _spread([m.stamp for m in combination])
        if best is None or spread < best[0]:
            best = (spread, tuple(m.id for m in combination))
    return best


# --- all single-run invariants --------------------------------------------------------------

class Predicate(Protocol):
    """A single-run invariant: its violations in ``(config, inputs, outputs)``, over the
    run's :class:`Indexed` when the caller built one."""

    __name__: str

    def __call__(self, config: Config, inputs: Sequence[Input], outputs: Outputs, *,
                 run: Indexed | None = None) -> list[str]: ...


PREDICATES: tuple[Predicate, ...] = (
    one_message_per_topic,
    single_outcome,
    sets_in_order,
    spread_within_max,
    warnings_once,
    optimal_sets,
)


def check(config: Config, inputs: Sequence[Input], outputs: Outputs) -> list[str]:
    """Every single-run invariant (AT-I1 to AT-I6, AT-I9, AT-I10), over one index of the
    run."""
    run = Indexed(inputs, outputs)
    return [problem for predicate in PREDICATES
            for problem in predicate(config, inputs, outputs, run=run)]


# --- relational invariants (two runs) -------------------------------------------------------


def published_ids(outputs: Outputs) -> list[tuple[str, ...]]:
    return [o.ids for _, o in outputs if isinstance(o, Published)]


def bounds_change_only_latency(config: Config, inputs: Sequence[Input], with_bounds: Outputs,
                               without_bounds: Outputs) -> list[str]:
    """AT-I7: with valid lower bounds (every topic's stamp gaps >= its bound, in-order
    stamps) the sets published without bounds are a prefix of those published with them,
    each published at the same input or earlier."""
    if not in_order(inputs):
        return []
    for segment in segments(inputs):
        messages = _messages(inputs, segment)
        for k in range(config.topics):
            stamps = [m.stamp for m in messages if m.topic == k]
            bound = config.inter_message_lower_bounds[k]
            if any(b - a < bound for a, b in itertools.pairwise(stamps)):
                return []
    fast = [(k, o.ids) for k, o in with_bounds if isinstance(o, Published)]
    slow = [(k, o.ids) for k, o in without_bounds if isinstance(o, Published)]
    problems = []
    if [ids for _, ids in slow] != [ids for _, ids in fast[: len(slow)]]:
        problems.append(f"AT-I7: sets without bounds {[i for _, i in slow]} are not a prefix "
                        f"of the sets with bounds {[i for _, i in fast]}")
    else:
        for (late, ids), (early, _) in zip(slow, fast, strict=False):
            if early > late:
                problems.append(f"AT-I7: set {ids} published at input {early} with bounds, "
                                f"{late} without")
    return problems


def interleavings_agree(first: Outputs, second: Outputs) -> list[str]:
    """AT-I8: two interleavings of the same per-topic streams (in-order stamps, queues
    never overflowing, no interval rejection) publish prefix-compatible set sequences."""
    a, b = published_ids(first), published_ids(second)
    shorter = min(len(a), len(b))
    if a[:shorter] != b[:shorter]:
        return [f"AT-I8: interleavings publish {a} and {b}"]
    return []
