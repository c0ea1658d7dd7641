"""The indexed-MCAP read path (BAG-R4, BAG-D2): chunk by chunk, the MCAP message indexes
give every record's offset, and the log times and header stamps are gathered with numpy
from the decompressed chunk (no Python per message, no copy of payloads). Chunks whose
time ranges overlap are read together, so memory is bounded by one group of overlapping
chunks (one chunk for a bag recorded in log-time order).

It yields the same rows as the generic path (:mod:`timealign.rosbag.read`), which reads
every bag this path declines (:func:`mcap_storages` returns None).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from timealign.rosbag.header import CDR_BE, CDR_LE, StampLayout
from timealign.rosbag.mcap_integrity import check_chunk
from timealign.rosbag.rows import Rows, Topic, full_stamp


def mcap_files(reader: Any) -> list[Any]:
    """Every MCAP storage file of the bag (none for SQLite 3 and ROS 1 bags)."""
    from rosbags.rosbag2.storage_mcap import McapReader

    if not reader.is2:
        return []
    found: list[Any] = []
    for bag_reader in reader.readers:
        storage = bag_reader.storage
        found.extend(s for s in getattr(storage, "storages", [storage])
                     if isinstance(s, McapReader))
    return found


def mcap_storages(reader: Any) -> list[Any] | None:
    """The MCAP storages of a rosbag2 bag when every one is indexed and not compressed per
    message, else None (the generic path then reads the bag)."""
    from rosbags.rosbag2.storage_mcap import McapReader

    if not reader.is2 or len(reader.readers) != 1:
        return None
    storage = reader.readers[0].storage
    metadata = getattr(storage, "metadata", None)
    if metadata is not None and getattr(metadata, "compression_mode", None) == "message":
        return None
    storages = list(getattr(storage, "storages", [storage]))
    if not storages or not all(isinstance(s, McapReader) and s.chunks for s in storages):
        return None
    if any(not chunk.message_index_offsets for s in storages for chunk in s.chunks):
        return None
    return storages


def _clusters(chunks: Sequence[Any]) -> list[list[Any]]:
    """Chunks grouped so that no two groups overlap in log time (closed ranges): each group
    is read at once and the groups come out in time order (BAG-D2)."""
    groups: list[list[Any]] = []
    end = None
    for chunk in sorted(chunks, key=lambda c: (c.message_start_time, c.chunk_start_offset)):
        if end is not None and chunk.message_start_time <= end:
            groups[-1].append(chunk)
            end = max(end, chunk.message_end_time)
        else:
            groups.append([chunk])
            end = chunk.message_end_time
    return groups


def _gather(buffer: np.ndarray, offsets: np.ndarray, width: int) -> np.ndarray:
    """``width`` bytes at each offset, as an (n, width) uint8 array."""
    return buffer[offsets[:, None] + np.arange(width)]


def _read_exact(handle: Any, offset: int, size: int) -> bytes:
    handle.seek(offset)
    data: bytes = handle.read(size)
    if len(data) != size:
        raise ValueError(f"{size} bytes expected at offset {offset}, file ends first")
    return data


def _chunk_records(storage: Any, chunk: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(decompressed chunk bytes, record offsets, channel ids) of one chunk, from its
    message indexes, checking that they cover every message record of the chunk and that
every indexed offset holds one (BAG-R11)."""
    from rosbags.rosbag2.storage_mcap import decompress

    handle = storage.bio
    header = _read_exact(handle, chunk.chunk_start_offset, 9 + 28)
    if header[0] != 0x06:
        raise ValueError(f"no chunk record at offset {chunk.chunk_start_offset}")
    crc = struct.unpack_from("<I", header, 9 + 24)[0]
    start = chunk.chunk_start_offset + 9 + 40 + len(chunk.compression)
    data = decompress(_read_exact(handle, start, chunk.compressed_size), chunk.compression,
                      chunk.uncompressed_size, crc)
    index = _read_exact(handle, chunk.chunk_start_offset + chunk.chunk_length,
                        chunk.message_index_length)
    offsets: list[np.ndarray] = []
    channels: list[np.ndarray] = []
    times: list[np.ndarray] = []
    at = 0
    while at < len(index):
        opcode, length = index[at], struct.unpack_from("<Q", index, at + 1)[0]
        if opcode == 0x07:
            channel, size = struct.unpack_from("<HI", index, at + 9)
            entries = np.frombuffer(index, "<u8", size // 8, at + 15).reshape(-1, 2)
            offsets.append(entries[:, 1].astype(np.int64))
            times.append(entries[:, 0].astype(np.int64))
            channels.append(np.full(len(entries), channel, np.int64))
        at += 9 + length
    buffer = np.frombuffer(data, np.uint8)
    record = np.concatenate(offsets) if offsets else np.zeros(0, np.int64)
    channel = np.concatenate(channels) if channels else np.zeros(0, np.int64)
    check_chunk(buffer, record, np.concatenate(times) if times else np.zeros(0, np.int64),
                chunk.message_start_time, chunk.message_end_time,
                f"chunk at offset {chunk.chunk_start_offset}")
    if len(record) and (buffer[record] != 0x05).any():
        raise ValueError(f"chunk at {chunk.chunk_start_offset}: a message index points "
                         f"outside the chunk or at a record that is not a message")
    if len(record):
        stored = _gather(buffer, record + 9, 2).view("<u2").ravel().astype(np.int64)
        if (stored != channel).any():
            raise ValueError(f"chunk at {chunk.chunk_start_offset}: message index channel "
                             f"differs from the record's")
    return buffer, record, channel


def _header_stamps(buffer: np.ndarray, data: np.ndarray, lengths: np.ndarray,
                   layout: StampLayout) -> tuple[np.ndarray, np.ndarray]:
    """Stamps read at ``layout`` from messages starting at ``data``, and a mask of the
    messages the fast read cannot handle (short, or another CDR representation)."""
    fallback = lengths < layout.needed
    safe = np.where(fallback, 0, data)
    if layout.cdr:
        kind = _gather(buffer, safe, 2).astype(np.int64)
        kind = (kind[:, 0] << 8) | kind[:, 1]
        fallback |= (kind != CDR_LE) & (kind != CDR_BE)
        little = kind == CDR_LE
    else:
        little = np.ones(len(data), bool)
    raw = np.ascontiguousarray(_gather(buffer, safe + layout.offset, 8))
    sec_type = "i4" if layout.signed else "u4"
    le = raw.view([("sec", "<" + sec_type), ("nsec", "<u4")]).ravel()
    be = raw.view([("sec", ">" + sec_type), ("nsec", ">u4")]).ravel()
    sec = np.where(little, le["sec"].astype(np.int64), be["sec"].astype(np.int64))
    nsec = np.where(little, le["nsec"].astype(np.int64), be["nsec"].astype(np.int64))
    return sec * 1_000_000_000 + nsec, fallback


def read_mcap(reader: Any, storages: list[Any], plan: dict[int, Topic],
              rows: Rows) -> Iterator[pa.RecordBatch]:
    """The indexed-MCAP path: numpy over each group of overlapping chunks (BAG-R4); groups
    are gathered up to a batch before the Arrow columns are built."""
    pending: list[tuple[np.ndarray, ...]] = []
    size = 0
    types = pa.array(sorted({t.msgtype for t in plan.values()}), pa.string())
    for storage in storages:
        lookup = _Lookup(reader, storage, plan, types)
        for group in _clusters(storage.chunks):
            parts: list[tuple[Any, ...]] = [
                (*_chunk_rows(reader, storage, chunk, lookup), rank) for rank, chunk in
                     enumerate(sorted(group, key=lambda c: c.chunk_start_offset))]
            order = np.lexsort((np.concatenate([p[0] for p in parts]),
                                np.concatenate([np.full(len(p[0]), p[-1]) for p in parts]),
                                np.concatenate([p[1] for p in parts])))
            pending.append(tuple(np.concatenate([p[i] for p in parts])[order]
                                 for i in range(1, 6)))
            size += len(order)
            if size >= rows.batch_rows:
                yield from _flush(pending, types, rows)
                size = 0
    yield from _flush(pending, types, rows)


def _flush(pending: list[tuple[np.ndarray, ...]], types: pa.Array, rows: Rows) -> Iterator[
        pa.RecordBatch]:
    if not pending:
        return
    log_time, codes, type_index, stamps, valid = (np.concatenate([p[i] for p in pending])
                                                  for i in range(5))
    pending.clear()
    yield from rows.batches(codes, types.take(pa.array(type_index)),
                            pa.array(stamps, pa.int64(), mask=~valid), log_time)


class _Lookup:
    """Per MCAP channel id: topic code, type index, handling and stamp layout."""

    def __init__(self, reader: Any, storage: Any, plan: dict[int, Topic],
                 types: pa.Array) -> None:
        names = types.to_pylist()
        top = max((c.id for c in storage.connections), default=0) + 1
        self.known = np.zeros(top, bool)
        self.code = np.zeros(top, np.int64)
        self.type_index = np.zeros(top, np.int32)
        self.mode = np.zeros(top, np.int8)  # 0 skip, 1 log, 2 header
        self.layouts: dict[int, StampLayout] = {}
        self.msgtypes: dict[int, str] = {}
        for connection in storage.connections:
            topic = plan[_bag_connection(reader, connection)]
            cid = connection.id
            self.known[cid] = True
            self.code[cid] = topic.code
            self.type_index[cid] = names.index(topic.msgtype)
            self.mode[cid] = {"skip": 0, "log": 1, "header": 2}[topic.mode]
            self.msgtypes[cid] = topic.msgtype
            if topic.layout is not None:
                self.layouts[cid] = topic.layout


def _chunk_rows(reader: Any, storage: Any, chunk: Any, lookup: _Lookup) -> tuple[
        np.ndarray, ...]:
    """(record offset, log time, topic code, type index, stamp, stamp valid) of every
    message of one chunk, in record order of the message indexes."""
    buffer, record, channel = _chunk_records(storage, chunk)
    if len(channel) and (channel.max() >= len(lookup.known) or not lookup.known[channel].all()):
        raise ValueError(f"chunk at {chunk.chunk_start_offset}: message on an unknown channel")
    log_time = _gather(buffer, record + 15, 8).view("<u8").ravel().astype(np.int64)
    mode = lookup.mode[channel]
    stamps = np.where(mode == 1, log_time, 0)
    valid = mode == 1
    for cid, layout in lookup.layouts.items():
        mask = channel == cid
        if not mask.any():
            continue
        offsets = record[mask]
        lengths = _gather(buffer, offsets + 1, 8).view("<u8").ravel().astype(np.int64) - 22
        got, fallback = _header_stamps(buffer, offsets + 31, lengths, layout)
        for i in np.flatnonzero(fallback):
            start = int(offsets[i]) + 31
            got[i] = full_stamp(reader, buffer[start:start + int(lengths[i])].tobytes(),
                                 lookup.msgtypes[cid])
        stamps[mask] = got
        valid[mask] = True
    return (record, log_time, lookup.code[channel], lookup.type_index[channel], stamps, valid)


def _bag_connection(reader: Any, storage_connection: Any) -> int:
    """The bag-level connection id of a storage connection (same topic and type)."""
    for connection in reader.connections:
        if (connection.topic, connection.msgtype) == (storage_connection.topic,
                                                      storage_connection.msgtype):
            return int(connection.id)
    raise ValueError(f"channel {storage_connection.topic!r} is not in the bag's metadata")

