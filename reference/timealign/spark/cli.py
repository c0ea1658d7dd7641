"""The ``run``, ``stream`` and ``generate`` sub-commands of ``timealign``.

Registered through ``timealign.cli._EXTENSIONS``. This module imports neither pyspark nor
pyarrow: each handler imports what it needs when it runs, so ``timealign replay`` and
``timealign check`` work where Spark is not installed.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from timealign import options, registry, vectors
from timealign.algorithm import Algorithm
from timealign.errors import InvalidInput


def _config_json(text: str) -> Any:
    """The JSON value of ``--config``: a file's content when ``text`` names a file,
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


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("algorithm", help=f"one of {', '.join(registry.names())}")
    parser.add_argument("--output", required=True, help="folder for groups/ and outcomes/")
    parser.add_argument("--config", help="JSON config file (or inline JSON object)")
    parser.add_argument("--format", default="parquet",
                        help="parquet (default), csv, json or rosbag")
    parser.add_argument("--column", action="append", default=[], metavar="FIELD=COLUMN",
                        help="read FIELD (source, id, topic, stamp, arrival, kind, poll) "
                             "from COLUMN; repeatable")
    parser.add_argument("--master", help="Spark master URL (default: local[*], or the master "
                                          "of spark-submit)")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting for the session; repeatable")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")


def bag_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """The options of ``--format rosbag`` (spec/formats.md), shared by ``run``, ``stream``,
    ``plot`` and ``verify`` so that they mean the same in each."""
    bags = parser.add_argument_group("ROS bags (--format rosbag)")
    bags.add_argument("--stamp", action="append", default=[], metavar="log|TOPIC=log",
                      help="take the stamp from the log time: for every topic (log) or for "
                           "one topic (TOPIC=log, repeatable); default: header.stamp")
    bags.add_argument("--source-from", metavar="RULE",
                      help="source of a bag's rows: bag (its path below the input, "
                           "default), folder (its folder) or regex:PATTERN")
    if command in ("run", "plot", "verify"):
        bags.add_argument("--skip-bad-files", action="store_true",
                          help="list unreadable bags in the summary instead of failing"
                          if command == "run" else
                          "leave out unreadable bags, as the run did with this option")


def run_input_arguments(parser: argparse.ArgumentParser, command: str,
                        required: bool) -> None:
    """The options naming a finished run's input as it was given to ``run`` (``plot``,
    ``verify``): ``--input``, ``--config``, ``--format``, ``--column``, ``--master`` and the
    bag options, meaning what they meant for the run (PL-R10, BAG-R10)."""
    parser.add_argument("--input", required=required, help="the run's --input")
    parser.add_argument("--config", help="the run's --config (file or inline JSON)")
    parser.add_argument("--format", default="parquet",
                        help="the run's --format: parquet (default), csv, json or rosbag")
    parser.add_argument("--column", action="append", default=[], metavar="FIELD=COLUMN",
                        help="the run's --column mappings; repeatable")
    parser.add_argument("--master", help="Spark master URL (default: local[*])")
    bag_arguments(parser, command)


def check_input_options(args: argparse.Namespace) -> None:
    """BAG-R9: the bag options only with ``--format rosbag``, ``--column`` only without it
    (a bag's columns are fixed by BAG-R2); refused before Spark starts, since either
    combination would otherwise be silently ignored."""
    if args.format == "rosbag":
        if args.column:
            raise InvalidInput("--column", "BAG-R9", "not with --format rosbag: a bag's "
                               "rows have fixed columns (BAG-R2)", args.column[0])
        return
    given = (("--stamp", bool(args.stamp)), ("--source-from", args.source_from is not None),
             ("--skip-bad-files", getattr(args, "skip_bad_files", False)))
    for option, present in given:
        if present:
            raise InvalidInput(option, "BAG-R9", "only with --format rosbag", args.format)


def input_settings(args: argparse.Namespace,
                   algorithm: Algorithm[Any, Any, Any, Any]) -> tuple[Any, Any]:
    """(config, column map) of a command that reads a run's input as ``run`` reads it
    (``plot``, ``verify``): the option combinations of BAG-R9 and bad bag options are
    refused here, before Spark starts."""
    from timealign.spark.schema import ColumnMap

    check_input_options(args)  # BAG-R9
    config = load_config(algorithm, args.config)
    columns = ColumnMap.parse(args.column)
    if args.format == "rosbag":
        bag_options(args, config)
    return config, columns


def bag_options(args: argparse.Namespace, config: Any) -> dict[str, str]:
    """The data source options of the bag options and the config's topics."""
    from timealign.spark.bags import configured_topics, reader_options

    return reader_options(args.stamp, args.source_from or "bag",
                          getattr(args, "skip_bad_files", False), configured_topics(config))


