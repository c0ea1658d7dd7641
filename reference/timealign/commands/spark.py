"""The ``run``, ``stream`` and ``generate`` sub-commands of ``timealign``, and the options
of ``python -m timealign.spark.verify``.

Registered through ``timealign.commands.main._EXTENSIONS``. Only option parsing and the
wording of errors: the options naming a run's input, and the wording of path errors with
the command's options, are :mod:`timealign.commands.run_input`'s; a run's input is read by
:mod:`timealign.spark.inputs`. This module
imports neither pyspark nor pyarrow: each handler imports what it needs when it runs, so
``timealign replay`` and ``timealign check`` work where Spark is not installed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from timealign import gates, options, outputs, registry
from timealign.algorithm import Algorithm
from timealign.command import add_debug, guarded
from timealign.commands.run_input import (
    READ_FLAGS,
    RUN_FLAGS,
    STREAM_FLAGS,
    bag_arguments,
    check_input_options,
    flagged,
    input_settings,
    recorded_settings,
    reproduce,
    run_input_arguments,
    start_session,
    task_watch,
    time_unit_argument,
)
from timealign.errors import EXIT_INTERRUPTED, InvalidInput
from timealign.plot import require_plot_extra
from timealign.progress import counted
from timealign.spark import SPARK_MODULES, require_spark_extra

if TYPE_CHECKING:  # the handlers import these when they run (the module imports no pyspark)
    from timealign.spark.paths import JobPaths
    from timealign.spark.stopping import SignalStop
    from timealign.spark.taken import TakenWatch

#: A stream's micro-batch interval when ``--trigger-seconds`` is not given.
TRIGGER_SECONDS = 1.0


def _common(parser: argparse.ArgumentParser, formats: str = " or rosbag") -> None:
    """The options ``run`` and ``stream`` share; ``formats``: the last of ``--format``'s
    list (MQ-R16: the stream's names ``thin-edge``, which it reads from MQTT)."""
    parser.add_argument("algorithm", help=f"one of {', '.join(registry.names())}")
    parser.add_argument("--output", required=True, help="folder for groups/ and outcomes/")
    parser.add_argument("--config", help="JSON config file (or inline JSON object)")
    parser.add_argument("--format", default="parquet",
                        help=f"parquet (default), csv, json{formats}")
    parser.add_argument("--column", action="append", default=[], metavar="FIELD=COLUMN",
                        help="read FIELD (source, id, topic, stamp, arrival, kind, poll) "
                             "from COLUMN; repeatable")
    parser.add_argument("--master", help="Spark master URL (default: local[*], or the master "
                                          "of spark-submit)")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting for the session; repeatable")
    time_unit_argument(parser, "ns")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument("--verbose", action="store_true",
                        help="also show Spark's own log lines (left out by default)")


def fail_on_argument(parser: argparse.ArgumentParser) -> None:
    """``--fail-on GATE`` (``run``, ``stream``, ``verify``; repeatable): exit 1 when the
    summary trips a gate (SP-R38), after every output is written, so CI can stop."""
    parser.add_argument("--fail-on", action="append", default=[], type=gates.parse,
                        metavar="GATE",
                        help="exit 1, after writing everything, when the summary's verdict is "
                             "'needs a look' (needs-a-look: an outcome not normal for the "
                             "algorithm, no group at all, a configured topic without rows in "
                             "a source, ...), or when more rows than a limit have an outcome "
                             "or reason: 'rejected>1%%' (a share of the rows read), "
                             "'too_old>0' (a count); repeatable")


def failed_on(args: argparse.Namespace, summary: dict[str, Any], prog: str) -> int:
    """The exit code of a finished job under ``--fail-on`` (SP-R38): 1, with each tripped
    gate on stderr, when the summary trips one; else 0."""
    lines = gates.tripped(getattr(args, "fail_on", None) or [], summary)
    for line in lines:
        print(f"{prog}: {line}", file=sys.stderr)
    return 1 if lines else 0


_REFUSED_CONF = re.compile(r"The value '(?P<value>[^']*)' in the config \"(?P<key>[^\"]+)\" "
                           r"is invalid\.?(?P<why>[^\n]*)")


def conf_refusal(error: BaseException, settings: Mapping[str, str]) -> InvalidInput | None:
    """SP-R17: a ``--conf`` value Spark refuses (``spark.sql.shuffle.partitions=0``) as
    :class:`InvalidInput` naming the option and Spark's reason (exit 2, not a failure of
    the job); None when ``error`` is something else."""
    found = _REFUSED_CONF.search(str(error))
    if found is None or found["key"] not in settings:
        return None
    why = re.sub(r"\s*SQLSTATE:.*$", "", found["why"]).strip()
    return InvalidInput("--conf", "SP-R17", f"Spark refuses this value: {why or 'invalid'}",
                        f"{found['key']}={settings[found['key']]}")


def _setup(args: argparse.Namespace, command: str, path: str,
           rows: int | None = None) -> tuple[Any, Any, Any, Any]:
    """The algorithm, its config, the run input and the session of a Spark command
    (``rows``: the input's, counted before Spark starts, SP-D31)."""
    algorithm = registry.get(args.algorithm)
    config, source = input_settings(args, algorithm, path)
    return algorithm, config, source, _session(args, command, rows)


def conf_settings(args: argparse.Namespace) -> dict[str, str]:
    """SP-R17: the ``--conf`` settings, each ``spark.KEY=VALUE`` (checked before any work)."""
    return conf_items(args.conf)


def conf_items(items: Sequence[str]) -> dict[str, str]:
    """SP-R17: ``spark.KEY=VALUE`` items as settings; a malformed one names ``--conf``."""
    settings: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.startswith("spark."):
            raise InvalidInput("--conf", "SP-R17", "expected spark.KEY=VALUE", item)
        settings[key] = value
    return settings


def _session(args: argparse.Namespace, command: str, rows: int | None = None) -> Any:
    """The Spark session of a command, with its ``--conf``, ``--master`` and log level,
    over ``rows`` input rows when counted (SP-D31)."""
    from timealign.spark.session import log_level

    settings = conf_settings(args)
    verbose = getattr(args, "verbose", False)
    try:
        spark = start_session(args, f"{command} {args.algorithm}", settings, verbose, rows)
        spark.conf.get("spark.sql.shuffle.partitions")  # Spark checks the SQL settings here
    except Exception as error:
        refused = conf_refusal(error, settings)
        if refused is None:
            raise
        raise refused from None
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
                        args.source_from, getattr(args, "skip_bad_files", False),
                        args.time_unit, args.conf)


