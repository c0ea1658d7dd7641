"""A protocol adapter that serves the ApproximateTime reference but misbehaves, in the way
its argument names, on every trace whose name contains ``bad`` (for the CF-R4/CF-R5 tests),
or, for the modes of CF-R36 to CF-R38, on every trace.

    python -m tests.conformance.misbehaving crash|hang|garbage|wrong_name|no_outputs|
                                            extra_line|refuse|slow_start|duplicate_keys|
                                            colour_crash
    python -m tests.conformance.misbehaving nonsense|leak|twice|silent

``nonsense`` adds ``{"input": 1000000, "kind": "nonsense"}`` to every answer (a lying
adapter); ``leak`` leaves out the last output of every third trace it serves (state
leaking between traces: the answer depends on what came before); ``twice`` prints every
answer line twice; ``silent`` answers every trace with no outputs. ``colour_crash`` dies
as ``crash`` does after a long stderr of numbered lines in terminal colours.
"""

from __future__ import annotations

import json
import sys
import time

from timealign import registry
from timealign.conformance.harness import run_reference

MODE = sys.argv[1]
REFERENCE = registry.get("approximate_time")


def answer(trace: dict[str, object]) -> str:
    outputs = run_reference(REFERENCE, trace["config"], trace["inputs"])  # type: ignore[arg-type]
    return json.dumps({"name": trace["name"], "outputs": outputs})


for served, line in enumerate(sys.stdin, start=1):
    trace = json.loads(line)
    text = answer(trace)
    if MODE == "nonsense":
        body = json.loads(text)
        text = json.dumps({**body, "outputs": [*body["outputs"],
                                               {"input": 1000000, "kind": "nonsense"}]})
    if MODE == "leak" and served % 3 == 0:
        body = json.loads(text)
        text = json.dumps({**body, "outputs": body["outputs"][:-1]})
    if MODE == "silent":
        text = json.dumps({"name": trace["name"], "outputs": []})
    if MODE == "twice":
        print(text, flush=True)
    if "bad" in str(trace["name"]):
        if MODE == "crash":
            print("boom: cannot handle this trace", file=sys.stderr, flush=True)
            sys.exit(3)
        if MODE == "colour_crash":
            for number in range(100):
                print(f"\x1b[2mline {number:03}: {'.' * 30}\x1b[0m", file=sys.stderr)
            print("\x1b[1;31merror:\x1b[0m cannot\rhandle \x1b]0;title\x07this trace",
                  file=sys.stderr, flush=True)
            sys.exit(3)
        if MODE == "hang":
            time.sleep(60)
        if MODE == "garbage":
            text = "Segmentation fault (core dumped)"
        if MODE == "wrong_name":
            text = json.dumps({"name": "other", "outputs": []})
        if MODE == "no_outputs":
            text = json.dumps({"name": trace["name"], "result": []})
        if MODE == "extra_line":
            print(text, flush=True)  # answered twice: the next trace would read a stale line
        if MODE == "refuse":
            text = json.dumps({"name": trace["name"], "error": "config not supported"})
        if MODE == "duplicate_keys":  # which outputs would a reader take?
            text = (f'{{"name": {json.dumps(trace["name"])}, "outputs": [], "outputs": '
                    f'{json.dumps(json.loads(text)["outputs"])}}}')
    print(text, flush=True)
