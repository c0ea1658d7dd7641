"""Differential tests: the fast path (``ALGORITHM.machine.fast``) against the rule text that
ALGORITHM runs, and both against the literal §17 transcription (literal_model.py), output for
output, on random inputs (every AT-R rule of add/process/publish at once)."""

from __future__ import annotations

from hypothesis import given, settings

from tests.approximate_time.support import as_tuple, literal_for
from timealign.approximate_time import (
    ALGORITHM,
    Config,
    End,
    Input,
    Message,
    fast,
    machine,
)
from timealign.approximate_time.strategies import at_runs as runs
from timealign.lockstep import Lockstep


def compare(config: Config, inputs: list[Input]) -> None:
    """The fast path (fast.py) against the rule text (machine.py), state for state and
    output for output (``Lockstep``), and both against the literal model."""
    model = literal_for(config)
    run = Lockstep(ALGORITHM, config)
    for index, item in enumerate(inputs):
        outputs = run.step(item)
        if isinstance(item, End):
            expected = model.end()
        else:
            assert isinstance(item, Message)
            expected = model.add(item.topic, item.stamp, item.id)
        assert [as_tuple(o) for o in outputs] == expected, f"input {index}: {item}"


@settings(max_examples=400)
@given(runs())
def test_at_reference_equals_literal_transcription(run: tuple[Config, list[Input]]) -> None:
    """AT-R3 to AT-R17 (AT-R3, AT-R4, AT-R5, AT-R6, AT-R7, AT-R8, AT-R9, AT-R10, AT-R11,
    AT-R12, AT-R13, AT-R14, AT-D23, AT-R17): same outputs, same input, as the literal
    pseudocode, and the fast path equal to the rule text state for state."""
    compare(*run)


@settings(max_examples=100)
@given(runs(max_topics=4, max_inputs=40))
def test_at_reference_equals_literal_on_longer_runs(run: tuple[Config, list[Input]]) -> None:
    compare(*run)


def test_at_algorithm_runs_the_rule_text_and_registers_the_fast_path() -> None:
    """ALGORITHM (what the registry, replay and the vectors run) is machine.py; fast.py is
    reached only through ALGORITHM.machine.fast."""
    assert ALGORITHM.machine.step is machine.step
    assert ALGORITHM.machine.fast is not None and ALGORITHM.machine.fast.step is fast.step
    assert ALGORITHM.fast_path().machine.step is fast.step
