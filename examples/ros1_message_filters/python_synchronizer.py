"""The ROS 1 *Python* ``message_filters.ApproximateTimeSynchronizer`` behind the conformance
protocol (spec/conformance.md), to see where it differs from the C++ policy (spec
approximate_time.md, AT-H6). Not run in CI: it is a different algorithm.

    apt-get install python3-message-filters        # Debian, ros_comm 1.15.15
    timealign conform approximate_time --target ros1 \\
        --cmd "/usr/bin/python3 examples/ros1_message_filters/python_synchronizer.py"

It has no age penalty and no lower bounds; its ``slop`` (seconds) stands in for the
maximum interval (``max_interval_duration`` in ns, the ROS 1 default when absent). No ROS
master is needed: rospy's clock is only marked initialized.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, TextIO

import message_filters
import rospy

DEFAULT_SLOP_NS = 2**31 * 10**9 - 1  # ros::DURATION_MAX, the C++ policy's default interval


class Stamped:
    """A message with ``header.stamp``, the only field the synchronizer reads."""

    class Header:
        def __init__(self, stamp: rospy.Time) -> None:
            self.stamp = stamp

    def __init__(self, ident: str, ns: int) -> None:
        self.id = ident
        self.header = Stamped.Header(rospy.Time(ns // 10**9, ns % 10**9))


def answer(trace: dict[str, Any]) -> dict[str, Any]:
    config = trace["config"]
    topics = config["topics"]
    count = len(topics) if isinstance(topics, list) else topics
    slop_ns = config.get("max_interval_duration")
    slop = (DEFAULT_SLOP_NS if slop_ns is None else slop_ns) / 1e9
    outputs: list[dict[str, Any]] = []
    current = 0

    def build() -> list[message_filters.SimpleFilter]:
        inputs = [message_filters.SimpleFilter() for _ in range(count)]
        sync = message_filters.ApproximateTimeSynchronizer(inputs, config["queue_size"], slop)
        sync.registerCallback(lambda *ms: outputs.append(
            {"input": current, "kind": "published", "ids": [m.id for m in ms]}))
        return inputs

    inputs = build()
    for current, item in enumerate(trace["inputs"]):  # noqa: B007 (read by the callback)
        if item["op"] == "end":  # a fresh synchronizer for the next run
            inputs = build()
            continue
        inputs[item["topic"]].signalMessage(Stamped(item["id"], item["stamp"]))
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
    rospy.rostime.set_rostime_initialized(True)
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(answer(json.loads(line))), file=channel, flush=True)


if __name__ == "__main__":
    main()
