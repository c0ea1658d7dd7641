"""The ``timealign`` command line: replay and check conformance vectors.

The CLI is an adapter: it decodes files, drives the reference through the registry and
prints JSON lines. Sub-commands of optional adapters (the Spark jobs) register themselves
through ``_EXTENSIONS`` and import their heavy dependencies only when run.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence

from timealign import vectors
from timealign.errors import InvalidInput

_EXTENSIONS: tuple[str, ...] = ("timealign.spark.cli",)


def _print_reference_outputs(args: argparse.Namespace) -> int:
    for path in vectors.files(args.files):
        for vector in vectors.load(path):
            line = {"name": vector.name, "outputs": vectors.reference_outputs(vector)}
            print(json.dumps(line, separators=(",", ":")))
    return 0


def _check(args: argparse.Namespace) -> int:
    failed = checked = 0
    for path in vectors.files(args.files):
        for vector in vectors.load(path):
            checked += 1
            if vector.outputs is None:
                failed += 1
                print(f"FAIL {vector.name} ({path}): no expected outputs")
                continue
            difference = vectors.first_difference(vector.outputs, vectors.reference_outputs(vector))
            problems = vectors.invariant_violations(vector)
            if difference is not None or problems:
                failed += 1
                for problem in ([difference] if difference is not None else []) + problems:
                    print(f"FAIL {vector.name} ({path}): {problem}")
            elif args.verbose:
                print(f"ok   {vector.name}")
    print(f"{checked - failed} of {checked} vectors passed")
    return 1 if failed or not checked else 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, with every registered sub-command."""
    parser = argparse.ArgumentParser(
        prog="timealign", description="Reference engine for timestamp alignment algorithms."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    replay = commands.add_parser("replay", help="replay vectors and print the outputs")
    replay.add_argument("files", nargs="+", help=".json/.jsonl vector files or directories")
    replay.set_defaults(handler=_print_reference_outputs)
    check = commands.add_parser("check", help="compare vectors with the reference")
    check.add_argument("files", nargs="+", help=".json/.jsonl vector files or directories")
    check.add_argument("-v", "--verbose", action="store_true", help="list passing vectors")
    check.set_defaults(handler=_check)
    for module in _EXTENSIONS:
        importlib.import_module(module).register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script and of ``python -m timealign``."""
    args = build_parser().parse_args(argv)
    try:
        code: int = args.handler(args)
    except InvalidInput as error:
        print(f"timealign: error: {error}", file=sys.stderr)
        return 2
    except (OSError, json.JSONDecodeError) as error:
        print(f"timealign: error: {error}", file=sys.stderr)
        return 2
    return code
