"""The batcher's edges: JSON codec, registry entry, adapter hooks and accounting."""

from __future__ import annotations

import pytest

from timealign import InvalidInput, registry
from timealign.algorithm import Grouped, Record, Settled
from timealign.event_time_batcher import (
    ALGORITHM,
    Batch,
    Config,
    Dropped,
    Flush,
    Message,
    Rejected,
    Tick,
    Timer,
)
from timealign.event_time_batcher.codec import output_from_json

C = Config(50, 20, 0)


def test_registered_under_its_name() -> None:
    assert registry.get("event_time_batcher") is ALGORITHM
    assert ALGORITHM.name == "event_time_batcher"


def test_eb_r1_config_json() -> None:
    raw = {"batching_window": 50, "max_message_delay": 20, "message_leap_limit": 3}
    assert ALGORITHM.codec.config_to_json(ALGORITHM.codec.config_from_json(raw)) == raw
    assert ALGORITHM.codec.config_from_json({"batching_window": 5, "max_message_delay": 2}) == \
        Config(5, 2, 0)
    for bad, field in (({"max_message_delay": 2}, "batching_window"),
                       ({"batching_window": 5, "max_message_delay": 2, "window": 1}, "config")):
        with pytest.raises(InvalidInput) as caught:
            ALGORITHM.codec.config_from_json(bad)
        assert (caught.value.field, caught.value.rule) == (field, "EB-R1")


@pytest.mark.parametrize("item", [Message("a", 100, 120, "a1"), Tick(7), Flush()])
def test_eb_r2_inputs_round_trip(item: Message | Tick | Flush) -> None:
    assert ALGORITHM.codec.input_from_json(ALGORITHM.codec.input_to_json(item)) == item


@pytest.mark.parametrize(("raw", "field"), [
    ({"op": "message", "at": 1, "key": "a", "event_time": 1}, "id"),
    ({"op": "message", "at": "1", "key": "a", "event_time": 1, "id": "x"}, "at"),
    ({"op": "tick"}, "at"), ({"op": "pause"}, "op"), ({}, "op"),
])
def test_eb_r2_bad_json_inputs_name_the_field(raw: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        ALGORITHM.codec.input_from_json(raw)
    assert (caught.value.field, caught.value.rule) == (field, "EB-R2")


@pytest.mark.parametrize("output", [Batch(1, 2, ("a", "b")), Batch(3, 3, ()), Timer(9),
                                    Rejected("a", "too_old"), Dropped("b", "overwritten")])
def test_outputs_round_trip_and_account(output: Batch | Timer | Rejected | Dropped) -> None:
    raw = ALGORITHM.codec.output_to_json(output)
    assert ALGORITHM.codec.output_from_json is not None
    assert output_from_json(raw) == output == ALGORITHM.codec.output_from_json(raw, [])
    account = ALGORITHM.accounting.account(output)
    if isinstance(output, Batch):
        assert account == Grouped(output.ids, output.start, output.end)
        assert raw == {"kind": "batch", "start": output.start, "end": output.end,
                       "ids": list(output.ids)}
    elif isinstance(output, Timer):
        assert account is None and ALGORITHM.feeding.timer_of(output) == output.at
    elif isinstance(output, Rejected):
        assert account == Settled(output.id, "rejected", output.reason)
    else:
        assert account == Settled(output.id, "dropped", output.reason)
    with pytest.raises(InvalidInput):
        output_from_json({"kind": "error"})


def test_adapter_hooks() -> None:
    rows = [Record("a1", "a", 100, 120), Record("b1", "b", 101, 121)]
    assert list(ALGORITHM.feeding.inputs_from_records(C, rows)) == [
        Message("a", 100, 120, "a1"), Message("b", 101, 121, "b1")]
    assert ALGORITHM.feeding.clock_of(Message("a", 1, 5, "x")) == 5
    assert ALGORITHM.feeding.clock_of(Tick(6)) == 6 and ALGORITHM.feeding.clock_of(Flush()) is None
    assert ALGORITHM.feeding.tick is not None and ALGORITHM.feeding.tick(4) == Tick(4)
    assert ALGORITHM.machine.end(C) == Flush()
    assert ALGORITHM.feeding.timer_of(Batch(1, 2, ())) is None


def test_package_docstring_example_runs() -> None:
    """The example in the package docstring (EB-R8, EB-R14) is executable and right."""
    import doctest

    import timealign.event_time_batcher as package

    result = doctest.testmod(package)
    assert result.attempted > 0 and result.failed == 0
