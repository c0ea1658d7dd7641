"""The ``timealign`` command line: replay and check conformance vectors.

The commands layer (ARCHITECTURE.md): it parses options, hands the work to the core or
to an adapter, and maps failures to exit codes (:func:`timealign.command.guarded`). Each
other module of :mod:`timealign.commands` adds the sub-commands of one adapter
(``register``) and imports its heavy dependencies (pyspark, matplotlib, Hypothesis) only
when run, so importing them here costs nothing and keeps every arrow visible: this module
imports them; no adapter imports them. ``timealign.cli:main``, the console script, is
this module's :func:`main`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from timealign import __version__, native, vectors
from timealign.command import add_debug, guarded, leave, whole_options
from timealign.commands import conformance as conformance_cli
from timealign.commands import plot as plot_cli
from timealign.commands import rosbag as rosbag_cli
from timealign.commands import spark as spark_cli
from timealign.errors import (
    EXIT_BAD_INPUT,
    EXIT_DIFFERENT,
    EXIT_FAILURE,
    EXIT_INCONSISTENT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    InvalidInput,
    failure_code,
)
from timealign.progress import counted
from timealign.vectors import Vector

__all__ = [  # the exit codes and the exit point are re-exported for callers of old
    "EXIT_BAD_INPUT", "EXIT_DIFFERENT", "EXIT_FAILURE", "EXIT_INCONSISTENT",
    "EXIT_INTERRUPTED", "EXIT_OK", "add_debug", "build_description", "build_parser",
    "failure_code", "guarded", "main",
]

#: The adapters whose sub-commands ``timealign`` offers, in the order of ``--help``.
_EXTENSIONS = (conformance_cli, spark_cli, plot_cli, rosbag_cli)


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
    malformed = refused = replayed = 0
    for path, item in _vectors(args):
        replayed += 1
        try:
            outputs = _replayed(path, item)
        except InvalidInput as error:
            malformed += 1
            print(f"timealign: error: {error}", file=sys.stderr)
            continue
        line = {"name": getattr(item, "name", ""), "outputs": outputs}
        print(json.dumps(line, separators=(",", ":")))
        if _config_refused(outputs):  # VEC-R14: said on stderr, exit 1
            refused += 1
            assert isinstance(item, Vector)
            print(f"timealign: error: {item.source or path} {_refusal(item)}", file=sys.stderr)
    if not replayed:  # VEC-R13: an empty folder is a wrong path, not an empty answer
        raise _nothing_found(args)
    return EXIT_BAD_INPUT if malformed else EXIT_DIFFERENT if refused else EXIT_OK


def _nothing_found(args: argparse.Namespace) -> InvalidInput:
    """VEC-R13: the paths given held no vector (a folder holds them in ``.json`` and
    ``.jsonl`` files, optionally gzip-compressed)."""
    folder = any(Path(path).is_dir() for path in args.files)
    hint = " (a folder's vector files end in .json or .jsonl, optionally .gz)" if folder else ""
    return InvalidInput(" ".join(str(path) for path in args.files), "VEC-R13",
                        f"nothing to check: no vector found{hint}", None)


def _config_refused(outputs: Sequence[vectors.JSON]) -> bool:
    return bool(outputs) and outputs[0].get("kind") == "error" and outputs[0].get("input") is None


def _refusal(vector: Vector) -> str:
    """The message of the refused config of ``vector`` (VEC-R5)."""
    from timealign import registry

    try:
        registry.get(vector.algorithm).codec.config_from_json(vector.config)
    except InvalidInput as error:
        return f"config {error}"
    return "config refused"


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
    if not checked:  # VEC-R13: no verdict over nothing, but the reason on stderr
        raise _nothing_found(args)
    print(f"{checked - failed - malformed} of {counted(checked, 'vector')} passed"
          + (f"; {malformed} could not be read" if malformed else ""))
    if malformed:
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
    for extension in _EXTENSIONS:
        extension.register(commands)
    add_debug(parser, top=True)
    for sub in commands.choices.values():
        add_debug(sub)
    return whole_options(parser)  # CLI-R1


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
    if code in (EXIT_INTERRUPTED, EXIT_TERMINATED) and argv is None:  # CLI-R2, MQ-R14
        leave(code)
    return code
