"""``python -m timealign.conformance.adapter ALGORITHM``: its options and exit codes; the
work is :func:`timealign.conformance.adapter.serve` around the reference (CF-R1 to CF-R3)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from timealign import registry
from timealign.conformance.adapter import protocol_channel, runner, serve
from timealign.errors import EXIT_BAD_INPUT


def parser() -> argparse.ArgumentParser:
    """The adapter's options: the algorithm to serve (``--help`` says what it does)."""
    made = argparse.ArgumentParser(
        prog="python -m timealign.conformance.adapter",
        description="Serve the reference of ALGORITHM over the conformance line protocol "
                    "(spec/conformance.md, CF-R1 to CF-R3): one JSON trace per line on "
                    "stdin, one answer line on stdout, until stdin ends. Try the harness "
                    "with `timealign conform ALGORITHM --cmd \"python -m "
                    "timealign.conformance.adapter ALGORITHM\"`.")
    made.add_argument("algorithm", choices=registry.names(), help="the algorithm to serve")
    return made


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m timealign.conformance.adapter ALGORITHM``: the exit codes of docs/commands.md
    (2 for a bad usage or an unknown algorithm, with the usage and a line saying what is
    wrong; 130 for Ctrl-C), never a traceback (CLI-R1)."""
    from timealign.command import guarded

    try:
        args = parser().parse_args(argv)
    except SystemExit as stop:  # a usage error (2, with argparse's error line), or --help
        return stop.code if isinstance(stop.code, int) else EXIT_BAD_INPUT

    def command() -> int:
        serve(runner(registry.get(args.algorithm)), sys.stdin, protocol_channel())
        return 0

    return guarded(command, prog="timealign.conformance.adapter")
