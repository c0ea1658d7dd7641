"""JSON codecs and adapter hooks of the rate-aware batcher (``vectors/rate_aware_batcher``).

Config ``{"batch_length_s": 1.0, "timeout_s": null}`` (or ``"timeout_factor"``; optionally
``"profile"``); inputs
``{"op": "poll", "messages": [{"kind", "name", "timestamp", "id"}], "now": ns}`` (``now``
optional),
``{"op": "set_batch_length", "seconds": 2.0}`` and ``{"op": "end"}``; outputs
``{"kind": "batch", "start", "end", "ids"}`` and ``{"kind": "pending", "id"}``.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import repeat
from typing import Any

import attrs

from timealign.algorithm import (
    JSON,
    Account,
    Columns,
    Grouped,
    Record,
    Slots,
    records_of,
    run_ends,
    settled,
    slot_setters,
)
from timealign.errors import InvalidInput, output_fields, require
from timealign.rate_aware_batcher.grid import slot_instants
from timealign.rate_aware_batcher.model import (
    CARD,
    STREAM_KINDS,
    Batch,
    Config,
    End,
    Input,
    Output,
    Pending,
    Poll,
    Polled,
    SetBatchLength,
    State,
)
from timealign.timetext import duration

#: RB-D22: the kind of a row that has none, upstream's StreamKind for a stream of no
#: known kind (non-gated).
UNKNOWN_KIND = "unknown"

_CONFIG_KEYS = frozenset({"batch_length_s", "timeout_s", "timeout_factor", "profile"})


def config_from_json(body: Mapping[str, Any]) -> Config:
    """Decode a config object; unknown keys are refused (RB-D2)."""
    require(isinstance(body, Mapping), "config", "RB-D2", "must be an object", body)
    unknown = sorted(set(body) - _CONFIG_KEYS)
    require(not unknown, "config", "RB-D2", f"unknown keys {unknown}", body)
    return Config(
        batch_length_s=duration(body.get("batch_length_s", 1.0), "batch_length_s", "RB-D1",
                                seconds=True),  # SP-R37
        timeout_s=duration(_infinity(body.get("timeout_s")), "timeout_s", "RB-D2",
                           seconds=True),
        timeout_factor=_infinity(body.get("timeout_factor")),
        profile=body.get("profile", CARD),
    )


def _infinity(value: Any) -> Any:
    """JSON has no infinity: the string ``"inf"`` stands for head's ``+inf`` (RB-R19)."""
    return math.inf if value == "inf" else value


def _finite_or_text(value: float | None) -> Any:
    return "inf" if value == math.inf else value


def config_to_json(config: Config) -> JSON:
    body: JSON = {"batch_length_s": config.batch_length_s,
                  "timeout_s": _finite_or_text(config.timeout_s)}
    if config.timeout_factor is not None:
        body["timeout_factor"] = _finite_or_text(config.timeout_factor)
    if config.profile != CARD:  # RB-D16: the default is not written
        body["profile"] = config.profile
    return body


def _message(raw: Any, index: int) -> Polled:
    where = f"messages[{index}]"
    require(isinstance(raw, Mapping), where, "RB-D3", "must be an object", raw)
    try:
        return Polled(raw.get("kind"), raw.get("name"), raw.get("timestamp"), raw.get("id"))
    except InvalidInput as error:
        raise InvalidInput(f"{where}.{error.field}", error.rule, str(error), error.value) from None


def input_from_json(body: Mapping[str, Any]) -> Input:
    """Decode one input object (``poll``, ``set_batch_length`` or ``end``)."""
    require(isinstance(body, Mapping), "input", "VEC-R3", "must be an object", body)
    op = body.get("op")
    if op == "poll":
        raw = body.get("messages")
        if not isinstance(raw, list):
            raise InvalidInput("messages", "RB-D3", "must be a list", raw)
        return Poll(tuple(_message(m, i) for i, m in enumerate(raw)), body.get("now"))
    if op == "set_batch_length":
        return SetBatchLength(body.get("seconds"))  # type: ignore[arg-type]
    if op == "end":
        return End()
    raise InvalidInput("op", "VEC-R3", "must be poll, set_batch_length or end", op)


def input_to_json(item: Input) -> JSON:
    if isinstance(item, Poll):
        body: JSON = {"op": "poll", "messages": [
            {"kind": m.kind, "name": m.name, "timestamp": m.timestamp, "id": m.id}
            for m in item.messages
        ]}
        if item.now is not None:
            body["now"] = item.now
        return body
    if isinstance(item, SetBatchLength):
        return {"op": "set_batch_length", "seconds": item.seconds}
    return {"op": "end"}


def output_to_json(output: Output) -> JSON:
    if isinstance(output, Batch):
        return {"kind": "batch", "start": output.start, "end": output.end,
                "ids": list(output.ids)}
    return {"kind": "pending", "id": output.id}


