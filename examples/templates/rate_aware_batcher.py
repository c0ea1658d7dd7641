"""Template: a rate-aware batcher conformance adapter (spec/conformance.md) in Python.

Copy this file next to your implementation and replace the marked parts: how your batcher
is built from a config, how one input is fed to it, and how its outputs are written. As
shipped it wraps the reference's own rate-aware batcher, so it runs out of the box and
agrees:

    timealign conform rate_aware_batcher --cmd "python examples/templates/rate_aware_batcher.py"

(add ``--target esslivedata-card`` or ``--target esslivedata-head`` for a port of the ESS
batcher; examples/esslivedata/adapter.py wraps the real one). A ``poll`` input is one call
of your batcher with the messages that arrived since the last one, and ``now``, when
present, is the caller's clock reading in ns. The protocol: one JSON line per trace on
stdin, one answer line per trace on stdout, ``{"name": ..., "outputs": [...]}`` with each
output tagged with its input's index, or ``{"name": ..., "error": "..."}`` for a trace
your implementation cannot take. Diagnostics go to stderr.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, TextIO

# (1) Your implementation. Here: the reference rate-aware batcher.
from timealign.rate_aware_batcher import Batch, Pending, initial, step
from timealign.rate_aware_batcher.codec import config_from_json, input_from_json


def build(config: dict[str, Any]) -> tuple[Any, Any]:
    """(2) Build a batcher from the trace's config; raise ValueError to refuse it."""
    decoded = config_from_json(config)
    return decoded, initial(decoded)


def feed(instance: tuple[Any, Any], item: dict[str, Any]) -> tuple[Any, list[dict[str, Any]]]:
    """(3) Feed one input (poll, set_batch_length or end); return the new instance and its
    outputs in vector form."""
    config, state = instance
    # Decoding: {"op": "poll", "messages": [{"kind", "name", "timestamp", "id"}], "now"},
    # {"op": "set_batch_length", "seconds"}, {"op": "end"}. Here the reference's decoder,
    # which names the field and rule of a malformed input (an InvalidInput, a ValueError).
    event = input_from_json(item)
    state, produced = step(config, state, event)
    outputs: list[dict[str, Any]] = []
    for out in produced:
        if isinstance(out, Batch):
            outputs.append({"kind": "batch", "start": out.start, "end": out.end,
                            "ids": list(out.ids)})
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
