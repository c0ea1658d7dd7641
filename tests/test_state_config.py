"""DRV-R10: a state belongs to the config it was built under.

Every algorithm's state, spec form and fast form, carries its config; ``step`` under
another config is refused by rule, the state left as it was; the driver refuses such a
state when resumed, and the Spark checkpoint codec a blob of another config.
"""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest

from timealign import registry
from timealign.approximate_time import Config as ATConfig
from timealign.approximate_time import End as ATEnd
from timealign.approximate_time import Message, Pending
from timealign.approximate_time import initial as at_initial
from timealign.approximate_time import step as at_step
from timealign.drive import Checkpoint, Driver
from timealign.errors import InvalidInput
from timealign.event_time_batcher.model import Config as EBConfig
from timealign.event_time_batcher.model import Message as EBMessage
from timealign.rate_aware_batcher.model import Config as RBConfig
from timealign.rate_aware_batcher.model import Poll, Polled

# (algorithm, the config a state is built under, another config, inputs after which the
# state holds a message)
CASES: list[tuple[str, Any, Any, tuple[Any, ...]]] = [
    ("approximate_time", ATConfig(2, 5), ATConfig(1, 5), (Message(0, 10, "a"),)),
    ("event_time_batcher", EBConfig(100, 50), EBConfig(100, 60),
     (EBMessage("k", 10, 10, "a"),)),
    ("rate_aware_batcher", RBConfig(1.0), RBConfig(2.0),
     (Poll((Polled("detector_events", "d", 10, "a"),)),
      Poll((Polled("detector_events", "d", 20, "b"),)))),
]
IDS = [case[0] for case in CASES]


def _implementations(name: str) -> list[tuple[str, Any, Any]]:
    """(label, initial, step) of the rule text and of the fast path."""
    algorithm = registry.get(name)
    assert algorithm.machine.fast is not None
    return [("rule text", algorithm.machine.initial, algorithm.machine.step),
            ("fast path", algorithm.machine.fast.initial, algorithm.machine.fast.step)]


def _run(step: Any, config: Any, state: Any, items: tuple[Any, ...]) -> Any:
    for item in items:
        state, _ = step(config, state, item)
    return state


def _refused(step: Any, config: Any, state: Any, item: Any) -> InvalidInput:
    with pytest.raises(InvalidInput) as caught:
        step(config, state, item)
    return caught.value


@pytest.mark.parametrize(("name", "built", "other", "items"), CASES, ids=IDS)
def test_drv_r10_step_refuses_a_state_of_another_config(name: str, built: Any, other: Any,
                                                        items: tuple[Any, ...]) -> None:
    """DRV-R10: the rule text and the fast path refuse a state built under another config,
    naming the field and the rule; the state is untouched and goes on under its own."""
    algorithm = registry.get(name)
    assert algorithm.machine.fast is not None
    for label, initial, step in _implementations(name):
        state = _run(step, built, initial(built), items)
        before = algorithm.machine.fast.to_spec(state) if label == "fast path" else state
        for given in (items[-1], algorithm.machine.end(other)):
            error = _refused(step, other, state, given)
            assert (error.field, error.rule) == ("state", "DRV-R10"), label
        after = algorithm.machine.fast.to_spec(state) if label == "fast path" else state
        assert after == before and after.config is built, label
        # an equal config, another object, is the same config
        twin = attrs.evolve(built) if name != "approximate_time" else ATConfig(2, 5)
        assert twin is not built and twin == built
        _, outputs = step(twin, state, algorithm.machine.end(built))
        assert outputs, label  # the held message is reported, not lost


@pytest.mark.parametrize(("name", "built", "other", "items"), CASES, ids=IDS)
def test_drv_r10_states_carry_their_config(name: str, built: Any, other: Any,
                                           items: tuple[Any, ...]) -> None:
    """DRV-R10: ``initial`` binds the state to its config; the fast path's ``to_spec`` and
    ``from_spec`` keep it."""
    algorithm = registry.get(name)
    fast = algorithm.machine.fast
    assert fast is not None
    assert algorithm.machine.initial(built).config is built
    state = _run(fast.step, built, fast.initial(built), items)
    spec = fast.to_spec(state)
    assert spec.config is built
    assert fast.from_spec(spec).config is built
    error = _refused(fast.step, other, fast.from_spec(spec), items[-1])
    assert error.rule == "DRV-R10"


