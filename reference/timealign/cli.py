"""The ``timealign`` command line: replay and check conformance vectors.

The CLI is an adapter: it decodes files, drives the reference through the registry and
prints JSON lines. Sub-commands of optional adapters (the Spark jobs) register themselves
through ``_EXTENSIONS`` and import their heavy dependencies only when run.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from timealign import __version__, native, vectors
from timealign.errors import ConsistencyError, InvalidInput
from timealign.vectors import Vector

_EXTENSIONS: tuple[str, ...] = (
    "timealign.conformance.cli",
    "timealign.spark.cli",
    "timealign.plot.cli",
)

# Exit codes (README "Exit codes"); 1 is `check`'s "some vector differs" (VEC-R6).
EXIT_OK = 0
EXIT_DIFFERENT = 1
EXIT_BAD_INPUT = 2
EXIT_INCONSISTENT = 3
EXIT_FAILURE = 4
EXIT_INTERRUPTED = 130


def _vectors(args: argparse.Namespace) -> Iterator[tuple[Path, Vector | InvalidInput]]:
    for path in vectors.files(args.files):
        for item in vectors.read(path):
            yield path, item


def _replayed(path: Path, item: Vector | InvalidInput) -> list[vectors.JSON]:
    """A vector's outputs; :class:`InvalidInput` naming the file for a malformed vector
    or an unknown algorithm (VEC-R1, VEC-R2)."""
    if isinstance(item, InvalidInput):
        raise item
    try:
        return vectors.reference_outputs(item)
    except InvalidInput as error:
        where = item.source or str(path)
        raise InvalidInput(f"{where} {error.field}", error.rule, error.message,
                           error.value) from None


def _print_reference_outputs(args: argparse.Namespace) -> int:
    """Print each vector's outputs; a malformed vector is reported on stderr and the others
    are still replayed (VEC-R10); exit 2 if any was malformed."""
    malformed = 0
    for path, item in _vectors(args):
        try:
            line = {"name": getattr(item, "name", ""), "outputs": _replayed(path, item)}
        except InvalidInput as error:
            malformed += 1
            print(f"timealign: error: {error}", file=sys.stderr)
            continue
        print(json.dumps(line, separators=(",", ":")))
    return EXIT_BAD_INPUT if malformed else EXIT_OK


def _check(args: argparse.Namespace) -> int:
    """VEC-R6, VEC-R10: compare every vector, report each failure (a difference from the
    reference, an invariant its outputs break) and a summary; exit 1 when a vector differs,
    breaks an invariant or has no outputs, 2 when one could not be read (or none was found)."""
    failed = checked = malformed = 0
    for path, item in _vectors(args):
        checked += 1
        try:
            outputs = _replayed(path, item)
        except InvalidInput as error:
            malformed += 1
            print(f"FAIL {error}")
            continue
        assert isinstance(item, Vector)
        if item.outputs is None:
            failed += 1
            print(f"FAIL {item.name} ({path}): no expected outputs")
            continue
        difference = vectors.first_difference(item.outputs, outputs)
        problems = vectors.invariant_violations(item)
        if difference is not None or problems:
            failed += 1
            for problem in ([difference] if difference is not None else []) + problems:
                print(f"FAIL {item.name} ({path}): {problem}")
        elif args.verbose:
            print(f"ok   {item.name}")
    print(f"{checked - failed - malformed} of {checked} vectors passed"
          + (f"; {malformed} could not be read" if malformed else ""))
    if malformed or not checked:
        return EXIT_BAD_INPUT
    return EXIT_DIFFERENT if failed else EXIT_OK


def build_description() -> str:
    """One line naming the version and the build of the fast paths that runs."""
    build = native.build()
    detail = "; ".join(f"{name.removeprefix('timealign.')} {state}"
                       for name, state in native.describe().items())
    return f"timealign {__version__} ({build} build: {detail})"


def _info(args: argparse.Namespace) -> int:
    print(build_description())
    return 0


class _Version(argparse.Action):
    """``--version``: :func:`build_description` on one line (argparse's own would wrap it)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(build_description())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, with every registered sub-command."""
    parser = argparse.ArgumentParser(
        prog="timealign", description="Reference engine for timestamp alignment algorithms."
    )
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="print the version and which build of the fast paths runs")
    commands = parser.add_subparsers(dest="command", required=True)
    info = commands.add_parser(
        "info", help="print the version and which build of the fast paths runs")
    info.set_defaults(handler=_info)
    replay = commands.add_parser("replay", help="replay vectors and print the outputs")
    replay.add_argument("files", nargs="+", help=".json/.jsonl vector files or directories")
    replay.set_defaults(handler=_print_reference_outputs)
    check = commands.add_parser("check", help="compare vectors with the reference")
    check.add_argument("files", nargs="+", help=".json/.jsonl vector files or directories")
    check.add_argument("-v", "--verbose", action="store_true", help="list passing vectors")
    check.set_defaults(handler=_check)
    for module in _EXTENSIONS:
        importlib.import_module(module).register(commands)
    add_debug(parser, top=True)
    for sub in commands.choices.values():
        add_debug(sub)
    return parser


