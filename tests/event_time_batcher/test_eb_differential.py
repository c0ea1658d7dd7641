"""Differential test: the reference against the literal transcription of the note (a second,
independent, mutable model), output for output, on generated runs and on every shipped
vector (EB-R5 to EB-R16)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cases import generate
from tests.event_time_batcher.support import literal, outputs
from timealign import vectors
from timealign.algorithm import run
from timealign.event_time_batcher import ALGORITHM, Config, Flush, Input, Message, Tick
from timealign.event_time_batcher.codec import config_from_json, input_from_json
from timealign.event_time_batcher.invariants import check

STEP = st.tuples(
    st.sampled_from(["message", "message", "message", "tick", "flush"]),
    st.sampled_from("abc"),
    st.integers(0, 12),  # processing time advance
    st.integers(-25, 6),  # event time offset from processing time
)


@st.composite
def runs(draw: st.DrawFn) -> tuple[Config, list[Input]]:
    config = Config(draw(st.integers(0, 30)), draw(st.integers(0, 20)), draw(st.integers(0, 5)))
    now = 0
    inputs: list[Input] = []
    for n, (op, key, advance, offset) in enumerate(draw(st.lists(STEP, max_size=40))):
        now += advance
        if op == "message":
            inputs.append(Message(key, max(0, now + offset), now, f"{key}{n}"))
        elif op == "tick":
            inputs.append(Tick(now))
        else:
            inputs.append(Flush())
    return config, [*inputs, Flush()]


@given(runs())
def test_eb_r13_reference_equals_literal_model(case: tuple[Config, list[Input]]) -> None:
    """EB-R13 and the whole machine: identical outputs at identical inputs; invariants hold."""
    config, inputs = case
    assert outputs(config, inputs) == literal(config, inputs)
    assert check(config, inputs, run(ALGORITHM, config, inputs)[1]) == []


def test_eb_r12_shipped_vectors_agree_with_literal_model() -> None:
    """EB-R12 and every hazard vector: the literal model reproduces the shipped suite."""
    compared = 0
    for vector in generate.cases("event_time_batcher"):
        if any(o["kind"] == "error" for o in vectors.reference_outputs(vector)):
            continue  # refused inputs: test_eb_rules and test_eb_codec
        config = config_from_json(vector.config)
        inputs = [input_from_json(raw) for raw in vector.inputs]
        assert outputs(config, inputs) == literal(config, inputs), vector.name
        compared += 1
    assert compared >= 20
