"""The ``timealign.vector/1`` encoding of ApproximateTime, adapter rows and accounting.

Family README: ``vectors/approximate_time/README.md``; the adapter functions are described
in spec/approximate_time.md under "Inputs and outputs" (decisions AT-D18 to AT-D21).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import repeat
from operator import attrgetter
from typing import Any

from timealign.algorithm import (
    Account,
    Accounts,
    Columns,
    Flag,
    Grouped,
    Outcome,
    Record,
    accounts_of,
    records_of,
    settled,
    slot_setters,
)
from timealign.algorithm import grouped as new_grouped
from timealign.approximate_time.model import (
    END_OF_INPUT,
    Config,
    Dropped,
    End,
    Input,
    Message,
    Output,
    Pending,
    Published,
    State,
    Warned,
)
from timealign.errors import InvalidInput, output_fields, require
from timealign.timetext import duration

JSON = dict[str, Any]
CONFIG_KEYS = frozenset({"topics", "queue_size", "age_penalty", "max_interval_duration",
                         "inter_message_lower_bounds", "arithmetic"})


def config_from_json(raw: Mapping[str, Any]) -> Config:
    """AT-R1: a config object; ``null`` or a missing optional key means the default."""
    unknown = sorted(set(raw) - CONFIG_KEYS)
    require(not unknown, "config", "AT-R1", "unknown config keys", unknown)
    require("topics" in raw and "queue_size" in raw, "config", "AT-R1",
            "needs topics and queue_size", sorted(raw))
    return Config(
        topics=raw["topics"],
        queue_size=raw["queue_size"],
        age_penalty=raw.get("age_penalty"),
        max_interval_duration=duration(raw.get("max_interval_duration"),
                                       "max_interval_duration", "AT-R1"),  # SP-R37
        inter_message_lower_bounds=_durations(raw.get("inter_message_lower_bounds")),
        arithmetic=raw.get("arithmetic"),
    )


def _durations(bounds: Any) -> Any:
    """SP-R37: each lower bound may be a duration text (``"50ms"``); the rest is AT-R1's."""
    if not isinstance(bounds, list):
        return bounds
    return [duration(b, f"inter_message_lower_bounds[{i}]", "AT-R1")
            for i, b in enumerate(bounds)]


def config_to_json(config: Config) -> JSON:
    named = config.topic_names != tuple(str(k) for k in range(config.topics))
    return {
        "topics": list(config.topic_names) if named else config.topics,
        "queue_size": config.queue_size,
        "age_penalty": config.age_penalty,
        "max_interval_duration": config.max_interval_duration,
        "inter_message_lower_bounds": list(config.inter_message_lower_bounds),
        "arithmetic": config.arithmetic,
    }


_set_topic, _set_stamp, _set_id = slot_setters(Message, ("topic", "stamp", "id"))
_NEW = object.__new__


def input_from_json(raw: Mapping[str, Any]) -> Input:
    """AT-R2: ``{"op": "message", "topic": i, "stamp": ns, "id": s}`` or ``{"op": "end"}``.

    Field types are checked by the machine's own input check (AT-R2) when stepping.
    """
    op = raw.get("op")
    if op == "end":
        return End()
    if op != "message" or "topic" not in raw or "stamp" not in raw or "id" not in raw:
        require(op == "message", "op", "AT-R2", "must be 'message' or 'end'", op)
        for key in ("topic", "stamp", "id"):
            require(key in raw, key, "AT-R2", "missing", None)
    message = _NEW(Message)  # Message(topic, stamp, id), by slot (no checks to skip)
    _set_topic(message, raw["topic"])
    _set_stamp(message, raw["stamp"])
    _set_id(message, raw["id"])
    return message


def input_to_json(item: Input) -> JSON:
    if isinstance(item, End):
        return {"op": "end"}
    return {"op": "message", "topic": item.topic, "stamp": item.stamp, "id": item.id}


def output_to_json(output: Output) -> JSON:
    if isinstance(output, Published):
        return {"kind": "published", "ids": list(output.ids)}
    if isinstance(output, Dropped):
        return {"kind": "dropped", "id": output.id, "reason": output.reason}
    if isinstance(output, Warned):
        return {"kind": "warning", "topic": output.topic, "reason": output.reason}
    return {"kind": "pending", "id": output.id}


def output_from_json(raw: Mapping[str, Any], inputs: Sequence[Input]) -> Output:
    """Decode another implementation's output (for the invariant checks).

    Published ids are resolved to the run's input messages; an unknown id keeps a
    placeholder message of topic -1 so that AT-I1/AT-I2 report it.
    """
    with output_fields(raw) as raw:
        kind = raw.get("kind")
        if kind == "published":
            by_id = {m.id: m for m in inputs if isinstance(m, Message)}
            return Published(tuple(by_id.get(i, Message(-1, 0, i)) for i in raw["ids"]))
        if kind == "dropped":
            return Dropped(raw["id"], raw["reason"])
        if kind == "warning":
            return Warned(raw["topic"], raw["reason"])
        if kind == "pending":
            return Pending(raw["id"])
    raise InvalidInput("kind", "VEC-R4",
                       "must be 'published', 'dropped', 'warning' or 'pending'", kind)