def failure_code(error: BaseException) -> int:
    """The exit code of an exception that ended a command (README "Exit codes")."""
    if isinstance(error, InvalidInput | OSError | UnicodeError):
        return EXIT_BAD_INPUT
    if isinstance(error, ConsistencyError):
        return EXIT_INCONSISTENT
    if isinstance(error, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    return EXIT_FAILURE


def _one_line(error: BaseException) -> str:
    """The first line of an error's text, cut short: Java errors run to hundreds of lines."""
    lines = str(error).strip().splitlines()
    text = lines[0] if lines else type(error).__name__
    return text if len(text) <= 500 else text[:500] + "..."


def guarded(command: Callable[[], int], debug: bool = False, prog: str = "timealign") -> int:
    """Run a command; turn any exception into one line on stderr and its exit code.

    Every handler of ``timealign`` (and ``python -m timealign.spark.verify``) runs through
    this, so a new sub-command gets the same codes and quiet failures for free; ``--debug``
    adds the full traceback.
    """
    try:
        return command()
    except KeyboardInterrupt:  # CLI-R2: one line, exit 130, nothing else on stderr
        if debug:
            traceback.print_exc()
        print(f"{prog}: interrupted", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED
    except Exception as error:  # the one exit point of every command
        code = failure_code(error)
        if debug:
            traceback.print_exc()
        kind = "error" if code != EXIT_FAILURE else f"failed ({type(error).__name__})"
        print(f"{prog}: {kind}: {_one_line(error)}", file=sys.stderr)
        if code == EXIT_FAILURE and not debug:
            print(f"{prog}: run again with --debug for the traceback", file=sys.stderr)
        return code


def add_debug(parser: argparse.ArgumentParser, top: bool = False) -> None:
    """``--debug`` on a parser; sub-commands get it without overriding the top level."""
    parser.add_argument("--debug", action="store_true",
                        default=False if top else argparse.SUPPRESS,
                        help="print the full traceback of a failure")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script and of ``python -m timealign``: returns the exit
    code, for bad usage too (argparse's own exit 2, CLI-R1)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # a usage error (2), or --help/--version (0)
        return stop.code if isinstance(stop.code, int) else EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("timealign: interrupted", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED
    code = guarded(lambda: int(args.handler(args)), args.debug)
    if code == EXIT_INTERRUPTED and argv is None:
        leave(code)
    return code


def leave(code: int) -> None:
    """End the process now (CLI-R2): after Ctrl-C, interpreter shutdown would run Spark's
    exit hooks against a JVM that is going away, and py4j's threads would log tracebacks.
    The one line is already on stderr; the JVM exits when its parent does."""
    logging.disable(logging.CRITICAL)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