def output_from_json(raw: Mapping[str, Any], _inputs: Sequence[Input] = ()) -> Output:
    """Decode another implementation's output (for the invariant checks)."""
    with output_fields(raw) as raw:
        kind = raw.get("kind")
        if kind == "batch":
            return Batch(raw["start"], raw["end"], tuple(raw["ids"]))
        if kind == "pending":
            return Pending(raw["id"])
    raise InvalidInput("kind", "VEC-R4", "must be 'batch' or 'pending'", kind)


def account(output: Output) -> Account:
    """A batch groups its members; a message held at the end is settled as pending."""
    if isinstance(output, Batch):
        return Grouped(output.ids, output.start, output.end)
    return settled(output.id, "pending", "end_of_input")


def end(_config: Config) -> Input:
    return End()


def poll_of(record: Record) -> int | None:
    """RB-D5 as a run key (DRV-R8): rows of one poll share a poll number; None stands alone."""
    return record.poll


def inputs_from_records(_config: Config, records: Iterable[Record]) -> Iterator[Input]:
    """Rows in arrival order -> polls (RB-D5), lazily.

    Consecutive rows with the same ``poll`` number form one poll; a row without a poll
    number is a poll of its own. ``kind`` -> stream kind (a row without one: ``unknown``,
    RB-D22), ``topic`` -> stream name,
    ``stamp`` -> timestamp, ``id`` -> id; the poll's clock reading ``now`` is the
    ``arrival`` of its last row (RB-D19).
    """
    current: list[Polled] = []
    number: int | None = None
    arrival = 0
    for record in records:
        kind = UNKNOWN_KIND if record.kind is None else record.kind  # RB-D22
        message = Polled(kind, record.topic, record.stamp, record.id)
        if current and (record.poll is None or record.poll != number):
            yield Poll(tuple(current), arrival)
            current = []
        current.append(message)
        number = record.poll
        arrival = record.arrival
    if current:
        yield Poll(tuple(current), arrival)


def poll_runs(columns: Columns) -> Sequence[int | None] | None:
    """:func:`poll_of` of each row of a batch of columns (DRV-R13): its poll column."""
    return columns[5]


_KNOWN_KINDS = frozenset(STREAM_KINDS)
_set_kind, _set_name, _set_timestamp, _set_polled_id = slot_setters(
    Polled, ("kind", "name", "timestamp", "id"))
# A poll is built by slot too: its converters check a tuple of messages and a clock reading
# (RB-D3, RB-R18), which the mapping below builds from checked rows only.
if [field.name for field in attrs.fields(Poll)] != ["messages", "now"]:
    raise TypeError(f"Poll is built by slot: its fields changed ({attrs.fields(Poll)})")
_set_messages, _set_now = Poll.__dict__["messages"].__set__, Poll.__dict__["now"].__set__


def inputs_from_columns(config: Config, columns: Columns) -> list[Input]:
    """:func:`inputs_from_records` over one batch of whole polls given as columns
    (DRV-R13): a message per row, built by filling its slots column by column, then a poll
    per run of rows (:func:`timealign.algorithm.run_ends`; ``now`` the arrival of its last
    row, RB-D19). The driver has checked the rows' types and times (DRV-R9), so only RB-D3's
    kinds and non-empty ids are left to test; a batch with another goes through the row
    mapping, which raises RB-D3 for the first such row."""
    ids, names, stamps, arrivals, kinds, polls = columns
    count = len(ids)
    named: Iterable[Any] = repeat(UNKNOWN_KIND, count)
    if kinds is not None:
        named = [UNKNOWN_KIND if kind is None else kind for kind in kinds] \
            if None in kinds else kinds  # RB-D22
    if not ((kinds is None or _KNOWN_KINDS.issuperset(named)) and all(ids)):
        return list(inputs_from_records(config, records_of(columns)))  # raises RB-D3
    messages: list[Polled] = list(map(object.__new__, repeat(Polled, count)))
    deque(map(_set_kind, messages, named), 0)
    deque(map(_set_name, messages, names), 0)
    deque(map(_set_timestamp, messages, stamps), 0)
    deque(map(_set_polled_id, messages, ids), 0)
    new = object.__new__
    made: list[Input] = []
    start = 0
    for last in range(count) if polls is None else run_ends(polls):
        poll = new(Poll)
        _set_messages(poll, tuple(messages[start:last + 1]))
        _set_now(poll, arrivals[last])
        made.append(poll)
        start = last + 1
    return made


def timeline_records(_config: Config, item: Input) -> tuple[Record, ...]:
    """The messages a poll carries, as records (stream name as topic)."""
    if not isinstance(item, Poll):
        return ()
    return tuple(Record(m.id, m.name, m.timestamp, kind=m.kind) for m in item.messages)


def slots_of(_config: Config, state: State) -> tuple[Slots, ...]:
    """The slot grid of each gridded stream over the active window (RB-R4, RB-R5)."""
    if state.window is None:
        return ()
    start = state.window
    end = start + state.batch_length
    return tuple(Slots(s.name, start, end, slot_instants(start, s.grid))
                 for s in state.streams if s.grid is not None)
