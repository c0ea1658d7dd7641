"""The MCAP cross-checks (BAG-R11): an MCAP file's summary (chunk indexes, statistics) and
message indexes are redundant copies of what its chunks hold, and both read paths trust
them (the indexed path reads the records the message indexes point at; the library's
iterator skips a chunk its index says holds nothing and drops a message outside the time
range its chunk index states). So before a bag is read, the summary is checked against the
data section record by record, and while a chunk is read its message indexes are checked to
cover every message record of the chunk: any disagreement is a damaged file, refused by
name (BAG-R6) rather than read with rows missing.

Only the record framing is walked in Python (one step per chunk and per message index
record, not per message); the per-message checks are numpy over the chunk.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any, BinaryIO

import attrs
import numpy as np

_CHUNK, _MESSAGE, _MESSAGE_INDEX = 0x06, 0x05, 0x07
_MESSAGE_HEADER = 22  # channel u16, sequence u32, log time u64, publish time u64


class Damaged(ValueError):
    """The file's summary or message indexes disagree with its records (BAG-R11)."""


@attrs.frozen
class ChunkIndex:
    """What the data section says of one chunk, to compare with its chunk index."""

    start: int
    end: int
    uncompressed_size: int
    compression: str
    compressed_size: int
    length: int
    index_offsets: dict[int, int]  # channel -> offset of its message index record
    index_length: int
    counts: dict[int, int]  # channel -> message index entries


def _records(handle: BinaryIO, start: int, end: int) -> Iterator[tuple[int, int, int]]:
    """(offset, opcode, content length) of the records framed between ``start`` and
    ``end``; a record running past ``end`` is damage."""
    at = start
    while at < end:
        handle.seek(at)
        head = handle.read(9)
        if len(head) != 9:
            raise Damaged(f"record at offset {at} is cut short")
        opcode, length = head[0], struct.unpack_from("<Q", head, 1)[0]
        if at + 9 + length > end:
            raise Damaged(f"record at offset {at} (opcode {opcode:#04x}, {length} bytes) "
                          f"runs past offset {end}")
        yield at, opcode, length
        at += 9 + length


def _chunk_header(handle: BinaryIO, at: int, length: int) -> tuple[int, int, int, str, int]:
    handle.seek(at + 9)
    head = handle.read(min(length, 28 + 4 + 256))
    if len(head) < 32:
        raise Damaged(f"chunk at offset {at} is too short")
    start, end, size = struct.unpack_from("<QQQ", head, 0)
    name_length = struct.unpack_from("<I", head, 28)[0]
    if 32 + name_length + 8 > len(head):
        raise Damaged(f"chunk at offset {at}: compression name of {name_length} bytes")
    compression = head[32:32 + name_length].decode("utf-8", "replace")
    compressed = struct.unpack_from("<Q", head, 32 + name_length)[0]
    if 32 + name_length + 8 + compressed != length:
        raise Damaged(f"chunk at offset {at}: {compressed} compressed bytes do not fill "
                      f"its {length}-byte record")
    return start, end, size, compression, compressed


def _message_indexes(handle: BinaryIO, start: int, end: int) -> tuple[dict[int, int],
                                                                      dict[int, int]]:
    """(channel -> record offset, channel -> entries) of the message index records that
    follow a chunk; anything else there, or an entry list not filling its record, is
    damage."""
    offsets: dict[int, int] = {}
    counts: dict[int, int] = {}
    for at, opcode, length in _records(handle, start, end):
        handle.seek(at + 9)
        head = handle.read(6)
        if opcode != _MESSAGE_INDEX or len(head) != 6:
            raise Damaged(f"record at offset {at} (opcode {opcode:#04x}) where a message "
                          f"index was expected")
        channel, size = struct.unpack("<HI", head)
        if size % 16 or 6 + size != length or channel in offsets:
            raise Damaged(f"message index at offset {at} is malformed")
        offsets[channel] = at
        counts[channel] = size // 16
    return offsets, counts


