"""Configuration, input validation, codecs, adapter rows and accounting (AT-R1, AT-R2,
AT-D17 to AT-D21)."""

from __future__ import annotations

import math

import pytest

from timealign import Grouped, InvalidInput, Record, Settled, run
from timealign.approximate_time import (
    ALGORITHM,
    Config,
    Dropped,
    End,
    Input,
    Message,
    Pending,
    Published,
    Warned,
    initial,
    invariants,
    step,
)
from timealign.approximate_time.model import DEFAULT_MAX_INTERVAL
from timealign.drive import drive


def test_at_r1_defaults_and_names() -> None:
    """AT-R1, AT-D14, AT-D21: defaults and topic names."""
    config = Config(topics=3, queue_size=5)
    assert config.topic_names == ("0", "1", "2")
    assert config.age_penalty == 0.1 and config.max_interval_duration == DEFAULT_MAX_INTERVAL
    assert config.inter_message_lower_bounds == (0, 0, 0) and config.arithmetic == "ros2"
    named = Config(topics=["cam", "imu"], queue_size=1)
    assert named.topics == 2 and named.topic_names == ("cam", "imu")
    assert ALGORITHM.codec.config_to_json(named)["topics"] == ["cam", "imu"]
    assert ALGORITHM.codec.config_from_json(ALGORITHM.codec.config_to_json(named)) == named


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"topics": 0}, "topics"),
        ({"topics": []}, "topics"),
        ({"topics": ["a", "a"]}, "topics"),
        ({"topics": ["a", ""]}, "topics"),
        ({"topics": True}, "topics"),
        ({"queue_size": 0}, "queue_size"),
        ({"queue_size": 1.0}, "queue_size"),
        ({"age_penalty": math.nan}, "age_penalty"),
        ({"age_penalty": math.inf}, "age_penalty"),
        ({"age_penalty": -0.1}, "age_penalty"),
        ({"age_penalty": "0.1"}, "age_penalty"),
        ({"max_interval_duration": -1}, "max_interval_duration"),
        ({"max_interval_duration": 2**63}, "max_interval_duration"),
        ({"inter_message_lower_bounds": [1]}, "inter_message_lower_bounds"),
        ({"inter_message_lower_bounds": [1, -1]}, "inter_message_lower_bounds[1]"),
        ({"arithmetic": "float64"}, "arithmetic"),
    ],
)
def test_at_r1_bad_config_names_field_and_rule(kwargs: dict[str, object], field: str) -> None:
    """AT-R1, AT-D17: every bad config value raises InvalidInput naming field and rule."""
    arguments: dict[str, object] = {"topics": 2, "queue_size": 3, **kwargs}
    with pytest.raises(InvalidInput) as caught:
        Config(**arguments)  # type: ignore[arg-type]
    assert caught.value.field == field and caught.value.rule == "AT-R1"


def test_at_r1_json_nulls_and_unknown_keys() -> None:
    config = ALGORITHM.codec.config_from_json({"topics": 2, "queue_size": 3, "age_penalty": None,
                                         "max_interval_duration": None,
                                         "inter_message_lower_bounds": None})
    assert config == Config(2, 3)
    with pytest.raises(InvalidInput, match="unknown"):
        ALGORITHM.codec.config_from_json({"topics": 2, "queue_size": 3, "penalty": 1})
    with pytest.raises(InvalidInput):
        ALGORITHM.codec.config_from_json({"topics": 2})


@pytest.mark.parametrize(
    ("message", "field"),
    [
        (Message(2, 0, "x"), "topic"),
        (Message(-1, 0, "x"), "topic"),
        (Message(0, -1, "x"), "stamp"),
        (Message(0, 2**63, "x"), "stamp"),
        (Message(0, True, "x"), "stamp"),
        (Message(0, 1.0, "x"), "stamp"),  # type: ignore[arg-type]
        (Message(0, 0, ""), "id"),
        (Message(0, 0, 7), "id"),  # type: ignore[arg-type]
        ("not a message", "input"),
    ],
)
def test_at_r2_bad_input_rejected_state_unchanged(message: object, field: str) -> None:
    """AT-R2, AT-D17: a bad input raises before anything changes; the old state goes on."""
    config = Config(2, 3)
    state, _ = step(config, initial(config), Message(0, 5, "a"))
    with pytest.raises(InvalidInput) as caught:
        step(config, state, message)  # type: ignore[arg-type]
    assert caught.value.field == field and caught.value.rule == "AT-R2"
    _, outputs = step(config, state, Message(1, 5, "b"))
    assert outputs == (Published((Message(0, 5, "a"), Message(1, 5, "b"))),)


