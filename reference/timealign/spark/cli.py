"""The ``run``, ``stream`` and ``generate`` sub-commands of ``timealign``, and the options
of ``python -m timealign.spark.verify``.

Registered through ``timealign.cli._EXTENSIONS``. Only option parsing and the wording of
errors: the jobs' paths are checked once into a :class:`~timealign.spark.paths.JobPaths`,
whose errors name roles ("the input"), worded here with the command's options
(:func:`flagged`); a run's input is read by :mod:`timealign.spark.inputs`. This module
imports neither pyspark nor pyarrow: each handler imports what it needs when it runs, so
``timealign replay`` and ``timealign check`` work where Spark is not installed.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from timealign import options, outputs, registry
from timealign.algorithm import Algorithm
from timealign.command import add_debug, guarded
from timealign.errors import InvalidInput
from timealign.plot import require_plot_extra
from timealign.progress import counted
from timealign.spark import SPARK_MODULES, require_spark_extra
from timealign.spark.paths import PathError

# The options that name each role of a job's paths, per command.
RUN_FLAGS: dict[str, str] = {"input": "--input", "output": "--output",
                             "summary": "--summary", "report": "--report",
                             "config": "--config"}
STREAM_FLAGS: dict[str, str] = {"input": "--source", "output": "--output",
                                "checkpoint": "--checkpoint", "config": "--config"}
READ_FLAGS: dict[str, str] = {"input": "--input", "output": "--output"}


def flagged(handler: Callable[[argparse.Namespace], int], names: Mapping[str, str]
            ) -> Callable[[argparse.Namespace], int]:
    """``handler`` with its path errors worded by ``names``, the command's options."""

    def handle(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except PathError as error:
            raise error.naming(names) from None

    return handle


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
    parser.add_argument("--verbose", action="store_true",
                        help="also show Spark's own log lines (left out by default)")


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
    parser.add_argument("--input", required=required,
                        help="the run's --input (default: from the run's manifest)")
    parser.add_argument("--config", help="the run's --config (file or inline JSON)")
    parser.add_argument("--format",
                        help="the run's --format: parquet, csv, json or rosbag (default: the "
                             "run's manifest, else parquet)")
    parser.add_argument("--column", action="append", default=[], metavar="FIELD=COLUMN",
                        help="the run's --column mappings; repeatable")
    parser.add_argument("--master", help="Spark master URL (default: local[*])")
    bag_arguments(parser, command)


def check_input_options(args: argparse.Namespace) -> None:
    """BAG-R9: the bag options only with ``--format rosbag``, ``--column`` only without it
    (a bag's columns are fixed by BAG-R2); refused before Spark starts, since either
    combination would otherwise be silently ignored."""
    if args.format is None:
        args.format = "parquet"
    if args.format == "rosbag":
        if args.column:
            raise InvalidInput("--column", "BAG-R9", "not with --format rosbag: a bag's "
                               "rows have fixed columns (BAG-R2)", args.column[0])
        return
    given = (("--stamp", bool(args.stamp)), ("--source-from", args.source_from is not None),
             ("--skip-bad-files", getattr(args, "skip_bad_files", False)),
             ("--strict", getattr(args, "strict", False)))
    for option, present in given:
        if present:
            raise InvalidInput(option, "BAG-R9", "only with --format rosbag", args.format)


def input_settings(args: argparse.Namespace, algorithm: Algorithm[Any, Any, Any, Any],
                   path: str | None) -> tuple[Any, Any]:
    """(config, :class:`~timealign.spark.inputs.RunInput`) of a command that reads a run's
    input as ``run`` reads it: the option combinations of BAG-R9, a bad config, column map
    or bag option are refused here, before Spark starts."""
    from timealign.spark.inputs import RunInput, load_config

    check_input_options(args)  # BAG-R9
    config = load_config(algorithm, args.config)
    source = RunInput.of(path or "", args.format, args.column, config, args.stamp, args.source_from,
                         getattr(args, "skip_bad_files", False))
    return config, source


def recorded_settings(args: argparse.Namespace, output: str, where: str
                      ) -> tuple[Algorithm[Any, Any, Any, Any], Any, Any]:
    """(algorithm, config, :class:`~timealign.spark.inputs.RunInput`) of a finished run
    whose output is ``output`` (``plot --run``, ``verify``): from the run's manifest
    (SP-R32), where options given explicitly must match it or are refused naming the
    difference; without a manifest, from the options as given (PL-R10, BAG-R10)."""
    from timealign.spark.inputs import RunRecord, load_config, recorded_run

    if "://" not in output and not Path(output).exists():  # a typo is not an old run
        raise InvalidInput(where, "SP-R32", "no such folder: give the --output folder of a "
                           "finished run", output)
    record = recorded_run(output, where)
    name = args.algorithm
    if record is None:
        if name is None or args.input is None:
            raise InvalidInput(where, "SP-R32", "the run has no manifest (_timealign.json; "
                               "runs of older versions wrote none): give the algorithm, "
                               "--input and the run's input options", output)
        algorithm = registry.get(name)
        config, source = input_settings(args, algorithm, args.input)
        return algorithm, config, source
    algorithm = registry.get(name or record.algorithm)
    explicit = [field for field, given in (
        ("algorithm", name), ("config", args.config), ("input", args.input),
        ("format", args.format), ("column", args.column), ("stamp", args.stamp),
        ("source_from", args.source_from),
        ("skip_bad_files", getattr(args, "skip_bad_files", False))) if given]
    given = RunRecord(
        algorithm.name, record.config if args.config is None else
        algorithm.config_to_json(load_config(algorithm, args.config)),
        args.input or record.input, args.format or record.format, tuple(args.column),
        tuple(args.stamp), args.source_from, getattr(args, "skip_bad_files", False))
    record.matched(given, explicit)
    config, source = record.run_input(registry.get(record.algorithm))
    return registry.get(record.algorithm), config, source


def _setup(args: argparse.Namespace, command: str, path: str) -> tuple[Any, Any, Any, Any]:
    """The algorithm, its config, the run input and the session of a Spark command."""
    algorithm = registry.get(args.algorithm)
    config, source = input_settings(args, algorithm, path)
    return algorithm, config, source, _session(args, command)


def _session(args: argparse.Namespace, command: str) -> Any:
    """The Spark session of a command, with its ``--conf``, ``--master`` and log level."""
    from timealign.spark.session import build_session, log_level

    settings: dict[str, str] = {}
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep or not key.startswith("spark."):
            raise InvalidInput("--conf", "SP-R17", "expected spark.KEY=VALUE", item)
        settings[key] = value
    verbose = getattr(args, "verbose", False)
    spark = build_session(args.master, f"timealign {command} {args.algorithm}",
                          settings, verbose)
    # SP-R23, SP-R33: failures are one line on stderr; Spark's own log (with the Java and
    # Python stack traces of a failed task) only with --debug, --verbose or --conf.
    spark.sparkContext.setLogLevel(log_level(verbose, getattr(args, "debug", False),
                                             settings))
    return spark


def _record(args: argparse.Namespace, algorithm: Algorithm[Any, Any, Any, Any], config: Any,
            path: str) -> Any:
    """What ``run`` or ``stream`` was given, for its manifest (SP-R32)."""
    from timealign.spark.inputs import RunRecord

    return RunRecord.of(algorithm, config, path, args.format, args.column, args.stamp,
                        args.source_from, getattr(args, "skip_bad_files", False))


def _run(args: argparse.Namespace) -> int:
    from timealign.progress import Progress
    from timealign.spark.inputs import remember, run, write_report
    from timealign.spark.paths import JobPaths
    from timealign.spark.progress import StageWatch
    from timealign.spark.summary import format_summary, summarize

    require_spark_extra("run")  # SP-R35
    check_input_options(args)  # BAG-R9
    if args.report is not None:
        require_plot_extra("--report")  # PL-R9
    # SP-R20, PL-R9: refused before Spark starts, naming both paths.
    paths = JobPaths.check(args.input, args.output, summary=args.summary, report=args.report,
                           config=args.config)
    outputs.check_run_output(paths.output)  # CLI-R3, before Spark
    algorithm, config, source, spark = _setup(args, "run", paths.input)
    started, began = time.monotonic(), time.time()
    with StageWatch(spark, "run", Progress(not args.quiet, every=3.0)) as watch:  # SP-R33
        result, bag_report = run(spark, algorithm, config, source, paths,
                                 args.sources_per_file, watch.phase, args.strict,
                                 "--sources-per-file")  # SP-R18's errors name the flag
        elapsed = time.monotonic() - started
        with watch.phase("summary"):
            summary = summarize(spark.read.parquet(f"{paths.output}/groups"),
                                spark.read.parquet(f"{paths.output}/outcomes"))
    if bag_report is not None:
        summary.update(bag_report.as_json())
    summary["seconds"] = round(elapsed, 3)
    summary["rows_per_second"] = round(result.rows / elapsed) if elapsed else None
    print(format_summary(summary, algorithm.name))  # SP-R31
    print(f"no loss: every one of {result.rows} rows has exactly one outcome; "
          f"{elapsed:.1f} s, {summary['rows_per_second']} rows/s")
    remember(paths.output, "run", _record(args, algorithm, config, paths.input), spark,
             began, time.time(), summary)  # SP-R32
    if paths.summary:
        outputs.write_file(paths.summary, json.dumps(summary, indent=1) + "\n")
    if paths.report is not None:
        print(f"report: {write_report(spark, algorithm, config, source, paths, summary)}")
    return 0


def _stream_mqtt(args: argparse.Namespace) -> int:
    """``stream --source mqtt://HOST:PORT/FILTER --format thin-edge`` (spec/mqtt.md)."""
    import importlib.util

    from timealign.mqtt.receiver import parse_url
    from timealign.spark.inputs import load_config
    from timealign.spark.paths import JobPaths

    require_spark_extra("stream", (*SPARK_MODULES, "google.protobuf"))  # SP-R35
    if importlib.util.find_spec("paho") is None:
        raise InvalidInput("stream", "MQ-R10", "--source mqtt:// needs the mqtt extra "
                           "(paho-mqtt missing): pip install 'timealign[mqtt]'", None)
    if args.format != "thin-edge":
        raise InvalidInput("--format", "MQ-R10", "--source mqtt:// reads --format thin-edge",
                           args.format)
    for option, present in (("--column", args.column), ("--stamp", args.stamp),
                            ("--source-from", args.source_from is not None),
                            ("--available-now", args.available_now),
                            ("--max-files-per-trigger", args.max_files_per_trigger)):
        if present:
            raise InvalidInput(option, "MQ-R10", "not with --source mqtt://", args.source)
    parse_url(args.source, "--source")
    paths = JobPaths.check(args.source, args.output, checkpoint=args.checkpoint,
                           config=args.config)
    assert paths.checkpoint is not None
    outputs.check_stream_output(paths.output, paths.checkpoint)  # CLI-R3, before Spark
    algorithm = registry.get(args.algorithm)
    config = load_config(algorithm, args.config)
    from timealign.mqtt.verify import write_manifest

    write_manifest(paths.output, algorithm.name, algorithm.config_to_json(config), args.source,
                   paths.checkpoint)  # MQ-R11: what verify re-runs
    spark = _session(args, "stream")
    from timealign.mqtt.job import stream_mqtt

    batches = stream_mqtt(spark, algorithm, config, args.source, paths, args.trigger_seconds,
                          not args.quiet)
    print(f"stream stopped after {counted(batches, 'micro-batch', 'micro-batches')}")
    return 0


def _stream(args: argparse.Namespace) -> int:
    from timealign.spark.inputs import remember, stream
    from timealign.spark.paths import JobPaths

    if args.source.startswith("mqtt://"):
        return _stream_mqtt(args)
    require_spark_extra("stream", (*SPARK_MODULES, "google.protobuf"))  # SP-R35
    check_input_options(args)  # BAG-R9
    # SP-R20: neither the tables nor the checkpoint may overlap the watched folder.
    paths = JobPaths.check(args.source, args.output, checkpoint=args.checkpoint,
                           config=args.config)
    assert paths.checkpoint is not None
    outputs.check_stream_output(paths.output, paths.checkpoint)  # CLI-R3, before Spark
    algorithm, config, source, spark = _setup(args, "stream", paths.input)
    record, began = _record(args, algorithm, config, paths.input), time.time()
    if "://" not in paths.output:
        Path(paths.output).mkdir(parents=True, exist_ok=True)
    remember(paths.output, "stream", record, spark, began, None, None,
             paths.checkpoint)  # SP-R32, CLI-R3
    batches = stream(spark, algorithm, config, source, paths, args.available_now,
                     args.trigger_seconds, args.max_files_per_trigger, not args.quiet)
    print(f"stream stopped after {counted(batches, 'micro-batch', 'micro-batches')}")
    # SP-R33: a stream that stops (--available-now) ends with its summary, as `run` does;
    # every row read is counted: settled (in the tables) or still held by a machine (SP-D1).
    if "://" in paths.output or all(Path(p).is_dir() for p in paths.tables().values()):
        from timealign.spark.streaming import open_ids
        from timealign.spark.summary import format_summary, summarize, with_held

        summary = with_held(summarize(spark.read.parquet(f"{paths.output}/groups"),
                                      spark.read.parquet(f"{paths.output}/outcomes")),
                            open_ids(spark, algorithm, config, paths.checkpoint).count())
        print(format_summary(summary, algorithm.name))
        remember(paths.output, "stream", record, spark, began, time.time(), summary,
                 paths.checkpoint)
    return 0


def _verify(args: argparse.Namespace) -> int:
    from timealign.mqtt.verify import read_manifest
    from timealign.spark.failures import raise_job_error
    from timealign.spark.inputs import read_rows
    from timealign.spark.session import build_session
    from timealign.spark.verify import VerificationError, verify_rows

    mqtt_run = read_manifest(args.output)
    if mqtt_run is not None:  # MQ-R11: a stream from MQTT is verified by its spool
        return _verify_mqtt(args, mqtt_run)
    require_spark_extra("verify")
    # SP-R32: from the run's manifest; BAG-R9 and the options checked before Spark starts
    algorithm, config, source = recorded_settings(args, args.output, args.where)
    spark = build_session(args.master, "timealign verify")
    try:
        with read_rows(spark, source) as rows:  # as `run` reads it (BAG-R10)
            result = verify_rows(spark, algorithm, config, rows, args.output)
    except AssertionError as error:
        raise VerificationError(str(error)) from None
    except Exception as error:
        raise_job_error(error)
    checked = "its executable invariants" if result["invariants"] else "no invariants"
    print(f"verified: {result['rows']} rows, each with exactly one outcome; every source "
          f"re-run and checked against {checked}; written tables equal the re-run")
    return 0


def _verify_mqtt(args: argparse.Namespace, run: dict[str, Any]) -> int:
    from timealign.mqtt.verify import verify_spool

    algorithm = registry.get(str(run["algorithm"]))
    config = algorithm.config_from_json(run["config"])
    result = verify_spool(algorithm, config, args.output, str(run["checkpoint"]))
    print(f"verified: {result['rows']} rows of the spool up to the stream's last micro-batch, "
          f"each with exactly one outcome ({result['held']} still held by a machine); the "
          f"spool re-run with its ticks equals the written tables")
    return 0


def verify_parser() -> argparse.ArgumentParser:
    """The options of ``python -m timealign.spark.verify``."""
    parser = argparse.ArgumentParser(
        prog="python -m timealign.spark.verify",
        description="Verify a finished batch run from what it wrote: "
                    "``python -m timealign.spark.verify``.")
    parser.add_argument("algorithm", help=f"one of {', '.join(registry.names())}")
    parser.add_argument("--output", required=True,
                        help="the run's --output (groups/ and outcomes/)")
    run_input_arguments(parser, "verify", required=False)  # as given to the run (BAG-R10)
    parser.set_defaults(where="--output")
    add_debug(parser, top=True)
    return parser


def verify_main(argv: Sequence[str] | None = None) -> int:
    """``python -m timealign.spark.verify``: exit 0 when verified, else the codes of the
    README's "Exit codes" table (3 when a check fails), one line on stderr."""
    parser = verify_parser()
    args = parser.parse_args(argv)
    handler = flagged(_verify, READ_FLAGS)
    return guarded(lambda: handler(args), args.debug, parser.prog)


def _generate(args: argparse.Namespace) -> int:
    require_spark_extra("generate", ("pyarrow", "numpy"))  # SP-R35
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
    run.add_argument("--strict", action="store_true",
                     help="with --format rosbag: a configured topic that no bag holds is an "
                          "error, not a warning (BAG-R13)")
    run.add_argument("--report", metavar="DIR",
                     help="also write an HTML report to DIR/index.html (needs the plot extra)")
    run.set_defaults(handler=flagged(_run, RUN_FLAGS))

    stream = commands.add_parser("stream", help="replay new files as they arrive (streaming)")
    _common(stream)
    stream.add_argument("--source", required=True,
                        help="folder watched for new files, or mqtt://HOST:PORT/TOPIC_FILTER "
                             "with --format thin-edge (spec/mqtt.md)")
    stream.add_argument("--checkpoint", required=True, help="Spark checkpoint folder")
    stream.add_argument("--available-now", action="store_true",
                        help="process the files present, then stop")
    stream.add_argument("--trigger-seconds", type=options.number(0.001, 86_400.0), default=1.0,
                        help="micro-batch interval (default 1)")
    stream.add_argument("--max-files-per-trigger",
                        type=options.integer(1, 10**9), help="files per micro-batch")
    bag_arguments(stream, "stream")
    stream.set_defaults(handler=flagged(_stream, STREAM_FLAGS))

    verify = commands.add_parser(
        "verify", help="re-check a finished run from what it wrote (exit 3 if a check fails)",
        description="Verify a finished run: every row has exactly one outcome, every source "
                    "re-run through the reference and checked against its invariants, the "
                    "written tables equal the re-run. The run's manifest names its "
                    "algorithm, config and input; options given must match it.")
    verify.add_argument("output", metavar="OUT", help="the run's --output folder")
    verify.add_argument("--algorithm", help="the run's algorithm (default: its manifest)")
    run_input_arguments(verify, "verify", required=False)  # as given to the run (BAG-R10)
    verify.set_defaults(handler=flagged(_verify, READ_FLAGS), where="OUT")

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
