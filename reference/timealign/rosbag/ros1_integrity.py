"""The ROS 1 cross-checks (BAG-R20): a ROS 1 bag's index (its chunk info records and the
index data records after each chunk) repeats what its chunks hold, and the library reads
messages only through it (an entry missing from an index data record is a message never
read; a count that disagrees with its entries stops the library with a bare
``AssertionError``). So before a ROS 1 bag is read, its records are walked and every chunk
is decompressed once: each chunk has exactly one chunk info, whose per-connection counts
equal the message records the chunk holds, and each connection's index data record lists
exactly those records (count, length, offsets and times). Any disagreement is a damaged
bag, refused by name (BAG-R6) rather than read with rows missing.

Only the record framing is walked (one Python step per record header); the library's own
decompressors are used so the two agree on what a chunk holds.
"""

from __future__ import annotations

import struct
from typing import BinaryIO

from timealign.rosbag.mcap_integrity import Damaged

_MESSAGE, _BAG_HEADER, _INDEX, _CHUNK, _CHUNK_INFO, _CONNECTION = 0x02, 0x03, 0x04, 0x05, \
    0x06, 0x07
_MAGIC = b"#ROSBAG V2.0\n"


def _fields(header: bytes, where: str) -> dict[str, bytes]:
    """The ``name=value`` fields of a record header."""
    fields: dict[str, bytes] = {}
    at = 0
    while at < len(header):
        if at + 4 > len(header):
            raise Damaged(f"{where}: a header field is cut short")
        size = struct.unpack_from("<I", header, at)[0]
        at += 4
        name, sep, value = header[at:at + size].partition(b"=")
        if at + size > len(header) or not sep:
            raise Damaged(f"{where}: a header field is malformed")
        fields[name.decode("utf-8", "replace")] = value
        at += size
    return fields


def _number(fields: dict[str, bytes], name: str, size: int, where: str) -> int:
    value = fields.get(name)
    if value is None or len(value) != size:
        raise Damaged(f"{where}: the header field {name!r} is missing or malformed")
    return int(int.from_bytes(value, "little"))


def _record(data: bytes | BinaryIO, at: int, end: int, where: str
            ) -> tuple[dict[str, bytes], int, int, int]:
    """(header fields, opcode, data offset, data length) of the record at ``at``."""
    def take(offset: int, size: int) -> bytes:
        if offset + size > end:
            raise Damaged(f"{where}: the record at offset {at} runs past offset {end}")
        if isinstance(data, bytes):
            return data[offset:offset + size]
        data.seek(offset)
        piece = data.read(size)
        if len(piece) != size:
            raise Damaged(f"{where}: the record at offset {at} is cut short")
        return piece

    header_length = struct.unpack("<I", take(at, 4))[0]
    fields = _fields(take(at + 4, header_length), f"{where}, record at offset {at}")
    data_at = at + 4 + header_length + 4
    length = struct.unpack("<I", take(data_at - 4, 4))[0]
    take(data_at, 0) if length == 0 else take(data_at + length - 1, 1)
    return fields, _number(fields, "op", 1, f"{where}, record at offset {at}"), data_at, length


def _time(value: bytes) -> int:
    seconds, nanoseconds = struct.unpack("<II", value)
    return int(seconds) * 1_000_000_000 + int(nanoseconds)


def _chunk_messages(raw: bytes, where: str) -> dict[int, list[tuple[int, int]]]:
    """Per connection, (time, offset) of every message record of a decompressed chunk."""
    found: dict[int, list[tuple[int, int]]] = {}
    at = 0
    while at < len(raw):
        fields, opcode, data_at, length = _record(raw, at, len(raw), where)
        if opcode == _MESSAGE:
            connection = _number(fields, "conn", 4, where)
            stamp = fields.get("time")
            if stamp is None or len(stamp) != 8:
                raise Damaged(f"{where}: the message at chunk offset {at} has no time")
            found.setdefault(connection, []).append((_time(stamp), at))
        elif opcode != _CONNECTION:
            raise Damaged(f"{where}: a record of opcode {opcode:#04x} at chunk offset {at}")
        at = data_at + length
    return found