def _command_line(args: argparse.Namespace, algorithm: Algorithm[Any, Any, Any, Any],
                  config: Any, paths: Any) -> dict[str, Any]:
    """SP-R32, PL-R15: the manifest's ``command_line``, the words that rerun the job,
    generated from its parsed options: local paths made absolute, the config as the
    canonical JSON the job ran with."""
    def local(path: str | None) -> str | None:
        return None if path is None else path if "://" in path else outputs.resolved(path)

    replaced = {"config": json.dumps(algorithm.codec.config_to_json(config),
                                     separators=(",", ":")),
                "output": local(paths.output), "summary": local(paths.summary),
                "report": local(paths.report), "input": local(paths.input)}
    if getattr(paths, "checkpoint", None) is not None:
        replaced |= {"source": local(paths.input), "checkpoint": local(paths.checkpoint)}
    return {"command_line": reproduce(args, replaced)}


def _run(args: argparse.Namespace) -> int:
    require_spark_extra("run")  # SP-R35: before any import of the extra's modules
    from timealign.progress import Progress
    from timealign.spark.inputs import remember, run, take_inventory, write_report
    from timealign.spark.paths import JobPaths
    from timealign.spark.progress import PHASES, StageWatch
    from timealign.spark.summary import format_summary, with_verdict

    check_input_options(args)  # BAG-R9
    if args.report is not None:
        require_plot_extra("--report")  # PL-R9
    # SP-R20, PL-R9: refused before Spark starts, naming both paths.
    paths = JobPaths.check(args.input, args.output, summary=args.summary, report=args.report,
                           config=args.config)
    # CLI-R3, CLI-R5, CLI-R6: each target new or run's own, and claimed, before Spark
    outputs.own("run", {"--summary": paths.summary},
                {"--output": paths.output, "--report": paths.report})
    conf_settings(args)  # SP-R17: a malformed --conf before the input is read
    gates.check(args.fail_on, registry.get(args.algorithm).name)  # SP-R38
    # SP-R41: what the input holds, from each format's own counts, before Spark starts.
    _, given = input_settings(args, registry.get(args.algorithm), paths.input)
    inventory = take_inventory(given, Progress(not args.quiet, every=3.0))
    algorithm, config, source, spark = _setup(args, "run", paths.input,
                                              inventory.counted_rows if inventory else None)
    started, began = time.monotonic(), time.time()
    report = None
    phases = PHASES if paths.report is None else (*PHASES, "report")  # SP-R40
    with StageWatch(spark, "run", Progress(not args.quiet, every=3.0),  # SP-R33
                    phases=phases) as watch:
        result, bag_report = run(spark, algorithm, config, source, paths,
                                 args.sources_per_file, watch.phase, args.strict,
                                 "--sources-per-file",  # SP-R18's errors name the flag
                                 inventory)  # SP-R42
        elapsed = time.monotonic() - started
        with watch.phase("summary"):
            summary = _summarized(spark, algorithm, source, paths.output)
        if bag_report is not None:
            summary.update(bag_report.as_json())
        summary.update(result.looks())  # SP-R38
        summary["seconds"] = round(elapsed, 3)
        summary["rows_per_second"] = round(result.rows / elapsed) if elapsed else None
        summary = with_verdict(summary, algorithm.name)  # SP-R38: first, also for the report
        remember(paths.output, "run", _record(args, algorithm, config, paths.input), spark,
                 began, time.time(), summary, inventory=inventory,  # SP-R32, SP-R41
                 extra=_command_line(args, algorithm, config, paths))
        if paths.summary:
            outputs.write_target("run", "--summary", paths.summary, json.dumps(
                {"format": outputs.SUMMARY_FORMAT, **summary}, indent=1) + "\n")  # CLI-R5
        if paths.report is not None:  # SP-R40: the report's reading shows progress too
            with watch.phase("report"):
                report = write_report(spark, algorithm, config, source, paths, summary)
    print(format_summary(summary, algorithm.name))  # SP-R31
    print(f"no loss: every one of {result.rows} rows has exactly one outcome; "
          f"{elapsed:.1f} s, {summary['rows_per_second']} rows/s")
    if report is not None:
        print(f"report: {report}")
    return failed_on(args, summary, "timealign run")  # SP-R38


