"""One bag into Arrow record batches of SP-R1 rows (BAG-R1 … BAG-R6).

Rows come out in the bag's *read order*: the order ``rosbags`` yields the messages (log
time, then storage order), which is also where ``position`` and the per-topic index of the
``id`` come from, so a user iterating the bag with ``rosbags.highlevel.AnyReader`` can
rebuild every id and join payloads back (BAG-D1).

Two paths produce the same rows (:mod:`timealign.rosbag.rows`):

- indexed MCAP without per-message compression: :mod:`timealign.rosbag.mcap_index`, numpy
  over the MCAP message indexes (BAG-R4, BAG-D2);
- everything else (SQLite 3, ROS 1, message-compressed or unindexed MCAP): the library's
  message iterator, reading eight bytes of each message for its stamp (here).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from timealign.errors import InvalidInput
from timealign.rosbag.discovery import Bag, Options
from timealign.rosbag.mcap_index import mcap_files, mcap_storages, read_mcap
from timealign.rosbag.mcap_integrity import Damaged, check_summary
from timealign.rosbag.ros1_integrity import check_ros1
from timealign.rosbag.rows import BagError, Rows, Topic, error_batch, full_stamp, plan_topics


def check_stamps(bags: Iterable[Bag], options: Options) -> None:
    """BAG-R3, BAG-R5, before Spark starts: every read topic of every bag has a header
    stamp, or takes its log time, as :func:`plan_topics` would find when the job reads
    the bag (after Spark's start-up); its error, naming the bag, the topic and the option
    that takes the log time, is raised here. A bag that cannot be opened is left to the
    job (BAG-R6 decides whether it fails or is skipped)."""
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    for bag in bags:
        try:
            reader = AnyReader([Path(bag.path)], default_typestore=get_typestore(Stores.LATEST))
            reader.open()
        except Exception:  # the library's and the file system's errors alike: the job's
            continue
        try:
            plan_topics(bag, reader, options)
        finally:
            reader.close()


def read_bag(bag: Bag, options: Options) -> Iterator[pa.RecordBatch]:
    """Rows of one bag in read order. A bag that cannot be read raises :class:`BagError`
    naming it; with ``options.skip_bad`` it yields one row carrying the error instead
    (BAG-R6: the job then drops every row of that bag). An MCAP file whose summary or
    message indexes disagree with its records is such a bag (BAG-R11), and so is one that
    gives fewer rows than its indexes count."""
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    try:
        ros1 = Path(bag.path).suffix == ".bag"
        counts = [check_ros1(bag.path)] if ros1 else []  # BAG-R20, before the library
        with AnyReader([Path(bag.path)],
                       default_typestore=get_typestore(Stores.LATEST)) as reader:
            plan = plan_topics(bag, reader, options)
            rows = Rows(bag, plan, options.batch_rows)
            counts += [check_summary(storage) for storage in mcap_files(reader)]
            storages = mcap_storages(reader)
            batches = (read_mcap(reader, storages, plan, rows) if storages is not None
                       else _read_generic(bag, reader, plan, rows))
            read = 0
            for batch in batches:
                read += batch.num_rows
                yield batch
            if counts and -1 not in counts and read != sum(counts):
                raise Damaged(f"{read} messages read, the indexes count {sum(counts)}")
            check_counts(reader, rows)  # BAG-R21
    except InvalidInput:
        raise
    except Exception as error:  # the library's and the file system's errors alike
        problem = f"cannot read the bag: {_said(error)}"
        if not options.skip_bad:
            raise BagError(bag.relative, "BAG-R6", problem, bag.path) from None
        yield error_batch(bag, problem)


def _said(error: Exception) -> str:
    """An error in words: its type and text, and for an error without text (the library's
    bare ``AssertionError`` on a damaged index) what it means (BAG-R20)."""
    text = str(error).strip()
    if isinstance(error, Damaged):
        return f"{type(error).__name__}: {text}"
    if not text:
        return (f"its records disagree with its index ({type(error).__name__} in the "
                f"bag library, no detail given)")
    return f"{type(error).__name__}: {text}"


def check_counts(reader: Any, rows: Rows) -> None:
    """BAG-R21: the rows read per topic equal what the bag's own bookkeeping counts
    (rosbag2's ``metadata.yaml`` per topic and in all, a ROS 1 bag's index): a SQLite 3
    file with rows deleted, or a ``metadata.yaml`` whose counts were edited, is a damaged
    bag, never a complete read of fewer rows."""
    stated: dict[str, int] = {}
    for connection in reader.connections:
        stated[connection.topic] = stated.get(connection.topic, 0) + int(connection.msgcount)
    read = {name: int(count) for name, count in zip(rows.topic_names, rows.counts,
                                                     strict=True)}
    for topic in sorted(set(stated) | set(read)):
        if stated.get(topic, 0) != read.get(topic, 0):
            raise Damaged(f"topic {topic}: {read.get(topic, 0)} messages read, the bag's "
                          f"metadata counts {stated.get(topic, 0)}")
    found = sum(read.values())
    totals = [("in all", int(reader.message_count))]
    files = [f for r in getattr(reader, "readers", ())
             for f in getattr(getattr(r, "storage", None), "files", ())]
    if files and all(isinstance(f, dict) and "message_count" in f for f in files):
        totals.append(("in its files", sum(int(f["message_count"]) for f in files)))
    for what, total in totals:
        if total != found:
            raise Damaged(f"{found} messages read, the bag's metadata counts {total} {what}")


def _read_generic(bag: Bag, reader: Any, plan: dict[int, Topic], rows: Rows) -> Iterator[
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
            stamps.append(full_stamp(reader, raw, topic.msgtype) if stamp is None else stamp)
        else:
            stamps.append(log_time if topic.mode == "log" else None)
        if len(codes) >= rows.batch_rows:
            yield from flush()
    yield from flush()

