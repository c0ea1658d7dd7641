"""The batch job's per-file path (``timealign run --sources-per-file``, SP-R18).

Recordings usually hold one source per file, already in arrival order (a bag per robot, a
run file per instrument). Then there is nothing to shuffle or sort: each file is one scan
partition (:data:`ONE_FILE_PER_TASK`), read whole by one task (``coalesce`` hands a task
several whole files in turn), and a ``mapInArrow`` step right after the scan replays each
file's rows in the order they are read, through the same replay as the shuffled path
(:mod:`timealign.spark.replay`). The
order check of SP-R10 still runs on every row; here a row out of order means the file is
not in arrival order, and the job fails naming the file and the first offending row. The
row positions must count 0, 1, 2, … within each file, which proves that the file was read
whole, in order, by one task. The job's census is taken in the same scan (SP-D23): after
each file the task adds the file's :data:`CENSUS` row (its source, rows and configured
topics), from which :class:`timealign.spark.census.Census` checks, before anything is
published, that a source is in one file only and that every row read was replayed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import chain, groupby, pairwise
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from timealign.algorithm import Algorithm
from timealign.errors import InvalidInput
from timealign.spark import schema
from timealign.spark.failures import OrderError
from timealign.spark.replay import columns_from_batches, replay

# The file scan packs files into tasks and splits large ones. With the open cost of a file
# as large as the largest split, every file is one split and no two files share a task.
HUGE = str(1 << 60)
ONE_FILE_PER_TASK: dict[str, str] = {
    "spark.sql.files.maxPartitionBytes": HUGE,
    "spark.sql.files.openCostInBytes": HUGE,
}


#: How the library's entries name the per-file path in errors; the command line passes its
#: flag, ``--sources-per-file`` (the caller's words, as BAG-R15 for the bag reader).
PER_FILE = "per_file=True"

#: Replay tasks per core of the per-file path (``coalesce``; SP-D24 says why this many).
TASKS_PER_CORE = 2


#: SP-R10's order within one file (SP-R18): the file is constant there, so it is left out of
#: the key (its column holds the path on a file's first row only, :data:`FIRST_ROW_PATH`).
FILE_ORDER: tuple[str, ...] = ("arrival", schema.POSITION)

#: SP-D25: the dense per-file replay carries the file's path on the file's first row only
#: (null on the others), not on every row through the Arrow transfer and the checks.
FIRST_ROW_PATH = True


def file_disordered(source: str, batch: pa.RecordBatch, row: int,
                    previous: tuple[Any, ...] | None, option: str = PER_FILE,
                    file: str | None = None) -> str:
    """SP-R18's wording of an SP-R10 failure: the file itself is out of arrival order;
    ``option`` is how the caller named the per-file path; ``file``: its path (default: the
    row's)."""
    file = file if file is not None else batch.column(schema.FILE)[row].as_py()
    position = batch.column(schema.POSITION)[row].as_py()
    arrival = batch.column("arrival")[row].as_py()
    before = previous[0] if previous is not None else None
    return (f"file {file} is not in arrival order: row {position} (id "
            f"{batch.column('id')[row].as_py()!r}, source {source!r}) has arrival {arrival}, "
            f"below {before} of the row before it (SP-R10, SP-R18); run without "
            f"{option} to sort the rows")


def file_pieces(batches: Iterator[pa.RecordBatch]) -> Iterator[tuple[str, pa.RecordBatch]]:
    """The task's record batches cut where the file changes: (file, slice) pairs. The file
    column holds every row's path, or (SP-D25, :data:`FIRST_ROW_PATH`) only a file's first
    row's, null on the rows after it in the task: a file then runs from a row with a path
    to the next one; rows with no path before them began their file in another task."""
    current: str | None = None
    for batch in batches:
        if not batch.num_rows:
            continue
        files = batch.column(schema.FILE)
        if files.null_count == 0 and pc.count_distinct(files).as_py() == 1:
            current = files[0].as_py()
            yield current, batch
            continue
        if files.null_count:  # SP-D25: a file starts at each row that names it
            named = [int(i) for i in pc.indices_nonzero(pc.is_valid(files)).to_pylist()]
            if not named or named[0]:
                if current is None:
                    position = batch.column(schema.POSITION)[0].as_py()
                    raise OrderError(
                        f"source {batch.column('source')[0].as_py()!r}: a task's rows began "
                        f"at position {position} of a file, not at its first row; the file "
                        f"was split between tasks (SP-R18)")
                yield current, batch.slice(0, named[0] if named else batch.num_rows)
            for start, end in pairwise([*named, batch.num_rows]):
                current = files[start].as_py()
                yield current, batch.slice(start, end - start)
            continue
        changed = pc.not_equal(files.slice(1), files.slice(0, len(files) - 1))
        starts = [0, *(int(i) + 1 for i in pc.indices_nonzero(changed).to_pylist()),
                  batch.num_rows]
        for start, end in pairwise(starts):
            current = files[start].as_py()
            yield current, batch.slice(start, end - start)


def opened(file: str, pieces: Iterator[tuple[str, pa.RecordBatch]], dense: bool = True,
           option: str = PER_FILE) -> tuple[str, Iterator[pa.RecordBatch]]:
    """The file's source (its first row's) and its checked batches (:func:`checked`)."""
    batches = (batch for _, batch in pieces)
    first = next(batches)
    source = str(first.column("source")[0].as_py())
    return source, checked(file, chain([first], batches), source, dense, option)


def checked(file: str, batches: Iterator[pa.RecordBatch], source: str, dense: bool = True,
            option: str = PER_FILE) -> Iterator[pa.RecordBatch]:
    """The file's batches, checking that its source is constant and that its positions
    count 0, 1, 2, … (the file was read whole, in order, by this task); with ``dense``
    false (bags, whose rows of other topics are set aside) that they only increase."""
    expected = 0
    for batch in batches:
        sources = batch.column("source")
        # count_distinct, not equal-to-a-Python-string: see benchmarks/README.md ("The
        # per-file path") for why
        if sources.null_count or sources[0].as_py() != source \
                or pc.count_distinct(sources).as_py() != 1:
            row = int(pc.index(pc.fill_null(pc.not_equal(sources, source), True), True)
                      .as_py())
            raise InvalidInput("source", "SP-R18",
                               f"file {file}: row {batch.column(schema.POSITION)[row]} has "
                               f"source {sources[row].as_py()!r}, the file's first row "
                               f"{source!r}; with {option} the source must be "
                               f"constant within a file", sources[row].as_py())
        positions = batch.column(schema.POSITION).to_numpy(zero_copy_only=False)
        if dense:
            ok = np.array_equal(positions, np.arange(expected, expected + len(positions)))
        else:
            ok = positions[0] >= expected and bool(np.all(np.diff(positions) > 0))
        if not ok:
            raise OrderError(f"file {file}: rows {expected}.. reached the task as positions "
                             f"{positions[:3].tolist()}..; the file was split between tasks "
                             f"or read out of order (SP-R18)")
        expected = int(positions[-1]) + 1
        yield batch


#: The combined output's table of the per-file census rows (SP-D23): a file's source, path
#: (``id``), rows read (``input``) and configured topics seen (``ids``); no table of the
#: run takes them (:func:`timealign.spark.schema.groups_of`, ``outcomes_of``).
CENSUS = "census"


class FileTally:
    """What the replay read of one file, counted on the way in (SP-D23): its rows, and the
    configured topics among them (SP-R38; each batch's distinct topics taken by Arrow until
    every configured topic was seen, so the count is the rows the machine was fed)."""

    def __init__(self, topics: Sequence[str] | None) -> None:
        self.rows = 0
        self.wanted = frozenset(topics or ())
        self.seen: set[str] = set()

    def count(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            self.rows += batch.num_rows
            if len(self.seen) < len(self.wanted):
                self.seen.update(t for t in pc.unique(batch.column("topic")).to_pylist()
                                 if t in self.wanted)
            yield batch

    def row(self, source: str, file: str) -> pa.RecordBatch:
        """The file's census row, in the combined output schema."""
        values: dict[str, list[Any]] = {name: [None] for name in schema.ARROW_COMBINED.names}
        values.update(table=[CENSUS], source=[source], id=[file], input=[self.rows],
                      ids=[sorted(self.seen)])
        return pa.RecordBatch.from_pydict(values, schema=schema.ARROW_COMBINED)


def replay_files_function(
    algorithm: Algorithm[Any, Any, Any, Any], config: Any, dense: bool = True,
    option: str = PER_FILE, topics: Sequence[str] | None = None,
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The ``mapInArrow`` function: replay every file of the task as one source, then add
    the file's census row (:class:`FileTally`; ``topics``: the configured ones, SP-R38)
    (``dense``: see :func:`checked`; ``option``: the per-file path in the caller's words)."""

    def replay_task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        done: set[str] = set()
        for file, pieces in groupby(file_pieces(batches), key=lambda piece: piece[0]):
            if file in done:
                raise OrderError(f"file {file} reached its task in two runs (SP-R18)")
            done.add(file)
            source, rows = opened(file, pieces, dense, option)
            tally = FileTally(topics)

            def disordered(source: str, batch: pa.RecordBatch, row: int,
                           previous: tuple[Any, ...] | None, file: str = file) -> str:
                return file_disordered(source, batch, row, previous, option, file)

            yield from replay(algorithm, config, source, columns_from_batches(
                source, tally.count(rows), disordered, FILE_ORDER))
            yield tally.row(source, file)  # SP-D23: the file's census, after its replay

    return replay_task


def replay_files_frame(rows: DataFrame, algorithm: Algorithm[Any, Any, Any, Any],
                       config: Any, tasks: int | None = None, dense: bool = True,
                       option: str = PER_FILE, topics: Sequence[str] | None = None
                       ) -> DataFrame:
    """The combined output of replaying each file of ``rows`` as one source, in the order
    read, on the algorithm's fast path (as :func:`timealign.spark.batch.run_sources`): no
    shuffle, no sort. The session must read one file per scan partition
    (:data:`ONE_FILE_PER_TASK`) while the frame is computed; ``coalesce`` then gives each of
    ``tasks`` tasks (default: :data:`TASKS_PER_CORE` per core) several whole files, one
    after the other, so that a thousand small files do not cost a thousand tasks, Python
    runs and output files (SP-D24; benchmarks/README.md, "The per-file path"). ``dense``
    false: the rows are a ROS bag data source's, one partition per bag, whose positions may
    have gaps (:func:`checked`). ``option``: how the caller named the per-file path, for errors.
    Besides the two tables' rows, the frame holds one :data:`CENSUS` row per file
    (:class:`FileTally`), which neither table takes."""
    count = tasks or TASKS_PER_CORE * rows.sparkSession.sparkContext.defaultParallelism
    if dense and FIRST_ROW_PATH:  # SP-D25: the path on each file's first row only
        rows = rows.withColumn(schema.FILE, F.when(F.col(schema.POSITION) == 0,
                                                   F.col(schema.FILE)))
    return rows.coalesce(count).mapInArrow(
        replay_files_function(algorithm.fast_path(), config, dense, option, topics),
        schema.COMBINED)
