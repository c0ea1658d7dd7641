"""The ``run``, ``stream`` and ``generate`` sub-commands of ``timealign``.

Registered through ``timealign.cli._EXTENSIONS``. This module imports neither pyspark nor
pyarrow: each handler imports what it needs when it runs, so ``timealign replay`` and
``timealign check`` work where Spark is not installed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from timealign import registry
from timealign.algorithm import Algorithm
from timealign.errors import InvalidInput


def load_config(algorithm: Algorithm[Any, Any, Any, Any], text: str | None) -> Any:
    """The config from a JSON file, an inline JSON object, or ``{}`` when absent."""
    if text is None:
        raw: Any = {}
    elif text.lstrip().startswith("{"):
        raw = json.loads(text)
    else:
        raw = json.loads(Path(text).read_text(encoding="utf-8"))
    if not isinstance(raw, dict):
        raise InvalidInput("--config", "VEC-R1", "the config must be a JSON object", raw)
    return algorithm.config_from_json(raw)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("algorithm", help=f"one of {', '.join(registry.names())}")
    parser.add_argument("--output", required=True, help="folder for groups/ and outcomes/")
    parser.add_argument("--config", help="JSON config file (or inline JSON object)")
    parser.add_argument("--format", default="parquet",
                        help="parquet (default), csv, json or rosbag")
    parser.add_argument("--column", action="append", default=[], metavar="FIELD=COLUMN",
                        help="read FIELD (source, id, topic, stamp, arrival, kind, poll) "
                             "from COLUMN; repeatable")
    parser.add_argument("--master", help="Spark master URL (default: local[*])")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")


def _bag_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """The options of ``--format rosbag`` (spec/formats.md)."""
    bags = parser.add_argument_group("ROS bags (--format rosbag)")
    bags.add_argument("--stamp", action="append", default=[], metavar="log|TOPIC=log",
                      help="take the stamp from the log time: for every topic (log) or for "
                           "one topic (TOPIC=log, repeatable); default: header.stamp")
    bags.add_argument("--source-from", default="bag", metavar="RULE",
                      help="source of a bag's rows: bag (its path below the input, "
                           "default), folder (its folder) or regex:PATTERN")
    if command == "run":
        bags.add_argument("--skip-bad-files", action="store_true",
                          help="list unreadable bags in the summary instead of failing")


def _bag_options(args: argparse.Namespace, config: Any) -> dict[str, str]:
    from timealign.spark.bags import configured_topics, reader_options

    return reader_options(args.stamp, args.source_from, getattr(args, "skip_bad_files", False),
                          configured_topics(config))


def _failed(error: Exception) -> int:
    print(f"timealign: error: {error}", file=sys.stderr)
    return 3


def _setup(args: argparse.Namespace, command: str) -> tuple[Any, Any, Any, Any]:
    """The algorithm, its config, the column map and the session of a Spark command."""
    from timealign.spark.schema import ColumnMap
    from timealign.spark.session import build_session

    algorithm = registry.get(args.algorithm)
    config = load_config(algorithm, args.config)
    columns = ColumnMap.parse(args.column)
    return algorithm, config, columns, build_session(args.master,
                                                     f"timealign {command} {args.algorithm}")


def _run(args: argparse.Namespace) -> int:
    from timealign.spark.batch import OrderError, run_batch
    from timealign.spark.outcomes import LossError
    from timealign.spark.paths import (
        check_file_target,
        check_output_folder,
        check_separate,
        table_paths,
    )
    from timealign.spark.progress import Progress
    from timealign.spark.summary import format_summary, summarize

    # SP-R20: refused before Spark starts, naming both paths.
    inputs = {"--input": args.input}
    check_output_folder("--output", args.output)
    check_separate(inputs, table_paths(args.output))
    check_file_target("--summary", args.summary, {**inputs, **table_paths(args.output)})
    algorithm, config, columns, spark = _setup(args, "run")
    started = time.monotonic()
    bag_report = None
    try:
        with Progress(spark, "run", enabled=not args.quiet):
            if args.format == "rosbag":
                from timealign.spark.bags import run_bags

                result, bag_report = run_bags(spark, algorithm, config, args.input,
                                              args.output, _bag_options(args, config))
            else:
                result = run_batch(spark, algorithm, config, args.input, args.output,
                                   args.format, columns)
            elapsed = time.monotonic() - started
            summary = summarize(spark.read.parquet(f"{args.output}/groups"),
                                spark.read.parquet(f"{args.output}/outcomes"))
    except (LossError, OrderError) as error:
        return _failed(error)
    if bag_report is not None:
        summary.update(bag_report.as_json())
    summary["seconds"] = round(elapsed, 3)
    summary["rows_per_second"] = round(result.rows / elapsed) if elapsed else None
    print(format_summary(summary))
    print(f"no loss: every one of {result.rows} rows has exactly one outcome; "
          f"{elapsed:.1f} s, {summary['rows_per_second']} rows/s")
    if args.summary:
        Path(args.summary).write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return 0


def _stream(args: argparse.Namespace) -> int:
    from timealign.spark.outcomes import LossError
    from timealign.spark.paths import check_output_folder, check_separate, table_paths
    from timealign.spark.streaming import run_stream

    # SP-R20: neither the tables nor the checkpoint may overlap the watched folder.
    check_output_folder("--output", args.output)
    check_output_folder("--checkpoint", args.checkpoint)
    check_separate({"--source": args.source},
                   {**table_paths(args.output), "--checkpoint": args.checkpoint})
    algorithm, config, columns, spark = _setup(args, "stream")
    rows = set_aside = None
    if args.format == "rosbag":
        from timealign.spark.bags import NOT_CONFIGURED, configured_topics, stream_bags

        rows, other = stream_bags(spark, args.source, _bag_options(args, config),
                                  configured_topics(config))
        set_aside = None if other is None else (NOT_CONFIGURED, other)
    try:
        batches = run_stream(spark, algorithm, config, args.source, args.output,
                             args.checkpoint, args.format, columns, args.available_now,
                             args.trigger_seconds, args.max_files_per_trigger, not args.quiet,
                             rows, set_aside)
    except LossError as error:
        return _failed(error)
    print(f"stream stopped after {batches} micro-batch(es)")
    return 0


def _generate(args: argparse.Namespace) -> int:
    from timealign.spark.generate import Plan, generate

    options: dict[str, Any] = {"seed": args.seed, "loss": args.loss, "files": args.files,
                               "jitter_ns": round(args.jitter_ms * 1e6)}
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
    _bag_arguments(run, "run")
    run.set_defaults(handler=_run)

    stream = commands.add_parser("stream", help="replay new files as they arrive (streaming)")
    _common(stream)
    stream.add_argument("--source", required=True, help="folder watched for new files")
    stream.add_argument("--checkpoint", required=True, help="Spark checkpoint folder")
    stream.add_argument("--available-now", action="store_true",
                        help="process the files present, then stop")
    stream.add_argument("--trigger-seconds", type=float, default=1.0,
                        help="micro-batch interval (default 1)")
    stream.add_argument("--max-files-per-trigger", type=int, help="files per micro-batch")
    _bag_arguments(stream, "stream")
    stream.set_defaults(handler=_stream)

    gen = commands.add_parser("generate", help="write a synthetic robot-fleet dataset")
    gen.add_argument("--output", required=True, help="folder for the Parquet files")
    gen.add_argument("--robots", type=int, default=10, help="sources (default 10)")
    gen.add_argument("--messages", type=int, default=1_000_000,
                     help="about how many messages (default 1000000)")
    gen.add_argument("--seconds", type=float, help="recording length (overrides --messages)")
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--loss", type=float, default=0.01, help="share of lost messages")
    gen.add_argument("--jitter-ms", type=float, default=1.0, help="stamp jitter (std, ms)")
    gen.add_argument("--files", type=int, default=8, help="number of Parquet files")
    gen.set_defaults(handler=_generate)
