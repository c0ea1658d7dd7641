"""The rate-aware batcher's derived durations and instants stay within int64 (RB-D23,
RB-R28, RB-D1, RB-D2, DRV-D9; issue 30 part 6): a batch length or a timeout past
2**63 - 1 ns is a refused config, and a poll that would close a batch ending past it is
refused whole, the state untouched, in the rule text and the fast path alike.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from timealign.cli import main
from timealign.errors import InvalidInput
from timealign.lockstep import Lockstep
from timealign.rate_aware_batcher import ALGORITHM, Config, End, Poll, Polled, SetBatchLength

TOP = 2**63 - 1
START = TOP - 10**8  # a tenth of a second below the last int64 instant


def _log(t: int, ident: str) -> Polled:
    return Polled("log", "l", t, ident)


@pytest.mark.parametrize("raw", [{"batch_length_s": 9.3e9, "timeout_factor": 0.5},
                                 {"batch_length_s": 9.2e9}])
def test_rb_d23_a_length_or_timeout_past_int64_is_a_refused_config(raw: dict[str, Any]) -> None:
    """RB-D23, RB-D1, RB-D2: L = 9.3e9 s (past 2**63 - 1 ns) is refused naming
    batch_length_s; L = 9.2e9 s fits but its timeout (1.2 L) does not, refused naming the
    timeout; with a factor of 0.5 that length is accepted."""
    with pytest.raises(InvalidInput) as caught:
        ALGORITHM.codec.config_from_json(raw)
    expected = ("batch_length_s", "RB-D1") if raw["batch_length_s"] > 9.25e9 else (
        "timeout_s", "RB-D2")
    assert (caught.value.field, caught.value.rule) == expected
    config = ALGORITHM.codec.config_from_json({"batch_length_s": 9.2e9, "timeout_factor": 0.5})
    timeout = ALGORITHM.machine.initial(config).timeout
    assert config.batch_length <= TOP and timeout is not None and timeout <= TOP


def test_rb_d23_set_batch_length_past_int64_is_refused() -> None:
    """RB-D23, RB-D1: a new length past int64, or whose timeout is, is refused naming
    seconds; the state is unchanged."""
    with pytest.raises(InvalidInput) as caught:
        SetBatchLength(9.3e9)
    assert (caught.value.field, caught.value.rule) == ("seconds", "RB-D1")
    run = Lockstep(ALGORITHM, Config(batch_length_s=1.0))
    with pytest.raises(InvalidInput) as caught:
        run.step(SetBatchLength(9.0e9))  # 9e18 ns fits; 1.2 times it does not
    assert (caught.value.field, caught.value.rule) == ("seconds", "RB-D1")
    assert run.state.pending_length is None


@pytest.mark.parametrize("profile", ["card", "esslivedata-head"])
def test_rb_r28_a_poll_closing_a_batch_past_int64_is_refused(profile: str) -> None:
    """RB-R28: the first window starts 0.1 s below 2**63 - 1; a poll past its timeout would
    close it at start + 1 s, past int64: refused by both implementations (lockstep: same
    field and rule), the state as before, the held message still reported at the end."""
    config = Config(batch_length_s=1.0, timeout_factor=0.001, profile=profile)
    run = Lockstep(ALGORITHM, config)
    (boot,) = run.step(Poll((_log(START, "a"),)))
    assert (boot.start, boot.end) == (START, START)
    assert run.step(Poll((_log(START + 500, "b"),))) == ()  # held: before the timeout
    before = run.state
    with pytest.raises(InvalidInput) as caught:
        run.step(Poll((_log(START + 2 * 10**6, "c"),)))
    assert (caught.value.field, caught.value.rule) == ("messages", "RB-R28")
    assert caught.value.value == START + 10**9
    assert run.state == before
    assert [p.id for p in run.step(End())] == ["b"]


def _vector(tmp_path: Path, inputs: list[dict[str, Any]],
            outputs: list[dict[str, Any]] | None = None) -> Path:
    vector: dict[str, Any] = {
        "format": "timealign.vector/1", "algorithm": "rate_aware_batcher", "name": "extreme",
        "config": {"batch_length_s": 1.0, "timeout_factor": 0.001}, "inputs": inputs}
    if outputs is not None:
        vector["outputs"] = outputs
    path = tmp_path / "extreme.json"
    path.write_text(json.dumps(vector))
    return path


def _poll(t: int, ident: str) -> dict[str, Any]:
    return {"op": "poll", "messages": [{"kind": "log", "name": "l", "timestamp": t,
                                        "id": ident}]}


def test_rb_r28_replay_and_check_emit_nothing_past_int64(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """RB-R28, DRV-D9: `replay` of stamps near 2**63 - 1 emits no batch end past int64
    (the poll that would is an error output), `check` passes that vector, and fails one
    claiming the batch the reference used to emit (end 2**63 - 1 - 1e8 + 1e9)."""
    inputs = [_poll(START, "a"), _poll(START + 500, "b"), _poll(START + 2 * 10**6, "c"),
              _poll(TOP, "d"), {"op": "end"}]
    assert main(["replay", str(_vector(tmp_path, inputs))]) == 0
    outputs = json.loads(capsys.readouterr().out)["outputs"]
    for output in outputs:
        for key in ("start", "end"):
            assert output.get(key, 0) <= TOP
    assert [o.get("rule") for o in outputs if o["kind"] == "error"] == ["RB-R28", "RB-R28"]
    assert main(["check", str(_vector(tmp_path, inputs, outputs))]) == 0
    old = [{"input": 2, "kind": "batch", "start": START, "end": START + 10**9,
            "ids": ["b", "c"]}]
    assert main(["check", str(_vector(tmp_path, inputs, old))]) == 1