def _stream_mqtt(args: argparse.Namespace) -> int:
    """``stream --source mqtt://HOST:PORT/FILTER --format thin-edge`` (spec/mqtt.md): until
    SIGINT or SIGTERM, then the summary, ``--summary``, ``--report`` and ``--fail-on`` (MQ-R14,
    MQ-R15); exit 130 (SIGINT) or 143 (SIGTERM), or 1 when a gate trips."""
    import importlib.util

    from timealign.mqtt.receiver import check_subscription, parse_url
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
                            ("--max-files-per-trigger", args.max_files_per_trigger),
                            # a thin-edge time is RFC 3339 or Unix seconds (MQ-R3, MQ-D1)
                            ("--time-unit", args.time_unit != "ns")):
        if present:
            raise InvalidInput(option, "MQ-R10", "not with --source mqtt://", args.source)
    if args.report is not None:
        require_plot_extra("--report")  # PL-R9
    _, _, topic_filter = parse_url(args.source, "--source")  # MQ-R10, MQ-R12
    paths = JobPaths.check(args.source, args.output, checkpoint=args.checkpoint,
                           summary=args.summary, report=args.report, config=args.config)
    assert paths.checkpoint is not None
    check_subscription(paths.checkpoint, topic_filter, "--source")  # MQ-R13
    outputs.check_stream_output(paths.output, paths.checkpoint)  # CLI-R3, before Spark
    algorithm = registry.get(args.algorithm)
    gates.check(args.fail_on, algorithm.name)  # SP-R38, before anything starts
    outputs.own("stream", {"--summary": paths.summary},  # CLI-R5, CLI-R6, before Spark
                {"--output": paths.output, "--checkpoint": paths.checkpoint,
                 "--report": paths.report})
    config = load_config(algorithm, args.config)
    interval = args.trigger_seconds or TRIGGER_SECONDS
    from timealign.mqtt.job import Stop, start_receiver, stream_mqtt
    from timealign.mqtt.verify import write_manifest

    with Stop() as stop:  # MQ-R14: from here, a signal stops the stream cleanly
        before = _entries((paths.output, paths.checkpoint))  # MQ-R16: undone if it fails
        try:
            receiver = start_receiver(args.source, paths.checkpoint, interval)
        except BaseException:
            _undo_mqtt_start(before, paths.checkpoint)
            raise
        try:
            write_manifest(paths.output, algorithm.name,
                           algorithm.codec.config_to_json(config), args.source,
                           paths.checkpoint)  # MQ-R11: what verify re-runs
            spark = _session(args, "stream")
            batches = stream_mqtt(spark, algorithm, config, receiver, paths,
                                  interval, not args.quiet, stop)
        except BaseException:
            receiver.stop()
            _undo_mqtt_start(before, paths.checkpoint)
            raise
        print(f"stream stopped after {counted(batches, 'micro-batch', 'micro-batches')}")
        return _stopped_mqtt(args, spark, algorithm, config, paths, stop.code)


