"""Derived instants stay within int64 (DRV-D9, EB-R1, EB-R2; issue 30 part 6).

A config of window and delay both 2**63 - 1 was accepted and `replay` emitted a timer at
27670116110564327421; a batch's timeout (an event time + W + D) is an instant the machine
emits, so the config is refused when W + D cannot fit, and a message whose timeout would
not fit is refused by the rule text and the fast path alike.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from timealign import registry
from timealign.cli import main
from timealign.errors import InvalidInput
from timealign.event_time_batcher import fast
from timealign.event_time_batcher.machine import initial, step
from timealign.event_time_batcher.model import Config, Message

TOP = 2**63 - 1


def test_eb_r1_drv_d9_window_plus_delay_over_int64_is_refused_naming_the_field() -> None:
    """EB-R1, DRV-D9: W + D over int64 is refused by rule, naming max_message_delay."""
    with pytest.raises(InvalidInput) as caught:
        registry.get("event_time_batcher").codec.config_from_json(
            {"batching_window": TOP, "max_message_delay": TOP})
    assert (caught.value.field, caught.value.rule) == ("max_message_delay", "EB-R1")
    Config(batching_window=TOP - 5, max_message_delay=5)  # exactly int64: accepted


@pytest.mark.parametrize("machine", ["rule text", "fast path"])
def test_eb_r2_drv_d9_a_message_whose_timeout_would_pass_int64_is_refused(
        machine: str) -> None:
    """EB-R2, DRV-D9: an event time whose batch timeout (t + W + D) passes 2**63 - 1 is
    refused naming event_time, in both implementations, when the message would be taken
    into a batch (a rejected one has no timeout); the last one that fits is taken and its
    timer is exactly 2**63 - 1."""
    config = Config(batching_window=10, max_message_delay=5)
    start: Any = initial(config) if machine == "rule text" else fast.initial(config)
    go: Any = step if machine == "rule text" else fast.step
    with pytest.raises(InvalidInput) as caught:
        go(config, start, Message("k", TOP - 14, TOP - 14, "a"))
    assert (caught.value.field, caught.value.rule) == ("event_time", "EB-R2")
    _, outputs = go(config, start, Message("k", TOP - 15, TOP - 15, "a"))
    assert [getattr(o, "at", None) for o in outputs] == [TOP]


def test_drv_d9_replay_of_the_issue_vector_emits_no_instant_over_int64(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """DRV-D9: the vector of the issue (W = D = 2**63 - 1) is a refused config (VEC-R14:
    exit 1), never a timer at 27670116110564327421."""
    vector = {"format": "timealign.vector/1", "algorithm": "event_time_batcher",
              "name": "huge", "config": {"batching_window": TOP, "max_message_delay": TOP},
              "inputs": [{"op": "message", "key": "k", "event_time": TOP, "at": TOP,
                          "id": "a"}]}
    path = tmp_path / "v.json"
    path.write_text(json.dumps(vector))
    assert main(["replay", str(path)]) == 1
    captured = capsys.readouterr()
    assert "27670116110564327421" not in captured.out
    assert "max_message_delay" in captured.err and "EB-R1" in captured.err
