"""Small real bags written with the ``rosbags`` library, for the tests (spec/formats.md).

Messages are built from the type store's own definitions (any type, random content), so the
same helpers serve the header property test and the bag writers. Receive (log) times are
written out of order and differ from the header stamps.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.rosbag1 import Writer as Writer1
from rosbags.rosbag2 import StoragePlugin
from rosbags.rosbag2 import Writer as Writer2
from rosbags.typesys import Stores, get_typestore

ROS2 = get_typestore(Stores.ROS2_HUMBLE)
ROS1 = get_typestore(Stores.ROS1_NOETIC)
_NUMPY = {"bool": np.bool_, "byte": np.uint8, "char": np.uint8, "int8": np.int8,
          "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16, "int32": np.int32,
          "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64,
          "float32": np.float32, "float64": np.float64}
_BASE, _NAME, _ARRAY, _SEQUENCE = 1, 2, 3, 4


def _value(store: Any, node: int, spec: Any, rng: random.Random) -> Any:
    if node == _NAME:
        return build(store, spec, rng)
    if node == _BASE:
        kind = spec[0]
        if kind == "string":
            return "".join(rng.choice("abcxyz/_") for _ in range(rng.randrange(6)))
        if kind == "bool":
            return rng.random() < 0.5
        if kind in ("byte", "char"):
            return rng.randrange(100)  # signed in one store, unsigned in the other
        if kind.startswith("float"):
            return rng.uniform(-1e3, 1e3)
        bits = int("".join(c for c in kind if c.isdigit()) or 8)
        low = -(2 ** (bits - 1)) if kind.startswith("int") else 0
        high = 2 ** (bits - 1) - 1 if kind.startswith("int") else 2 ** bits - 1
        return rng.randint(low, high)
    (sub_node, sub_spec), length = spec
    count = length if node == _ARRAY else rng.randrange(4)
    if sub_node == _BASE and sub_spec[0] in _NUMPY:
        kind = _NUMPY[sub_spec[0]]
        return np.array([_value(store, sub_node, sub_spec, rng) for _ in range(count)], kind)
    return [_value(store, sub_node, sub_spec, rng) for _ in range(count)]


def build(store: Any, typename: str, rng: random.Random) -> Any:
    """A message of ``typename`` with random content, from the store's definition."""
    fields = store.fielddefs[typename][1]
    values = {name: _value(store, node, spec, rng) for name, (node, spec) in fields}
    return store.types[typename](**values)


def with_stamp(store: Any, typename: str, stamp: int, rng: random.Random) -> Any:
    message = build(store, typename, rng)
    time = store.types["builtin_interfaces/msg/Time"]
    message.header.stamp = time(sec=stamp // 10**9, nanosec=stamp % 10**9)
    return message


TOPICS = (("/imu", "sensor_msgs/msg/Imu"), ("/camera_info", "sensor_msgs/msg/CameraInfo"),
          ("/chatter", "std_msgs/msg/String"))


def plan(seed: int, count: int = 40) -> list[tuple[str, str, int, int]]:
    """(topic, type, stamp, log time) per message in writing order: log times jitter out of
    order, stamps lag the log time by a few ms."""
    rng = random.Random(seed)
    rows = []
    for k in range(count):
        topic, msgtype = TOPICS[k % 3]
        stamp = 1_000_000_000 + k * 5_000_000 + rng.randrange(1_000_000)
        log = stamp + 2_000_000 + rng.randrange(-4_000_000, 4_000_000)
        rows.append((topic, msgtype, stamp, log))
    return rows


def _payloads(store: Any, rows: list[tuple[str, str, int, int]], seed: int,
              ros1: bool) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for _, msgtype, stamp, _ in rows:
        if msgtype == "std_msgs/msg/String":
            message = store.types[msgtype](data=f"hello {stamp}")
        else:
            message = with_stamp(store, msgtype, stamp, rng)
        raw = store.serialize_ros1(message, msgtype) if ros1 else store.serialize_cdr(
            message, msgtype)
        out.append(bytes(raw))
    return out


def write_rosbag2(path: Path, rows: list[tuple[str, str, int, int]], storage: str,
                  seed: int = 0) -> Path:
    """A rosbag2 bag (``mcap`` or ``sqlite3``) holding ``rows``."""
    plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
    with Writer2(path, version=9, storage_plugin=plugin) as writer:
        connections = {topic: writer.add_connection(topic, msgtype, typestore=ROS2)
                       for topic, msgtype in TOPICS}
        for (topic, _, _, log), raw in zip(rows, _payloads(ROS2, rows, seed, False),
                                           strict=True):
            writer.write(connections[topic], log, raw)
    return path


def write_ros1(path: Path, rows: list[tuple[str, str, int, int]], seed: int = 0) -> Path:
    """A ROS 1 bag holding ``rows``."""
    with Writer1(path) as writer:
        connections = {topic: writer.add_connection(topic, msgtype, typestore=ROS1)
                       for topic, msgtype in TOPICS}
        for (topic, _, _, log), raw in zip(rows, _payloads(ROS1, rows, seed, True),
                                           strict=True):
            writer.write(connections[topic], log, raw)
    return path


def write_fleet(root: Path) -> dict[str, Path]:
    """Three robots, one bag each: MCAP, SQLite 3 and ROS 1."""
    root.mkdir(parents=True, exist_ok=True)
    return {
        "r1": write_rosbag2(root / "r1", plan(1), "mcap", 1),
        "r2": write_rosbag2(root / "r2", plan(2), "sqlite3", 2),
        "r3.bag": write_ros1(root / "r3.bag", plan(3), 3),
    }


def expected_rows(path: Path, bag: str, log_topics: frozenset[str],
                  source: str | None = None) -> list[dict[str, Any]]:
    """The rows of the bag ``bag`` (its relative path) by full deserialization with
    ``AnyReader``, in its read order; ``source`` defaults to ``bag``."""
    from rosbags.highlevel import AnyReader

    rows: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    with AnyReader([path]) as reader:
        for position, (connection, log, raw) in enumerate(reader.messages()):
            topic = connection.topic
            if topic in log_topics:
                stamp = log
            else:
                header = reader.deserialize(raw, connection.msgtype).header  # type: ignore[attr-defined]
                stamp = header.stamp.sec * 10**9 + header.stamp.nanosec
            index = counts.get(topic, 0)
            counts[topic] = index + 1
            rows.append({"source": bag if source is None else source, "id": f"{topic}#{index}",
                         "topic": topic, "type": connection.msgtype, "stamp": stamp,
                         "arrival": log, "bag": bag, "position": position, "error": None})
    return rows