def _stopped_mqtt(args: argparse.Namespace, spark: Any,
                  algorithm: Algorithm[Any, Any, Any, Any], config: Any, paths: Any,
                  code: int | None) -> int:
    """MQ-R15: a stopped MQTT stream's summary (console, ``--summary``), ``--report`` and
    ``--fail-on``; the exit code: 1 when a gate trips, else the signal's (MQ-R14)."""
    import shlex

    from timealign.mqtt.job import not_measurement_lines, stream_summary, write_stream_report
    from timealign.spark.summary import format_summary

    summary = stream_summary(spark, algorithm, config, paths)
    print("\n".join([format_summary(summary, algorithm.name),
                     *not_measurement_lines(summary)]))
    if paths.summary:
        outputs.write_target("stream", "--summary", paths.summary, json.dumps(
            {"format": outputs.SUMMARY_FORMAT, **summary}, indent=1) + "\n")  # CLI-R5
    if paths.report is not None:
        line = shlex.join(_command_line(args, algorithm, config, paths)["command_line"])
        print(f"report: {write_stream_report(spark, algorithm, config, paths, summary, line)}")
    failed = failed_on(args, summary, "timealign stream")  # SP-R38
    _said_stop(code)
    return failed or (code if code is not None else 0)


def _said_stop(code: int | None) -> None:
    """CLI-R2, MQ-R14, SP-R81: the one line of a stream stopped by a signal, after what the
    stop wrote."""
    if code == EXIT_INTERRUPTED:
        print("timealign: interrupted", file=sys.stderr, flush=True)
    elif code is not None:
        print("timealign: stopped by SIGTERM", file=sys.stderr, flush=True)


def _stream(args: argparse.Namespace) -> int:
    require_spark_extra("stream", (*SPARK_MODULES, "google.protobuf"))  # SP-R35, first
    from timealign.spark.paths import JobPaths
    from timealign.spark.stopping import SignalStop
    from timealign.spark.taken import TakenWatch

    if args.source.startswith("mqtt://"):
        return _stream_mqtt(args)
    check_input_options(args)  # BAG-R9
    if args.available_now and args.trigger_seconds is not None:  # SP-R16: no interval
        raise InvalidInput("--trigger-seconds", "SP-R16", "not with --available-now: it "
                           "takes the files present, one micro-batch after another, at no "
                           "interval", args.trigger_seconds)
    if args.report is not None:
        require_plot_extra("--report")  # PL-R9
    # SP-R20: neither the tables nor the checkpoint may overlap the watched folder.
    paths = JobPaths.check(args.source, args.output, checkpoint=args.checkpoint,
                           summary=args.summary, report=args.report, config=args.config)
    assert paths.checkpoint is not None
    outputs.check_stream_output(paths.output, paths.checkpoint)  # CLI-R3, CLI-R5
    outputs.own("stream", {"--summary": paths.summary},  # CLI-R5, CLI-R6, before Spark
                {"--output": paths.output, "--checkpoint": paths.checkpoint,
                 "--report": paths.report})
    # SP-R45, SP-R53: a file or bag taken by an earlier run of this stream must not have
    # changed since
    local_files = "://" not in paths.output and "://" not in paths.input
    watch = TakenWatch(paths.checkpoint, _taken(paths.output), args.format == "rosbag") \
        if local_files else None
    taken = None if watch is None else watch.check()
    gates.check(args.fail_on, registry.get(args.algorithm).name)  # SP-R38, before Spark
    with SignalStop() as stop:  # SP-R81: from here, a signal stops the stream cleanly
        return _stream_files(args, paths, watch, taken, stop)