def check_ros1(path: str) -> int:
    """The number of messages the ROS 1 bag at ``path`` holds, after checking its chunk
    infos and index data records against its chunks (BAG-R20); :class:`Damaged` when they
    disagree. A bag without chunks holds no message (returns 0)."""
    from rosbags.rosbag1.reader import decompressors

    with open(path, "rb") as handle:
        if handle.read(len(_MAGIC)) != _MAGIC:
            raise Damaged("not a ROS 1 bag of version 2.0 (its first line)")
        handle.seek(0, 2)
        size = handle.tell()
        fields, opcode, data_at, length = _record(handle, len(_MAGIC), size, "bag header")
        if opcode != _BAG_HEADER:
            raise Damaged("the first record is not the bag header")
        index_at = _number(fields, "index_pos", 8, "bag header")
        chunk_count = _number(fields, "chunk_count", 4, "bag header")
        if index_at == 0:
            raise Damaged("the bag is not indexed (its index position is 0): reindex it "
                          "(rosbag reindex) before reading it")
        if not len(_MAGIC) < index_at <= size:
            raise Damaged(f"the bag header's index position {index_at} lies outside the file")
        chunks: dict[int, dict[int, list[tuple[int, int]]]] = {}
        at = data_at + length
        last_chunk = -1
        indexed: dict[int, set[int]] = {}
        while at < index_at:
            where = f"record at offset {at}"
            fields, opcode, data_at, length = _record(handle, at, index_at, where)
            if opcode == _CHUNK:
                compression = fields.get("compression", b"").decode("utf-8", "replace")
                if compression not in decompressors:
                    raise Damaged(f"chunk at offset {at}: compression {compression!r}")
                handle.seek(data_at)
                try:
                    raw = decompressors[compression](handle.read(length))
                except Exception as error:
                    raise Damaged(f"chunk at offset {at} cannot be decompressed "
                                  f"({type(error).__name__})") from None
                chunks[at] = _chunk_messages(raw, f"chunk at offset {at}")
                indexed[at] = set()
                last_chunk = at
            elif opcode == _INDEX:
                if last_chunk < 0:
                    raise Damaged(f"index data at offset {at} follows no chunk")
                connection = _number(fields, "conn", 4, where)
                count = _number(fields, "count", 4, where)
                if _number(fields, "ver", 4, where) != 1 or length != 12 * count:
                    raise Damaged(f"index data at offset {at} counts {count} messages in "
                                  f"{length} bytes")
                handle.seek(data_at)
                body = handle.read(length)
                entries = sorted((_time(body[k:k + 8]),
                                  struct.unpack_from("<I", body, k + 8)[0])
                                 for k in range(0, length, 12))
                held = sorted(chunks[last_chunk].get(connection, []))
                if entries != held or connection in indexed[last_chunk]:
                    raise Damaged(f"the index data at offset {at} lists {count} messages of "
                                  f"connection {connection}, the chunk at offset {last_chunk} "
                                  f"holds {len(held)}")
                indexed[last_chunk].add(connection)
            elif opcode != _CONNECTION:
                raise Damaged(f"{where}: opcode {opcode:#04x} before the index")
            at = data_at + length
        for position, held_by in chunks.items():
            if set(held_by) != indexed[position]:
                raise Damaged(f"the chunk at offset {position} has messages of connections "
                              f"{sorted(held_by)}, index data for {sorted(indexed[position])}")
        infos: dict[int, dict[int, int]] = {}
        at = index_at
        while at < size:
            where = f"record at offset {at}"
            fields, opcode, data_at, length = _record(handle, at, size, where)
            if opcode == _CHUNK_INFO:
                position = _number(fields, "chunk_pos", 8, where)
                count = _number(fields, "count", 4, where)
                if length != 8 * count or position in infos:
                    raise Damaged(f"the chunk info at offset {at} is malformed")
                handle.seek(data_at)
                body = handle.read(length)
                infos[position] = dict(struct.unpack_from("<II", body, k)
                                       for k in range(0, length, 8))
            elif opcode != _CONNECTION:
                raise Damaged(f"{where}: opcode {opcode:#04x} in the index")
            at = data_at + length
    if len(infos) != chunk_count or set(infos) != set(chunks):
        raise Damaged(f"the bag header counts {chunk_count} chunks, the index has "
                      f"{len(infos)} chunk infos, the file {len(chunks)} chunks")
    for position, counts in infos.items():
        holds = {c: len(m) for c, m in chunks[position].items()}
        if {c: n for c, n in counts.items() if n} != holds:
            raise Damaged(f"the chunk info of the chunk at offset {position} counts "
                          f"{sum(counts.values())} messages, the chunk holds "
                          f"{sum(holds.values())}")
    return sum(len(m) for held_by in chunks.values() for m in held_by.values())