def test_drv_r10_issue_example_two_topic_state_one_topic_config() -> None:
    """DRV-R10: the issue's case through the Python API: a message held by a 2-topic state
    stepped with a 1-topic config used to vanish (no outcome, not even pending)."""
    two, one = ATConfig(2, 5), ATConfig(1, 5)
    state, outputs = at_step(two, at_initial(two), Message(0, 10, "held"))
    assert outputs == ()
    for item in (Message(0, 20, "next"), ATEnd()):
        error = _refused(at_step, one, state, item)
        assert (error.field, error.rule) == ("state", "DRV-R10")
        assert "another config" in str(error)
    _, pending = at_step(two, state, ATEnd())
    assert pending == (Pending("held"),)  # the state is untouched: nothing lost


@pytest.mark.parametrize(("name", "built", "other", "items"), CASES, ids=IDS)
def test_drv_r10_driver_refuses_a_resumed_state_of_another_config(
        name: str, built: Any, other: Any, items: tuple[Any, ...]) -> None:
    """DRV-R10: the driver refuses, when it is built, a checkpoint's state of another config
    (rather than failing, or losing a message, at a later row)."""
    algorithm = registry.get(name)
    state = _run(algorithm.machine.step, built, algorithm.machine.initial(built), items)
    with pytest.raises(InvalidInput) as caught:
        Driver.resume(algorithm, other, Checkpoint(state))
    assert (caught.value.field, caught.value.rule) == ("state", "DRV-R10")
    assert Driver.resume(algorithm, built, Checkpoint(state)).state is state


@pytest.mark.parametrize(("name", "built", "other", "items"), CASES, ids=IDS)
def test_drv_r10_checkpoint_decoded_under_another_config_is_refused(
        name: str, built: Any, other: Any, items: tuple[Any, ...]) -> None:
    """DRV-R10, SP-R12: the blob keeps its config's digest; decoded under another config it
    is refused by name (``state.config``); under its own, the state carries the codec's
    config; a blob without the digest (written before) decodes under the codec's config."""
    from timealign.spark.checkpoint_codec import StateCodec

    algorithm = registry.get(name)
    assert algorithm.machine.fast is not None
    running = algorithm.fast_path()
    state = _run(running.machine.step, built, running.machine.initial(built), items)
    codec = StateCodec.for_algorithm(algorithm, built)
    blob = codec.encode(Checkpoint(state), 0, ["a"])
    assert "config" not in json.loads(blob)["state"]["f"]  # the config itself is not stored
    with pytest.raises(InvalidInput) as caught:
        StateCodec.for_algorithm(algorithm, other).decode(blob)
    assert (caught.value.field, caught.value.rule) == ("state.config", "DRV-R10")
    checkpoint, _, _, _ = codec.decode(blob)
    assert checkpoint.state.config == built
    assert algorithm.machine.fast.to_spec(checkpoint.state) == algorithm.machine.fast.to_spec(state)
    body = json.loads(blob)
    del body["config"]
    older, _, _, _ = StateCodec.for_algorithm(algorithm, built).decode(json.dumps(body).encode())
    assert older.state.config == built  # the binding (SP-R24) vouched for the config
    with pytest.raises(InvalidInput) as caught:  # a state of another config is not written
        StateCodec.for_algorithm(algorithm, other).encode(Checkpoint(state), 0, ["a"])
    assert (caught.value.field, caught.value.rule) == ("state", "DRV-R10")


def test_drv_r10_sp_r12_a_blob_storing_a_state_config_is_damaged() -> None:
    """DRV-R10, SP-R12: a state's config is never stored in the blob (the binding holds it,
    the blob its digest); a blob whose state carries one is refused as damaged, not
    decoded into a state of a config nobody checked."""
    from timealign.spark.checkpoint_codec import StateCodec

    algorithm = registry.get("approximate_time")
    config = ATConfig(2, 5)
    codec = StateCodec.for_algorithm(algorithm, config)
    fast_initial = algorithm.fast_path().machine.initial
    body = json.loads(codec.encode(Checkpoint(fast_initial(config)), 0, []))
    body["state"]["f"]["config"] = {"c": "Config", "f": {"topics": 1}}
    with pytest.raises(InvalidInput) as caught:
        codec.decode(json.dumps(body).encode())
    assert (caught.value.field, caught.value.rule) == ("state.state", "SP-R12")