def _stream_files(args: argparse.Namespace, paths: JobPaths, watch: TakenWatch | None,
                  taken: list[dict[str, Any]] | None, stop: SignalStop) -> int:
    """The file stream of :func:`_stream` once its options are checked: until the files
    present are taken (``--available-now``) or a signal (SP-R81), then the summary,
    ``--summary``, ``--report`` and ``--fail-on`` (SP-R47); the exit code: 1 when a gate
    trips, else the signal's (130, 143) or 0."""
    from timealign.spark.inputs import remember, stream, write_report

    assert paths.checkpoint is not None, "a stream's paths name its checkpoint"
    before = _entries((paths.output, paths.checkpoint))  # SP-R55: undone if it cannot start
    try:
        algorithm, config, source, spark = _setup(args, "stream", paths.input)
        record, began = _record(args, algorithm, config, paths.input), time.time()
        if "://" not in paths.output:
            Path(paths.output).mkdir(parents=True, exist_ok=True)
        line = _command_line(args, algorithm, config, paths)  # SP-R32, PL-R15
        kept = line if taken is None else {"taken": taken, **line}
        remember(paths.output, "stream", record, spark, began, None, None,
                 paths.checkpoint, extra=kept)  # SP-R32, CLI-R3
        batches = stream(spark, algorithm, config, source, paths, args.available_now,
                         args.trigger_seconds or TRIGGER_SECONDS, args.max_files_per_trigger,
                         not args.quiet,
                         None if watch is None else watch.check,  # SP-R54: at every poll
                         stop.when_idle())  # SP-R81
    except BaseException:
        _undo_start(before, paths.checkpoint)
        raise
    if watch is not None:  # SP-R45: and none changed while the stream ran
        kept = {"taken": watch.check(), **line}
        remember(paths.output, "stream", record, spark, began, None, None,
                 paths.checkpoint, extra=kept)
    print(f"stream stopped after {counted(batches, 'micro-batch', 'micro-batches')}")
    # SP-R33: a stream that stops (--available-now) ends with its summary, as `run` does;
    # every row read is counted: settled (in the tables) or still held by a machine (SP-D1).
    if "://" in paths.output or all(Path(p).is_dir() for p in paths.tables().values()):
        from timealign.spark.streaming import late_files, open_ids
        from timealign.spark.summary import (
            format_summary,
            summarize,
            with_held,
            with_late_files,
            with_verdict,
        )

        summary = with_verdict(with_late_files(with_held(
            summarize(spark.read.parquet(f"{paths.output}/groups"),
                      spark.read.parquet(f"{paths.output}/outcomes")),
            open_ids(spark, algorithm, config, paths.checkpoint).count()),
            late_files(spark, paths.output)), algorithm.name)
        print(format_summary(summary, algorithm.name))
        remember(paths.output, "stream", record, spark, began, time.time(), summary,
                 paths.checkpoint, extra=kept)
        # SP-R47: --summary and --report as `run` writes them, once the stream stops
        if paths.summary:
            outputs.write_target("stream", "--summary", paths.summary, json.dumps(
                {"format": outputs.SUMMARY_FORMAT, **summary}, indent=1) + "\n")  # CLI-R5
        if paths.report is not None:
            print(f"report: {write_report(spark, algorithm, config, source, paths, summary)}")
        gate = failed_on(args, summary, "timealign stream")  # SP-R38
        _said_stop(stop.code)
        return gate or stop.code or 0  # SP-R81: a tripped gate first, then the signal's
    _said_stop(stop.code)
    return stop.code or 0