@contextmanager
def input_rows(spark: Any, args: argparse.Namespace, config: Any,
               columns: Any) -> Iterator[Any]:
    """The canonical rows of a run's ``--input``, read as ``run`` reads them: tables with
    ``--format``/``--column`` (SP-R1), bags with the bag options and the config's topics
    (BAG-R1 to BAG-R7; rows of skipped bags and other topics left out). Bag rows stay
    persisted while the block runs."""
    if args.format != "rosbag":
        from timealign.spark.schema import read_input

        yield read_input(spark, args.input, args.format, columns)
        return
    from timealign.spark.bags import configured_topics, read_bags

    rows, frame, _ = read_bags(spark, args.input, bag_options(args, config),
                               configured_topics(config))
    try:
        yield rows
    finally:
        frame.unpersist()


def _setup(args: argparse.Namespace, command: str) -> tuple[Any, Any, Any, Any]:
    """The algorithm, its config, the column map and the session of a Spark command."""
    from timealign.spark.schema import ColumnMap
    from timealign.spark.session import build_session

    algorithm = registry.get(args.algorithm)
    config = load_config(algorithm, args.config)
    columns = ColumnMap.parse(args.column)
    settings: dict[str, str] = {}
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep or not key.startswith("spark."):
            raise InvalidInput("--conf", "SP-R17", "expected spark.KEY=VALUE", item)
        settings[key] = value
    spark = build_session(args.master, f"timealign {command} {args.algorithm}",
                          settings)
    # SP-R23: failures are one line on stderr; Spark's own log (with the Java and Python
    # stack traces of a failed task) only with --debug.
    spark.sparkContext.setLogLevel("ERROR" if getattr(args, "debug", False) else "OFF")
    return algorithm, config, columns, spark


def check_report_folder(path: str, taken: dict[str, str]) -> None:
    """PL-R9: ``--report`` must name a folder that can be created or written, outside the
    input and the tables (SP-R20), checked before Spark starts, so a run never ends
    without the page it was asked for."""
    from timealign.plot.cli import require_plot_extra
    from timealign.spark.paths import check_output_folder, check_separate

    require_plot_extra("--report")
    check_output_folder("--report", path)
    check_separate(taken, {"--report": path})
    target = Path(path)
    existing = next(p for p in (target, *target.parents) if p.exists())
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise InvalidInput("--report", "PL-R9", f"cannot create or write in {existing}", path)


def write_report(args: argparse.Namespace, algorithm: Algorithm[Any, Any, Any, Any],
                 config: Any, columns: Any, spark: Any, summary: dict[str, Any]) -> Path:
    """PL-R9: the report page of a finished run, written to ``args.report``."""
    from timealign.plot.report import write
    from timealign.spark.pictures import build_report

    with input_rows(spark, args, config, columns) as rows:
        report = build_report(algorithm, config, rows, args.output, summary)
    return write(report, args.report)


def _run(args: argparse.Namespace) -> int:
    from timealign.spark.batch import run_batch
    from timealign.spark.paths import (
        check_file_target,
        check_output_folder,
        check_separate,
        table_paths,
    )
    from timealign.spark.progress import Progress
    from timealign.spark.summary import format_summary, summarize

    check_input_options(args)  # BAG-R9
    # SP-R20: refused before Spark starts, naming both paths.
    inputs = {"--input": args.input}
    check_output_folder("--output", args.output)
    check_separate(inputs, table_paths(args.output))
    check_file_target("--summary", args.summary, {**inputs, **table_paths(args.output)})
    if args.report is not None:
        check_report_folder(args.report, {**inputs, **table_paths(args.output)})
    algorithm, config, columns, spark = _setup(args, "run")
    started = time.monotonic()
    bag_report = None
    with Progress(spark, "run", enabled=not args.quiet):
        if args.format == "rosbag":
            from timealign.spark.bags import run_bags

            result, bag_report = run_bags(spark, algorithm, config, args.input,
                                          args.output, bag_options(args, config),
                                          args.sources_per_file)
        else:
            result = run_batch(spark, algorithm, config, args.input, args.output,
                               args.format, columns, args.sources_per_file)
        elapsed = time.monotonic() - started
        summary = summarize(spark.read.parquet(f"{args.output}/groups"),
                            spark.read.parquet(f"{args.output}/outcomes"))
    if bag_report is not None:
        summary.update(bag_report.as_json())
    summary["seconds"] = round(elapsed, 3)
    summary["rows_per_second"] = round(result.rows / elapsed) if elapsed else None
    print(format_summary(summary))
    print(f"no loss: every one of {result.rows} rows has exactly one outcome; "
          f"{elapsed:.1f} s, {summary['rows_per_second']} rows/s")
    if args.summary:
        Path(args.summary).write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    if args.report is not None:
        print(f"report: {write_report(args, algorithm, config, columns, spark, summary)}")
    return 0


