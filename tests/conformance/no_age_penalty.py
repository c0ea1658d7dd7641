"""A stand-in port without an age penalty (CF-R31): the ROS 2 stand-in (``standin.py``,
the reference behind the protocol refusing what ROS 2 treats otherwise) that also refuses
every age penalty but 0, as a port of the policy without that parameter does.

``python -m tests.conformance.no_age_penalty`` serves it; ``timealign conform
approximate_time --target ros2 --where age_penalty=0`` keeps every trace inside it.
"""

from __future__ import annotations

import sys
from typing import Any

from tests.conformance.standin import stand_in
from timealign.conformance.adapter import serve

JSON = dict[str, Any]
ROS2 = stand_in("ros2")


def run(config: JSON, inputs: list[JSON]) -> list[JSON]:
    penalty = config.get("age_penalty")
    if penalty is None or penalty != 0:  # null is the default 0.1 (AT-R1)
        raise ValueError(f"no age penalty in this port: age_penalty {penalty} is not 0")
    return ROS2(config, inputs)


def command() -> str:
    return f"{sys.executable} -m tests.conformance.no_age_penalty"


if __name__ == "__main__":
    serve(run, sys.stdin, sys.stdout)
