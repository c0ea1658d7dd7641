"""The rows a bag becomes (SP-R1 columns, BAG-R2 ids), whichever path reads it: the Arrow
schema, each topic's handling (BAG-R3, BAG-R5, BAG-R7), the column builder that numbers
ids per topic in read order, and the one row of a skipped bag (BAG-R6).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from timealign.errors import InvalidInput
from timealign.rosbag.discovery import Bag, Options
from timealign.rosbag.header import StampLayout, stamp_layout

SCHEMA = pa.schema([
    ("source", pa.string()), ("id", pa.string()), ("topic", pa.string()),
    ("type", pa.string()), ("stamp", pa.int64()), ("arrival", pa.int64()),
    ("bag", pa.string()), ("position", pa.int64()), ("error", pa.string()),
])
DDL = ("source string, id string, topic string, type string, stamp long, arrival long, "
       "bag string, position long, error string")


class BagError(InvalidInput):
    """A bag that cannot be read: corrupt, truncated, or not a bag (BAG-R6)."""


@attrs.frozen
class Topic:
    """What the reader does with one connection's messages."""

    code: int  # index of the topic name in the bag's topic list (ids count per topic)
    topic: str
    msgtype: str
    mode: str  # "header", "log" or "skip" (topic not read, BAG-R7)
    layout: StampLayout | None


def plan_topics(bag: Bag, reader: Any, options: Options) -> dict[int, Topic]:
    """Per connection id: the topic's handling, checking types first (BAG-R3, BAG-R5), so
    a bag with an unusable type fails before any of its rows is produced."""
    names = sorted({c.topic for c in reader.connections})
    plan: dict[int, Topic] = {}
    for connection in reader.connections:
        topic, msgtype = connection.topic, connection.msgtype
        code = names.index(topic)
        if not options.wanted(topic):
            plan[connection.id] = Topic(code, topic, msgtype, "skip", None)
            continue
        if options.log_stamp(topic):
            plan[connection.id] = Topic(code, topic, msgtype, "log", None)
            continue
        if msgtype not in reader.typestore.fielddefs:
            raise InvalidInput(bag.relative, "BAG-R5",
                               f"topic {topic!r}: unknown message type {msgtype!r} (the bag "
                               f"has no definition for it); use "
                               f"{options.naming.log_topic.format(topic=topic)} to take its "
                               f"log time", msgtype)
        layout = stamp_layout(reader.typestore, msgtype, cdr=reader.is2)
        if layout is None:
            raise InvalidInput(bag.relative, "BAG-R3",
                               f"topic {topic!r}: type {msgtype!r} has no header stamp; use "
                               f"{options.naming.log_hint(topic)} to take the log time",
                               msgtype)
        plan[connection.id] = Topic(code, topic, msgtype, "header", layout)
    return plan


def full_stamp(reader: Any, raw: bytes | memoryview, msgtype: str) -> int:
    """The stamp by full deserialization: the fallback for encodings the fast read does not
    handle (BAG-R4)."""
    message: Any = reader.deserialize(bytes(raw), msgtype)
    stamp = message.header.stamp
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


class Rows:
    """Column builder for one bag: ids count per topic in read order (BAG-R2)."""

    def __init__(self, bag: Bag, plan: dict[int, Topic], batch_rows: int) -> None:
        self.bag = bag
        self.batch_rows = batch_rows
        topics = sorted({t.code: t.topic for t in plan.values()}.items())
        self.topic_names = [name for _, name in topics]
        self.prefixes = pa.array([f"{bag.prefix}{name}#" for name in self.topic_names],
                                 pa.string())
        self.counts = np.zeros(len(self.topic_names), np.int64)
        self.position = 0

    def batches(self, codes: np.ndarray, types: pa.Array, stamps: pa.Array,
                arrivals: np.ndarray) -> Iterator[pa.RecordBatch]:
        """Record batches for rows in read order: ``codes`` are topic codes."""
        n = len(codes)
        if not n:
            return
        order = np.argsort(codes, kind="stable")
        sorted_codes = codes[order]
        per_topic = np.bincount(codes, minlength=len(self.topic_names))
        starts = np.cumsum(per_topic) - per_topic
        index = np.empty(n, np.int64)
        index[order] = np.arange(n) - starts[sorted_codes] + self.counts[sorted_codes]
        self.counts += per_topic
        code_array = pa.array(codes.astype(np.int32))
        ids = pc.binary_join_element_wise(self.prefixes.take(code_array),
                                          pc.cast(pa.array(index), pa.string()), "")
        topics = pa.array(self.topic_names, pa.string()).take(code_array)
        positions = pa.array(np.arange(self.position, self.position + n, dtype=np.int64))
        self.position += n
        for start in range(0, n, self.batch_rows):
            size = min(self.batch_rows, n - start)
            yield pa.RecordBatch.from_arrays([
                pa.repeat(self.bag.source, size).cast(pa.string()),
                ids.slice(start, size), topics.slice(start, size), types.slice(start, size),
                stamps.slice(start, size), pa.array(arrivals[start:start + size]),
                pa.repeat(self.bag.relative, size).cast(pa.string()),
                positions.slice(start, size), pa.nulls(size, pa.string()),
            ], schema=SCHEMA)



def error_batch(bag: Bag, problem: str) -> pa.RecordBatch:
    """The one row that reports a skipped bag (BAG-R6)."""
    return pa.RecordBatch.from_pylist([{"source": bag.source, "bag": bag.relative,
                                        "error": problem}], schema=SCHEMA)
