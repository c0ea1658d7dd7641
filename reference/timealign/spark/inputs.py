"""A run's input as a library: reading it in every format with its options (SP-R1,
BAG-R1 to BAG-R10, PL-R10).

``run``, ``stream``, ``plot``, ``verify`` and the report read a run's input through this
module, so that the same options mean the same rows in each: tables with their format and
column map, bags with the bag options and the config's topics. The command lines
(:mod:`timealign.commands.spark`, :mod:`timealign.commands.plot`) only turn options into a
:class:`RunInput` and a checked :class:`~timealign.spark.paths.JobPaths`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import attrs
from pyspark.sql import DataFrame, SparkSession

from timealign import jsontext, vectors
from timealign.algorithm import Algorithm
from timealign.errors import InvalidInput
from timealign.progress import Progress
from timealign.spark import bags, schema
from timealign.spark.batch import BatchResult, no_phase, run_table
from timealign.spark.census import configured_topics
from timealign.spark.inventory import Inventory
from timealign.spark.paths import JobPaths
from timealign.spark.per_file import PER_FILE


def _config_json(text: str) -> Any:
    """The JSON value of the config option: a file's content when ``text`` names a file,
    otherwise ``text`` itself as inline JSON. Every failure names ``--config``; a key given
    twice in one object is refused (VEC-R20)."""
    if text.lstrip()[:1] in ("{", "[", '"') or not text.strip():
        return vectors.parse_json(text.encode(), "--config", unique_keys=True)
    try:  # a regular file only: a FIFO would block forever, a folder is no config (VEC-R16)
        with jsontext.open_regular(text) as handle:
            body = handle.read(jsontext.MAX_TEXT_BYTES + 1)
    except FileNotFoundError:
        raise InvalidInput("--config", "VEC-R1", "no such file (and not inline JSON)",
                           text) from None
    except jsontext.NotRegularFile as error:
        raise InvalidInput(f"--config {text}", error.rule, str(error)) from None
    except OSError as error:
        raise InvalidInput(f"--config {text}", "VEC-R1",
                           f"cannot read the file: {error.strerror}") from None
    return vectors.parse_json(body, f"--config {text}", unique_keys=True)  # VEC-R20


def load_config(algorithm: Algorithm[Any, Any, Any, Any], text: str | None) -> Any:
    """The config from a JSON file, an inline JSON object, or ``{}`` when absent; an error
    names ``--config`` and the field inside it. Durations may be text with a unit
    (``"50ms"``), read by the algorithm's ``config_from_json`` (SP-R37)."""
    raw = {} if text is None else _config_json(text)
    if not isinstance(raw, dict):
        raise InvalidInput("--config", "VEC-R1", "the config must be a JSON object", raw)
    try:
        return algorithm.codec.config_from_json(raw)
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
           skip_bad_files: bool = False, time_unit: str = "ns") -> RunInput:
        """The input of ``path`` as the run's options give it (``--column`` items, the time
        unit, the bag options); bad column maps, units and bag options are refused here,
        before Spark starts."""
        mapped = schema.ColumnMap.parse(columns, time_unit)
        if fmt != "rosbag":
            return cls(path, fmt, mapped)
        topics = configured_topics(config)
        options = bags.reader_options(stamps, source_from or "bag", skip_bad_files, topics)
        return cls(path, fmt, mapped, options, None if topics is None else tuple(topics))


@contextmanager
def read_rows(spark: SparkSession, source: RunInput,
              inventory: Inventory | None = None) -> Iterator[DataFrame]:
    """The canonical rows of a run's input, read as ``run`` reads them: tables with their
    format and column map (SP-R1), bags with the bag options and the config's topics (BAG-R1
    to BAG-R7; rows of skipped bags and other topics left out). Bag rows stay persisted
    while the block runs; with ``inventory`` (the run's, SP-R41) the rows read of each bag
    are first reconciled with it, as ``run`` does (SP-R51; a table input's rows are
    reconciled by the caller, from the count it makes anyway)."""
    if source.bag is None:
        yield schema.read_input(spark, source.path, source.format, source.columns)
        return
    rows, frame, report = bags.read_bags(spark, source.path, source.bag, source.topics)
    bags.reconcile_bags(frame, report, inventory)  # SP-R51
    try:
        yield rows
    finally:
        frame.unpersist()


