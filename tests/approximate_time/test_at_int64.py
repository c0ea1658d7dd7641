"""ApproximateTime's derived values stay within int64 (AT-R20, AT-D24, DRV-D9; issue 30
part 6): a virtual time (a stamp + its topic's lower bound) past 2**63 - 1 refuses the
message, in the rule text and the fast path alike; nothing emitted is derived, so even the
most extreme config emits only its inputs' stamps.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from timealign import registry
from timealign.approximate_time import ALGORITHM, Config, End, Message, fast
from timealign.approximate_time.machine import initial, step
from timealign.cli import main
from timealign.errors import InvalidInput
from timealign.lockstep import Lockstep

TOP = 2**63 - 1
IMPLEMENTATIONS = [("rule text", initial, step), ("fast path", fast.initial, fast.step)]


@pytest.mark.parametrize(("label", "start", "go"), IMPLEMENTATIONS)
def test_at_r20_a_virtual_time_past_int64_is_refused(label: str, start: Any, go: Any) -> None:
    """AT-R20: stamp + bound over 2**63 - 1 is refused naming the stamp, the state
    untouched; the last stamp that fits is taken; a topic with bound 0 takes 2**63 - 1."""
    config = Config(2, 5, inter_message_lower_bounds=[5, 0])
    state, _ = go(config, start(config), Message(1, TOP, "top"))  # bound 0: fits
    with pytest.raises(InvalidInput) as caught:
        go(config, state, Message(0, TOP - 4, "over"))
    assert (caught.value.field, caught.value.rule) == ("stamp", "AT-R20"), label
    _, pending = go(config, state, End())
    assert [p.id for p in pending] == ["top"]  # untouched
    state, outputs = go(config, state, Message(0, TOP - 5, "fits"))
    assert all(s <= TOP for o in outputs for s in getattr(o, "stamps", ()))


def test_at_r20_lockstep_refuses_alike() -> None:
    """AT-R20: the fast path refuses exactly what the rule text refuses (field and rule)."""
    run = Lockstep(ALGORITHM, Config(3, 2, inter_message_lower_bounds=[TOP, 1, 0]))
    run.step(Message(0, 0, "a"))
    for item in (Message(0, 1, "b"), Message(1, TOP, "c")):
        with pytest.raises(InvalidInput) as caught:
            run.step(item)
        assert caught.value.rule == "AT-R20"
    run.step(Message(1, TOP - 1, "d"))
    run.step(Message(2, TOP, "e"))


EXTREME = {"topics": 2, "queue_size": 3, "inter_message_lower_bounds": [TOP, 0],
           "max_interval_duration": TOP, "age_penalty": 1e300}


def _vector(tmp_path: Path, config: dict[str, Any], inputs: list[dict[str, Any]],
            outputs: list[dict[str, Any]] | None = None) -> Path:
    vector: dict[str, Any] = {"format": "timealign.vector/1", "algorithm": "approximate_time",
                              "name": "extreme", "config": config, "inputs": inputs}
    if outputs is not None:
        vector["outputs"] = outputs
    path = tmp_path / "extreme.json"
    path.write_text(json.dumps(vector))
    return path


def _integers(value: Any) -> list[int]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, dict):
        return [n for item in value.values() for n in _integers(item)]
    if isinstance(value, list):
        return [n for item in value for n in _integers(item)]
    return []


def test_at_d24_replay_and_check_of_extreme_values_stay_in_int64(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """AT-D24, AT-R20, DRV-D9: bounds and the maximum interval at 2**63 - 1, an age penalty
    of 1e300 (scaled ages far past int64, compared exactly), stamps 0 and 2**63 - 1:
    `replay` emits no value outside int64 (the virtual time 0 + 2**63 - 1 fits, 1 + it is
    refused by AT-R20), and `check` passes the vector with those outputs."""
    inputs: list[dict[str, Any]]  # mixed values: the vector form
    inputs = [{"op": "message", "topic": 0, "stamp": 0, "id": "a"},
              {"op": "message", "topic": 1, "stamp": TOP, "id": "b"},
              {"op": "message", "topic": 0, "stamp": 1, "id": "c"},
              {"op": "message", "topic": 1, "stamp": TOP - 1, "id": "d"},
              {"op": "message", "topic": 0, "stamp": 0, "id": "e"},
              {"op": "end"}]
    assert main(["replay", str(_vector(tmp_path, EXTREME, inputs))]) == 0
    outputs = json.loads(capsys.readouterr().out)["outputs"]
    assert all(-(2**63) <= n <= TOP for n in _integers(outputs))
    assert {"input": 2, "kind": "error", "field": "stamp", "rule": "AT-R20"} in outputs
    assert sorted(o["id"] for o in outputs if o["kind"] == "pending") == ["a", "b", "d", "e"]
    assert main(["check", str(_vector(tmp_path, EXTREME, inputs, outputs))]) == 0
    wrong = [o for o in outputs if o.get("rule") != "AT-R20"]  # as if c had been taken
    assert main(["check", str(_vector(tmp_path, EXTREME, inputs, wrong))]) == 1


def test_at_d24_extreme_config_emits_only_input_stamps() -> None:
    """AT-D24: under the most extreme config the published sets carry input stamps only
    (nothing emitted is derived), in both implementations (lockstep)."""
    config = registry.get("approximate_time").codec.config_from_json(
        {**EXTREME, "inter_message_lower_bounds": [0, 0]})
    run = Lockstep(ALGORITHM, config)
    stamps = [0, TOP, TOP, 0, 1, TOP - 1]
    produced = [o for k, s in enumerate(stamps) for o in run.step(Message(k % 2, s, f"m{k}"))]
    published = [s for o in produced for s in getattr(o, "stamps", ())]
    assert published and set(published) <= set(stamps)
