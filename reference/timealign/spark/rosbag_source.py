"""The ``rosbag`` Spark data source (PySpark 4 Python data source API; spec/formats.md).

``spark.dataSource.register(RosbagDataSource)`` once per session, then
``spark.read.format("rosbag").load(path)`` reads every bag under ``path`` (one partition
per bag, Arrow batches; BAG-R1) and ``spark.readStream.format("rosbag").load(folder)``
picks up bags as they appear (BAG-R8). Options (all strings):

- ``stamp``: ``header`` (default) or ``log`` for every topic (BAG-R3);
- ``logStampTopics``: comma-separated topics that take the log time as stamp;
- ``topics``: comma-separated topics whose stamps are read; rows of the others are still
  returned, with a null stamp and their types not checked (BAG-R7); a topic no bag holds is
  refused (BAG-R23) unless ``missingTopics`` is ``allow``;
- ``missingTopics``: ``error`` (default) or ``allow`` (``timealign run``, which says it
  itself, BAG-R13);
- ``sourceFrom``: ``bag`` (default), ``folder`` or ``regex:PATTERN`` (BAG-R2);
- ``skipBadFiles``: ``true`` to report a bad bag as one row with ``error`` set instead of
  failing the read (BAG-R6);
- ``errorNames``: ``options`` (default: errors name these options and ``path``) or
  ``flags`` (errors name the command line's flags; what ``timealign run`` passes, BAG-R15).

The reading itself is :mod:`timealign.rosbag.read`; this module only maps bags to
partitions and offsets. Its errors (planning and reading alike) carry the package's error
text on their first line and the marker the jobs read back (SP-R23), in the words of
``errorNames`` (BAG-R15).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.types import StructType

from timealign.errors import InvalidInput
from timealign.rosbag.discovery import (
    NAMINGS,
    Bag,
    Options,
    bags_under,
    check_names,
    check_source_rule,
    is_bag,
)
from timealign.rosbag.info import bag_info
from timealign.rosbag.read import read_bag
from timealign.rosbag.rows import DDL, BagError
from timealign.spark.failures import marked


def options_of(raw: dict[str, str]) -> Options:
    """The reader options from the data source's string options (Spark may hand the keys
    lower-cased: they are matched without case)."""
    raw = {key.lower(): value for key, value in raw.items()}
    said = raw.get("errornames", "options")
    if said not in NAMINGS:
        raise InvalidInput("errorNames", "BAG-R15", f"must be one of {sorted(NAMINGS)}", said)
    naming = NAMINGS[said]
    stamp = raw.get("stamp", "header")
    if stamp not in ("header", "log"):  # BAG-R15: in the words of the caller
        raise InvalidInput(naming.stamp, "BAG-R3", "must be header or log (topics that take "
                           f"the log time: {naming.log_topic.format(topic='TOPIC')})", stamp)

    def names(key: str) -> frozenset[str]:
        return frozenset(t for t in raw.get(key, "").split(",") if t)

    topics = names("topics") if "topics" in raw else None
    return Options(log_stamp_all=stamp == "log", log_stamp_topics=names("logstamptopics"),
                   topics=topics,
                   source_from=check_source_rule(raw.get("sourcefrom", "bag"), naming),
                   skip_bad=raw.get("skipbadfiles", "false").lower() == "true", naming=naming)


def read_partition(bag: Bag, options: Options) -> Iterator[pa.RecordBatch]:
    """Rows of one bag; a bad bag's error crosses the Python worker boundary with the
    marker the jobs turn back into :class:`InvalidInput` (SP-R1's error path)."""
    with marked("", plain=True):
        yield from read_bag(bag, options)


class BagPartition(InputPartition):
    """One bag (picklable)."""

    def __init__(self, bag: Bag) -> None:
        super().__init__(bag.relative)
        self.bag = bag


#: ``missingTopics``: what a ``topics`` entry that no bag holds does (BAG-R23).
MISSING_TOPICS = ("error", "allow")


def missing_topics(raw: dict[str, str]) -> str:
    """The ``missingTopics`` option: ``error`` (default) or ``allow``."""
    said = {key.lower(): value for key, value in raw.items()}.get("missingtopics", "error")
    if said not in MISSING_TOPICS:
        raise InvalidInput("missingTopics", "BAG-R23", f"must be one of {list(MISSING_TOPICS)}",
                           said)
    return said


def check_topics_held(bags: Sequence[Bag], topics: frozenset[str] | None) -> None:
    """BAG-R23: refuse a ``topics`` entry that no readable bag holds, naming it and the
    topics the bags hold. Without it, a misspelt topic read every row with a null stamp
    (its rows are "other topics", BAG-R7), silently. Only the bags' indexes are read (as
    ``bags info``, BAG-R14), and only until every topic is found; an unreadable bag is left
    to the read, which names it (BAG-R6)."""
    if not topics:
        return
    held: set[str] = set()
    readable = 0
    for bag in bags:
        try:
            info = bag_info(Path(bag.path), bag.relative)
        except BagError:
            continue
        readable += 1
        held.update(topic.topic for topic in info.topics)
        if topics <= held:
            return
    if readable:
        missing = sorted(topics - held)
        raise InvalidInput("topics", "BAG-R23", f"no bag holds the topic(s) {missing}; the "
                           f"bags hold {sorted(held)} (topics names the topics whose stamps "
                           "are read; rows of the others keep a null stamp)", ",".join(missing))


class RosbagReader(DataSourceReader):
    def __init__(self, path: str, options: Options, check_topics: bool = True) -> None:
        self.path = path
        self.options = options
        self.check_topics = check_topics

    def partitions(self) -> Sequence[InputPartition]:
        # planning runs in a Python worker too: its errors go back as the reading's do
        with marked("", plain=True):
            bags = bags_under(self.path, self.options.source_from, self.options.naming)
            if self.check_topics:
                check_topics_held(bags, self.options.topics)  # BAG-R23
            return [BagPartition(bag) for bag in bags]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, BagPartition)
        return read_partition(partition.bag, self.options)


