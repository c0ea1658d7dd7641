"""Template: an ApproximateTime conformance adapter (spec/conformance.md) in Python.

Copy this file next to your implementation and replace the three marked parts: how your
implementation is built from a config, how one input is fed to it, and how its outputs
are written. As shipped it wraps the reference's own ApproximateTime step, so it runs out
of the box and agrees:

    timealign conform approximate_time --cmd "python examples/templates/approximate_time.py"

(add ``--target ros2`` or ``--target ros1`` for a port of one of the real upstreams).

The protocol: one JSON line per trace on stdin (a ``timealign.vector/1`` object without
``outputs``), one JSON line per trace on stdout, ``{"name": ..., "outputs": [...]}`` where
each output carries the index of the input that produced it, or ``{"name": ...,
"error": "..."}`` for a trace the implementation cannot take. Diagnostics go to stderr.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, TextIO

# (1) Your implementation. Here: the reference ApproximateTime machine.
from timealign.approximate_time import End, Message, initial, step
from timealign.approximate_time.codec import config_from_json
from timealign.approximate_time.model import Dropped, Pending, Published, Warned


def build(config: dict[str, Any]) -> tuple[Any, Any]:
    """(2) Build an instance from the trace's config; raise ValueError to refuse it."""
    decoded = config_from_json(config)
    return decoded, initial(decoded)


def feed(instance: tuple[Any, Any], item: dict[str, Any]) -> tuple[Any, list[dict[str, Any]]]:
    """(3) Feed one input; return the new instance and its outputs in vector form."""
    config, state = instance
    if item["op"] == "end":
        message: Any = End()
    else:
        message = Message(item["topic"], item["stamp"], item["id"])
    state, produced = step(config, state, message)
    outputs: list[dict[str, Any]] = []
    for out in produced:
        if isinstance(out, Published):
            outputs.append({"kind": "published", "ids": list(out.ids)})
        elif isinstance(out, Dropped):
            outputs.append({"kind": "dropped", "id": out.id, "reason": out.reason})
        elif isinstance(out, Warned):
            outputs.append({"kind": "warning", "topic": out.topic, "reason": out.reason})
        elif isinstance(out, Pending):
            outputs.append({"kind": "pending", "id": out.id})
    return (config, state), outputs


def answer(trace: dict[str, Any]) -> dict[str, Any]:
    """One trace: build, feed every input, tag each output with its input's index."""
    try:
        instance = build(trace["config"])
    except ValueError as error:
        return {"name": trace["name"], "error": str(error)}
    outputs: list[dict[str, Any]] = []
    for index, item in enumerate(trace["inputs"]):
        try:
            instance, produced = feed(instance, item)
        except ValueError as error:  # a rejected input: report it, keep the old instance
            field, rule = getattr(error, "field", "?"), getattr(error, "rule", "?")
            outputs.append({"input": index, "kind": "error", "field": field, "rule": rule})
            continue
        outputs += [{"input": index, **output} for output in produced]
    return {"name": trace["name"], "outputs": outputs}


def protocol_channel() -> TextIO:
    """Keep the protocol on a descriptor of its own (CF-R1): a private copy of standard
    output answers the harness; descriptor 1 and ``sys.stdout`` then point at stderr, so
    whatever else writes to standard output (a library's print or logger) lands there."""
    sys.stdout.flush()
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return channel


def main() -> None:
    channel = protocol_channel()
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(answer(json.loads(line))), file=channel, flush=True)


if __name__ == "__main__":
    main()