def _entries(folders: Sequence[str]) -> dict[str, set[str] | None]:
    """SP-R55: the names each local folder holds (None: the folder is not there yet)."""
    return {folder: (set(map(str, Path(folder).iterdir())) if Path(folder).is_dir() else None)
            for folder in folders if "://" not in folder}


def _undo_start(before: dict[str, set[str] | None], checkpoint: str) -> None:
    """SP-R55: a stream that failed before its first micro-batch was planned (no
    ``offsets/`` entry in its checkpoint) leaves nothing behind: what this run added to
    its output and checkpoint folders is removed (a folder it made, whole), nothing else."""
    import shutil

    offsets = Path(checkpoint) / "offsets"
    if "://" in checkpoint or (offsets.is_dir() and any(offsets.iterdir())):
        return
    for folder, names in before.items():
        if names is None:
            shutil.rmtree(folder, ignore_errors=True)
        elif Path(folder).is_dir():
            for added in set(map(str, Path(folder).iterdir())) - names:
                if Path(added).is_dir() and not Path(added).is_symlink():
                    shutil.rmtree(added, ignore_errors=True)
                else:
                    Path(added).unlink(missing_ok=True)


def _undo_mqtt_start(before: dict[str, set[str] | None], checkpoint: str) -> None:
    """MQ-R16: an MQTT stream that failed to start leaves nothing behind (SP-R55), unless
    its spool took a message: the broker has it acknowledged, the spool is its one copy."""
    from timealign.mqtt.spool import Message, read_entries, spool_path

    spool = spool_path(checkpoint)
    if spool.is_file() and any(isinstance(e, Message) for e in read_entries(spool)[0]):
        return
    _undo_start(before, checkpoint)


def _taken(output: str) -> Any:
    """The taken files an earlier run of the stream recorded in its manifest (SP-R45)."""
    body = outputs.read_manifest(output, "--output") if Path(output).is_dir() else None
    return None if body is None else body.get("taken")


def _verify(args: argparse.Namespace) -> int:
    require_spark_extra("verify")  # SP-R35: before any import of the extra's modules
    from timealign.mqtt.verify import read_manifest

    mqtt_run = read_manifest(args.output)
    if mqtt_run is not None:  # MQ-R11: a stream from MQTT is verified by its spool
        return _verify_mqtt(args, mqtt_run)
    from timealign.progress import Progress
    from timealign.spark.failures import raise_job_error
    from timealign.spark.inputs import read_rows, recorded_inventory, recorded_run, take_inventory
    from timealign.spark.inventory import rows_per_file
    from timealign.spark.progress import StageWatch
    from timealign.spark.schema import FILE
    from timealign.spark.verify import PHASES, VerificationError, verify_rows
    from timealign.spark.verify.held import held_line, stream_checkpoint, verify_stream_rows

    # SP-R32: from the run's manifest; BAG-R9 and the options checked before Spark starts
    algorithm, config, source = recorded_settings(args, args.output, args.where)
    gates.check(args.fail_on, algorithm.name)  # SP-R38
    # SP-R32: the run's --conf, then verify's own (a key given again replaces the run's)
    run = recorded_run(args.output, args.where) if "://" not in args.output else None
    settings = {**conf_items(run.conf if run else ()), **conf_settings(args)}
    recorded = recorded_inventory(args.output, args.where)
    input_rows = None  # SP-D31: the input's rows, when the inventory taken again counts them
    if recorded is not None:  # SP-R44: the input taken again, before Spark starts
        now = take_inventory(source, label="verify")
        input_rows = None if now is None else now.counted_rows
        gone = now is None and "://" not in source.path and not Path(source.path).exists()
        changes = [f"{source.path} is gone"] if gone else \
            [] if now is None else recorded.changes(now)
        if changes:
            more = f" (and {len(changes) - 1} more)" if len(changes) > 1 else ""
            raise VerificationError(f"the input changed since the run, so its tables cannot "
                                    f"be checked against it (SP-R44): {changes[0]}{more}")
    # SP-R48: a stream's output is checked with the rows its checkpoint holds
    checkpoint = None if "://" in args.output else stream_checkpoint(
        outputs.read_manifest(args.output, args.where))
    spark = start_session(args, "verify", settings, rows=input_rows)
    try:  # SP-R40: a stream's check has no known phases; a run's has PHASES
        with (task_watch(spark, "verify", "checking", not args.quiet) if checkpoint is not None
              else StageWatch(spark, "verify", Progress(not args.quiet, every=10.0),
                              phases=PHASES)) as watch, \
                read_rows(spark, source, recorded) as rows:  # SP-R51: bags reconciled
            if checkpoint is not None:
                held = verify_stream_rows(spark, algorithm, config, rows, args.output,
                                          checkpoint)
                print(held_line(held))
                return _verify_gates(args, spark, algorithm, int(held["held"]))
            result = verify_rows(spark, algorithm, config, rows, args.output,
                                 watch.phase)  # BAG-R10
            if recorded is not None and source.bag is None:  # SP-R44: the counts too
                recorded.reconcile(result["rows"], lambda: rows_per_file(
                    ((r[0], r[1]) for r in rows.groupBy(FILE).count().collect()),
                    recorded.root))
    except AssertionError as error:
        raise VerificationError(str(error)) from None
    except Exception as error:
        raise_job_error(error)
    checked = "its executable invariants" if result["invariants"] else "no invariants"
    unchanged = "" if recorded is None else (
        f"; the input is as the run's inventory recorded it ({counted(recorded.rows, 'row')} "
        f"in {counted(sum(len(u.files) for u in recorded.units), 'file')}, sizes and SHA-256 "
        f"equal)")
    print(f"verified: {result['rows']} rows, each with exactly one outcome; every source "
          f"re-run and checked against {checked}; written tables equal the re-run"
          f"{unchanged}")
    return _verify_gates(args, spark, algorithm, None)