def test_at_r2_json_inputs() -> None:
    item = ALGORITHM.codec.input_from_json({"op": "message", "topic": 1, "stamp": 4, "id": "x"})
    assert item == Message(1, 4, "x")
    assert ALGORITHM.codec.input_to_json(item) == {"op": "message", "topic": 1, "stamp": 4,
                                                   "id": "x"}
    assert ALGORITHM.codec.input_from_json({"op": "end"}) == End()
    with pytest.raises(InvalidInput):
        ALGORITHM.codec.input_from_json({"op": "tick"})
    with pytest.raises(InvalidInput):
        ALGORITHM.codec.input_from_json({"op": "message", "topic": 1})


def test_at_d21_records_map_topic_names() -> None:
    """AT-D21: rows name topics; unknown names are rejected."""
    config = Config(["cam", "imu"], 4)
    rows = [Record("c1", "cam", 10), Record("i1", "imu", 10)]
    assert list(ALGORITHM.feeding.inputs_from_records(config, rows)) == [
        Message(0, 10, "c1"), Message(1, 10, "i1")]
    with pytest.raises(InvalidInput) as caught:
        list(ALGORITHM.feeding.inputs_from_records(config, [Record("x", "lidar", 1)]))
    assert caught.value.rule == "AT-D21"


def test_at_d19_repeated_ids_are_reported_by_at_i2_not_remembered() -> None:
    """AT-D19, AT-I2: the row mapping keeps no id memory; the finished run reports reuse."""
    config = Config(["cam", "imu"], 4)
    rows = [Record("c1", "cam", 10), Record("c1", "imu", 10)]
    inputs = [*ALGORITHM.feeding.inputs_from_records(config, rows), End()]
    assert inputs[:2] == [Message(0, 10, "c1"), Message(1, 10, "c1")]
    _, outputs = run(ALGORITHM, config, inputs)
    problems = invariants.single_outcome(config, inputs, outputs)
    assert problems and any("c1" in problem for problem in problems)


def test_at_d18_d20_accounting() -> None:
    """AT-D18, AT-D20, AT-R18: every output kind accounts as documented."""
    a, b = Message(0, 3, "a"), Message(1, 7, "b")
    assert ALGORITHM.accounting.account(Published((a, b))) == Grouped(("a", "b"), 3, 7)
    assert ALGORITHM.accounting.account(Dropped("a", "superseded")) == Settled(
        "a", "dropped", "superseded")
    assert ALGORITHM.accounting.account(Pending("a")) == Settled("a", "pending", "end_of_input")
    assert ALGORITHM.accounting.account(Warned(0, "out_of_order")) is None
    assert ALGORITHM.codec.output_to_json(Warned(0, "out_of_order")) == {
        "kind": "warning", "topic": 0, "reason": "out_of_order"}


def test_at_d20_driver_accounts_every_message() -> None:
    """AT-D20, AT-I2: driving rows through the generic driver settles every message."""
    config = Config(["cam", "imu"], 2)
    rows = [Record(f"m{k}", ("cam", "imu")[k % 3 == 0], k) for k in range(30)]
    settled: list[str] = []
    for _, _, outputs in drive(ALGORITHM, config, rows):
        for output in outputs:
            account = ALGORITHM.accounting.account(output)
            if isinstance(account, Grouped):
                settled.extend(account.ids)
            elif isinstance(account, Settled):
                settled.append(account.id)
    assert sorted(settled) == sorted(r.id for r in rows)


def test_at_r17_end_restarts_fresh() -> None:
    """AT-R17: End reports held messages and returns the initial state."""
    config = Config(2, 3)
    trace: list[Input] = [Message(0, 1, "a"), Message(0, 0, "b"), End()]
    state, outputs = run(ALGORITHM, config, trace)
    assert state == initial(config)
    assert [o for _, o in outputs] == [Warned(0, "out_of_order"), Pending("a"), Pending("b")]