def account(output: Output) -> Account:
    """AT-D18, AT-D20: published -> Grouped; dropped/pending -> Settled; warnings -> None."""
    if isinstance(output, Published):
        stamps = output.stamps
        return Grouped(output.ids, min(stamps), max(stamps))
    if isinstance(output, Dropped):
        return settled(output.id, "dropped", output.reason)
    if isinstance(output, Pending):
        return settled(output.id, "pending", END_OF_INPUT)
    return None


_id_of, _stamp_of = attrgetter("id"), attrgetter("stamp")


def accounts(outputs: Sequence[Output]) -> Accounts:
    """:func:`account` of each output, the settled ones as ``(id, outcome, reason)`` tuples
    apart from the grouped ones (``Algorithm.accounting.accounts``): the Spark worker's form, where
    most rows of a fleet are dropped one by one. Same accounts as :func:`account` (the tests
    compare them, :func:`timealign.algorithm.accounts_of`)."""
    settled: list[Outcome] = []
    grouped: list[Grouped] = []
    add = settled.append
    for output in outputs:
        kind = type(output)
        if kind is Dropped:
            add((output.id, "dropped", output.reason))  # type: ignore[union-attr]
        elif kind is Pending:
            add((output.id, "pending", END_OF_INPUT))  # type: ignore[union-attr]
        elif kind is Published:  # AT-D18, reading the messages once, at C speed
            messages = output.messages  # type: ignore[union-attr]
            stamps = tuple(map(_stamp_of, messages))
            grouped.append(new_grouped(tuple(map(_id_of, messages)), min(stamps),
                                       max(stamps)))
        elif kind is not Warned:  # any other kind: the account itself
            more, groups = accounts_of(account, (output,))
            settled += more
            grouped += groups
    return settled, grouped


def inputs_from_records(config: Config, records: Iterable[Record]) -> Iterator[Input]:
    """AT-D21: rows in arrival order -> messages, lazily; an unknown topic is rejected.

    Ids must be unique within a run (AT-D19), but this mapping does not remember them: a
    source may have tens of millions of rows and the adapter's memory must stay bounded.
    Adapters that account outcomes by id catch a repeated id (the Spark job, SP-R6), and
    AT-I2 reports it on a finished run.
    """
    index = {name: k for k, name in enumerate(config.topic_names)}
    new = object.__new__
    for row, record in enumerate(records):
        topic = index.get(record.topic)
        if topic is None:
            raise InvalidInput(f"records[{row}].topic", "AT-D21",
                               f"unknown topic, expected one of {config.topic_names}",
                               record.topic)
        message = new(Message)  # Message(topic, stamp, id), by slot (no checks to skip)
        _set_topic(message, topic)
        _set_stamp(message, record.stamp)
        _set_id(message, record.id)
        yield message


def inputs_from_columns(config: Config, columns: Columns) -> list[Input]:
    """:func:`inputs_from_records` over one batch of rows given as columns: a message per
    row, each built by filling its slots column by column (no per-row Python frame); an
    unknown topic is refused as the row mapping refuses it (AT-D21, the row counted within
    the batch)."""
    ids, topics, stamps = columns[0], columns[1], columns[2]
    index = {name: k for k, name in enumerate(config.topic_names)}
    try:
        numbers = list(map(index.__getitem__, topics))
    except KeyError:
        return list(inputs_from_records(config, records_of(columns)))  # raises AT-D21
    messages: list[Input] = list(map(object.__new__, repeat(Message, len(numbers))))
    deque(map(_set_topic, messages, numbers), 0)
    deque(map(_set_stamp, messages, stamps), 0)
    deque(map(_set_id, messages, ids), 0)
    return messages


def flags_of(config: Config, state: State) -> tuple[Flag, ...]:
    """The drop flag of each topic (AT-R7: set by a drop, cleared when the topic is the
    end topic of a search), by topic name, for pictures (PL-R20)."""
    return tuple(Flag(name, "drop", on)
                 for name, on in zip(config.topic_names, state.dropped, strict=True))


def timeline_records(config: Config, item: Input) -> tuple[Record, ...]:
    """The message an input carries, as a record (topic by name), for pictures."""
    if not isinstance(item, Message):
        return ()
    names = config.topic_names
    topic = item.topic
    name = names[topic] if isinstance(topic, int) and 0 <= topic < len(names) else str(topic)
    return (Record(item.id, name, item.stamp),)