def check_summary(storage: Any) -> int:
    """The number of messages the file holds, after checking that its chunk indexes
    describe exactly the chunks of the data section, its message index offsets the
    message index records there, and its statistics the sum of those indexes (BAG-R11).
    A file without chunk indexes is read by a full scan and has nothing to check
    (returns -1)."""
    if not storage.chunks:
        return -1
    path = storage.path
    with open(path, "rb") as handle:
        found: dict[int, ChunkIndex] = {}
        index_end = 0
        for at, opcode, length in _records(handle, storage.data_start, storage.data_end):
            if opcode == _MESSAGE:
                raise Damaged(f"message record at offset {at} outside any chunk (the "
                              f"indexed read would skip it)")
            if opcode == _MESSAGE_INDEX and at >= index_end:
                raise Damaged(f"message index at offset {at} follows no chunk")
            if opcode != _CHUNK:
                continue
            header = _chunk_header(handle, at, length)
            index_start = at + 9 + length
            index_end = index_start
            for next_at, next_opcode, next_length in _records(handle, index_start,
                                                              storage.data_end):
                if next_opcode != _MESSAGE_INDEX:
                    break
                index_end = next_at + 9 + next_length
            offsets, counts = _message_indexes(handle, index_start, index_end)
            found[at] = ChunkIndex(*header, 9 + length, offsets, index_end - index_start,
                                   counts)
    indexed = {chunk.chunk_start_offset: chunk for chunk in storage.chunks}
    if len(indexed) != len(storage.chunks) or set(indexed) != set(found):
        missing = sorted(set(found) - set(indexed))
        raise Damaged(f"the chunk indexes list {len(storage.chunks)} chunks, the data "
                      f"section holds {len(found)}" + (f" (not indexed: offsets {missing})"
                                                       if missing else ""))
    channels: dict[int, int] = {}
    for at, chunk in indexed.items():
        seen = found[at]
        stated = ChunkIndex(chunk.message_start_time, chunk.message_end_time,
                            chunk.uncompressed_size, chunk.compression,
                            chunk.compressed_size, chunk.chunk_length,
                            dict(chunk.message_index_offsets), chunk.message_index_length,
                            seen.counts)
        if stated != seen:
            raise Damaged(f"the chunk index of the chunk at offset {at} disagrees with the "
                          f"chunk and its message indexes")
        for channel, count in seen.counts.items():
            channels[channel] = channels.get(channel, 0) + count
    total = sum(channels.values())
    statistics = storage.statistics
    if statistics is not None:
        stated_counts = {c: n for c, n in statistics.channel_message_counts.items() if n}
        if (statistics.message_count != total
                or stated_counts != {c: n for c, n in channels.items() if n}
                or statistics.chunk_count != len(found)):
            raise Damaged(f"the statistics count {statistics.message_count} messages in "
                          f"{statistics.chunk_count} chunks, the message indexes {total} "
                          f"in {len(found)}")
    return total


def check_chunk(buffer: np.ndarray, record: np.ndarray, index_times: np.ndarray,
                start: int, end: int, where: str) -> None:
    """Checks that the message index entries of one decompressed chunk (``record``
    offsets, ``index_times`` log times) point at every message record of the chunk once
    and agree with it, and that every log time lies in the chunk's stated range (the
    library's iterator drops one outside it) (BAG-R11)."""
    size = len(buffer)
    order = np.sort(record)
    if len(order) and (order[0] < 0 or order[-1] + 9 + _MESSAGE_HEADER > size):
        raise Damaged(f"{where}: a message index entry points outside the chunk")
    if len(order) and (np.diff(order) <= 0).any():
        raise Damaged(f"{where}: two message index entries point at one record")
    if len(order):
        lengths = _gather_u64(buffer, order + 1)
        ends = order + 9 + lengths
        if (lengths < _MESSAGE_HEADER).any() or (lengths > size).any() or (
                ends[:-1] > order[1:]).any() or ends[-1] > size:
            raise Damaged(f"{where}: message records overlap or run past the chunk")
        gaps = [(0, int(order[0]))] + [
            (int(a), int(b)) for a, b in zip(ends[:-1], order[1:], strict=True) if a != b
        ] + [(int(ends[-1]), size)]
    else:
        gaps = [(0, size)]
    for gap_start, gap_end in gaps:
        _no_message_between(buffer, gap_start, gap_end, where)
    times = _gather_u64(buffer, record + 9 + 6)
    if (times != index_times).any():
        raise Damaged(f"{where}: a message index entry's log time differs from its record's")
    if len(times) and (int(times.min()) < start or int(times.max()) > end):
        raise Damaged(f"{where}: a message's log time lies outside the chunk's time range")


def _no_message_between(buffer: np.ndarray, start: int, end: int, where: str) -> None:
    """The records between two indexed messages are whole and none is a message."""
    at = start
    while at < end:
        if at + 9 > end:
            raise Damaged(f"{where}: a record at chunk offset {at} is cut short")
        opcode = int(buffer[at])
        length = int(_gather_u64(buffer, np.array([at + 1]))[0])
        if opcode == _MESSAGE:
            raise Damaged(f"{where}: the message at chunk offset {at} is in no message "
                          f"index")
        if at + 9 + length > end:
            raise Damaged(f"{where}: a record at chunk offset {at} runs past the next one")
        at += 9 + length


def _gather_u64(buffer: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The little-endian u64 at each offset, as int64 (huge values become negative and
    fail the range checks above)."""
    raw = np.ascontiguousarray(buffer[offsets[:, None] + np.arange(8)])
    return raw.view("<u8").ravel().astype(np.int64)
