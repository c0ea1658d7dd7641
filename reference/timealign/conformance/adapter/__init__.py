"""A protocol adapter around any descriptor: the server side of spec/conformance.md.

``python -m timealign.conformance.adapter ALGORITHM`` serves the reference itself (a
harness self-check, and the shape every adapter has); :func:`serve` serves any
:class:`Algorithm` descriptor, which is how the tests run seeded faults as external
commands. One JSON line in per trace, one line out (CF-R1 to CF-R3); a config the
descriptor rejects is answered with its ``error`` output, like the reference does. The
command's options are parsed in :mod:`timealign.commands.conformance_adapter`.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import IO, Any

from timealign import Algorithm, jsontext
from timealign.conformance.harness import run_reference

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
