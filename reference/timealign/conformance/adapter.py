"""A protocol adapter around any descriptor: the server side of spec/conformance.md.

``python -m timealign.conformance.adapter ALGORITHM`` serves the reference itself (a
harness self-check, and the shape every adapter has); :func:`serve` serves any
:class:`Algorithm` descriptor, which is how the tests run seeded faults as external
commands. One JSON line in per trace, one line out (CF-R1 to CF-R3); a config the
descriptor rejects is answered with its ``error`` output, like the reference does.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import IO, Any

from timealign import Algorithm, jsontext, registry
from timealign.conformance.harness import run_reference
from timealign.errors import EXIT_BAD_INPUT

JSON = dict[str, Any]
Runner = Callable[[JSON, list[JSON]], list[JSON]]


def _answer(run: Runner, line: str) -> JSON:
    """The answer to one line: its outputs, or an ``error`` answer for a line that is not
    a trace this adapter can take (CF-R3), never an exception."""
    try:
        trace = jsontext.loads(line)
    except ValueError as error:
        return {"name": None, "error": f"not a JSON trace: {str(error)[:200]}"}
    if not isinstance(trace, dict):
        return {"name": None, "error": f"a trace is a JSON object, got {jsontext.kind(trace)}"}
    name, config, inputs = trace.get("name"), trace.get("config"), trace.get("inputs")
    if not isinstance(config, dict) or not isinstance(inputs, list) \
            or not all(isinstance(item, dict) for item in inputs):
        return {"name": name, "error": "a trace needs a config object and a list of inputs"}
    try:
        return {"name": name, "outputs": run(config, list(inputs))}
    except ValueError as error:  # a trace this implementation cannot take (CF-R3)
        return {"name": name, "error": str(error)}


def serve(run: Runner, source: IO[str], sink: IO[str]) -> None:
    """Answer every trace line of ``source`` on ``sink`` until the input ends."""
    for line in source:
        if not line.strip():
            continue
        sink.write(json.dumps(_answer(run, line), separators=(",", ":")) + "\n")
        sink.flush()


def protocol_channel() -> IO[str]:
    """Keep the protocol on a descriptor of its own (CF-R1): a private copy of standard
    output answers the harness; descriptor 1 and ``sys.stdout`` then point at stderr, so
    whatever else writes to standard output (a library's print or logger) cannot corrupt
    an answer line. Call it once, at the start, before anything else prints."""
    sys.stdout.flush()
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return channel


def runner(algorithm: Algorithm[Any, Any, Any, Any]) -> Runner:
    return lambda config, inputs: run_reference(algorithm, config, inputs)


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
    """``python -m timealign.conformance.adapter ALGORITHM``: the README's exit codes (2 for
    a bad usage or an unknown algorithm, with the usage and a line saying what is wrong;
    130 for Ctrl-C), never a traceback (CLI-R1)."""
    from timealign.command import guarded

    try:
        args = parser().parse_args(argv)
    except SystemExit as stop:  # a usage error (2, with argparse's error line), or --help
        return stop.code if isinstance(stop.code, int) else EXIT_BAD_INPUT

    def command() -> int:
        serve(runner(registry.get(args.algorithm)), sys.stdin, protocol_channel())
        return 0

    return guarded(command, prog="timealign.conformance.adapter")


if __name__ == "__main__":
    sys.exit(main())
