"""One bag into Arrow record batches of SP-R1 rows (BAG-R1 … BAG-R6).

Rows come out in the bag's *read order*: the order ``rosbags`` yields the messages (log
time, then storage order), which is also where ``position`` and the per-topic index of the
``id`` come from, so a user iterating the bag with ``rosbags.highlevel.AnyReader`` can
rebuild every id and join payloads back (BAG-D1).

Two paths produce the same rows:

- indexed MCAP without per-message compression: chunk by chunk, the MCAP message indexes
  give every record's offset, and the log times and header stamps are gathered with numpy
  from the decompressed chunk (no Python per message, no copy of payloads; BAG-R4). Chunks
  whose time ranges overlap are read together, so memory is bounded by one group of
  overlapping chunks (one chunk for a bag recorded in log-time order; BAG-D2);
- everything else (SQLite 3, ROS 1, message-compressed or unindexed MCAP): the library's
  message iterator, reading eight bytes of each message for its stamp.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from timealign.errors import InvalidInput
from timealign.rosbag.header import CDR_BE, CDR_LE, StampLayout, stamp_layout

ROSBAG2_FILES = (".mcap", ".db3")
ROS1_FILE = ".bag"
BATCH_ROWS = 65_536
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
class Options:
    """How bags become rows: which topics take the log time as stamp (BAG-R3), which
    topics are read at all (``None``: every topic; the others keep a null stamp and are
    counted, BAG-R7), how a bag names its source (BAG-R2), whether bad bags are skipped."""

    log_stamp_all: bool = False
    log_stamp_topics: frozenset[str] = frozenset()
    topics: frozenset[str] | None = None
    source_from: str = "bag"
    skip_bad: bool = False
    batch_rows: int = BATCH_ROWS

    def log_stamp(self, topic: str) -> bool:
        return self.log_stamp_all or topic in self.log_stamp_topics

    def wanted(self, topic: str) -> bool:
        return self.topics is None or topic in self.topics


def check_source_rule(rule: str) -> str:
    """``bag``, ``folder`` or ``regex:PATTERN`` (BAG-R2)."""
    if rule in ("bag", "folder"):
        return rule
    if rule.startswith("regex:"):
        try:
            re.compile(rule[6:])
        except re.error as error:
            raise InvalidInput("--source-from", "BAG-R2", f"bad pattern: {error}", rule) from None
        return rule
    raise InvalidInput("--source-from", "BAG-R2", "must be bag, folder or regex:PATTERN", rule)


def source_of(relative: str, rule: str) -> str:
    """The source of the bag at ``relative`` (posix path below the input root)."""
    if rule == "bag":
        return relative
    if rule == "folder":
        parent = str(PurePosixPath(relative).parent)
        return "" if parent == "." else parent
    match = re.search(rule[6:], relative)
    if match is None:
        raise InvalidInput(relative, "BAG-R2", f"--source-from {rule} does not match the bag",
                           relative)
    return match.group(1) if match.groups() else match.group(0)


def is_bag(path: Path) -> bool:
    if path.is_dir():
        return (path / "metadata.yaml").is_file()
    return path.suffix in (ROS1_FILE, *ROSBAG2_FILES)


def find_bags(root: Path) -> list[tuple[Path, str]]:
    """Every bag under ``root`` with its posix path relative to it, in path order (BAG-R1):
    a folder holding ``metadata.yaml`` (rosbag2; not searched further), a ``.bag`` file
    (ROS 1), or a lone ``.mcap`` / ``.db3`` file (rosbag2 storage without metadata)."""
    if is_bag(root):
        return [(root, root.name)]
    found: list[tuple[Path, str]] = []

    def walk(folder: Path) -> None:
        for entry in sorted(folder.iterdir()):
            if entry.name.startswith((".", "_")):
                continue
            if is_bag(entry):
                found.append((entry, entry.relative_to(root).as_posix()))
            elif entry.is_dir():
                walk(entry)

    walk(root)
    return found


@attrs.frozen
class Bag:
    """One bag to read: where it is and the names its rows carry."""

    path: str
    relative: str
    source: str
    prefix: str  # prepended to ids when a source holds several bags (BAG-R2)

    @classmethod
    def at(cls, path: Path, relative: str, rule: str) -> Bag:
        return cls(str(path), relative, source_of(relative, rule),
                   "" if rule == "bag" else f"{relative}:")


def bags_under(root: str, rule: str) -> list[Bag]:
    base = Path(root)
    if not base.exists():
        raise InvalidInput("--input", "BAG-R1", "no such file or folder", root)
    return [Bag.at(path, relative, rule) for path, relative in find_bags(base)]


@attrs.frozen
class _Topic:
    """What the reader does with one connection's messages."""

    code: int  # index of the topic name in the bag's topic list (ids count per topic)
    topic: str
    msgtype: str
    mode: str  # "header", "log" or "skip" (topic not read, BAG-R7)
    layout: StampLayout | None