def run(spark: SparkSession, algorithm: Algorithm[Any, Any, Any, Any], config: Any,
        source: RunInput, paths: JobPaths, per_file: bool = False,
        phase: Callable[[str], AbstractContextManager[object]] = no_phase,
        strict: bool = False, per_file_option: str = PER_FILE,
        inventory: Inventory | None = None) -> tuple[BatchResult, bags.BagReport | None]:
    """The batch job over ``source`` into the checked ``paths``; for bags, also what the
    summary adds (skipped bags, rows of other topics). ``phase`` is entered around each of
    the job's phases (the progress line, SP-R33); ``strict``: a configured topic in no bag
    stops the job (BAG-R13); ``per_file_option``: how the caller names the per-file path in
    errors (SP-R18); ``inventory``: what the input holds, taken before it is read (SP-R41),
    reconciled with what the job reads (SP-R42)."""
    if source.bag is None:
        return run_table(spark, algorithm, config, paths, source.format, source.columns,
                         per_file, phase, per_file_option, inventory), None
    return bags.run_bags(spark, algorithm, config, paths, source.bag, per_file, phase, strict,
                         per_file_option, inventory)


def take_inventory(source: RunInput, progress: Progress | None = None,
                   label: str = "run") -> Inventory | None:
    """SP-R41: the inventory of a run's local input, before Spark starts: a table input's
    files as the reader checks them (SP-R1), a folder of bags as BAG-R1 finds them."""
    from timealign.spark.inventory import take

    files = None if source.bag is not None else schema.input_files(
        source.path, schema.check_format(source.format), source.columns,
        read_whole=False)  # SP-R52: the inventory reads each file once, digest and count
    return take(source.path, "rosbag" if source.bag is not None else source.format,
                progress, label, files)


def stream(spark: SparkSession, algorithm: Algorithm[Any, Any, Any, Any], config: Any,
           source: RunInput, paths: JobPaths, available_now: bool = False,
           trigger_seconds: float = 1.0, max_files: int | None = None,
           report: bool = True, on_poll: Callable[[], object] | None = None,
           stop: Callable[[Any], bool] | None = None) -> int:
    """The stream over the folder of ``source`` into the checked ``paths``; the number of
    micro-batches seen. Bags: only the configured topics are replayed, the others written
    beside the tables (BAG-R7, BAG-R8). ``on_poll``: called at every poll of the running
    stream (the taken files' check, SP-R54); ``stop``: the stream ends when it returns
    true (SP-R81, :func:`timealign.spark.streaming.stream_job`)."""
    from timealign.spark.streaming import stream_job

    rows = set_aside = None
    if source.bag is not None:
        rows, other = bags.stream_bags(spark, source.path, source.bag, source.topics)
        set_aside = None if other is None else (bags.NOT_CONFIGURED, other)
    return stream_job(spark, algorithm, config, paths, source.format, source.columns,
                      available_now, trigger_seconds, max_files, report, rows, set_aside,
                      on_poll=on_poll, stop=stop)


def write_report(spark: SparkSession, algorithm: Algorithm[Any, Any, Any, Any], config: Any,
                 source: RunInput, paths: JobPaths, summary: dict[str, Any]) -> Path:
    """PL-R9: the report page of a finished run, written to the report folder of
    ``paths``."""
    from timealign.outputs import read_manifest

    assert paths.report is not None, "the job's paths name no report folder"
    import shlex

    manifest = None if "://" in paths.output else read_manifest(paths.output, "the output")
    words = None if manifest is None else manifest.get("command_line")
    command = shlex.join(words) if isinstance(words, list) and all(
        isinstance(w, str) for w in words) else None  # PL-R15, as the command parsed it
    with read_rows(spark, source) as rows:  # the page shows the run's manifest (SP-R32)
        return write_rows_report(algorithm, config, rows, paths, summary, command, manifest)


