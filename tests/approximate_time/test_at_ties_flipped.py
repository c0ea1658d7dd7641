"""AT-R6's ``ties-flipped`` variant (CF-R41) is the misreading of a planted one-line bug in
the real ROS 2 policy (ros2/message_filters@361e42c7,
``include/message_filters/sync_policies/approximate_time.hpp``, ``checkBoundary``, its
``<`` made ``<=``; ``make planted``, proofs/planted_upstreams.py). That one scan computes
the start and, negated, the end, so the one comparison flips both ties; each single flip
answers as the planted policy did on some of its traces only, so without ``ties-flipped``
its one bug would be diagnosed as two."""

from __future__ import annotations

from typing import Any

from timealign import registry
from timealign.algorithm import run_json
from timealign.conformance import catalogue

JSON = dict[str, Any]


def _message(ident: str, topic: int, stamp: int) -> JSON:
    return {"op": "message", "topic": topic, "stamp": stamp, "id": ident}


#: Two of the planted policy's shrunk differences, with what it published (the `ros2`
#: target observes published sets only): a tie at the start (3 topics) and at the end.
TIE_AT_START: tuple[JSON, list[JSON], list[JSON]] = (
    {"topics": 3, "queue_size": 10, "age_penalty": 0.0},
    [_message("a0", 0, 0), _message("b1", 1, 2), _message("c2", 2, 0), _message("c4", 2, 4)],
    [{"input": 3, "kind": "published", "ids": ["a0", "b1", "c2"]}])
TIE_AT_END: tuple[JSON, list[JSON], list[JSON]] = (
    {"topics": 2, "queue_size": 1, "age_penalty": 0.0},
    [_message("m0", 0, 0), _message("m1", 0, 0), _message("m2", 1, 0)],
    [])


def _published(variants: list[str], config: JSON, inputs: list[JSON]) -> list[JSON]:
    outputs = catalogue.run_variants("approximate_time", variants, config, inputs)
    return [o for o in outputs if o["kind"] == "published"]


def test_at_r6_ties_flipped_answers_as_the_planted_ros2_policy_cf_r41() -> None:
    """On both traces ``ties-flipped`` publishes what the planted policy published, and
    the rule text does not (so the variant is what the difference is)."""
    reference = registry.get("approximate_time")
    for config, inputs, answered in (TIE_AT_START, TIE_AT_END):
        assert _published(["ties-flipped"], config, inputs) == answered
        assert [o for o in run_json(reference, config, inputs)
                if o["kind"] == "published"] != answered


def test_at_r6_neither_single_flip_explains_both_traces_cf_r41() -> None:
    """``tie-start-highest`` answers as the planted policy on the start tie only,
    ``tie-end-lowest`` on the end tie only: each alone explains part of the bug."""
    start_config, start_inputs, start_answer = TIE_AT_START
    end_config, end_inputs, end_answer = TIE_AT_END
    assert _published(["tie-start-highest"], start_config, start_inputs) == start_answer
    assert _published(["tie-start-highest"], end_config, end_inputs) != end_answer
    assert _published(["tie-end-lowest"], end_config, end_inputs) == end_answer
    assert _published(["tie-end-lowest"], start_config, start_inputs) != start_answer
