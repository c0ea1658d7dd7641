"""The generic vector layer (spec/vectors.md) over a toy algorithm registered for the test.

The toy machine sums integers and rejects negative ones, which is enough to exercise
decoding, replay, the error outputs and the comparison independently of any real algorithm.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest

from timealign import registry, vectors
from timealign.algorithm import Accounting, Algorithm, Codec, Feeding, Grouped, Machine, Record
from timealign.cli import main
from timealign.errors import InvalidInput, require, require_ns


@attrs.frozen
class Add:
    value: int


def _config(raw: Mapping[str, Any]) -> int:
    return require_ns(raw.get("limit"), "limit", "TOY-R1", minimum=1)


def _input(raw: Mapping[str, Any]) -> Add:
    require(raw.get("op") == "add", "op", "TOY-R2", "must be 'add'", raw.get("op"))
    return Add(require_ns(raw.get("value"), "value", "TOY-R2"))


def _step(limit: int, total: int, item: Add) -> tuple[int, tuple[int, ...]]:
    total += item.value
    return (0, (total,)) if total >= limit else (total, ())


def _records(limit: int, records: Iterable[Record]) -> Iterator[Add]:
    return (Add(r.stamp) for r in records)


TOY: Algorithm[int, int, Add, int] = Algorithm(
    name="toy",
    machine=Machine(lambda limit: 0, _step, end=lambda limit: Add(0)),
    codec=Codec(_config, lambda limit: {"limit": limit}, _input,
                lambda item: {"op": "add", "value": item.value},
                lambda total: {"kind": "sum", "total": total}),
    feeding=Feeding(_records),
    accounting=Accounting(lambda total: Grouped((), total, total)),
)


@pytest.fixture(autouse=True)
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(registry._ENTRIES, "toy", f"{__name__}:TOY")
    monkeypatch.setitem(sys.modules, __name__, sys.modules[__name__])


def toy_vector(inputs: list[dict[str, Any]], outputs: list[dict[str, Any]] | None,
               config: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "format": vectors.FORMAT, "algorithm": "toy", "name": "t",
        "config": {"limit": 5} if config is None else config,
        "inputs": inputs, "outputs": outputs,
    }


def test_vec_r1_malformed_vector_is_rejected() -> None:
    with pytest.raises(InvalidInput) as caught:
        vectors.from_json({"format": "other/1"})
    assert caught.value.rule == "VEC-R1" and caught.value.field == "vector.format"
    with pytest.raises(InvalidInput, match="inputs"):
        vectors.from_json({"format": vectors.FORMAT, "algorithm": "toy", "name": "x",
                           "config": {}, "inputs": 3})


def test_vec_r2_unknown_algorithm() -> None:
    vector = vectors.from_json({**toy_vector([], []), "algorithm": "nope"})
    with pytest.raises(InvalidInput) as caught:
        vectors.reference_outputs(vector)
    assert caught.value.rule == "VEC-R2"


def test_vec_r3_r4_outputs_carry_input_index_and_kind() -> None:
    """VEC-R3, VEC-R4: inputs decode by op; outputs are tagged with input index and kind."""
    vector = vectors.from_json(toy_vector(
        [{"op": "add", "value": 3}, {"op": "add", "value": 4}, {"op": "add", "value": 5}], None))
    assert vectors.reference_outputs(vector) == [
        {"input": 1, "kind": "sum", "total": 7},
        {"input": 2, "kind": "sum", "total": 5},
    ]


def test_vec_r5_rejected_input_leaves_state_unchanged() -> None:
    """VEC-R5: an error output for the bad input, then the run goes on from the old state."""
    vector = vectors.from_json(toy_vector(
        [{"op": "add", "value": 3}, {"op": "add", "value": -1}, {"op": "add", "value": 2}], None))
    assert vectors.reference_outputs(vector) == [
        {"input": 1, "kind": "error", "field": "value", "rule": "TOY-R2"},
        {"input": 2, "kind": "sum", "total": 5},
    ]


def test_vec_r5_rejected_config_processes_nothing() -> None:
    vector = vectors.from_json(toy_vector([{"op": "add", "value": 9}], None, {"limit": 0}))
    assert vectors.reference_outputs(vector) == [
        {"input": None, "kind": "error", "field": "limit", "rule": "TOY-R1"}
    ]


def test_vec_r6_first_difference() -> None:
    """VEC-R6: exact ordered comparison, first difference reported."""
    a = [{"input": 0, "kind": "sum", "total": 1}]
    b = [{"input": 0, "kind": "sum", "total": 2}]
    assert vectors.first_difference(a, a) is None
    assert "output 0" in (vectors.first_difference(a, b) or "")
    assert "missing" in (vectors.first_difference(a, []) or "")
    assert "unexpected" in (vectors.first_difference([], a) or "")


def test_vec_r6_cli_check_and_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = toy_vector([{"op": "add", "value": 6}], [{"input": 0, "kind": "sum", "total": 6}])
    bad = {**good, "name": "bad", "outputs": []}
    (tmp_path / "a.json").write_text(json.dumps(good))
    (tmp_path / "b.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    assert main(["check", str(tmp_path / "a.json")]) == 0
    assert main(["check", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "FAIL bad" in out and "unexpected" in out
    assert main(["replay", str(tmp_path / "a.json")]) == 0
    line = json.loads(capsys.readouterr().out.strip())
    assert line == {"name": "t", "outputs": [{"input": 0, "kind": "sum", "total": 6}]}


def test_invalid_input_message_names_field_and_rule() -> None:
    error = InvalidInput("queue_size", "VEC-R1", "must be >= 1", 0)
    assert "queue_size" in str(error) and "VEC-R1" in str(error)
    with pytest.raises(InvalidInput, match="integer"):
        require_ns(True, "stamp", "X-R1")


def test_vec_r14_replay_says_a_refused_config_and_exits_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """VEC-R14: the error object on stdout, the refusal on stderr (file, field, rule,
    message), exit 1; no message says "got None"."""
    refused = {"format": "timealign.vector/1", "algorithm": "approximate_time",
               "name": "refused", "config": {"topics": ["a"], "queue_size": 0}, "inputs": []}
    (tmp_path / "r.json").write_text(json.dumps(refused))
    assert main(["replay", str(tmp_path / "r.json")]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["outputs"][0]["kind"] == "error"
    assert "r.json config queue_size: must be >= 1 (rule AT-R1; got 0)" in captured.err
    assert "got None" not in str(InvalidInput("--input", "PL-R6", "missing"))


def test_vec_r14_replay_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """VEC-R14: `timealign replay … | head -1` prints one line, no Broken pipe, exit 0."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    one = json.loads(sorted((root / "vectors" / "approximate_time").glob(
        "*.json"))[-1].read_text())
    lines = (json.dumps({**one, "name": f"{one['name']}_{n}"}) for n in range(3000))
    (tmp_path / "many.jsonl").write_text("\n".join(lines) + "\n")  # names unique (VEC-R13)
    command = f"{sys.executable} -m timealign replay {tmp_path / 'many.jsonl'} | head -1; " \
              "echo status ${PIPESTATUS[0]}"
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.stdout.splitlines()[-1] == "status 0", done.stderr
    assert "Broken pipe" not in done.stderr and done.stderr == ""