def _plan(bag: Bag, reader: Any, options: Options) -> dict[int, _Topic]:
    """Per connection id: the topic's handling, checking types first (BAG-R3, BAG-R5), so
    a bag with an unusable type fails before any of its rows is produced."""
    names = sorted({c.topic for c in reader.connections})
    plan: dict[int, _Topic] = {}
    for connection in reader.connections:
        topic, msgtype = connection.topic, connection.msgtype
        code = names.index(topic)
        if not options.wanted(topic):
            plan[connection.id] = _Topic(code, topic, msgtype, "skip", None)
            continue
        if options.log_stamp(topic):
            plan[connection.id] = _Topic(code, topic, msgtype, "log", None)
            continue
        if msgtype not in reader.typestore.fielddefs:
            raise InvalidInput(bag.relative, "BAG-R5",
                               f"topic {topic!r}: unknown message type {msgtype!r} (the bag "
                               f"has no definition for it); use --stamp {topic}=log to take "
                               f"its log time", msgtype)
        layout = stamp_layout(reader.typestore, msgtype, cdr=reader.is2)
        if layout is None:
            raise InvalidInput(bag.relative, "BAG-R3",
                               f"topic {topic!r}: type {msgtype!r} has no header stamp; use "
                               f"--stamp {topic}=log (or --stamp log) to take the log time",
                               msgtype)
        plan[connection.id] = _Topic(code, topic, msgtype, "header", layout)
    return plan


def _full_stamp(reader: Any, raw: bytes | memoryview, msgtype: str) -> int:
    """The stamp by full deserialization: the fallback for encodings the fast read does not
    handle (BAG-R4)."""
    message: Any = reader.deserialize(bytes(raw), msgtype)
    stamp = message.header.stamp
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


class _Rows:
    """Column builder for one bag: ids count per topic in read order (BAG-R2)."""

    def __init__(self, bag: Bag, plan: dict[int, _Topic], batch_rows: int) -> None:
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


def _generic(bag: Bag, reader: Any, plan: dict[int, _Topic], rows: _Rows) -> Iterator[
        pa.RecordBatch]:
    """The library's message iterator; eight bytes per message for the stamp."""
    codes: list[int] = []
    types: list[str] = []
    stamps: list[int | None] = []
    arrivals: list[int] = []

    def flush() -> Iterator[pa.RecordBatch]:
        yield from rows.batches(np.array(codes, np.int64), pa.array(types, pa.string()),
                                pa.array(stamps, pa.int64()), np.array(arrivals, np.int64))
        for column in (codes, types, stamps, arrivals):
            column.clear()

    for connection, log_time, raw in reader.messages():
        topic = plan[connection.id]
        codes.append(topic.code)
        types.append(topic.msgtype)
        arrivals.append(log_time)
        if topic.mode == "header":
            assert topic.layout is not None
            stamp = topic.layout.read(raw)
            stamps.append(_full_stamp(reader, raw, topic.msgtype) if stamp is None else stamp)
        else:
            stamps.append(log_time if topic.mode == "log" else None)
        if len(codes) >= rows.batch_rows:
            yield from flush()
    yield from flush()


def _mcap_storages(reader: Any) -> list[Any] | None:
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
    message indexes, checking that every indexed offset holds a message record."""
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
    at = 0
    while at < len(index):
        opcode, length = index[at], struct.unpack_from("<Q", index, at + 1)[0]
        if opcode == 0x07:
            channel, size = struct.unpack_from("<HI", index, at + 9)
            entries = np.frombuffer(index, "<u8", size // 8, at + 15).reshape(-1, 2)
            offsets.append(entries[:, 1].astype(np.int64))
            channels.append(np.full(len(entries), channel, np.int64))
        at += 9 + length
    buffer = np.frombuffer(data, np.uint8)
    record = np.concatenate(offsets) if offsets else np.zeros(0, np.int64)
    channel = np.concatenate(channels) if channels else np.zeros(0, np.int64)
    if len(record) and (record.max() + 31 > len(buffer) or (buffer[record] != 0x05).any()):
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


def _mcap(reader: Any, storages: list[Any], plan: dict[int, _Topic], rows: _Rows) -> Iterator[
        pa.RecordBatch]:
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


def _flush(pending: list[tuple[np.ndarray, ...]], types: pa.Array, rows: _Rows) -> Iterator[
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

    def __init__(self, reader: Any, storage: Any, plan: dict[int, _Topic],
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
            got[i] = _full_stamp(reader, buffer[start:start + int(lengths[i])].tobytes(),
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


def read_bag(bag: Bag, options: Options) -> Iterator[pa.RecordBatch]:
    """Rows of one bag in read order. A bag that cannot be read raises :class:`BagError`
    naming it; with ``options.skip_bad`` it yields one row carrying the error instead
    (BAG-R6: the job then drops every row of that bag)."""
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    try:
        with AnyReader([Path(bag.path)],
                       default_typestore=get_typestore(Stores.LATEST)) as reader:
            plan = _plan(bag, reader, options)
            rows = _Rows(bag, plan, options.batch_rows)
            storages = _mcap_storages(reader)
            if storages is not None:
                yield from _mcap(reader, storages, plan, rows)
            else:
                yield from _generic(bag, reader, plan, rows)
    except InvalidInput:
        raise
    except Exception as error:  # the library's and the file system's errors alike
        problem = f"cannot read the bag: {type(error).__name__}: {error}"
        if not options.skip_bad:
            raise BagError(bag.relative, "BAG-R6", problem, bag.path) from None
        yield error_batch(bag, problem)


def error_batch(bag: Bag, problem: str) -> pa.RecordBatch:
    """The one row that reports a skipped bag (BAG-R6)."""
    return pa.RecordBatch.from_pylist([{"source": bag.source, "bag": bag.relative,
                                        "error": problem}], schema=SCHEMA)
