"""One-byte damage of an MCAP bag: every message read, or the bag refused by name (BAG-R11,
BAG-R6). Never fewer rows without an error: that is what a run would report as "no loss".

Under ``make test`` every byte of the file's framing and indexes is changed once (chunk
header, message record headers, message indexes, summary, footer); under ``make proofs``
(``HYPOTHESIS_PROFILE=nightly``) every byte of the file, three ways.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pyarrow as pa
import pytest
from rosbags.rosbag2 import StoragePlugin, Writer

from tests.rosbag.bags import ROS2
from timealign.rosbag.discovery import FLAGS, Bag, Options
from timealign.rosbag.read import read_bag
from timealign.rosbag.rows import BagError

NIGHTLY = os.environ.get("HYPOTHESIS_PROFILE") == "nightly"
LOG = Options(log_stamp_all=True)


def _small_bag(root: Path) -> bytes:
    """Sixteen messages on two topics in one chunk, log times out of order."""
    path = root / "orig"
    string, int32 = ROS2.types["std_msgs/msg/String"], ROS2.types["std_msgs/msg/Int32"]
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        chatter = writer.add_connection("/chatter", "std_msgs/msg/String", typestore=ROS2)
        count = writer.add_connection("/count", "std_msgs/msg/Int32", typestore=ROS2)
        for k in range(8):
            writer.write(chatter, 100 + 10 * k + (5 if k % 3 == 0 else 0),
                         ROS2.serialize_cdr(string(data=f"m{k}"), "std_msgs/msg/String"))
            writer.write(count, 103 + 10 * k,
                         ROS2.serialize_cdr(int32(data=k), "std_msgs/msg/Int32"))
    return next(path.glob("*.mcap")).read_bytes()


def _framing(content: bytes) -> list[int]:
    """Offsets of every byte that is not schema text, channel text, metadata or payload:
    what a reader trusts to find the messages."""
    offsets: list[int] = []
    at = 8
    while at < len(content) - 8:
        opcode = content[at]
        length = struct.unpack_from("<Q", content, at + 1)[0]
        if opcode == 0x06:  # the chunk: its header, and each message record's header
            offsets.extend(range(at, at + 9 + 40 + 4))
            inner = at + 9 + 40 + 4
            end = at + 9 + length
            while inner < end:
                offsets.extend(range(inner, inner + 9 + 22))
                inner += 9 + struct.unpack_from("<Q", content, inner + 1)[0]
        elif opcode in (0x03, 0x04, 0x0C):
            offsets.extend(range(at, at + 13))
        else:
            offsets.extend(range(at, at + 9 + length))
        at += 9 + length
    offsets.extend(range(len(content) - 8, len(content)))
    return offsets


def test_bag_r11_one_byte_damage_never_loses_rows_silently(tmp_path: Path) -> None:
    """BAG-R11, BAG-R6: a changed byte anywhere in an MCAP bag's framing, message indexes
    or summary either leaves every message read or refuses the bag naming it. Before the
    cross-checks, a changed byte in a message index record dropped that channel's rows
    (8 of 16) and a changed chunk index length dropped all: both read as complete."""
    content = _small_bag(tmp_path)
    target = tmp_path / "b.mcap"
    bag = Bag.at(target, "b.mcap", "bag", FLAGS)
    target.write_bytes(content)
    whole = len(pa.Table.from_batches(list(read_bag(bag, LOG))))
    assert whole == 16
    offsets = range(len(content)) if NIGHTLY else _framing(content)
    masks = (0xFF, 0x01, 0x80) if NIGHTLY else (0xFF,)
    lost: list[tuple[int, int, int]] = []
    refused = 0
    for offset in offsets:
        for mask in masks:
            damaged = bytearray(content)
            damaged[offset] ^= mask
            target.write_bytes(bytes(damaged))
            try:
                rows = sum(batch.num_rows for batch in read_bag(bag, LOG))
            except BagError as error:
                assert error.rule == "BAG-R6" and "b.mcap" in str(error)
                refused += 1
                continue
            if rows != whole:
                lost.append((offset, mask, rows))
    assert not lost, f"(offset, mask, rows read) with rows missing and no error: {lost}"
    assert refused  # the sweep did reach the damage the checks refuse


def test_bag_r11_message_index_damage_is_refused(tmp_path: Path) -> None:
    """BAG-R11: the reproducer of issue 22: a changed byte in the first message index
    record (its opcode) made the indexed path read one channel only, exit 0."""
    content = bytearray(_small_bag(tmp_path))
    first = content.index(bytes([0x07]) + struct.pack("<Q", 134))
    content[first] ^= 0xFF
    target = tmp_path / "b.mcap"
    target.write_bytes(bytes(content))
    with pytest.raises(BagError, match=r"b\.mcap: cannot read the bag.*message") as error:
        list(read_bag(Bag.at(target, "b.mcap", "bag", FLAGS), LOG))
    assert error.value.rule == "BAG-R6"
    skipped = pa.Table.from_batches(list(read_bag(Bag.at(target, "b.mcap", "bag", FLAGS),
                                                  Options(log_stamp_all=True,
                                                          skip_bad=True)))).to_pylist()
    assert len(skipped) == 1 and skipped[0]["error"]
