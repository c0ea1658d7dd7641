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


# --- The other storages: a ROS 1 bag's index, a rosbag2 bag's metadata (issue 30) ---------

def _read(path: Path, name: str) -> int:
    return sum(batch.num_rows for batch in read_bag(Bag.at(path, name, "bag", FLAGS), LOG))


def _index_data(content: bytes) -> tuple[int, int, int]:
    """(record start, offset of its ``count`` value, count) of the first index data record
    of a ROS 1 bag: its header fields are walked, not guessed."""
    at = len(b"#ROSBAG V2.0\n")
    while True:
        header_length = struct.unpack_from("<I", content, at)[0]
        fields: dict[bytes, int] = {}
        inner = at + 4
        while inner < at + 4 + header_length:
            size = struct.unpack_from("<I", content, inner)[0]
            name = content[inner + 4:inner + 4 + size].partition(b"=")[0]
            fields[name] = inner + 4 + len(name) + 1
            inner += 4 + size
        if content[fields[b"op"]] == 0x04:
            return at, fields[b"count"], struct.unpack_from("<I", content, fields[b"count"])[0]
        at = inner + 4 + struct.unpack_from("<I", content, inner)[0]


def _ros1_one_fewer(path: Path) -> None:
    """The issue's damage: one index data record lists one message fewer (its count, its
    length and its last entry), the rest of the file moved up accordingly, so the library
    reads one message fewer and says nothing."""
    content = bytearray(path.read_bytes())
    start, count_at, count = _index_data(bytes(content))
    header_length = struct.unpack_from("<I", content, start)[0]
    struct.pack_into("<I", content, count_at, count - 1)
    struct.pack_into("<I", content, start + 4 + header_length, 12 * (count - 1))
    last = start + 8 + header_length + 12 * (count - 1)
    del content[last:last + 12]
    index_pos = content.index(b"index_pos=") + len(b"index_pos=")
    struct.pack_into("<Q", content, index_pos,
                     struct.unpack_from("<Q", content, index_pos)[0] - 12)
    path.write_bytes(bytes(content))


def test_bag_r20_ros1_index_listing_one_message_fewer_is_refused(tmp_path: Path) -> None:
    """BAG-R20, BAG-R6: a ROS 1 bag whose index data record lists one message fewer than its
    chunk holds: the library read 261 of 262 messages and a run said "no loss"; now the bag
    is refused by name, naming the index data record and the chunk. SP-D22: the reader's
    own read checks it (no inventory involved), so the check holds where no inventory is
    taken."""
    from rosbags.highlevel import AnyReader

    from tests.rosbag.bags import plan, write_ros1

    bag = write_ros1(tmp_path / "r.bag", plan(3, 262), 3)
    assert _read(bag, "r.bag") == 262
    _ros1_one_fewer(bag)
    with AnyReader([bag]) as reader:  # the damage the library does not see
        assert sum(1 for _ in reader.messages()) == 261
    with pytest.raises(BagError, match=r"r\.bag: cannot read the bag: .*index data at "
                                       r"offset \d+ lists \d+ messages .* holds") as error:
        _read(bag, "r.bag")
    assert error.value.rule == "BAG-R6"


def test_bag_r20_ros1_index_count_lowered_is_named_not_a_bare_assertion(
        tmp_path: Path) -> None:
    """BAG-R20: an index data record whose count alone is lowered by one made the library
    fail with "AssertionError: " and nothing more; the refusal now says what disagrees."""
    from tests.rosbag.bags import plan, write_ros1

    bag = write_ros1(tmp_path / "r.bag", plan(3, 262), 3)
    content = bytearray(bag.read_bytes())
    _, count_at, count = _index_data(bytes(content))
    struct.pack_into("<I", content, count_at, count - 1)
    bag.write_bytes(bytes(content))
    with pytest.raises(BagError) as error:
        _read(bag, "r.bag")
    message = str(error.value)
    assert "AssertionError" not in message and f"counts {count - 1} messages in" in message
    assert error.value.rule == "BAG-R6"


def test_bag_r21_sqlite_rows_deleted_or_metadata_edited_is_refused(tmp_path: Path) -> None:
    """BAG-R21, BAG-R6: a rosbag2 SQLite 3 bag with rows deleted while metadata.yaml still
    counts 262 (read 236 rows, exit 0), and bags whose metadata.yaml counts were edited (a
    SQLite 3 and an MCAP bag), are refused naming the bag and the counts."""
    import re
    import sqlite3

    from tests.rosbag.bags import plan, write_rosbag2

    deleted = write_rosbag2(tmp_path / "deleted", plan(2, 262), "sqlite3", 2)
    assert _read(deleted, "deleted") == 262
    with sqlite3.connect(next(deleted.glob("*.db3"))) as database:
        database.execute("delete from messages where id % 10 = 3")
    with pytest.raises(BagError, match=r"deleted: cannot read the bag: .*topic /\w+: \d+ "
                                       r"messages read, the bag's metadata counts \d+"):
        _read(deleted, "deleted")
    for storage in ("sqlite3", "mcap"):
        edited = write_rosbag2(tmp_path / f"edited-{storage}", plan(2, 262), storage, 2)
        metadata = edited / "metadata.yaml"
        text = metadata.read_text(encoding="utf-8")
        metadata.write_text(re.sub(r"message_count: 262", "message_count: 263", text),
                            encoding="utf-8")
        with pytest.raises(BagError, match=r"262 messages read, the bag's metadata counts "
                                           r"263") as error:
            _read(edited, f"edited-{storage}")
        assert error.value.rule == "BAG-R6"


def _ros1_framing(content: bytes) -> list[int]:
    """Offsets of a ROS 1 bag's framing and index: the bag header's fields, each chunk's
    record header, every index data and chunk info record (what the library trusts to find
    the messages), not the message definitions or payloads."""
    offsets: list[int] = []
    at = len(b"#ROSBAG V2.0\n")
    while at < len(content):
        header_length = struct.unpack_from("<I", content, at)[0]
        data_at = at + 4 + header_length + 4
        length = struct.unpack_from("<I", content, data_at - 4)[0]
        opcode = content[content.index(b"op=", at, data_at) + 3]
        whole = opcode in (0x04, 0x06)  # index data, chunk info: header and entries
        offsets.extend(range(at, data_at + length if whole else data_at))
        at = data_at + length
    return offsets


def test_bag_r20_ros1_one_byte_damage_never_loses_rows_silently(tmp_path: Path) -> None:
    """BAG-R20, BAG-R6: a changed byte in a ROS 1 bag's record headers, index data records
    or chunk infos either leaves every message read or refuses the bag naming it (before,
    a changed index entry count read fewer messages with no error)."""
    from tests.rosbag.bags import plan, write_ros1

    bag = write_ros1(tmp_path / "orig.bag", plan(3, 12), 3)
    content = bag.read_bytes()
    target = tmp_path / "r.bag"
    lost: list[tuple[int, int]] = []
    refused = 0
    for offset in _ros1_framing(content):
        damaged = bytearray(content)
        damaged[offset] ^= 0xFF
        target.write_bytes(bytes(damaged))
        try:
            rows = _read(target, "r.bag")
        except BagError as error:
            assert error.rule == "BAG-R6" and "r.bag" in str(error)
            assert not str(error).rstrip().endswith("AssertionError:"), error
            refused += 1
            continue
        if rows != 12:
            lost.append((offset, rows))
    assert not lost, f"(offset, rows read) with rows missing and no error: {lost}"
    assert refused