def write_rows_report(algorithm: Algorithm[Any, Any, Any, Any], config: Any, rows: DataFrame,
                      paths: JobPaths, summary: dict[str, Any], command: str | None,
                      manifest: Any = None) -> Path:
    """PL-R9: the report page of a finished job whose input rows are ``rows`` (canonical;
    an MQTT stream's are its spool's, MQ-R15), written to the report folder of ``paths``."""
    from timealign.outputs import filled, resolved
    from timealign.plot.report import write
    from timealign.spark.pictures import build_report

    assert paths.report is not None, "the job's paths name no report folder"
    report = build_report(algorithm, config, rows, paths.output, summary,
                          manifest=manifest, warnings=summary.get("warnings", ()))
    with filled(paths.report, "run --report", "--report") as folder:  # CLI-R5
        write(attrs.evolve(report, command=command), folder)
    return Path(resolved(paths.report)) / "index.html"


def _same_path(a: str, b: str) -> bool:
    from timealign.outputs import resolved

    return a == b or resolved(a) == resolved(b)


@attrs.frozen
class RunRecord:
    """What a run was given (SP-R32): its algorithm, canonical config and input options,
    as its manifest remembers them, so that ``plot --run`` and ``verify`` need nothing
    else."""

    algorithm: str
    config: Any
    input: str
    format: str = "parquet"
    column: tuple[str, ...] = ()
    stamp: tuple[str, ...] = ()
    source_from: str | None = None
    skip_bad_files: bool = False
    time_unit: str = "ns"
    #: The run's ``--conf`` items (``spark.KEY=VALUE``), which ``verify`` starts its session
    #: with, so that what the run's reading needed is repeated (SP-R32).
    conf: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "config": self.config, "input": self.input,
                "input_format": self.format, "column": list(self.column),
                "stamp": list(self.stamp), "source_from": self.source_from,
                "skip_bad_files": self.skip_bad_files, "time_unit": self.time_unit,
                "conf": list(self.conf)}

    @classmethod
    def from_json(cls, body: Any, where: str) -> RunRecord:
        """The record of a manifest's entries; a missing or mistyped entry is
        ``InvalidInput`` naming ``where``."""
        def text_list(key: str) -> tuple[str, ...]:
            value = body.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise InvalidInput(where, "SP-R32", f"the manifest's {key} is not a list of "
                                   "strings", value)
            return tuple(value)

        if not isinstance(body, dict) or not isinstance(body.get("algorithm"), str) \
                or not isinstance(body.get("input"), str) \
                or not isinstance(body.get("input_format", "parquet"), str):
            raise InvalidInput(where, "SP-R32", "the manifest names no run (algorithm, "
                               "input): not the output of run or stream", None)
        source_from = body.get("source_from")
        unit = body.get("time_unit", "ns")
        return cls(body["algorithm"], body.get("config", {}), body["input"],
                   body.get("input_format", "parquet"), text_list("column"),
                   text_list("stamp"), source_from if isinstance(source_from, str) else None,
                   bool(body.get("skip_bad_files", False)),
                   unit if isinstance(unit, str) else "ns", text_list("conf"))

    @classmethod
    def of(cls, algorithm: Algorithm[Any, Any, Any, Any], config: Any, path: str,
           fmt: str, columns: Sequence[str] = (), stamps: Sequence[str] = (),
           source_from: str | None = None, skip_bad_files: bool = False,
           time_unit: str = "ns", conf: Sequence[str] = ()) -> RunRecord:
        """The record of a run's options (the path made absolute when local)."""
        from timealign.outputs import resolved

        return cls(algorithm.name, algorithm.codec.config_to_json(config), resolved(path), fmt,
                   tuple(columns), tuple(stamps), source_from, skip_bad_files, time_unit,
                   tuple(conf))

    def run_input(self, algorithm: Algorithm[Any, Any, Any, Any]) -> tuple[Any, RunInput]:
        """(config, :class:`RunInput`) as the run read its input."""
        config = algorithm.codec.config_from_json(self.config)
        return config, RunInput.of(self.input, self.format, self.column, config, self.stamp,
                                   self.source_from, self.skip_bad_files, self.time_unit)

    def matched(self, given: RunRecord, explicit: Sequence[str]) -> None:
        """Refuse, naming the first difference, when an option given explicitly
        (``explicit``: field names of ``given``) differs from what the run was given."""
        names = {"algorithm": "ALGORITHM", "config": "--config", "input": "--input",
                 "format": "--format", "column": "--column", "stamp": "--stamp",
                 "source_from": "--source-from", "skip_bad_files": "--skip-bad-files",
                 "time_unit": "--time-unit"}
        for field in names:
            if field not in explicit:
                continue
            mine, theirs = getattr(self, field), getattr(given, field)
            if not (_same_path(mine, theirs) if field == "input" else mine == theirs):
                raise InvalidInput(names[field], "SP-R32", f"differs from the run's manifest: "
                                   f"the run was given {mine!r}, this command {theirs!r}; "
                                   "leave the option out to use the run's", theirs)