def _summarized(spark: Any, algorithm: Algorithm[Any, Any, Any, Any], source: Any,
                output: str) -> dict[str, Any]:
    """SP-R9: the summary of a run's tables; for an algorithm whose groups are windows
    (``reasons.ANCHORS``), with what each batch waited and filled, read from its members'
    event times in the input (SP-R74)."""
    from timealign import reasons
    from timealign.spark.inputs import read_rows
    from timealign.spark.summary import summarize

    groups, outcomes = (spark.read.parquet(f"{output}/{t}") for t in ("groups", "outcomes"))
    if algorithm.name not in reasons.ANCHORS:
        return summarize(groups, outcomes)
    with read_rows(spark, source) as rows:
        return summarize(groups, outcomes, rows)


def _verify_gates(args: argparse.Namespace, spark: Any,
                  algorithm: Algorithm[Any, Any, Any, Any], held: int | None) -> int:
    """SP-R38: ``verify --fail-on``: the gates applied to the summary of the verified
    tables (with a stream's held rows), as ``run`` and ``stream`` apply them."""
    if not args.fail_on:
        return 0
    from timealign.spark.summary import summarize, with_held, with_verdict

    summary = summarize(spark.read.parquet(f"{args.output}/groups"),
                        spark.read.parquet(f"{args.output}/outcomes"))
    if held is not None:
        summary = with_held(summary, held)
    return failed_on(args, with_verdict(summary, algorithm.name), "timealign verify")


def _verify_mqtt(args: argparse.Namespace, run: dict[str, Any]) -> int:
    """MQ-R11: ``verify OUT`` of an MQTT stream: its spool re-run; MQ-R18: ``--fail-on``
    applied to the verified tables, the options naming a run's input refused."""
    from timealign.mqtt.verify import refuse_input_options, verify_spool

    refuse_input_options((("--input", args.input), ("--config", args.config),
                          ("--format", args.format), ("--column", args.column),
                          ("--time-unit", args.time_unit), ("--stamp", args.stamp),
                          ("--source-from", args.source_from),
                          ("--skip-bad-files", getattr(args, "skip_bad_files", False))),
                         str(run["algorithm"]), getattr(args, "algorithm", None), args.output,
                         () if args.fail_on else (("--conf", args.conf),
                                                  ("--master", args.master)))
    algorithm = registry.get(str(run["algorithm"]))
    gates.check(args.fail_on, algorithm.name)  # SP-R38, before the re-run
    conf = conf_settings(args)  # SP-R17
    config = algorithm.codec.config_from_json(run["config"])
    result = verify_spool(algorithm, config, args.output, str(run["checkpoint"]))
    print(f"verified: {result['rows']} rows of the spool up to the stream's last micro-batch, "
          f"each with exactly one outcome ({result['held']} still held by a machine); the "
          f"spool re-run with its ticks equals the written tables")
    if not args.fail_on:
        return 0
    return _verify_gates(args, start_session(args, "verify", conf), algorithm,
                         result["held"])


