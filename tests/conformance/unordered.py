"""A thin-edge.io stand-in that builds its batches from a hash map, with one real fault
(CF-R37): the reference behind the protocol, as ``tests.conformance.standin thin-edge``
serves it, except that

- every batch's ids come in an order drawn afresh for each answer (thin-edge.io collects a
  batch in a ``HashMap``, whose iteration order changes from one run to the next), which
  the target's profile (``upstream``: a batch's ids as a set, CF-R12) does not see;
- a batch of two ids or more is reported twice (a batch not cleared once sent): a real
  difference, answered the same way each time up to the order of ids, and so only on
  traces where that order changes between two answers.

``python -m tests.conformance.unordered`` serves it.
"""

from __future__ import annotations

import random
import sys
from typing import Any

from tests.conformance.standin import stand_in
from timealign.conformance.adapter import serve

JSON = dict[str, Any]
THIN_EDGE = stand_in("thin-edge")
SHUFFLE = random.Random()  # seeded by the operating system: another order every run


def run(config: JSON, inputs: list[JSON]) -> list[JSON]:
    answered = []
    for output in THIN_EDGE(config, inputs):
        ids = output.get("ids")
        if output.get("kind") == "batch" and isinstance(ids, list):
            for _ in range(2 if len(ids) >= 2 else 1):
                shuffled = list(ids)
                SHUFFLE.shuffle(shuffled)
                answered.append({**output, "ids": shuffled})
        else:
            answered.append(output)
    return answered


def command() -> str:
    return f"{sys.executable} -m tests.conformance.unordered"


if __name__ == "__main__":
    serve(run, sys.stdin, sys.stdout)
