"""The bad-input suite (issue 15): every bad input ends in a clear ``InvalidInput`` or a
documented exit code, never another exception, and leaves state and files as they were.

Hypothesis feeds random bytes and random JSON to the vector loader (VEC-R1, VEC-R10),
random vectors to every algorithm through ``vectors.reference_outputs`` (VEC-R5: a
rejected config or input is an ``error`` output, never an exception), and random rows to
every algorithm's row mapping through the driver. The ``ci`` profile keeps these fast;
``make proofs`` runs them under the ``nightly`` profile.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from timealign import registry, vectors
from timealign.algorithm import Record
from timealign.cli import main
from timealign.drive import Driver
from timealign.errors import InvalidInput

INT64 = 2**63 - 1
# A few values of every JSON type, with the edges that broke things: huge integers,
# times just above int64, negative numbers, unicode, nesting.
INTS = st.one_of(st.integers(-3, 5), st.sampled_from([INT64, INT64 + 1, -INT64 - 2, 10**30]),
                 st.integers())
SCALARS = st.one_of(st.none(), st.booleans(), INTS, st.floats(allow_nan=False),
                    st.text(max_size=5))
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=8)

OPS = ["message", "end", "tick", "flush", "poll", "set_batch_length", "add", None]
FIELDS = ["topic", "stamp", "id", "at", "key", "event_time", "messages", "seconds",
          "kind", "name", "timestamp"]
CONFIG_KEYS = ["topics", "queue_size", "age_penalty", "max_interval_duration",
               "inter_message_lower_bounds", "arithmetic", "batching_window",
               "max_message_delay", "message_leap_limit", "batch_length_s"]
GOOD_CONFIGS: dict[str, dict[str, Any]] = {
    "approximate_time": {"topics": 2, "queue_size": 2},
    "event_time_batcher": {"batching_window": 10, "max_message_delay": 5},
    "rate_aware_batcher": {},
}


def _fields(keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(keys), JSON_VALUES, max_size=5)


@st.composite
def inputs(draw: st.DrawFn) -> dict[str, Any]:
    item = draw(_fields(FIELDS))
    item["op"] = draw(st.sampled_from(OPS))
    if item["op"] == "poll" and draw(st.booleans()):
        item["messages"] = draw(st.lists(_fields(FIELDS), max_size=3))
    return item


@st.composite
def random_vectors(draw: st.DrawFn) -> dict[str, Any]:
    algorithm = draw(st.sampled_from(registry.names()))
    config = GOOD_CONFIGS[algorithm] if draw(st.booleans()) else draw(_fields(CONFIG_KEYS))
    return {"format": vectors.FORMAT, "algorithm": algorithm, "name": "fuzz",
            "config": config, "inputs": draw(st.lists(inputs(), max_size=6))}


def _only_invalid_input(path: Path) -> list[Any]:
    """Read a file; every item is a vector or an InvalidInput naming the file (VEC-R10)."""
    items = list(vectors.read(path))
    for item in items:
        assert isinstance(item, vectors.Vector | InvalidInput)
        if isinstance(item, InvalidInput):
            assert str(path) in item.field and item.rule == "VEC-R1"
            assert len(str(item)) < 1000
    return items


@given(st.binary(max_size=200), st.sampled_from(["v.json", "v.jsonl", "v.json.gz"]))
def test_vec_r10_random_bytes_never_escape(tmp_path_factory: pytest.TempPathFactory,
                                           body: bytes, name: str) -> None:
    """VEC-R10: any bytes read as a vector file give vectors or InvalidInput, nothing else."""
    path = tmp_path_factory.mktemp("bytes") / name
    path.write_bytes(body)
    _only_invalid_input(path)


@given(JSON_VALUES)
def test_vec_r1_random_json_is_a_vector_or_invalid_input(value: Any) -> None:
    """VEC-R1: any JSON value handed to the decoder is a vector or InvalidInput."""
    try:
        vectors.from_json(value, "f.json")
    except InvalidInput as error:
        assert error.rule == "VEC-R1" and error.field.startswith("f.json")


@given(random_vectors())
def test_vec_r5_random_vectors_replay_without_exceptions(body: dict[str, Any]) -> None:
    """VEC-R5: a random config or input of any algorithm is an `error` output naming field
    and rule; replay itself never raises, and the JSON round trip is stable."""
    outputs = vectors.reference_outputs(vectors.from_json(body))
    for output in outputs:
        assert isinstance(output["input"], int | None)
        if output["kind"] == "error":
            assert output["field"] and output["rule"]
    json.dumps(outputs)


ROW_VALUES = st.one_of(st.none(), st.booleans(), INTS, st.floats(allow_nan=True),
                       st.text(max_size=4), st.binary(max_size=2), st.just(["x"]))
TOPICS = st.one_of(st.sampled_from(["0", "1", "camera", "lidar", "imu", ""]), ROW_VALUES)
ROWS = st.lists(st.builds(
    Record, id=st.one_of(st.text(max_size=3), ROW_VALUES), topic=TOPICS,
    stamp=st.one_of(st.integers(0, 10**9), ROW_VALUES),
    arrival=st.one_of(st.integers(0, 10**9), ROW_VALUES),
    kind=st.one_of(st.sampled_from(["log", "area_detector", None]), ROW_VALUES),
    poll=st.one_of(st.integers(0, 3), ROW_VALUES)), max_size=6)


@pytest.mark.parametrize("name", registry.names())
@given(rows=ROWS)
def test_drv_r9_random_rows_are_invalid_input_or_outcomes(name: str,
                                                         rows: list[Record]) -> None:
    """DRV-R9, DRV-R2: random rows (wrong types, nulls, huge values, unicode) through the row
    mapping and the machine either run or stop with InvalidInput; the driver's state
    before the bad row is left as it was."""
    algorithm = registry.get(name)
    config = algorithm.codec.config_from_json(GOOD_CONFIGS[name])
    driver = Driver(algorithm, config)
    last = driver.state  # the state after the last step that went through
    try:
        for _ in driver.feed(rows):
            last = driver.state
        for _ in driver.finish():
            last = driver.state
    except InvalidInput as error:
        assert error.field and error.rule and len(str(error)) < 1000
        assert driver.state is last


# ---- table-driven cases: each one a fault found by hand (issue 15, faults 5 and 6) ----

GOOD = {"format": vectors.FORMAT, "algorithm": "approximate_time", "name": "g",
        "config": {"topics": 2, "queue_size": 2},
        "inputs": [{"op": "message", "topic": 0, "stamp": 1, "id": "a"}],
        "outputs": []}
BAD_FILES: dict[str, tuple[bytes, str]] = {
    "binary": (bytes(range(256)), "not UTF-8"),
    "utf16": (json.dumps(GOOD).encode("utf-16"), "not UTF-8"),
    "list": (b"[1, 2]", "must be a JSON object"),
    "string": (b'"vector"', "must be a JSON object"),
    "rules-5": (json.dumps({**GOOD, "rules": 5}).encode(), ".rules"),
    "deep": (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    "huge-int": (b'{"format": ' + b"9" * 5000 + b"}", "not JSON the reference reads"),
    "syntax": (b'{\n  "format": "timealign.vector/1",\n  oops\n}', ":3:3"),
    "nan": (b'{"x": NaN}', "NaN"),
    "input-not-object": (json.dumps({**GOOD, "inputs": [5]}).encode(), ".inputs[0]"),
    "bad-gzip": (b"\x1f\x8b garbage", "cannot read the file"),
}


@pytest.mark.parametrize("case", BAD_FILES)
def test_vec_r1_r10_bad_vector_files(tmp_path: Path, case: str) -> None:
    """VEC-R1, VEC-R10: one clear InvalidInput naming the file (and line), short."""
    body, expected = BAD_FILES[case]
    path = tmp_path / "bad.json"
    path.write_bytes(body)
    (error,) = _only_invalid_input(path)
    assert isinstance(error, InvalidInput) and expected in str(error)


def test_vec_r10_gzip_and_jsonl_lines(tmp_path: Path) -> None:
    """VEC-R10: .gz files are read; one bad line of a .jsonl is one error, the other lines
    are still vectors."""
    (tmp_path / "a.json.gz").write_bytes(gzip.compress(json.dumps(GOOD).encode()))
    assert [v.name for v in vectors.load(tmp_path / "a.json.gz")] == ["g"]
    lines = [json.dumps(GOOD), "{broken", json.dumps({**GOOD, "name": "h"})]
    (tmp_path / "b.jsonl").write_text("\n".join(lines))
    items = _only_invalid_input(tmp_path / "b.jsonl")
    assert [getattr(i, "name", None) for i in items] == ["g", None, "h"]
    assert f"{tmp_path / 'b.jsonl'}:2:" in str(items[1])
    assert sorted(p.name for p in vectors.files([tmp_path])) == ["a.json.gz", "b.jsonl"]


@pytest.mark.parametrize("name", registry.names())
@pytest.mark.parametrize("field,value", [("stamp", 2**63), ("arrival", -1), ("id", None),
                                         ("topic", 5), ("stamp", True), ("poll", "3")])
def test_drv_r9_one_rule_for_rows(name: str, field: str, value: Any) -> None:
    """DRV-R9: every algorithm refuses the same bad row the same way, before its mapping."""
    algorithm = registry.get(name)
    row: dict[str, Any]  # a bad value of any type goes in
    row = {"id": "a", "topic": "0", "stamp": 1, "arrival": 1, "kind": "log", "poll": 0}
    row[field] = value
    with pytest.raises(InvalidInput) as caught:
        list(Driver(algorithm, algorithm.codec.config_from_json(GOOD_CONFIGS[name])).feed(
            [Record(**row)]))
    assert (caught.value.field, caught.value.rule) == (f"row.{field}", "DRV-R9")


INT64_INPUTS = {
    "approximate_time": {"op": "message", "topic": 0, "stamp": INT64 + 1, "id": "a"},
    "event_time_batcher": {"op": "message", "key": "k", "event_time": INT64 + 1, "at": 0,
                           "id": "a"},
    "rate_aware_batcher": {"op": "poll", "messages": [{"kind": "log", "name": "n",
                                                       "timestamp": INT64 + 1, "id": "a"}]},
}


@pytest.mark.parametrize("name", registry.names())
def test_drv_d9_every_machine_refuses_times_above_int64(name: str) -> None:
    """DRV-D9: a time of 2**63 is refused by every machine (the event-time batcher used to
    accept it); 2**63 - 1 is accepted."""
    body = {**GOOD, "algorithm": name, "config": GOOD_CONFIGS[name],
            "inputs": [INT64_INPUTS[name]]}
    (output,) = [o for o in vectors.reference_outputs(vectors.from_json(body))
                 if o["kind"] == "error"]
    assert output["input"] == 0
    fine = json.loads(json.dumps(body).replace(str(INT64 + 1), str(INT64)))
    assert not [o for o in vectors.reference_outputs(vectors.from_json(fine))
                if o["kind"] == "error"]


def test_rb_d3_poll_holds_messages_only() -> None:
    """RB-D3: `Poll("abc")` and a poll of non-messages are refused when built."""
    from timealign.rate_aware_batcher.model import Poll

    with pytest.raises(InvalidInput, match="messages"):
        Poll("abc")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match=r"messages\[0\]"):
        Poll(("abc",))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", registry.names())
def test_step_names_a_wrong_config_or_state(name: str) -> None:
    """A config or state of another type handed to `step` is a clear TypeError."""
    algorithm = registry.get(name)
    config = algorithm.codec.config_from_json(GOOD_CONFIGS[name])
    state = algorithm.machine.initial(config)
    with pytest.raises(TypeError, match="config must be a"):
        algorithm.machine.step(GOOD_CONFIGS[name], state, algorithm.machine.end(config))
    with pytest.raises(TypeError, match="state must be a"):
        algorithm.machine.step(config, config, algorithm.machine.end(config))


CONFIGS = {"[1,2]": "must be a JSON object", "": "not valid JSON",
           "{": "--config:1:2", "missing.json": "no such file",
           '{"topics": 2, "queue_size": 0}': "--config queue_size"}


@pytest.mark.parametrize("text", CONFIGS)
def test_config_option_errors_name_the_option(text: str, capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
    """`--config '[1,2]'` or `''` is inline JSON, not a path; every error names --config."""
    pytest.importorskip("pyspark", reason="the spark extra is not installed (SP-R35 first)")
    code = main(["run", "approximate_time", "--input", str(tmp_path / "in"), "--output",
                 str(tmp_path / "out"), "--config", text])
    err = capsys.readouterr().err
    assert code == 2 and CONFIGS[text] in err and "--config" in err
    assert "Traceback" not in err


def test_generate_refuses_bad_sizes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`generate --robots 0` (and other empty plans) exit 2 naming the option."""
    for option in (["--robots", "0"], ["--messages", "0"], ["--files", "0"]):
        assert main(["generate", "--output", str(tmp_path), *option]) == 2
        assert option[0] in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_vec_r10_check_goes_on_after_a_bad_file(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """VEC-R10: `check` over a folder with a bad file checks the others, prints a summary
    and exits 2; `replay` prints the good vectors and exits 2."""
    (tmp_path / "a.json").write_bytes(b"\xff\xfe")
    good = {**GOOD, "outputs": vectors.reference_outputs(vectors.from_json(GOOD))}
    (tmp_path / "b.json").write_text(json.dumps(good))
    assert main(["check", str(tmp_path)]) == 2
    out = capsys.readouterr().out
    assert "FAIL" in out and "a.json" in out and "1 of 2 vectors passed" in out
    assert main(["replay", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out)["name"] == "g" and "a.json" in captured.err


def test_unexpected_failures_are_one_line_unless_debug(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure of no documented kind exits 4 with one line; --debug adds the traceback."""
    monkeypatch.setattr(vectors, "reference_outputs", lambda vector: 1 / 0)
    (tmp_path / "a.json").write_text(json.dumps(GOOD))
    assert main(["replay", str(tmp_path)]) == 4
    err = capsys.readouterr().err
    assert "ZeroDivisionError" in err and "Traceback" not in err and "--debug" in err
    assert main(["replay", str(tmp_path), "--debug"]) == 4
    assert "Traceback" in capsys.readouterr().err


@pytest.mark.parametrize("name", registry.names())
@pytest.mark.parametrize("config", [{"topics": 2, "queue_size": 2}, None, 3])
def test_drv_r9_run_with_a_config_of_another_type_names_config(name: str,
                                                               config: object) -> None:
    """DRV-R9: `run()`, `iter_outputs()` and the driver given a dict (or None) instead of
    the algorithm's config raise InvalidInput naming `config`, not AttributeError."""
    from timealign import run
    from timealign.algorithm import iter_outputs
    from timealign.drive import drive

    algorithm = registry.get(name)
    for call in (lambda: run(algorithm, config, []),
                 lambda: list(iter_outputs(algorithm, config, [])),
                 lambda: list(drive(algorithm, config, []))):
        with pytest.raises(InvalidInput) as caught:
            call()
        assert caught.value.field == "config" and caught.value.rule == "DRV-R9"


@pytest.mark.parametrize("name", registry.names())
@pytest.mark.parametrize("row", [{"id": "a"}, ("a", "t", 1, 2), None])
def test_drv_r9_drive_with_a_row_that_is_not_a_record_names_the_row(name: str,
                                                                    row: object) -> None:
    """DRV-R9: `drive()` given a dict or a tuple for a row raises InvalidInput naming
    `row`, not AttributeError."""
    from timealign.drive import drive

    algorithm = registry.get(name)
    assert algorithm.checks.traces is not None
    config = algorithm.checks.traces.instances[0].config
    with pytest.raises(InvalidInput) as caught:
        list(drive(algorithm, config, [row]))  # type: ignore[list-item]
    assert caught.value.field == "row" and caught.value.rule == "DRV-R9"


def test_at_r1_queue_size_is_a_count_not_nanoseconds() -> None:
    """AT-R1: a bad `queue_size` is "must be an integer", never "an integer number of
    nanoseconds" (it counts messages)."""
    algorithm = registry.get("approximate_time")
    for value in ("abc", 1.5, True):
        with pytest.raises(InvalidInput, match="queue_size: must be an integer") as caught:
            algorithm.codec.config_from_json({"topics": 2, "queue_size": value})
        assert "nanoseconds" not in str(caught.value)


def test_cf_r21_diff_with_a_value_no_config_takes_exits_2(
        capsys: pytest.CaptureFixture[str]) -> None:
    """CF-R21: `diff --a queue_size=abc` is bad usage (exit 2 naming the change), not a
    difference (it exited 1, "DIFFERS")."""
    code = main(["diff", "approximate_time", "--a", "queue_size=abc", "--b",
                 "queue_size=3", "--quiet"])
    captured = capsys.readouterr()
    assert code == 2, captured
    assert 'queue_size="abc"' in captured.err and "CF-R21" in captured.err
    assert "DIFFERS" not in captured.out