def recorded_run(output: str, where: str = "the run") -> RunRecord | None:
    """The record of the run whose output is ``output`` (None: it has no manifest)."""
    from timealign.outputs import read_manifest

    if "://" in output:
        return None
    body = read_manifest(output, where)
    if body is None:
        return None
    return RunRecord.from_json(body.get("run"), where)


def recorded_inventory(output: str, where: str = "the run") -> Inventory | None:
    """The inventory the run whose output is ``output`` kept in its manifest (SP-R41);
    None for a run without one (older runs, remote outputs)."""
    from timealign.outputs import read_manifest

    if "://" in output:
        return None
    body = read_manifest(output, where)
    if body is None or body.get("inventory") is None:
        return None
    return Inventory.from_json(body["inventory"], where)


def remember(output: str, command: str, record: RunRecord, spark: SparkSession,
             started: float, ended: float | None, summary: dict[str, Any] | None,
             checkpoint: str | None = None, inventory: Inventory | None = None,
             extra: dict[str, Any] | None = None) -> None:
    """SP-R32: write the run's manifest into its output folder (local folders only):
    what it was given, the package's version and build, the Spark master, start and end
    (UTC, ISO 8601) and the counts of its summary; for a stream, its checkpoint (by which
    a later stream recognises its own output, CLI-R3); the input's inventory (SP-R41);
    ``extra``: further entries (a stream's taken files, SP-R45)."""
    import datetime

    import timealign
    from timealign import native
    from timealign.outputs import resolved, write_manifest

    if "://" in output or not Path(output).is_dir():
        return

    def when(seconds: float | None) -> str | None:
        return None if seconds is None else datetime.datetime.fromtimestamp(
            seconds, datetime.UTC).isoformat(timespec="seconds")

    counts = None if summary is None else {
        key: summary[key] for key in ("rows", "read", "held", "sources", "groups", "outcomes")
        if key in summary}
    write_manifest(output, command, {
        "run": record.as_json(), "timealign": {"version": timealign.__version__,
                                                "build": native.build()},
        "spark": {"master": spark.sparkContext.master, "version": spark.version},
        "started": when(started), "ended": when(ended), "counts": counts,
        **({} if checkpoint is None else {"checkpoint": resolved(checkpoint)}),
        **({} if inventory is None else {"inventory": inventory.as_json()}),
        **(extra or {})})
