"""What bags hold, from their indexes, without reading a message (BAG-R14).

``timealign bags info`` answers "which topics, types, counts and time span" before a job
is configured. Every number comes from what the ``rosbags`` reader learns when it opens a
bag: rosbag2's ``metadata.yaml`` (or an MCAP file's summary, a SQLite 3 file's tables) and
a ROS 1 bag's index records, so the cost does not grow with the messages' size. Whether a
type has a header stamp is the reader's own test (:func:`timealign.rosbag.header.stamp_layout`,
BAG-R3), so ``info`` says "header" exactly where a run would read one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from timealign.errors import InvalidInput
from timealign.rosbag.discovery import bag_name, find_bags, is_bag
from timealign.rosbag.header import stamp_layout
from timealign.rosbag.rows import BagError
from timealign.timetext import instant_text

#: The header-stamp column: a run reads this type's ``header.stamp``, needs ``--stamp
#: TOPIC=log``, or cannot read the type at all (BAG-R5).
HEADER, NO_HEADER, UNKNOWN = "yes", "no", "unknown type"


@attrs.frozen
class TopicInfo:
    """One topic of a bag (or of all bags): its type(s), message count and header stamp."""

    topic: str
    types: tuple[str, ...]
    count: int
    header: str
    bags: int = 1

    def as_json(self) -> dict[str, Any]:
        return {"topic": self.topic, "types": list(self.types), "count": self.count,
                "header_stamp": self.header, "bags": self.bags}


@attrs.frozen
class BagInfo:
    """One bag: where it is, its storage, its time span (log times, ns) and its topics."""

    path: str
    storage: str
    start: int | None  # None: the bag holds no message
    end: int | None
    topics: tuple[TopicInfo, ...]
    source: str | None = None  # the source its rows get in a run (BAG-R2); None: all bags
    error: str | None = None  # a bag that cannot be read: why (BAG-R16)

    @property
    def count(self) -> int:
        return sum(topic.count for topic in self.topics)

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "source": self.source, "storage": self.storage,
                "messages": self.count, "start": self.start, "end": self.end,
                "topics": [topic.as_json() for topic in self.topics],
                **({} if self.error is None else {"error": self.error})}


def _header(reader: Any, msgtype: str) -> str:
    if msgtype not in reader.typestore.fielddefs:
        return UNKNOWN
    return HEADER if stamp_layout(reader.typestore, msgtype, cdr=reader.is2) else NO_HEADER


def _storage(path: Path, reader: Any) -> str:
    if not reader.is2:
        return "ros1"
    if path.suffix in (".mcap", ".db3"):
        return "mcap" if path.suffix == ".mcap" else "sqlite3"
    files = [p.suffix for p in path.iterdir()]
    return "mcap" if ".mcap" in files else "sqlite3" if ".db3" in files else "rosbag2"


def bag_info(path: Path, name: str, source: str | None = None) -> BagInfo:
    """The summary of the bag at ``path`` (``name`` in messages; ``source``: the source a
    run gives its rows). An unreadable bag raises :class:`~timealign.rosbag.rows.BagError`
    naming it (BAG-R6)."""
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    try:
        with AnyReader([path], default_typestore=get_typestore(Stores.LATEST)) as reader:
            by_topic: dict[str, list[Any]] = {}
            for connection in reader.connections:
                by_topic.setdefault(connection.topic, []).append(connection)
            topics = []
            for topic, connections in sorted(by_topic.items()):
                types = tuple(sorted({c.msgtype for c in connections}))
                headers = {_header(reader, msgtype) for msgtype in types}
                header = headers.pop() if len(headers) == 1 else "mixed"
                topics.append(TopicInfo(topic, types, sum(c.msgcount for c in connections),
                                        header))
            count = sum(topic.count for topic in topics)
            start = int(reader.start_time) if count else None
            end = int(reader.end_time) - 1 if count else None  # the library's end is exclusive
            return BagInfo(name, _storage(path, reader), start, end, tuple(topics), source)
    except Exception as error:  # the library's and the file system's errors alike
        raise BagError(name, "BAG-R14", f"cannot read the bag: {type(error).__name__}: "
                       f"{error}", None) from None


def bags_info(paths: list[str]) -> list[BagInfo]:
    """Every bag under ``paths`` (each a bag or a folder searched as ``--input`` is,
    BAG-R1), in the order given then path order, each with the source its rows get in a run
    of that path (BAG-R2's default rule). A missing path, a file that is not a bag or a
    folder without a bag is refused naming it (exit 2); a bag that cannot be read is listed
    with its error (BAG-R16: the others are still described)."""
    found: list[BagInfo] = []
    for given in paths:
        root = Path(given)
        if not root.exists():
            raise InvalidInput(given, "BAG-R14", "no such file or folder", given)
        if root.is_file() and not is_bag(root):
            raise InvalidInput(given, "BAG-R14", "not a bag (a bag is a folder with "
                               "metadata.yaml, a .bag, .mcap or .db3 file)", given)
        bags = find_bags(root)
        if not bags:
            raise InvalidInput(given, "BAG-R14", "holds no bag", given)
        for path, relative in bags:
            name = str(path) if path == root else str(root / relative)
            source = bag_name(relative)
            try:
                found.append(bag_info(path, name, source))
            except BagError as error:
                found.append(BagInfo(name, "unreadable", None, None, (), source,
                                     error.message))
    return found


def damaged(bags: list[BagInfo]) -> InvalidInput | None:
    """BAG-R16: the error naming the bags that could not be read, or None."""
    bad = [bag for bag in bags if bag.error is not None]
    if not bad:
        return None
    return InvalidInput(bad[0].path, "BAG-R16", f"{len(bad)} of {len(bags)} bags cannot be "
                        f"read ({', '.join(b.path for b in bad)}); the first: {bad[0].error}; "
                        "the others are listed")


def total(bags: list[BagInfo]) -> BagInfo:
    """All bags as one: per topic the types, the summed counts and how many bags hold it;
    the span from the earliest start to the latest end."""
    merged: dict[str, list[TopicInfo]] = {}
    bags = [bag for bag in bags if bag.error is None]
    for bag in bags:
        for topic in bag.topics:
            merged.setdefault(topic.topic, []).append(topic)
    topics = []
    for name, parts in sorted(merged.items()):
        headers = {part.header for part in parts}
        topics.append(TopicInfo(
            name, tuple(sorted({t for part in parts for t in part.types})),
            sum(part.count for part in parts),
            headers.pop() if len(headers) == 1 else "mixed", len(parts)))
    starts = [bag.start for bag in bags if bag.start is not None]
    ends = [bag.end for bag in bags if bag.end is not None]
    storages = sorted({bag.storage for bag in bags})
    return BagInfo(f"{len(bags)} bags", ", ".join(storages), min(starts, default=None),
                   max(ends, default=None), tuple(topics))


def render(bag: BagInfo, all_bags: bool = False) -> list[str]:
    """``bag`` as text, ``ros2 bag info`` style: one line per field, then a topic table."""
    lines = [f"{'All' if all_bags else 'Bag'}:      {bag.path}"]
    if bag.source is not None:
        lines.append(f"Source:   {bag.source!r}")
    if bag.error is not None:
        return [*lines, f"Error:    {bag.error}"]
    lines += [f"Storage:  {bag.storage}", f"Messages: {bag.count}"]
    if bag.start is not None and bag.end is not None:
        lines += [f"Duration: {(bag.end - bag.start) / 1e9:.3f} s",
                  f"Start:    {instant_text(bag.start)}", f"End:      {instant_text(bag.end)}"]
    else:
        lines.append("Duration: (no message)")
    if not bag.topics:
        return [*lines, "Topics:   (none)"]
    width = max(len(t.topic) for t in bag.topics)
    type_width = max(len(", ".join(t.types)) for t in bag.topics)
    lines.append(f"Topics:   {'topic'.ljust(width)}  {'type'.ljust(type_width)}  "
                 f"{'count':>8}  header stamp" + ("  bags" if all_bags else ""))
    for t in bag.topics:
        lines.append(f"          {t.topic.ljust(width)}  {', '.join(t.types).ljust(type_width)}"
                     f"  {t.count:>8}  {t.header:<12}" + (f"  {t.bags:>4}" if all_bags else ""))
    return [line.rstrip() for line in lines]