def listed_files(bag: Path) -> dict[str, int]:
    """SP-R53: every file of a bag (a file, or a folder's files) -> its modification time in
    ms, the way Spark's file source logs a file it takes (SP-R45)."""
    files = [bag] if bag.is_file() else sorted(p for p in bag.rglob("*") if p.is_file())
    found: dict[str, int] = {}
    for file in files:
        try:
            found[os.path.realpath(file)] = file.stat().st_mtime_ns // 1_000_000
        except FileNotFoundError:  # gone since listed: its read names it (BAG-R8)
            continue
    return found


class RosbagStreamReader(DataSourceStreamReader):
    """Bags that appear in the folder become micro-batches (BAG-R8). The offset is the
    sorted list of bags seen and, under ``listed``, every file of each bag with its
    modification time (ms) when the bag was first listed, so that a bag changed after it
    was taken is refused by name as a changed file is (SP-R53, SP-R45); a bag must be
    complete when it appears (moved in, not written in place), like the files of a file
    stream."""

    def __init__(self, path: str, options: Options) -> None:
        self.path = path
        self.options = options

    def initialOffset(self) -> dict[str, Any]:
        return {"bags": [], "listed": {}}

    def latestOffset(self, start: dict[str, Any] | None = None,
                     limit: Any = None) -> dict[str, Any]:
        folder = Path(self.path)
        with marked("", plain=True):
            found = bags_under(self.path, self.options.source_from, self.options.naming) \
                if folder.exists() else []
            seen = set(start["bags"]) if start else set()
            bags = sorted(seen | {bag.relative for bag in found})
            check_names(bags, self.options.source_from, self.options.naming)  # BAG-R2
        listed = dict(start.get("listed", {})) if start else {}
        for bag in found:  # SP-R53: a new bag's files as listed now (older offsets: none)
            if bag.relative not in seen:
                listed.update(listed_files(Path(bag.path)))
        return {"bags": bags, "listed": listed}

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[
            InputPartition]:
        # From the offset's names, not a new listing: a bag removed since it was seen fails
        # its read, naming it, rather than vanishing from the micro-batch.
        new = sorted(set(end["bags"]) - set(start["bags"]))
        root = Path(self.path)
        with marked("", plain=True):
            return [BagPartition(Bag.at(root if is_bag(root) else root / relative, relative,
                                        self.options.source_from, self.options.naming))
                    for relative in new]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, BagPartition)
        return read_partition(partition.bag, self.options)

    def commit(self, end: dict[str, Any]) -> None:
        pass


class RosbagDataSource(DataSource):
    """``format("rosbag")``: rows of SP-R1 plus ``type``, ``bag``, ``position`` and
    ``error`` (BAG-R2); PySpark finds it as ``pyspark_rosbag.DefaultSource`` (BAG-R12)."""

    @classmethod
    def name(cls) -> str:
        return "rosbag"

    def schema(self) -> str:
        return DDL

    def _path(self) -> str:
        path = self.options.get("path")
        if not path:
            raise InvalidInput("path", "BAG-R1", "load(path) needs a bag or a folder of bags")
        return str(path)

    def reader(self, schema: StructType) -> DataSourceReader:
        with marked("", plain=True):
            raw = dict(self.options)
            return RosbagReader(self._path(), options_of(raw), missing_topics(raw) == "error")

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        with marked("", plain=True):
            return RosbagStreamReader(self._path(), options_of(dict(self.options)))


def workers_python(spark: Any) -> str | None:
    """BAG-R22: make the Python workers of a local ``spark`` run this interpreter, the one
    ``timealign`` is imported in, unless ``PYSPARK_PYTHON`` or ``spark.pyspark.python``
    chose theirs; return the interpreter set (None: left as it was).

    PySpark starts its workers with ``PYSPARK_PYTHON``, else ``python3`` from the ``PATH``:
    in a virtual environment that is not activated (a Jupyter kernel, ``.venv/bin/python
    nb.py``) that is another Python, without ``timealign``, and every read failed with "No
    module named 'timealign'". The session keeps the interpreter of its Python functions in
    ``SparkContext.pythonExec``, read when a function (the data source) is registered, so
    setting it here, before the registration, is enough; on a cluster the executors' Python
    is theirs (docs/spark.md, "Running on a cluster")."""
    context = getattr(spark, "_sc", None)  # None in a Spark Connect session
    if context is None or os.environ.get("PYSPARK_PYTHON"):
        return None
    if context.getConf().get("spark.pyspark.python") or not str(context.master).startswith(
            "local"):
        return None
    context.pythonExec = sys.executable
    os.environ["PYSPARK_PYTHON"] = sys.executable  # for sessions started after this one
    return sys.executable


def register(spark: Any) -> None:
    """Make ``format("rosbag")`` available in ``spark``, its Python workers running this
    interpreter when nothing chose theirs (:func:`workers_python`, BAG-R22)."""
    workers_python(spark)
    spark.dataSource.register(RosbagDataSource)
