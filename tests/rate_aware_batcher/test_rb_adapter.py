"""Codecs, registry, adapter hooks and the pure-step contract of the rate-aware batcher."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from timealign import InvalidInput, Record, registry
from timealign.algorithm import Grouped, Settled
from timealign.cli import main
from timealign.drive import drive
from timealign.rate_aware_batcher import (
    ALGORITHM,
    Batch,
    Config,
    End,
    Pending,
    Poll,
    Polled,
    SetBatchLength,
    initial,
    step,
)

ROOT = Path(__file__).resolve().parents[2]


def test_registry_and_codecs_round_trip() -> None:
    assert registry.get("rate_aware_batcher") is ALGORITHM
    config = ALGORITHM.codec.config_from_json({"batch_length_s": 0.5, "timeout_s": 0.9})
    assert (config.batch_length, config.factor) == (500_000_000, 0.9 / 0.5)
    assert ALGORITHM.codec.config_from_json(ALGORITHM.codec.config_to_json(config)) == config
    for item in (Poll((Polled("log", "l", 5, "a"),)), SetBatchLength(2.0), End()):
        assert ALGORITHM.codec.input_from_json(ALGORITHM.codec.input_to_json(item)) == item
    assert ALGORITHM.codec.output_to_json(Batch(1, 2, ("a",))) == {
        "kind": "batch", "start": 1, "end": 2, "ids": ["a"]}
    assert ALGORITHM.codec.output_to_json(Pending("a")) == {"kind": "pending", "id": "a"}


def test_account_rb_r16() -> None:
    """RB-R16."""
    assert ALGORITHM.accounting.account(Batch(1, 2, ("a", "b"))) == Grouped(("a", "b"), 1, 2)
    assert ALGORITHM.accounting.account(Pending("a")) == Settled("a", "pending", "end_of_input")


def test_config_validation_rb_d1_rb_d2() -> None:
    """RB-D1, RB-D2."""
    for bad in ({"batch_length_s": 0}, {"batch_length_s": -1.0}, {"batch_length_s": True},
                {"batch_length_s": float("nan")}):
        with pytest.raises(InvalidInput) as error:
            ALGORITHM.codec.config_from_json(bad)
        assert error.value.rule == "RB-D1"
    for bad in ({"timeout_s": 1.0, "timeout_factor": 1.0}, {"timeout_factor": float("inf")},
                {"unknown": 1}):
        with pytest.raises(InvalidInput) as error:
            ALGORITHM.codec.config_from_json(bad)
        assert error.value.rule == "RB-D2"
    assert Config(timeout_factor=5.0).factor == 5.0  # kept: hazard RB-H3
    for bad_config in ({"batch_length_s": 1e300}, {"timeout_factor": 1e300}):
        with pytest.raises(InvalidInput):  # int() of an infinite product would overflow
            ALGORITHM.codec.config_from_json(bad_config)
    with pytest.raises(InvalidInput) as error:  # RB-D23: a finite timeout beyond int64
        Config(timeout_factor=1e290)
    assert (error.value.field, error.value.rule) == ("timeout_factor", "RB-D2")
    with pytest.raises(InvalidInput) as error:  # RB-D23: a length beyond int64
        SetBatchLength(1e20)
    assert (error.value.field, error.value.rule) == ("seconds", "RB-D1")
    config = Config(timeout_factor=1e9)  # 1e18 ns at 1 s fits; at 10 s, 1e19 does not
    with pytest.raises(InvalidInput) as error:
        step(config, initial(config), SetBatchLength(10.0))
    assert (error.value.field, error.value.rule) == ("seconds", "RB-D1")


def test_input_validation_rb_d3() -> None:
    """RB-D3."""
    for bad in ({"op": "poll", "messages": "x"},
                {"op": "poll", "messages": [{"kind": "log", "name": "l", "timestamp": -(2**63) - 1,
                                             "id": "a"}]},
                {"op": "poll", "messages": [3]}):
        with pytest.raises(InvalidInput) as error:
            ALGORITHM.codec.input_from_json(bad)
        assert error.value.rule == "RB-D3"
    with pytest.raises(InvalidInput):
        ALGORITHM.codec.input_from_json({"op": "tick"})
    with pytest.raises(InvalidInput):
        SetBatchLength(1e-12)


def test_refused_poll_leaves_state_usable_rb_d4() -> None:
    """RB-D4."""
    config = Config()
    state, _ = step(config, initial(config), Poll((Polled("log", "l", 10, "a"),)))
    state, _ = step(config, state, Poll((Polled("log", "l", 20, "b"),)))
    with pytest.raises(InvalidInput) as error:
        step(config, state, Poll((Polled("log", "l", 30, "c"), Polled("log", "l", 30, "b"))))
    assert (error.value.field, error.value.rule) == ("messages[1].id", "RB-D4")
    after, _ = step(config, state, Poll((Polled("log", "l", 30, "c"),)))
    assert after.held == {"b", "c"}


def test_records_group_into_polls_lazily_rb_d5() -> None:
    """RB-D5."""
    rows = [Record("a", "det", 1, kind="detector_events", poll=1),
            Record("b", "mon", 2, kind="monitor_events", poll=1),
            Record("c", "det", 3, kind="detector_events", poll=2),
            Record("d", "log", 4, kind="log"),
            Record("e", "log", 5, kind="log")]
    polls = ALGORITHM.feeding.inputs_from_records(Config(), iter(rows))
    first = next(polls)  # lazily: one poll at a time
    assert [m.id for m in first.messages] == ["a", "b"]
    assert [[m.id for m in p.messages] for p in polls] == [["c"], ["d"], ["e"]]
    # RB-D22: a row without a kind is of upstream's kind `unknown`; a wrong kind is refused
    (alone,) = ALGORITHM.feeding.inputs_from_records(Config(), [Record("x", "t", 1)])
    assert [m.kind for m in alone.messages] == ["unknown"]
    with pytest.raises(InvalidInput):
        list(ALGORITHM.feeding.inputs_from_records(Config(), [Record("x", "t", 1, kind="det")]))


def test_drive_settles_every_row() -> None:
    rows = [Record(f"r{k}", "det", 10**9 + k * 71_428_571, kind="detector_events", poll=k // 2)
            for k in range(60)]
    settled = [ALGORITHM.accounting.account(o) for _, _, outputs in drive(ALGORITHM, Config(), rows)
               for o in outputs]
    ids = [i for a in settled if isinstance(a, Grouped) for i in a.ids]
    ids += [a.id for a in settled if isinstance(a, Settled)]
    assert sorted(ids) == sorted(r.id for r in rows)


def test_step_is_pure_and_end_is_final_rb_r16() -> None:
    """RB-R16."""
    config = Config()
    state, _ = step(config, initial(config), Poll((Polled("log", "l", 10, "a"),)))
    snapshot = state
    step(config, state, Poll((Polled("log", "l", 20, "b"),)))
    assert state == snapshot and hash(state) == hash(snapshot)
    ended, pending = step(config, state, End())
    assert pending == () and ended.ended
    with pytest.raises(InvalidInput) as error:
        step(config, ended, Poll(()))
    assert error.value.rule == "RB-R16"


def test_cli_checks_the_suite(capsys: pytest.CaptureFixture[str]) -> None:
    folder = ROOT / "vectors" / "rate_aware_batcher"
    assert main(["check", str(folder)]) == 0
    assert "vectors passed" in capsys.readouterr().out
    assert main(["replay", str(folder / "happy_path_14hz.json")]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["name"] == "happy_path_14hz" and line["outputs"][0]["kind"] == "batch"


def test_readme_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    text = (ROOT / "docs" / "algorithms.md").read_text(encoding="utf-8")
    section = text.split("## Rate-aware batcher", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "docs/algorithms.md", "exec"), {})
    sizes = [int(line.split()[-1]) for line in capsys.readouterr().out.splitlines()]
    assert sizes == [1, 14, 13, 14, 14]
