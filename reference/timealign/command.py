"""What every command entry point shares: one exit point and ``--debug``.

``timealign`` and its sub-commands, and the adapters' own entry points
(``python -m timealign.spark.verify``), end through :func:`guarded`: a failure becomes one
line on stderr and the exit code :func:`timealign.errors.failure_code` gives it. A core
helper (it imports only :mod:`timealign.errors`), so an entry point in any layer can use it
without importing the CLI (ARCHITECTURE.md).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
from collections.abc import Callable

from timealign.errors import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, failure_code
from timealign.outputs import release


def one_line(error: BaseException) -> str:
    """The first line of an error's text, cut short: Java errors run to hundreds of lines."""
    lines = str(error).strip().splitlines()
    text = lines[0] if lines else type(error).__name__
    return text if len(text) <= 500 else text[:500] + "..."


def guarded(command: Callable[[], int], debug: bool = False, prog: str = "timealign") -> int:
    """Run a command; turn any exception into one line on stderr and its exit code.

    Every handler of ``timealign`` (and ``python -m timealign.spark.verify``) runs through
    this, so a new sub-command gets the same codes and quiet failures for free; ``--debug``
    adds the full traceback. Whatever the end, the command's claims on its targets are
    released (CLI-R6).
    """
    try:
        return _ended(command, debug, prog)
    finally:
        release()


def _ended(command: Callable[[], int], debug: bool, prog: str) -> int:
    try:
        return command()
    except BrokenPipeError:  # VEC-R14: the reader closed the pipe (`| head`): end quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush fails otherwise
        return EXIT_OK
    except KeyboardInterrupt:  # CLI-R2: one line, exit 130, nothing else on stderr
        if debug:
            traceback.print_exc()
        print(f"{prog}: interrupted", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED
    except Exception as error:  # the one exit point of every command
        if _while_interrupted(error):  # CLI-R2: a clean-up failing after Ctrl-C
            if debug:
                traceback.print_exc()
            print(f"{prog}: interrupted", file=sys.stderr, flush=True)
            return EXIT_INTERRUPTED
        code = failure_code(error)
        if debug:
            traceback.print_exc()
        kind = "error" if code != EXIT_FAILURE else f"failed ({type(error).__name__})"
        print(f"{prog}: {kind}: {one_line(error)}", file=sys.stderr)
        if code == EXIT_FAILURE and not debug:
            print(f"{prog}: run again with --debug for the traceback", file=sys.stderr)
        return code


def _while_interrupted(error: BaseException) -> bool:
    """Whether ``error`` was raised while a Ctrl-C was being handled (CLI-R2): Ctrl-C
    reaches the JVM too (the terminal signals the whole process group), so stopping a
    stream's query or removing a run's staging folders then fails with a py4j error, which
    would otherwise replace the interrupt by exit 4."""
    seen: set[int] = set()
    context = error.__context__
    while context is not None and id(context) not in seen:
        if isinstance(context, KeyboardInterrupt):
            return True
        seen.add(id(context))
        context = context.__context__
    return False


def whole_options(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``parser`` and every sub-command parser below it with abbreviated options turned off
    (CLI-R1): argparse takes ``--conf X`` for ``--config X`` where a command has no
    ``--conf``, and the option meant is silently another. Returns ``parser``."""
    parser.allow_abbrev = False
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                whole_options(sub)
    return parser


def add_debug(parser: argparse.ArgumentParser, top: bool = False) -> None:
    """``--debug`` on a parser; sub-commands get it without overriding the top level."""
    parser.add_argument("--debug", action="store_true",
                        default=False if top else argparse.SUPPRESS,
                        help="print the full traceback of a failure")


def leave(code: int) -> None:
    """End the process now (CLI-R2): after Ctrl-C, interpreter shutdown would run Spark's
    exit hooks against a JVM that is going away, and py4j's threads would log tracebacks.
    The one line is already on stderr; the JVM exits when its parent does."""
    logging.disable(logging.CRITICAL)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
