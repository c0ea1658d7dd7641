"""A run's input as a library: reading it in every format with its options (SP-R1,
BAG-R1 to BAG-R10, PL-R10).

``run``, ``stream``, ``plot``, ``verify`` and the report read a run's input through this
module, so that the same options mean the same rows in each: tables with their format and
column map, bags with the bag options and the config's topics. The command lines
(:mod:`timealign.spark.cli`, :mod:`timealign.plot.cli`) only turn options into a
:class:`RunInput` and a checked :class:`~timealign.spark.paths.JobPaths`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import attrs
from pyspark.sql import DataFrame, SparkSession

from timealign import vectors
from timealign.algorithm import Algorithm
from timealign.errors import InvalidInput
from timealign.spark import bags, schema
from timealign.spark.batch import BatchResult, no_phase, run_table
from timealign.spark.paths import JobPaths


def _config_json(text: str) -> Any:
    """The JSON value of the config option: a file's content when ``text`` names a file,
    otherwise ``text`` itself as inline JSON. Every failure names ``--config``."""
    if text.lstrip()[:1] in ("{", "[", '"') or not text.strip():
        return vectors.parse_json(text.encode(), "--config")
    path = Path(text)
    if not path.is_file():
        raise InvalidInput("--config", "VEC-R1", "no such file (and not inline JSON)", text)
    return vectors.parse_json(path.read_bytes(), f"--config {text}")


def load_config(algorithm: Algorithm[Any, Any, Any, Any], text: str | None) -> Any:
    """The config from a JSON file, an inline JSON object, or ``{}`` when absent; an error
    names ``--config`` and the field inside it."""
    raw = {} if text is None else _config_json(text)
    if not isinstance(raw, dict):
        raise InvalidInput("--config", "VEC-R1", "the config must be a JSON object", raw)
    try:
        return algorithm.config_from_json(raw)
    except InvalidInput as error:
        raise InvalidInput(f"--config {error.field}", error.rule, error.message,
                           error.value) from None


@attrs.frozen
class RunInput:
    """Where a run reads and how: a table (``format``, ``columns``) or, with ``bag`` (the
    data source's options, checked), a folder of ROS bags of which only ``topics`` are
    replayed (None: every topic)."""

    path: str
    format: str = "parquet"
    columns: schema.ColumnMap = attrs.Factory(schema.ColumnMap)
    bag: dict[str, str] | None = None
    topics: tuple[str, ...] | None = None

    @classmethod
    def of(cls, path: str, fmt: str, columns: Sequence[str], config: Any,
           stamps: Sequence[str] = (), source_from: str | None = None,
           skip_bad_files: bool = False) -> RunInput:
        """The input of ``path`` as the run's options give it (``--column`` items, the bag
        options); bad column maps and bag options are refused here, before Spark starts."""
        mapped = schema.ColumnMap.parse(columns)
        if fmt != "rosbag":
            return cls(path, fmt, mapped)
        topics = bags.configured_topics(config)
        options = bags.reader_options(stamps, source_from or "bag", skip_bad_files, topics)
        return cls(path, fmt, mapped, options, None if topics is None else tuple(topics))


@contextmanager
def read_rows(spark: SparkSession, source: RunInput) -> Iterator[DataFrame]:
    """The canonical rows of a run's input, read as ``run`` reads them: tables with their
    format and column map (SP-R1), bags with the bag options and the config's topics (BAG-R1
    to BAG-R7; rows of skipped bags and other topics left out). Bag rows stay persisted
    while the block runs."""
    if source.bag is None:
        yield schema.read_input(spark, source.path, source.format, source.columns)
        return
    rows, frame, _ = bags.read_bags(spark, source.path, source.bag, source.topics)
    try:
        yield rows
    finally:
        frame.unpersist()


def run(spark: SparkSession, algorithm: Algorithm[Any, Any, Any, Any], config: Any,
        source: RunInput, paths: JobPaths, per_file: bool = False,
        phase: Callable[[str], AbstractContextManager[object]] = no_phase,
        ) -> tuple[BatchResult, bags.BagReport | None]:
    """The batch job over ``source`` into the checked ``paths``; for bags, also what the
    summary adds (skipped bags, rows of other topics). ``phase`` is entered around each of
    the job's phases (the progress line, SP-R33)."""
    if source.bag is None:
        return run_table(spark, algorithm, config, paths, source.format, source.columns,
                         per_file, phase), None
    return bags.run_bags(spark, algorithm, config, paths, source.bag, per_file, phase)


def stream(spark: SparkSession, algorithm: Algorithm[Any, Any, Any, Any], config: Any,
           source: RunInput, paths: JobPaths, available_now: bool = False,
           trigger_seconds: float = 1.0, max_files: int | None = None,
           report: bool = True) -> int:
    """The stream over the folder of ``source`` into the checked ``paths``; the number of
    micro-batches seen. Bags: only the configured topics are replayed, the others written
    beside the tables (BAG-R7, BAG-R8)."""
    from timealign.spark.streaming import stream_job

    rows = set_aside = None
    if source.bag is not None:
        rows, other = bags.stream_bags(spark, source.path, source.bag, source.topics)
        set_aside = None if other is None else (bags.NOT_CONFIGURED, other)
    return stream_job(spark, algorithm, config, paths, source.format, source.columns,
                      available_now, trigger_seconds, max_files, report, rows, set_aside)


def write_report(spark: SparkSession, algorithm: Algorithm[Any, Any, Any, Any], config: Any,
                 source: RunInput, paths: JobPaths, summary: dict[str, Any]) -> Path:
    """PL-R9: the report page of a finished run, written to the report folder of
    ``paths``."""
    from timealign.plot.report import write
    from timealign.spark.pictures import build_report

    assert paths.report is not None, "the job's paths name no report folder"
    with read_rows(spark, source) as rows:
        report = build_report(algorithm, config, rows, paths.output, summary)
    return write(report, paths.report)
