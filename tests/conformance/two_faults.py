"""An adapter with two seeded faults (CF-R32): the ApproximateTime reference behind the
protocol, never reporting a superseded message nor a queue overflow.

``python -m tests.conformance.two_faults`` serves it; one fuzz run must find both.
"""

from __future__ import annotations

import sys
from typing import Any

from timealign import registry
from timealign.algorithm import run_json
from timealign.conformance.adapter import serve

JSON = dict[str, Any]
AT = registry.get("approximate_time")


def run(config: JSON, inputs: list[JSON]) -> list[JSON]:
    return [o for o in run_json(AT, config, inputs)
            if o.get("reason") not in ("superseded", "queue_overflow")]


def command() -> str:
    return f"{sys.executable} -m tests.conformance.two_faults"


if __name__ == "__main__":
    serve(run, sys.stdin, sys.stdout)
