"""A protocol adapter around any descriptor: the server side of spec/conformance.md.

``python -m timealign.conformance.adapter ALGORITHM`` serves the reference itself (a
harness self-check, and the shape every adapter has); :func:`serve` serves any
:class:`Algorithm` descriptor, which is how the tests run seeded faults as external
commands. One JSON line in per trace, one line out (CF-R1 to CF-R3); a config the
descriptor rejects is answered with its ``error`` output, like the reference does.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import IO, Any

from timealign import Algorithm, registry
from timealign.conformance.harness import run_reference

JSON = dict[str, Any]
Runner = Callable[[JSON, list[JSON]], list[JSON]]


def serve(run: Runner, source: IO[str], sink: IO[str]) -> None:
    """Answer every trace line of ``source`` on ``sink`` until the input ends."""
    for line in source:
        if not line.strip():
            continue
        trace = json.loads(line)
        try:
            answer: JSON = {"name": trace["name"],
                            "outputs": run(trace["config"], list(trace["inputs"]))}
        except ValueError as error:  # a trace this implementation cannot take (CF-R3)
            answer = {"name": trace.get("name"), "error": str(error)}
        sink.write(json.dumps(answer, separators=(",", ":")) + "\n")
        sink.flush()


def runner(algorithm: Algorithm[Any, Any, Any, Any]) -> Runner:
    return lambda config, inputs: run_reference(algorithm, config, inputs)


def main(argv: Sequence[str] | None = None) -> int:
    names = list(sys.argv[1:] if argv is None else argv)
    if len(names) != 1:
        print(f"usage: python -m timealign.conformance.adapter {{{','.join(registry.names())}}}",
              file=sys.stderr)
        return 2
    serve(runner(registry.get(names[0])), sys.stdin, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