def _verify_arguments(parser: argparse.ArgumentParser) -> None:
    """``verify``'s own options beside the run's input: Spark settings and the gates."""
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting for verify's session, after the run's own "
                             "--conf (from its manifest); repeatable")
    fail_on_argument(parser)


def verify_parser() -> argparse.ArgumentParser:
    """The options of ``python -m timealign.spark.verify``."""
    parser = argparse.ArgumentParser(
        prog="python -m timealign.spark.verify", allow_abbrev=False,
        description="Verify a finished batch run from what it wrote: "
                    "``python -m timealign.spark.verify``.")
    parser.add_argument("algorithm", help=f"one of {', '.join(registry.names())}")
    parser.add_argument("--output", required=True,
                        help="the run's --output (groups/ and outcomes/)")
    run_input_arguments(parser, "verify", required=False)  # as given to the run (BAG-R10)
    _verify_arguments(parser)
    parser.set_defaults(where="--output")
    add_debug(parser, top=True)
    return parser


def verify_main(argv: Sequence[str] | None = None) -> int:
    """``python -m timealign.spark.verify``: exit 0 when verified, else the codes of the
    "Exit codes" table (docs/commands.md) (3 when a check fails), one line on stderr."""
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
    outputs.own("generate", {}, {"--output": args.output})  # CLI-R5, CLI-R6
    # CLI-R7, CLI-R20: a plan of no message, or one larger than memory, is refused naming
    # the option that sized it
    rows = generate(plan, args.output, "--seconds" if args.seconds is not None
                    else "--messages")
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
    fail_on_argument(run)
    run.set_defaults(handler=flagged(_run, RUN_FLAGS), command_parser=run)

    stream = commands.add_parser("stream", help="replay new files as they arrive (streaming)")
    _common(stream, ", rosbag or thin-edge (with --source mqtt://)")
    stream.add_argument("--source", required=True,
                        help="folder watched for new files, or mqtt://HOST:PORT/TOPIC_FILTER "
                             "with --format thin-edge (spec/mqtt.md)")
    stream.add_argument("--checkpoint", required=True, help="Spark checkpoint folder")
    stream.add_argument("--available-now", action="store_true",
                        help="process the files present, then stop")
    stream.add_argument("--trigger-seconds", type=options.number(0.001, 86_400.0),
                        help=f"micro-batch interval (default {TRIGGER_SECONDS:g}; not with "
                             f"--available-now)")
    stream.add_argument("--max-files-per-trigger",
                        type=options.integer(1, 10**9),
                        help="files per micro-batch (taken by modification time, then name)")
    stream.add_argument("--summary", help="when the stream stops (--available-now, SIGINT, "
                                          "SIGTERM), also write the summary as JSON to "
                                          "this file")
    stream.add_argument("--report", metavar="DIR",
                        help="when the stream stops (--available-now, SIGINT, SIGTERM), "
                             "also write an HTML report to DIR/index.html (needs the plot "
                             "extra)")
    bag_arguments(stream, "stream")
    fail_on_argument(stream)
    stream.set_defaults(handler=flagged(_stream, STREAM_FLAGS), command_parser=stream)

    verify = commands.add_parser(
        "verify", help="re-check a finished run from what it wrote (exit 3 if a check fails)",
        description="Verify a finished run: every row has exactly one outcome, every source "
                    "re-run through the reference and checked against its invariants, the "
                    "written tables equal the re-run. The run's manifest names its "
                    "algorithm, config and input; options given must match it.")
    verify.add_argument("output", metavar="OUT", help="the run's --output folder")
    verify.add_argument("--algorithm", help="the run's algorithm (default: its manifest)")
    run_input_arguments(verify, "verify", required=False)  # as given to the run (BAG-R10)
    _verify_arguments(verify)
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
