"""What a timeline picture shows, as plain data: lanes, marks, groups, slots (PL-R1..PL-R4).

A :class:`Timeline` is built by driving a machine through its :class:`Algorithm` descriptor
(a vector: :func:`from_vector`) or from a run's written tables (:func:`assemble`, fed by the
Spark adapter). Every outcome comes from the machine's ``account`` or from the tables the
run wrote, never from a rule re-derived here. No matplotlib: :mod:`timealign.plot.draw`
turns a timeline into a picture.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from timealign import registry
from timealign.algorithm import (
    Algorithm,
    Codec,
    Flag,
    Grouped,
    Pictures,
    Record,
    Settled,
    Slots,
)
from timealign.errors import InvalidInput
from timealign.vectors import Vector

GROUPED = "grouped"
#: A message no output settled in what the picture covers (no end input, or cut off).
OPEN = "open"
#: The arrival axis: nanoseconds (a clock or recorded arrival) or the input index.
ARRIVAL_NS = "ns"
ARRIVAL_INDEX = "input"


@attrs.frozen
class Mark:
    """One message: its lane, event time, arrival and outcome (PL-R2)."""

    id: str
    lane: str
    stamp: int
    arrival: int | None
    outcome: str
    reason: str | None = None
    group: int | None = None  # position in Timeline.groups when grouped


@attrs.frozen
class Span:
    """One group: a published set or a closed batch, and when it was emitted."""

    seq: int
    start: int
    end: int
    ids: tuple[str, ...]
    at: int | None = None


@attrs.frozen
class Flags:
    """The per-lane flags of the machine's state after one input (PL-R20): ``at`` is where
    the input lies on the arrival axis (its arrival, or its index)."""

    at: int
    flags: tuple[Flag, ...]


@attrs.frozen
class Timeline:
    """Everything one picture shows (PL-R1)."""

    title: str
    lanes: tuple[str, ...]
    marks: tuple[Mark, ...]
    groups: tuple[Span, ...]
    slots: tuple[Slots, ...] = ()
    arrival: str = ARRIVAL_NS
    notes: tuple[str, ...] = ()
    #: The event-time origin of the axis (a run's source: its first event time, PL-R14);
    #: ``None``: chosen from the shown times (PL-R2).
    origin: int | None = None
    #: The algorithm whose outputs these are: what is normal for it is drawn grey (PL-R14).
    algorithm: str | None = None
    #: The state's per-lane flags after each input, as the descriptor reports them (PL-R20).
    flags: tuple[Flags, ...] = ()
    #: An event-time window ``(start, end)`` drawn again, enlarged, below the lanes (PL-R18).
    zoom: tuple[int, int] | None = None


def assemble(
    title: str,
    records: Iterable[Record],
    groups: Iterable[Span],
    settled: Mapping[str, tuple[str, str | None]],
    slots: Iterable[Slots] = (),
    arrival: str = ARRIVAL_NS,
    notes: Iterable[str] = (),
    origin: int | None = None,
    algorithm: str | None = None,
    flags: Iterable[Flags] = (),
) -> Timeline:
    """A timeline from messages (``Record.arrival`` on the arrival axis), the groups and the
    other outcomes by id (``(outcome, reason)``); a message in neither is :data:`OPEN`."""
    spans = tuple(groups)
    member = {i: position for position, span in enumerate(spans) for i in span.ids}
    marks = []
    for record in records:
        position = member.get(record.id)
        if position is not None:
            marks.append(Mark(record.id, record.topic, record.stamp, record.arrival, GROUPED,
                              None, position))
        else:
            outcome, reason = settled.get(record.id, (OPEN, None))
            marks.append(Mark(record.id, record.topic, record.stamp, record.arrival, outcome,
                              reason))
    lanes = tuple(sorted({m.lane for m in marks} | {s.lane for s in slots}))
    return Timeline(title, lanes, tuple(marks), spans, _distinct_slots(slots), arrival,
                    tuple(notes), origin, algorithm, tuple(flags))


def _distinct_slots(slots: Iterable[Slots]) -> tuple[Slots, ...]:
    """One entry per (lane, window): the grid a window was gated on is the last one seen."""
    last: dict[tuple[str, int], Slots] = {}
    for entry in slots:
        last[(entry.lane, entry.start)] = entry
    return tuple(last.values())


def from_vector(vector: Vector, observed: bool = False) -> Timeline:
    """Replay a vector through the registry's machine and collect what it shows (PL-R1).

    Inputs the machine refuses are left out, as the vector format prescribes (VEC-R5), and
    counted in the notes; a refused config raises :class:`InvalidInput`. With ``observed``
    the groups and outcomes are those of the vector's ``observed`` outputs (what another
    implementation answered, VEC-R15) on the same messages, without the reference's slot
    grid (PL-R16).
    """
    algorithm: Algorithm[Any, Any, Any, Any] = registry.get(vector.algorithm)
    if algorithm.pictures.timeline_records is None:
        raise InvalidInput("algorithm", "PL-R1", "this algorithm has no timeline_records hook",
                           vector.algorithm)
    config = algorithm.codec.config_from_json(vector.config)
    state = algorithm.machine.initial(config)
    records: list[Record] = []
    spans: list[Span] = []
    settled: dict[str, tuple[str, str | None]] = {}
    slots: list[Slots] = []
    flags: list[Flags] = []
    refused = 0
    theirs = _observed(algorithm.codec, vector) if observed else None
    for index, raw in enumerate(vector.inputs):
        try:
            item = algorithm.codec.input_from_json(raw)
            state, outputs = algorithm.machine.step(config, state, item)
        except InvalidInput:
            refused += 1
            continue
        # Unclocked machines read no time of arrival: the input index stands for it.
        at = algorithm.feeding.clock_of(item) if algorithm.feeding.clocked else index
        for record in algorithm.pictures.timeline_records(config, item):
            records.append(record if algorithm.feeding.clocked
                           else attrs.evolve(record, arrival=index))
        if theirs is not None:
            outputs = theirs.get(index, ())
        for output in outputs:
            account = algorithm.accounting.account(output)
            if isinstance(account, Grouped):
                spans.append(Span(len(spans), account.start, account.end, account.ids, at))
            elif isinstance(account, Settled):
                settled[account.id] = (account.outcome, account.reason)
        if theirs is None:  # the reference's state: no picture of another's
            _state_pictures(algorithm.pictures, config, state, at if at is not None else index,
                            slots, flags)
    notes = [f"{refused} input(s) refused (VEC-R5), not drawn"] if refused else []
    return assemble(vector.name, records, spans, settled, slots,
                    ARRIVAL_NS if algorithm.feeding.clocked else ARRIVAL_INDEX, notes,
                    algorithm=vector.algorithm, flags=flags)


def _state_pictures(pictures: Pictures[Any, Any, Any], config: Any, state: Any, at: int,
                    slots: list[Slots], flags: list[Flags]) -> None:
    """Add what the machine's ``state`` shows after an input at ``at``: its slot grid and
    its per-lane flags (PL-R20), for the machines whose :class:`Pictures` report them."""
    if pictures.slots_of is not None:
        slots.extend(pictures.slots_of(config, state))
    if pictures.flags_of is not None:
        flags.append(Flags(at, pictures.flags_of(config, state)))


def _observed(codec: Codec[Any, Any, Any], vector: Vector) -> dict[int, tuple[Any, ...]]:
    """The vector's ``observed`` outputs by input index, decoded with the algorithm's codec
    (its ``error`` outputs left out, VEC-R5); :class:`InvalidInput` when it has none or
    one does not decode (PL-R16)."""
    if vector.observed is None or codec.output_from_json is None:
        raise InvalidInput("observed", "PL-R16", "the vector holds no observed outputs",
                           vector.name)
    decoded = []
    for raw in vector.inputs:
        try:
            decoded.append(codec.input_from_json(raw))
        except InvalidInput:
            continue
    found: dict[int, list[Any]] = {}
    for raw in vector.observed:
        index = raw.get("input")
        if raw.get("kind") != "error" and isinstance(index, int):
            found.setdefault(index, []).append(codec.output_from_json(raw, decoded))
    return {index: tuple(outputs) for index, outputs in found.items()}
