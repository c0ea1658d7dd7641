"""The options that name a run's input, shared by every command that reads one (``run``,
``stream``, ``verify``, ``plot --run``), and the wording of their errors.

One place, so that ``--input``, ``--format``, ``--column``, ``--time-unit`` and the bag
options mean the same in each command (PL-R10, BAG-R10) and no adapter imports another's
command module for them. The jobs' paths are checked once into a
:class:`~timealign.spark.paths.JobPaths`, whose errors name roles ("the input"), worded here
with the command's options (:func:`flagged`); a run's input is read by
:mod:`timealign.spark.inputs`. This module imports neither pyspark nor pyarrow: each
function imports what it needs when it runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from timealign import registry
from timealign.algorithm import Algorithm
from timealign.errors import InvalidInput
from timealign.spark.paths import GLOB_CHARACTERS, PathError
from timealign.timetext import UNITS

# The options that name each role of a job's paths, per command.
RUN_FLAGS: dict[str, str] = {"input": "--input", "output": "--output",
                             "summary": "--summary", "report": "--report",
                             "config": "--config"}
STREAM_FLAGS: dict[str, str] = {"input": "--source", "output": "--output",
                                "checkpoint": "--checkpoint", "summary": "--summary",
                                "report": "--report", "config": "--config"}
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


def reproduce(args: argparse.Namespace, replaced: Mapping[str, object]) -> list[str]:
    """SP-R32, PL-R15: the command line that reruns a job, generated from the options its
    parser parsed (``args.command_parser``, set by the command's registration), so that no
    option is left out: every option whose value is not its default, in the parser's order,
    under its long name; ``replaced``: values put in place of the parsed ones (paths made
    absolute, the config as canonical JSON). ``--debug`` and ``--help`` are left out."""
    parser: argparse.ArgumentParser = args.command_parser
    words = ["timealign", str(args.command)]
    for action in parser._actions:
        if action.dest in ("help", "debug") or action.dest == argparse.SUPPRESS:
            continue
        value = replaced.get(action.dest, getattr(args, action.dest, None))
        if not action.option_strings:
            words.append(str(value))
            continue
        if value is None or value is False or value == [] or (
                action.dest not in replaced and value == action.default):
            continue
        flag = max(action.option_strings, key=len)
        if value is True:
            words.append(flag)
        else:
            for item in value if isinstance(value, list) else [value]:
                words += [flag, str(item)]
    return words


def time_unit_argument(parser: argparse.ArgumentParser, default: str | None) -> None:
    """``--time-unit``: the unit of numbers in the time columns (SP-R36), shared by every
    command that reads a run's input."""
    parser.add_argument("--time-unit", choices=list(UNITS), default=default,
                        help="unit of numbers in the stamp and arrival columns: s, ms, us or "
                             "ns (default ns); ISO-8601 text with a zone is read as is"
                        + ("" if default else "; default: the run's manifest"))


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
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    time_unit_argument(parser, None)
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
        if getattr(args, "time_unit", None) not in (None, "ns"):
            raise InvalidInput("--time-unit", "BAG-R9", "not with --format rosbag: a bag's "
                               "times are integer ns (BAG-R2)", args.time_unit)
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
                         getattr(args, "skip_bad_files", False),
                         getattr(args, "time_unit", None) or "ns")
    check_input_exists(source)
    return config, source


def check_input_exists(source: Any) -> None:
    """SP-R1, BAG-R1, SP-R36, BAG-R3: before Spark starts, a local input that does not exist
    is refused (Spark found it only after its start-up, in a message with an SQLSTATE), the
    time columns of a table input are checked from its first file, and the read topics of
    bags for a header stamp."""
    from timealign.spark.schema import check_time_columns

    if source.path and "://" not in source.path and not Path(source.path).exists():
        rule = "BAG-R1" if source.bag is not None else "SP-R1"
        if GLOB_CHARACTERS & set(source.path):  # SP-R1: the input is a folder or a file
            raise PathError("input", rule, [
                "a glob is not an input (no file or folder has this name): give ", "{input}",
                " the folder that holds the files, or one file"], source.path)
        raise PathError("input", rule, ["no such file or folder: ", "{input}"], source.path)
    if source.bag is None and source.path:
        check_time_columns(source.path, source.format, source.columns)
    elif source.bag is not None and source.path and "://" not in source.path:
        from timealign.rosbag.discovery import bags_under
        from timealign.rosbag.read import check_stamps
        from timealign.spark.paths import regular_files_of
        from timealign.spark.rosbag_source import options_of

        # BAG-R3: a read topic without a header stamp, as `bags info` already says; SP-R70:
        # a bag's files are regular files before the stamp check opens any of them
        options = options_of(source.bag)
        bags = bags_under(source.path, options.source_from, options.naming)
        for bag in bags:
            regular_files_of(Path(bag.path))
        check_stamps(bags, options)


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
        ("skip_bad_files", getattr(args, "skip_bad_files", False)),
        ("time_unit", getattr(args, "time_unit", None))) if given]
    given = RunRecord(
        algorithm.name, record.config if args.config is None else
        algorithm.codec.config_to_json(load_config(algorithm, args.config)),
        args.input or record.input, args.format or record.format, tuple(args.column),
        tuple(args.stamp), args.source_from, getattr(args, "skip_bad_files", False),
        getattr(args, "time_unit", None) or record.time_unit)
    record.matched(given, explicit)
    config, source = record.run_input(registry.get(record.algorithm))
    check_input_exists(source)
    return registry.get(record.algorithm), config, source


def start_session(args: argparse.Namespace, command: str,
                  settings: Mapping[str, str] | None = None, verbose: bool = False,
                  rows: int | None = None) -> Any:
    """The session of a Spark command, announced on stderr when its start takes more than
    :data:`ANNOUNCE` seconds (SP-R40: Spark's start-up takes seconds, up to a minute on a
    busy machine; a session already running says nothing) unless ``--quiet``; Java and a
    standalone master are checked before it starts (SP-R39), their errors naming
    ``--master`` and ``JAVA_HOME`` as the command line says them."""
    import threading

    from timealign.spark.session import build_session

    started = threading.Event()

    def announce() -> None:
        if not started.wait(ANNOUNCE):
            print(f"[timealign {command.split()[0]}] starting Spark "
                  f"({args.master or 'local[*]'})", file=sys.stderr, flush=True)

    if not getattr(args, "quiet", False):
        threading.Thread(target=announce, daemon=True).start()
    try:
        return build_session(args.master, f"timealign {command}", settings, verbose,
                             rows)  # SP-D31: the inventory's rows choose the JIT
    except InvalidInput as error:
        if error.field != "master":
            raise
        raise InvalidInput("--master", error.rule, error.message, error.value) from None
    finally:
        started.set()


#: Seconds of Spark start-up after which a command says it is starting Spark (SP-R40).
ANNOUNCE = 2.0


def task_watch(spark: Any, command: str, doing: str, enabled: bool = True) -> Any:
    """SP-R40: progress of a command whose phases are not known up front (``verify``,
    ``plot --run``): elapsed time and Spark's tasks, a line every 10 s (the first after
    10 s: a quick check prints none)."""
    from timealign.progress import Progress
    from timealign.spark.progress import StageWatch

    return StageWatch(spark, command, Progress(enabled, every=10.0), phases=None, doing=doing)
