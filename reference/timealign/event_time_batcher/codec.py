"""The batcher's edges: JSON codec (``timealign.vector/1``), adapter rows and accounting.

Vector field names are those of ``vectors/event_time_batcher/README.md``. Decoding builds
the validated model classes, so bad JSON raises :class:`timealign.InvalidInput` naming the
field and rule (EB-R1, EB-R2).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import repeat
from typing import Any

from timealign.algorithm import (
    JSON,
    Account,
    Columns,
    Grouped,
    Record,
    records_of,
    settled,
    slot_setters,
)
from timealign.errors import INT64_MAX, InvalidInput, output_fields, require
from timealign.event_time_batcher.model import (
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
from timealign.timetext import duration

CONFIG_FIELDS = ("batching_window", "max_message_delay", "message_leap_limit")


def _get(raw: Mapping[str, Any], name: str) -> Any:
    """A field or ``None``: the model classes' own checks report what is missing."""
    return raw.get(name)


def config_from_json(raw: Mapping[str, Any]) -> Config:
    unknown = sorted(set(raw) - set(CONFIG_FIELDS))
    require(not unknown, "config", "EB-R1", f"unknown fields, expected {CONFIG_FIELDS}", unknown)
    return Config(*(duration(raw.get(name, 0 if name == "message_leap_limit" else None),
                             name, "EB-R1") for name in CONFIG_FIELDS))  # SP-R37


def config_to_json(config: Config) -> JSON:
    return {name: getattr(config, name) for name in CONFIG_FIELDS}


def input_from_json(raw: Mapping[str, Any]) -> Input:
    op = raw.get("op")
    if op == "message":
        return Message(_get(raw, "key"), _get(raw, "event_time"), _get(raw, "at"),
                       _get(raw, "id"))
    if op == "tick":
        return Tick(_get(raw, "at"))
    if op == "flush":
        return Flush()
    raise InvalidInput("op", "EB-R2", "must be 'message', 'tick' or 'flush'", op)


def input_to_json(item: Input) -> JSON:
    if isinstance(item, Message):
        return {"op": "message", "at": item.at, "key": item.key, "event_time": item.event_time,
                "id": item.id}
    if isinstance(item, Tick):
        return {"op": "tick", "at": item.at}
    return {"op": "flush"}


def output_to_json(output: Output) -> JSON:
    if isinstance(output, Batch):
        return {"kind": "batch", "start": output.start, "end": output.end, "ids": list(output.ids)}
    if isinstance(output, Timer):
        return {"kind": "timer", "at": output.at}
    if isinstance(output, Rejected):
        return {"kind": "rejected", "id": output.id, "reason": output.reason}
    return {"kind": "dropped", "id": output.id, "reason": output.reason}


def output_from_json(raw: Mapping[str, Any], _inputs: Sequence[Input] = ()) -> Output:
    """Decode an output (another implementation's, for the invariant checks)."""
    with output_fields(raw) as raw:
        kind = raw.get("kind")
        if kind == "batch":
            return Batch(raw["start"], raw["end"], tuple(raw["ids"]))
        if kind == "timer":
            return Timer(raw["at"])
        if kind == "rejected":
            return Rejected(raw["id"], raw["reason"])
        if kind == "dropped":
            return Dropped(raw["id"], raw["reason"])
    raise InvalidInput("kind", "EB-R2", "must be 'batch', 'timer', 'rejected' or 'dropped'", kind)


# A row whose fields pass EB-R2's checks written as exact type tests (every row the driver
# hands over has passed DRV-R9's, so only the non-empty names are new) becomes a Message by
# filling its slots: the validating ``__init__`` measured a third of the driver's time per
# row. Any other row goes through ``Message()``, which raises EB-R2 naming the field.
_set_key, _set_event_time, _set_at, _set_id = slot_setters(
    Message, ("key", "event_time", "at", "id"))


def inputs_from_records(config: Config, records: Iterable[Record]) -> Iterator[Input]:
    """Rows in arrival order: topic is the key, stamp the event time, arrival the ``at``."""
    new, str_, int_, top = object.__new__, str, int, INT64_MAX
    for record in records:
        key, t, at, identity = record.topic, record.stamp, record.arrival, record.id
        if (type(key) is str_ and key and type(identity) is str_ and identity
                and type(t) is int_ and 0 <= t <= top and type(at) is int_ and 0 <= at <= top):
            message = new(Message)
            _set_key(message, key)
            _set_event_time(message, t)
            _set_at(message, at)
            _set_id(message, identity)
            yield message
        else:
            yield Message(key, t, at, identity)  # raises EB-R2


def inputs_from_columns(config: Config, columns: Columns) -> list[Input]:
    """:func:`inputs_from_records` over one batch of rows given as columns (DRV-R13): a
    message per row, built by filling its slots column by column. The driver has checked
    the rows' types and times (DRV-R9), so only EB-R2's non-empty names are left to test;
    a batch with an empty key or id goes through the row mapping, which raises EB-R2 for
    the first such row."""
    ids, keys, stamps, arrivals = columns[0], columns[1], columns[2], columns[3]
    if not (all(keys) and all(ids)):
        return list(inputs_from_records(config, records_of(columns)))  # raises EB-R2
    messages: list[Input] = list(map(object.__new__, repeat(Message, len(ids))))
    deque(map(_set_key, messages, keys), 0)
    deque(map(_set_event_time, messages, stamps), 0)
    deque(map(_set_at, messages, arrivals), 0)
    deque(map(_set_id, messages, ids), 0)
    return messages


def account(output: Output) -> Account:
    if isinstance(output, Batch):
        return Grouped(output.ids, output.start, output.end)
    if isinstance(output, Rejected):
        return settled(output.id, "rejected", output.reason)
    if isinstance(output, Dropped):
        return settled(output.id, "dropped", output.reason)
    return None


def timer_of(output: Output) -> int | None:
    return output.at if isinstance(output, Timer) else None


def clock_of(item: Input) -> int | None:
    return None if isinstance(item, Flush) else item.at


def timeline_records(_config: Config, item: Input) -> tuple[Record, ...]:
    """The message an input carries, as a record (key as topic, ``at`` as arrival)."""
    if not isinstance(item, Message):
        return ()
    return (Record(item.id, item.key, item.event_time, item.at),)
