"""The ``plot`` sub-command of ``timealign`` (PL-R6, PL-R7).

Registered through ``timealign.commands.main._EXTENSIONS``. Matplotlib (the ``plot`` extra) is
imported only when a picture is drawn; a run's tables are read with Spark (the ``spark``
extra), so the vector form works without Spark. A run's input, tables or bags, is read by
the same code as ``run`` reads it (:func:`timealign.spark.inputs.read_rows`, PL-R10); its
options are ``run``'s (:func:`timealign.commands.run_input.run_input_arguments`).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import attrs

from timealign import options, outputs, timetext
from timealign.commands.run_input import (
    READ_FLAGS,
    flagged,
    recorded_settings,
    run_input_arguments,
    start_session,
    task_watch,
)
from timealign.errors import InvalidInput
from timealign.plot import require_plot_extra
from timealign.spark import require_spark_extra


def duration(text: str, field: str = "--from") -> int:
    """``"2.5s"``, ``"300ms"``, ``"40us"`` (or ``µs``), ``"7ns"`` or a plain number of
    seconds, as integer ns (exact, :func:`timealign.timetext.duration`, PL-R6)."""
    written = text.strip().replace("µs", "us")
    if written[-1:].isdigit() or written.endswith("."):
        written += "s"  # a plain number is seconds
    if written.startswith(("-", "+")):
        raise InvalidInput(field, "PL-R6", "must be a duration such as 2.5s, 300ms or 7ns", text)
    try:
        value = timetext.duration(written, field, "PL-R6")
    except InvalidInput as error:
        raise InvalidInput(field, "PL-R6", "must be a duration such as 2.5s, 300ms or 7ns "
                           f"({error.message})", text) from None
    assert isinstance(value, int)
    return value


def output_format(path: str) -> str:
    """``svg`` or ``png`` from the file name (PL-R7); a folder or another suffix is refused
    before anything is drawn."""
    target = Path(path)
    fmt = target.suffix.lower().lstrip(".")
    if fmt not in ("svg", "png"):
        raise InvalidInput("--out", "PL-R7", "the file name must end in .svg or .png", path)
    if os.path.isdir(target):  # os.path: an over-long name is CLI-R4's, not an OSError
        raise InvalidInput("--out", "PL-R7", "is a folder", path)
    if not os.path.isdir(target.parent):
        raise InvalidInput("--out", "PL-R7", "its folder does not exist", path)
    return fmt


def _vector_timeline(args: argparse.Namespace) -> Any:
    from timealign import vectors
    from timealign.plot.timeline import from_vector

    # PL-R6: the window and the source choose rows of a run; a vector is drawn whole, so
    # they are refused rather than ignored; so are the options that read a run's input.
    for option, given in (("--from", args.start), ("--to", args.stop),
                          ("--source", args.source), ("--input", args.input),
                          ("--config", args.config), ("--format", args.format),
                          ("--column", args.column or None), ("--master", args.master),
                          ("--time-unit", args.time_unit), ("--stamp", args.stamp or None),
                          ("--source-from", args.source_from),
                          ("--skip-bad-files", args.skip_bad_files or None)):
        if given is not None:
            raise InvalidInput(option, "PL-R6", "only for a run's picture (--run); a "
                               "vector is drawn whole, from its own config and inputs", given)
    found = vectors.load(args.target)
    if args.name is not None:
        found = [v for v in found if v.name == args.name]  # names are unique (VEC-R1)
    if len(found) != 1:
        raise InvalidInput("--name", "PL-R6",
                           f"{len(found)} vectors match; give --name to choose one", args.target)
    vector = found[0]
    if vector.observed is None:
        return from_vector(vector)
    # PL-R16: a difference saved by `conform --save`: expected above observed
    return (attrs.evolve(from_vector(vector), title=f"{vector.name}: expected (reference)"),
            attrs.evolve(from_vector(vector, observed=True),
                         title=f"{vector.name}: observed (implementation)"))


def window(args: argparse.Namespace) -> tuple[int, int]:
    """PL-R6: ``--from`` and ``--to`` as ns after the source's first event time, checked
    before anything is read (``--to`` before ``--from`` refused)."""
    start = 0 if args.start is None else duration(args.start, "--from")
    stop = start + 2 * 10**9 if args.stop is None else duration(args.stop, "--to")
    if stop < start:
        raise InvalidInput("--to", "PL-R6", "must not be before --from", args.stop)
    return start, stop


def _run_timeline(args: argparse.Namespace) -> Any:
    require_spark_extra("plot --run")  # SP-R35: before any import of the extra's modules
    from timealign.spark.inputs import read_rows
    from timealign.spark.pictures import source_timeline

    if args.source is None:
        raise InvalidInput("--source", "PL-R6", "a run's picture needs --source", None)
    if args.name is not None:  # PL-R6: it chooses a vector of a .jsonl file
        raise InvalidInput("--name", "PL-R6", "only for a vector file, not with --run",
                           args.name)
    args.algorithm = args.target
    # SP-R32: the run's input from its manifest; BAG-R9, PL-R10: bad combinations and bad
    # bag options refused before Spark starts
    algorithm, config, source = recorded_settings(args, args.run, "--run")
    for table in ("groups", "outcomes"):
        if "://" not in args.run and not (Path(args.run) / table).is_dir():
            raise InvalidInput("--run", "PL-R6", f"no {table}/ table: not a run's --output",
                               args.run)
    start, stop = window(args)
    from timealign.spark.run_sources import check_source

    check_source(args.run, args.source)  # PL-R17: before Spark starts
    spark = start_session(args, f"plot {args.target}")
    with task_watch(spark, "plot", "reading the run", not args.quiet), \
            read_rows(spark, source) as rows:
        return source_timeline(algorithm, config, rows, args.run, args.source, start, stop)


def _check_out(args: argparse.Namespace) -> None:
    """CLI-R4: ``--out`` is checked with the paths the picture reads (the vector file, or
    the run's output, input and config file) before anything is read or drawn: a picture
    written into a run's table or a bag folder would break the next read of it."""
    reads = {"the vector": None if args.run is not None else args.target, "--run": args.run,
             "--input": getattr(args, "input", None),
             "--config": args.config if args.config and os.path.isfile(args.config)
             else None}
    outputs.check_targets(reads, {"--out": args.out}, command="plot")  # CLI-R5, CLI-R6


def _plot(args: argparse.Namespace) -> int:
    fmt = output_format(args.out)
    require_plot_extra("--out")
    window(args)  # PL-R6: a bad --from or --to is refused whatever the target
    _check_out(args)  # CLI-R4
    timeline = _run_timeline(args) if args.run is not None else _vector_timeline(args)
    from timealign.plot.draw import render, render_side_by_side

    if isinstance(timeline, tuple):  # expected above observed (PL-R16)
        expected, observed = timeline
        data = render_side_by_side(expected, observed, fmt, width=args.width,
                                   strip=not args.no_arrivals, above=True)
        timeline = expected
    else:
        data = render(timeline, fmt, strip=not args.no_arrivals, width=args.width)
    outputs.write_target("plot", "--out", args.out, data)  # CLI-R5: marked, via a sibling
    print(f"wrote {args.out}: {len(timeline.marks)} messages, {len(timeline.groups)} groups")
    return 0


def register(commands: Any) -> None:
    """Add ``plot`` to the ``timealign`` parser."""
    plot = commands.add_parser(
        "plot", help="draw a timeline of a vector, or of one source of a run",
        description="Draw a vector (TARGET is a .json/.jsonl file) or one source of a run "
                    "(TARGET is the algorithm, with --run, --input and --source).")
    plot.add_argument("target", help="vector file, or the algorithm name with --run")
    plot.add_argument("--out", "-o", required=True, help="picture file, .svg or .png")
    plot.add_argument("--name", help="the vector to draw from a .jsonl file")
    plot.add_argument("--run", help="the run's --output folder (groups/, outcomes/)")
    run_input_arguments(plot, "plot", required=False)  # as given to the run (PL-R10)
    plot.add_argument("--source", help="the source to draw")
    plot.add_argument("--from", dest="start",
                      help="start, after the source's first event time (default 0; 2.5s, "
                           "300ms, 7ns; a plain number is seconds)")
    plot.add_argument("--to", dest="stop", help="end, likewise (default: --from + 2s)")
    plot.add_argument("--no-arrivals", action="store_true",
                      help="leave out the arrival-time strip")
    plot.add_argument("--width", type=options.number(1.0, 100.0), default=10.0,
                      help="width in inches (default 10, 1 to 100)")
    plot.set_defaults(handler=flagged(_plot, READ_FLAGS))
