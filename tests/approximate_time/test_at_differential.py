"""Differential tests: the fast step that ALGORITHM runs against the rule text, and both
against the literal §17 transcription (literal.py), output for output, on random inputs
(every AT-R rule of add/process/publish at once)."""

from __future__ import annotations

from hypothesis import given, settings

from tests.approximate_time.differential_support import as_tuple, literal_for
from timealign.approximate_time import (
    ALGORITHM,
    Config,
    End,
    Input,
    Message,
    fast,
    initial,
    machine,
)
from timealign.conformance.strategies import at_runs as runs


def compare(config: Config, inputs: list[Input]) -> None:
    """ALGORITHM.step (fast.py) against the rule text (machine.py), state for state and
    output for output, and both against the literal model."""
    model = literal_for(config)
    state = rule_state = initial(config)
    for index, item in enumerate(inputs):
        state, outputs = ALGORITHM.step(config, state, item)
        rule_state, rule_outputs = machine.step(config, rule_state, item)
        assert outputs == rule_outputs and state == rule_state, f"input {index}: {item}"
        if isinstance(item, End):
            expected = model.end()
        else:
            assert isinstance(item, Message)
            expected = model.add(item.topic, item.stamp, item.id)
        assert [as_tuple(o) for o in outputs] == expected, f"input {index}: {item}"


@settings(max_examples=400)
@given(runs())
def test_at_reference_equals_literal_transcription(run: tuple[Config, list[Input]]) -> None:
    """AT-R3 to AT-R17: same outputs, same input, as the literal pseudocode."""
    compare(*run)


@settings(max_examples=100)
@given(runs(max_topics=4, max_inputs=40))
def test_at_reference_equals_literal_on_longer_runs(run: tuple[Config, list[Input]]) -> None:
    compare(*run)


def test_at_algorithm_runs_the_fast_transcription() -> None:
    assert ALGORITHM.step is fast.step
