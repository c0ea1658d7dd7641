"""The ROS 2 distributions' targets (AT-D22, CF-R18): Humble and Jazzy run the nine-slot
policy, two to nine topics; rolling the variadic one. The stand-in agreement on each target
is ``test_cf_targets.py`` (CF-I3); this checks the domain itself."""

from __future__ import annotations

import pytest

from tests.conformance.standin import command
from timealign.approximate_time.traces import TARGETS
from timealign.conformance import Command, check
from timealign.vectors import Vector

TRACE = ({"op": "message", "topic": 0, "stamp": 5, "id": "a"},)


@pytest.mark.parametrize("name", ["ros2-humble", "ros2-jazzy"])
def test_nine_slot_targets_keep_two_to_nine_topics_at_d22(name: str) -> None:
    """AT-D22: the nine-slot targets say why a one-topic, a ten-topic or a ros1 trace lies
    outside them, and take two and nine topics; rolling's ``ros2`` takes one topic."""
    outside = TARGETS[name].outside
    assert outside({"topics": 1, "queue_size": 2}, TRACE) == \
        "one topic: the nine-slot policy takes at least two (AT-D22)"
    assert outside({"topics": 10, "queue_size": 2}, TRACE) == \
        "more than nine topics: the nine-slot policy has nine (AT-D22)"
    assert outside({"topics": ["x", "y"], "queue_size": 2, "arithmetic": "ros1"}, TRACE) == \
        "ros1 arithmetic (AT-R16)"
    assert outside({"topics": 2, "queue_size": 2}, TRACE) is None
    assert outside({"topics": [str(k) for k in range(9)], "queue_size": 2}, TRACE) is None
    assert TARGETS["ros2"].outside({"topics": 1, "queue_size": 2}, TRACE) is None


def test_humble_stand_in_refuses_one_topic_and_the_target_skips_it_at_d22() -> None:
    """AT-D22, CF-R18: a one-topic vector is skipped under ``--target ros2-humble`` (with
    its reason) and sent under ``--target ros2``, where rolling's policy takes it; the
    Humble stand-in refuses it when sent without a target."""
    single = Vector(algorithm="approximate_time", name="single", inputs=TRACE,
                    config={"topics": 1, "queue_size": 2, "age_penalty": 0.0})
    with Command(command("ros2-humble")) as humble:
        report = check("approximate_time", humble, vectors=[single], target="ros2-humble")
        [source] = report.sources
        assert (source.run, source.skipped) == (
            0, {"one topic: the nine-slot policy takes at least two (AT-D22)": 1})
        untargeted = check("approximate_time", humble, vectors=[single])
        assert untargeted.sources[0].refused == 1
    with Command(command("ros2")) as rolling:
        report = check("approximate_time", rolling, vectors=[single], target="ros2")
        assert report.ok and report.sources[0].run == 1, report.text()
