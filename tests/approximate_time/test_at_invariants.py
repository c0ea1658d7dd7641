"""The executable invariants: they hold where the spec says, they catch broken outputs,
and the hazards and ROS-wiki counterexamples of the spec are real (AT-I*, AT-H*)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from timealign import run
from timealign.approximate_time import (
    ALGORITHM,
    Config,
    Dropped,
    End,
    Input,
    Message,
    Output,
    Pending,
    Published,
    Warned,
)
from timealign.approximate_time import invariants as inv
from timealign.approximate_time.strategies import at_runs as runs

M = Message


def outputs_of(config: Config, inputs: Sequence[Input]) -> list[tuple[int, Output]]:
    return list(run(ALGORITHM, config, inputs)[1])


def published(outputs: Sequence[tuple[int, Output]]) -> list[tuple[str, ...]]:
    return inv.published_ids(outputs)


@settings(max_examples=300)
@given(runs(max_inputs=16))
def test_at_invariants_hold_on_random_runs(run_: tuple[Config, list[Input]]) -> None:
    """AT-I1, AT-I2, AT-I3, AT-I4, AT-I5, AT-I6, AT-I9, AT-I10 on closed random runs."""
    config, inputs = run_
    inputs = [*inputs, End()]
    assert inv.check(config, inputs, outputs_of(config, inputs)) == []


@st.composite
def optimality_runs(draw: st.DrawFn) -> tuple[Config, list[Input]]:
    n = draw(st.integers(2, 3))
    config = Config(n, 50, age_penalty=0.0)
    clock = [0] * n
    inputs: list[Input] = []
    for k in range(draw(st.integers(1, 10))):
        topic = draw(st.integers(0, n - 1))
        clock[topic] += draw(st.sampled_from([0, 1, 2, 3, 7]))
        inputs.append(M(topic, clock[topic], f"m{k}"))
    return config, [*inputs, End()]


@settings(max_examples=300)
@given(optimality_runs())
def test_at_i6_optimality_holds_under_its_conditions(run_: tuple[Config, list[Input]]) -> None:
    """AT-I6: age_penalty 0, in-order, no overflow, no interval limit -> optimal sets."""
    config, inputs = run_
    assert inv.optimality_applies(config, inputs)
    assert inv.optimal_sets(config, inputs, outputs_of(config, inputs)) == []


def test_at_h3_too_large_bound_breaks_optimality() -> None:
    """AT-H3, AT-I6: with bounds [3, 3] {m1, m0} (spread 1) is published although
    {m2, m0} (spread 0) is contiguous; with bounds 0 the optimal set is published."""
    inputs: list[Input] = [M(1, 2, "m0"), M(0, 1, "m1"), M(0, 2, "m2"), End()]
    wrong = Config(2, 50, age_penalty=0.0, inter_message_lower_bounds=[3, 3])
    outputs = outputs_of(wrong, inputs)
    assert published(outputs) == [("m1", "m0")]
    assert not any(isinstance(o, Warned) for _, o in outputs)
    assert not inv.optimality_applies(wrong, inputs)  # the bound is invalid for topic 0
    problems = inv.optimal_sets(Config(2, 50, age_penalty=0.0), inputs, outputs)
    assert problems and "spans 1" in problems[0]
    right = Config(2, 50, age_penalty=0.0)
    assert published(outputs_of(right, inputs)) == [("m2", "m0")]


def test_at_h4_out_of_order_sets_cross() -> None:
    """AT-H4, AT-I3: out-of-order stamps make a later set earlier on every topic; the
    predicate skips such input, and flags the same sets as a crossing on in-order data."""
    config = Config(2, 20)
    inputs: list[Input] = [M(1, 2, "m0"), M(0, 2, "m1"), M(0, 0, "m2"), M(1, 0, "m3"), End()]
    outputs = outputs_of(config, inputs)
    assert published(outputs) == [("m1", "m0"), ("m2", "m3")]
    assert not inv.in_order(inputs)
    assert inv.sets_in_order(config, inputs, outputs) == []


def test_at_h5_overflow_depends_on_arrival_order() -> None:
    """AT-H5, AT-I8: with queue_size 1 two interleavings publish different sets."""
    config = Config(2, 1)
    first: list[Input] = [M(0, 0, "a0"), M(0, 0, "a1"), M(1, 0, "b0"), End()]
    second: list[Input] = [M(1, 0, "b0"), M(0, 0, "a0"), M(0, 0, "a1"), End()]
    a, b = outputs_of(config, first), outputs_of(config, second)
    assert published(a) == [("a1", "b0")] and published(b) == [("a0", "b0")]
    assert inv.interleavings_agree(a, b) != []


def test_at_h1_livelock_never_publishes_again() -> None:
    """AT-H1: after topic N-1 overflows with equal stamps nothing is ever published."""
    config = Config(2, 1)
    inputs: list[Input] = [M(1, 0, "b0"), M(1, 0, "b1")]
    for k in range(2, 40):
        inputs.append(M(k % 2, 0, f"{'ab'[k % 2]}{k}"))
    outputs = outputs_of(config, [*inputs, End()])
    assert published(outputs) == []
    reasons = {o.reason for _, o in outputs if isinstance(o, Dropped)}
    assert reasons == {"queue_overflow", "pivot_refused"}
    recovering = [M(0, 0, "a0"), M(0, 0, "a1"), M(1, 0, "b0")]
    assert published(outputs_of(config, recovering)) == [("a1", "b0")]


@st.composite
def streams(draw: st.DrawFn) -> tuple[int, list[list[int]], list[int], int]:
    n = draw(st.integers(2, 3))
    per_topic = []
    gaps = []
    for _ in range(n):
        gap = draw(st.sampled_from([0, 1, 2, 4]))
        gaps.append(gap)
        stamps, clock = [], draw(st.integers(0, 5))
        for _ in range(draw(st.integers(0, 5))):
            stamps.append(clock)
            clock += gap + draw(st.sampled_from([0, 0, 1, 3, 8]))
        per_topic.append(stamps)
    return n, per_topic, gaps, draw(st.integers(0, 2**32))


def interleave(per_topic: list[list[int]], seed: int) -> list[Input]:
    order = [k for k, stamps in enumerate(per_topic) for _ in stamps]
    random.Random(seed).shuffle(order)
    position = [0] * len(per_topic)
    inputs: list[Input] = []
    for topic in order:
        stamp = per_topic[topic][position[topic]]
        inputs.append(M(topic, stamp, f"{topic}.{position[topic]}"))
        position[topic] += 1
    return [*inputs, End()]


@settings(max_examples=300)
@given(streams(), st.sampled_from([0.0, 0.1, 0.7]))
def test_at_i7_valid_bounds_change_only_latency(
        data: tuple[int, list[list[int]], list[int], int], penalty: float) -> None:
    """AT-I7: valid lower bounds publish a superset prefix, never later."""
    n, per_topic, gaps, seed = data
    inputs = interleave(per_topic, seed)
    with_bounds = Config(n, 50, age_penalty=penalty, inter_message_lower_bounds=gaps)
    without = Config(n, 50, age_penalty=penalty)
    problems = inv.bounds_change_only_latency(
        with_bounds, inputs, outputs_of(with_bounds, inputs), outputs_of(without, inputs))
    assert problems == []


@settings(max_examples=300)
@given(streams(), st.integers(0, 2**32), st.sampled_from([0.0, 0.1, 0.7]))
def test_at_i8_interleavings_publish_prefix_compatible_sets(
        data: tuple[int, list[list[int]], list[int], int], other: int, penalty: float) -> None:
    """AT-I8: large queues, in-order stamps: any two interleavings agree up to a prefix."""
    n, per_topic, _, seed = data
    config = Config(n, 50, age_penalty=penalty)
    first, second = interleave(per_topic, seed), interleave(per_topic, other)
    assert inv.interleavings_agree(outputs_of(config, first), outputs_of(config, second)) == []


def test_at_invariants_catch_broken_outputs() -> None:
    """The predicates report violations in another implementation's (broken) outputs:
    AT-I1, AT-I2, AT-I3, AT-I4, AT-I5, AT-I9, AT-I10."""
    config = Config(2, 10, max_interval_duration=5)
    inputs: list[Input] = [M(0, 0, "a0"), M(1, 0, "b0"), M(0, 9, "a1"), M(1, 1, "b1"), End()]
    a0, b0, a1, b1 = (m for m in inputs if isinstance(m, Message))
    broken: list[tuple[int, Output]] = [
        (1, Published((b0, a0))),  # wrong topic order: AT-I1
        (1, Published((a0, b0))),  # a0 twice: AT-I2
        (0, Pending("b1")),  # before its input: AT-I10
        (3, Published((a1, b1))),  # spread 8 > 5: AT-I4
        (3, Published((a0, b0))),  # goes back: AT-I5 and AT-I3
        (3, Warned(0, "out_of_order")),  # topic 0 warned at a topic-1 input: AT-I9
    ]
    found = " ".join(inv.check(config, inputs, broken))
    for rule in ("AT-I1", "AT-I2", "AT-I3", "AT-I4", "AT-I5", "AT-I9", "AT-I10"):
        assert rule in found, rule
    missing = inv.single_outcome(config, inputs, [(1, Published((a0, b0)))])
    assert any("no outcome" in p for p in missing)


def test_at_i6_predicate_catches_a_non_optimal_set() -> None:
    """AT-I6: the brute force flags a set that is contiguous but not minimal, and a set
    that is not contiguous."""
    config = Config(2, 10, age_penalty=0.0)
    inputs: list[Input] = [M(0, 0, "a0"), M(1, 6, "b6"), M(0, 10, "a10"), M(0, 30, "a30"),
                           End()]
    a0, b6, _, a30 = (m for m in inputs if isinstance(m, Message))
    assert "spans 6" in inv.optimal_sets(config, inputs, [(2, Published((a0, b6)))])[0]
    skipping: list[Input] = [M(0, 0, "x0"), M(1, 1, "y1"), M(0, 10, "x10"), M(1, 6, "y6"),
                             End()]
    x10, y6 = skipping[2], skipping[3]
    assert isinstance(x10, Message) and isinstance(y6, Message)
    problems = inv.optimal_sets(config, skipping, [(3, Published((x10, y6)))])
    assert "not contiguous" in problems[0]
    far = inv.optimal_sets(config, inputs, [(3, Published((a30, b6)))])
    assert far and "spans 24" in far[0]


def test_at_decode_outputs_from_vector_form() -> None:
    """AT-I1, AT-I2: the predicates run on vector-form outputs of any implementation,
    decoded by ``ALGORITHM.codec.output_from_json`` (ids resolved to the run's messages)."""
    inputs: list[Input] = [M(0, 0, "a0"), M(1, 0, "b0"), End()]
    raw: list[dict[str, Any]]  # mixed values: the vector form
    raw = [{"input": 1, "kind": "published", "ids": ["a0", "b0"]},
           {"input": 2, "kind": "dropped", "id": "zz", "reason": "superseded"},
           {"input": 2, "kind": "warning", "topic": 0, "reason": "out_of_order"},
           {"input": 2, "kind": "pending", "id": "a0"},
           {"input": 2, "kind": "error", "field": "x", "rule": "AT-R2"}]
    assert ALGORITHM.codec.output_from_json is not None
    decoded = [(o["input"], ALGORITHM.codec.output_from_json(o, inputs)) for o in raw
               if o["kind"] != "error"]
    assert decoded[0] == (1, Published((M(0, 0, "a0"), M(1, 0, "b0"))))
    assert isinstance(decoded[3][1], Pending) and len(decoded) == 4
    problems = inv.check(Config(2, 5), inputs, decoded)
    assert any("unknown id 'zz'" in p for p in problems)
    assert any("settled twice" in p for p in problems)