def _stream(args: argparse.Namespace) -> int:
    from timealign.spark.paths import check_output_folder, check_separate, table_paths
    from timealign.spark.streaming import run_stream

    check_input_options(args)  # BAG-R9
    # SP-R20: neither the tables nor the checkpoint may overlap the watched folder.
    check_output_folder("--output", args.output)
    check_output_folder("--checkpoint", args.checkpoint)
    check_separate({"--source": args.source},
                   {**table_paths(args.output), "--checkpoint": args.checkpoint})
    algorithm, config, columns, spark = _setup(args, "stream")
    rows = set_aside = None
    if args.format == "rosbag":
        from timealign.spark.bags import NOT_CONFIGURED, configured_topics, stream_bags

        rows, other = stream_bags(spark, args.source, bag_options(args, config),
                                  configured_topics(config))
        set_aside = None if other is None else (NOT_CONFIGURED, other)
    batches = run_stream(spark, algorithm, config, args.source, args.output,
                         args.checkpoint, args.format, columns, args.available_now,
                         args.trigger_seconds, args.max_files_per_trigger, not args.quiet,
                         rows, set_aside)
    print(f"stream stopped after {batches} micro-batch(es)")
    return 0


def _generate(args: argparse.Namespace) -> int:
    from timealign.spark.generate import Plan, generate

    options: dict[str, Any] = {"seed": args.seed, "loss": args.loss, "files": args.files,
                               "jitter_ns": round(args.jitter_ms * 1e6),
                               "per_robot": args.file_per_robot}
    if args.seconds is not None:
        plan = Plan(robots=args.robots, seconds=args.seconds, **options)
    else:
        plan = Plan.for_messages(args.messages, args.robots, **options)
    rows = generate(plan, args.output)
    print(f"wrote {rows} messages from {plan.robots} robots over {plan.seconds:.1f} s "
          f"to {args.output}")
    return 0


def register(commands: Any) -> None:
    """Add ``run``, ``stream`` and ``generate`` to the ``timealign`` parser."""
    run = commands.add_parser("run", help="replay a recorded table on Spark (batch job)")
    _common(run)
    run.add_argument("--input", required=True, help="input file or folder")
    run.add_argument("--summary", help="also write the summary as JSON to this file")
    run.add_argument("--sources-per-file", action="store_true",
                     help="each file holds one source in arrival order: replay every file "
                          "as read, without a shuffle or sort (fails if a file is out of "
                          "order)")
    bag_arguments(run, "run")
    run.add_argument("--report", metavar="DIR",
                     help="also write an HTML report to DIR/index.html (needs the plot extra)")
    run.set_defaults(handler=_run)

    stream = commands.add_parser("stream", help="replay new files as they arrive (streaming)")
    _common(stream)
    stream.add_argument("--source", required=True, help="folder watched for new files")
    stream.add_argument("--checkpoint", required=True, help="Spark checkpoint folder")
    stream.add_argument("--available-now", action="store_true",
                        help="process the files present, then stop")
    stream.add_argument("--trigger-seconds", type=options.number(0.001, 86_400.0), default=1.0,
                        help="micro-batch interval (default 1)")
    stream.add_argument("--max-files-per-trigger",
                        type=options.integer(1, 10**9), help="files per micro-batch")
    bag_arguments(stream, "stream")
    stream.set_defaults(handler=_stream)

    gen = commands.add_parser("generate", help="write a synthetic robot-fleet dataset")
    gen.add_argument("--output", required=True, help="folder for the Parquet files")
    gen.add_argument("--robots", type=options.integer(1, 100_000), default=10,
                     help="sources (default 10)")
    gen.add_argument("--messages", type=options.integer(1, 10**11), default=1_000_000,
                     help="about how many messages (default 1000000)")
    gen.add_argument("--seconds", type=options.number(most=10**7, above=0),
                     help="recording length (overrides --messages)")
    gen.add_argument("--seed", type=options.integer(0, 2**32 - 1), default=0)
    gen.add_argument("--loss", type=options.number(0.0, 0.99), default=0.01,
                     help="share of lost messages")
    gen.add_argument("--jitter-ms", type=options.number(0.0, 10_000.0), default=1.0,
                     help="stamp jitter (std, ms)")
    gen.add_argument("--files", type=options.integer(1, 100_000), default=8,
                     help="number of Parquet files")
    gen.add_argument("--file-per-robot", action="store_true",
                     help="one file per robot, robot-NNN.parquet (overrides --files)")
    gen.set_defaults(handler=_generate)
