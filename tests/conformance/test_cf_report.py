"""What the harness trusts and what it says: answers validated in full before projection
(CF-R36), unstable answers reported with both answers (CF-R37), every trace that did not
agree named (CF-R38), verdict words and exit codes (CF-R39), saved vectors that keep what
the implementation answered (CF-R16, VEC-R15) and their picture (PL-R16)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from timealign import InvalidInput, registry, vectors
from timealign.algorithm import run_json
from timealign.cli import main
from timealign.conformance import Command, Refusal, check, rules, run_reference, shipped
from timealign.conformance.harness import malformed, request
from timealign.conformance.observe import profile
from timealign.conformance.protocol import Failed, Outputs, parse
from timealign.vectors import Vector

ROOT = Path(__file__).resolve().parents[2]
JSON = dict[str, Any]
AT = registry.get("approximate_time")
MISBEHAVING = f"{sys.executable} -m tests.conformance.misbehaving"


def conform(argv: list[str], tmp_path: Path,
            capsys: pytest.CaptureFixture[str]) -> tuple[int, str, JSON]:
    """Run `timealign conform approximate_time ARGV --report`: (exit, stdout, report)."""
    report = tmp_path / "report.json"
    code = main(["conform", "approximate_time", *argv, "--quiet", "--report", str(report)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return code, captured.out, json.loads(report.read_text(encoding="utf-8"))


# --- CF-R36: the answer in full, before any projection -------------------------------------

def test_nonsense_outputs_never_agree_under_a_target_cf_r36(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CF-R36: under --target ros2 (observe upstream, which projects away every kind but
    `published`), answers carrying an extra {"input": 1000000, "kind": "nonsense"} fail as
    malformed on the vectors and on fuzz; nothing reads AGREES."""
    code, out, body = conform(["--target", "ros2", "--cmd", f"{MISBEHAVING} nonsense",
                               "--fuzz", "20"], tmp_path, capsys)
    assert code == 6, out
    assert "AGREES" not in out and "DIFFERS" not in out
    assert 'malformed answer (CF-R36): output ' in out
    assert '{"input": 1000000, "kind": "nonsense"}: input must be the index of one of the ' \
           "trace's" in out
    # each source gives up after 10 failed traces in a row (CF-R5); fuzz goes on after a
    # first finding (CF-R32), so it too stops at 10
    assert body["sources"]["vectors"]["failed"] == 10 and body["sources"]["fuzz"]["failed"] == 10
    assert not body["never_answered"]  # it did answer: the report quotes what (CF-R27)


@pytest.mark.parametrize(("output", "problem"), [
    ({"input": 0, "kind": "nonsense"}, "not an output of approximate_time: kind: must be"),
    ({"input": 3, "kind": "pending", "id": "a"}, "input must be the index of one of the "
                                                 "trace's 3 inputs"),
    ({"input": -1, "kind": "pending", "id": "a"}, "input must be the index"),
    ({"input": True, "kind": "pending", "id": "a"}, "input must be the index"),
    ({"input": None, "kind": "pending", "id": "a"}, "input must be the index"),
    ({"input": 0, "kind": "published", "ids": ["a"], "extra": 1},
     "a published output has the fields ids, input, kind"),
    ({"input": 0, "kind": "published", "ids": "ab"}, "a field of the wrong type"),
    ({"input": 0, "kind": "dropped", "id": "a", "reason": "tired"},
     "reason must be one of interval_too_wide, pivot_refused, queue_overflow, superseded"),
    ({"input": 0, "kind": "error", "field": "stamp"}, "an error output has the fields"),
])
def test_every_output_is_checked_against_the_protocol_cf_r36(output: JSON,
                                                             problem: str) -> None:
    """CF-R36: unknown kind, index out of range (or not an integer), fields that are not the
    kind's, an unknown reason, an error without its rule: each names the output."""
    found = malformed(AT, 3, [{"input": 0, "kind": "pending", "id": "z"}, output],
                      profile(AT, "upstream"))
    assert found is not None and found.startswith("output 1 ") and problem in found


def test_well_formed_answers_pass_cf_r36() -> None:
    """CF-R36: every reference answer of every shipped vector is well formed, and under a
    profile an upstream may report just the fields it shows (thin-edge: batch ids only)."""
    for name in registry.names():
        algorithm = registry.get(name)
        for vector in shipped(name):
            outputs = run_json(algorithm, vector.config, vector.inputs)
            assert malformed(algorithm, len(vector.inputs), outputs) is None, vector.name
    eb = registry.get("event_time_batcher")
    upstream = [{"input": 0, "kind": "batch", "ids": ["a"]}]
    assert malformed(eb, 1, upstream, profile(eb, "upstream")) is None
    assert malformed(eb, 1, upstream) is not None  # under full, start and end are due


def test_duplicate_keys_are_malformed_cf_r36() -> None:
    """CF-R36: an answer line naming a key twice fails the trace (which would a reader
    take?), quoting the line; through a command, the trace fails and the others agree."""
    answer = parse(b'{"name": "x", "outputs": [], "outputs": [{"input": 0}]}', "x")
    assert isinstance(answer, Failed) and answer.answered
    assert "malformed answer (CF-R36): the key 'outputs' twice in one object" in answer.message
    nested = parse(b'{"name": "x", "outputs": [{"input": 0, "kind": "pending", "id": "a", '
                   b'"id": "b"}]}', "x")
    assert isinstance(nested, Failed) and "the key 'id' twice" in nested.message
    assert parse(b'{"name": "x", "outputs": []}', "x") == Outputs(())
    good = [v for v in shipped("approximate_time")][:2]
    bad = Vector(algorithm="approximate_time", name="bad", config={"topics": 2},
                 inputs=({"op": "message", "topic": 0, "stamp": 5, "id": "a"},))
    with Command(f"{MISBEHAVING} duplicate_keys", timeout=5.0) as command:
        report = check("approximate_time", command, vectors=[good[0], bad, good[1]])
    source = report.sources[0]
    assert (source.agree, source.failed) == (2, 1), report.text()
    assert "the key 'outputs' twice in one object" in source.differences[0].message


# --- CF-R37: the same trace answered otherwise when asked again ----------------------------

@pytest.mark.parametrize("source", [["--no-vectors", "--fuzz", "300"], [],
                                    ["--no-vectors", "--explore", "2"]])
def test_state_leaking_between_traces_is_reported_with_both_answers_cf_r37(
        source: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CF-R37: an adapter whose answer depends on the traces before (it leaves out the last
    output of every third trace) is reported as exactly that, with both answers: fuzz no
    longer ends in Hypothesis's FlakyFailure (exit 4, no report). Explore asks again every
    differing trace of a group not yet found (CF-R32): the failures, one group whatever
    answers they quote, never fill its places, so no differing trace is left unasked."""
    code, out, body = conform(["--cmd", f"{MISBEHAVING} leak", *source], tmp_path, capsys)
    assert code == 6, out
    assert "FlakyFailure" not in out and "DIFFERS" not in out
    assert "answered the same trace differently when asked again (CF-R37; state leaking " \
           "between traces" in out
    [name] = body["sources"]
    message = body["sources"][name]["differences"][0]["message"]
    first, _, then = message.partition("first ")[2].partition(", then ")
    assert json.loads(first) != json.loads(then)  # both answers, as JSON


@pytest.mark.parametrize("source", [["--no-vectors", "--fuzz", "300"], []])
def test_two_lines_per_trace_is_a_failure_not_a_crash_cf_r37(
        source: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CF-R5, CF-R37: an adapter printing every answer twice: each late line is caught (a
    name of the trace before, a trace's outputs that do not fit, or an answer that changes
    when asked again), the run ends with a report and exit 6, never a crash."""
    code, out, body = conform(["--cmd", f"{MISBEHAVING} twice", *source], tmp_path, capsys)
    assert code == 6, out
    assert body["exit_status"] == 6 and body["verdict"].startswith("FAILED: the command "
                                                                   "under test gave no usable")
    if not source:
        assert "(the trace asked before: more than one line for it?)" in out


# --- CF-R38: every trace that did not agree is named ---------------------------------------

def test_an_adapter_answering_nothing_has_every_differing_vector_named_cf_r38(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CF-R38: an adapter answering no outputs differs on every vector the reference has
    outputs for: 10 are detailed, the console says how many more, and the JSON report names
    every one of them."""
    code, out, body = conform(["--cmd", f"{MISBEHAVING} silent"], tmp_path, capsys)
    expected = [v.name for v in shipped("approximate_time")
                if run_reference(AT, v.config, v.inputs)]
    assert code == 1 and len(expected) > 10
    source = body["sources"]["vectors"]
    assert source["traces"]["differ"] == expected and source["differ"] == len(expected)
    assert len(source["differences"]) == 10
    assert f"- vectors: and {len(expected) - 10} more differ (see --report), the first " \
           f"{expected[10]}" in out


def test_max_differences_applies_to_the_suite_cf_r38_cf_r32(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CF-R38, CF-R32: ``--max-differences`` sets how many suite vectors are detailed, as it
    does for fuzz and explore: with 100 every differing vector is detailed and none is left
    as "and N more"; with 3, three are."""
    expected = [v.name for v in shipped("approximate_time")
                if run_reference(AT, v.config, v.inputs)]
    for most, shown in ((100, len(expected)), (3, 3)):
        code, out, body = conform(["--cmd", f"{MISBEHAVING} silent", "--max-differences",
                                   str(most)], tmp_path, capsys)
        details = body["sources"]["vectors"]["differences"]
        assert code == 1 and [d["name"] for d in details] == expected[:shown]
        assert ("more differ (see --report)" in out) == (shown < len(expected)), out


def test_refusals_do_not_take_the_places_of_differences_cf_r38() -> None:
    """CF-R38: an implementation refusing every other vector and differing on the others:
    10 differences are detailed beside 10 refusals, and every trace is named."""
    suite = shipped("approximate_time")
    refused = suite[::2]

    def port(config: JSON, inputs: list[JSON]) -> list[JSON]:
        if any(v.config == config and list(v.inputs) == inputs for v in refused):
            raise Refusal("no")
        return [o for o in run_reference(AT, config, inputs) if o["kind"] != "published"]

    report = check("approximate_time", port, vectors=suite)
    source = report.sources[0]
    statuses = [d.status for d in source.differences]
    assert statuses.count("refused") == 10 and statuses.count("differ") == 10
    assert source.named["refused"] == [  # a config the reference refuses too agrees (CF-R3)
        v.name for v in refused
        if not any(o["input"] is None for o in run_reference(AT, v.config, v.inputs))]
    assert len(source.named["differ"]) == source.differ > 10


# --- CF-R39: verdict words and exit codes ---------------------------------------------------

def test_verdict_words_and_exit_codes_cf_r39() -> None:
    """CF-R39: refusals alone read REFUSED (exit 5), failures alone FAILED (exit 6),
    DIFFERS (exit 1) only when a trace differs, naming the rules of the differing traces
    only; a command answering garbage did answer, and the verdict says what."""
    suite = [v for v in shipped("approximate_time") if run_reference(AT, v.config, v.inputs)
             and v.config.get("topics") != 0][:6]

    def refusing(config: JSON, inputs: list[JSON]) -> list[JSON]:
        raise Refusal("age penalty not supported")

    alone = check("approximate_time", refusing, vectors=suite)
    assert alone.exit_code() == 5 and alone.rules == ()
    assert alone.text().splitlines()[-1] == (
        f"REFUSED: the implementation refused {len(suite)} of {len(suite)} traces (above)")
    assert "DIFFERS" not in alone.text()

    def mixed(config: JSON, inputs: list[JSON]) -> list[JSON]:
        if inputs == list(suite[0].inputs):
            raise Refusal("no")
        return [] if inputs == list(suite[1].inputs) else run_reference(AT, config, inputs)

    both = check("approximate_time", mixed, vectors=suite)
    assert both.exit_code() == 1
    assert both.text().splitlines()[-1].startswith("DIFFERS on ")
    assert "; REFUSED: the implementation refused 1 of 6 traces (above)" in both.text()
    assert set(both.rules) <= {r for d in both.sources[0].differences if d.status == "differ"
                               for r in d.rules}

    garbage = [Vector(algorithm="approximate_time", name=f"bad{k}", config=v.config,
                      inputs=v.inputs) for k, v in enumerate(suite)]
    with Command(f"{MISBEHAVING} garbage", timeout=5.0) as command:
        failed = check("approximate_time", command, vectors=garbage)
    assert failed.exit_code() == 6 and not failed.never_answered()
    last = failed.text().splitlines()[-1]
    assert last == f"FAILED: the command under test gave no usable answer to {len(suite)} " \
                   f"of {len(suite)} traces (above)"
    assert "garbage answer (not JSON): 'Segmentation fault (core dumped)'" in failed.text()
    assert "never answered" not in failed.text()


# --- CF-R16, VEC-R15, PL-R16: saved vectors a port author can read -------------------------

def lazy(config: JSON, inputs: list[JSON]) -> list[JSON]:
    """The reference, but never reporting a message dropped from a full queue."""
    return [o for o in run_reference(AT, config, inputs) if o.get("reason") != "queue_overflow"]


def test_saved_vector_keeps_its_description_and_the_observed_answer_cf_r16_vec_r15(
        tmp_path: Path) -> None:
    """CF-R16, VEC-R15: a saved difference keeps the vector's own description (a shrunk
    one gets a description of the inputs it kept, the original after "Shrunk from:") and
    rules (after the explaining rules, CF-R42; the difference's added after them), and
    holds the implementation's outputs and the first diverging input beside the
    reference's outputs; `timealign check` passes on
    it, the request sent for it carries none of that, and it still differs when checked."""
    originals = {v.name: v for v in shipped("approximate_time")}
    report = check("approximate_time", lazy, save_to=tmp_path, max_differences=100)
    [source] = report.sources
    assert source.differences and main(["check", str(tmp_path)]) == 0
    shrunk = 0
    for difference in source.differences:
        [saved] = vectors.load(difference.saved)
        original = originals[difference.vector.name]
        if len(saved.inputs) == len(original.inputs):
            assert saved.description == original.description
        else:
            shrunk += 1
            mine, _, before = saved.description.partition(" Shrunk from: ")
            assert before == original.description and mine.startswith(
                f"Found by timealign conform (vectors), shrunk to {len(saved.inputs)} of "
                f"{len(original.inputs)} inputs, differing first at input "
                f"{saved.first_diverging_input}: ")
            kept = {str(i.get("id")) for i in saved.inputs if "id" in i}
            gone = {str(i.get("id")) for i in original.inputs if "id" in i} - kept
            spelled = set(re.findall(r"\bid (\S+?)[;.,]", mine))
            assert spelled == kept and not spelled & gone, (mine, kept, gone)
        # CF-R42: the explaining rules first, then the vector's own, in their order
        assert difference.diagnosis is not None
        explaining = sorted({r for e in difference.diagnosis.explanations for r in e.rules},
                            key=rules.order)
        assert list(saved.rules[:len(explaining)]) == explaining
        assert set(original.rules) <= set(saved.rules)
        assert [r for r in saved.rules if r in original.rules and r not in explaining] == \
            [r for r in original.rules if r not in explaining]
        assert set(difference.rules) <= set(saved.rules)
        assert saved.observed == tuple(lazy(saved.config, list(saved.inputs)))
        assert saved.outputs == tuple(run_reference(AT, saved.config, saved.inputs))
        assert saved.first_diverging_input == difference.at is not None
        assert set(request(saved)) == {"format", "algorithm", "name", "description",
                                       "rules", "config", "inputs"}
        assert check("approximate_time", lazy, vectors=[saved]).sources[0].differ == 1
    assert shrunk, "no difference was shrunk: the description of a shrunk one is untested"


def test_saved_refusal_keeps_the_refusal_vec_r15(tmp_path: Path) -> None:
    """VEC-R15: a refused trace is saved as sent with the refusal's message."""
    [vector] = [v for v in shipped("approximate_time") if v.name == "several_sets_in_one_input"]

    def refusing(config: JSON, inputs: list[JSON]) -> list[JSON]:
        raise Refusal("two sets at once are not supported")

    report = check("approximate_time", refusing, vectors=[vector], save_to=tmp_path)
    [saved] = vectors.load(report.sources[0].differences[0].saved)
    assert saved.observed is None and saved.description == vector.description
    assert saved.observed_error == "two sets at once are not supported"


@pytest.mark.parametrize(("change", "field"), [
    ({"first_diverging_input": 0}, "first_diverging_input"),  # without observed
    ({"observed": [], "first_diverging_input": 99}, "first_diverging_input"),
    ({"observed": [], "first_diverging_input": True}, "first_diverging_input"),
    ({"observed": [{"input": 0.0, "kind": "pending", "id": "a"}]}, "observed[0].input"),
    ({"observed": {"input": 0}}, "observed"),
    ({"observed_error": 5}, "observed_error"),
])
def test_the_reader_checks_the_observed_fields_vec_r15(change: JSON, field: str,
                                                       tmp_path: Path) -> None:
    """VEC-R15: the optional observed fields are read and checked like the rest (VEC-R10:
    one error naming the file and field)."""
    [vector] = [v for v in shipped("approximate_time") if v.name == "several_sets_in_one_input"]
    path = tmp_path / "v.json"
    path.write_text(json.dumps({**vector.to_json(), **change}), encoding="utf-8")
    with pytest.raises(InvalidInput) as caught:
        vectors.load(path)
    assert caught.value.field.endswith(field)
    fine = {**vector.to_json(), "observed": [], "first_diverging_input": None}
    path.write_text(json.dumps(fine), encoding="utf-8")
    [read] = vectors.load(path)
    assert read.observed == () and read.first_diverging_input is None
    assert read.to_json() == fine


def test_plot_of_a_saved_difference_draws_expected_above_observed_pl_r16(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """PL-R16: `timealign plot` of a saved difference draws the reference's run above the
    implementation's, on one scale; the same vector gives the same bytes."""
    pytest.importorskip("matplotlib")
    report = check("approximate_time", lazy, save_to=tmp_path / "found")
    saved = report.sources[0].differences[0].saved
    name = vectors.load(saved)[0].name
    assert main(["plot", saved, "--out", str(tmp_path / "a.svg")]) == 0
    assert main(["plot", saved, "--out", str(tmp_path / "b.svg")]) == 0
    capsys.readouterr()
    picture = (tmp_path / "a.svg").read_bytes()
    assert picture == (tmp_path / "b.svg").read_bytes()
    top = picture.find(f"{name}: expected (reference)".encode())
    bottom = picture.find(f"{name}: observed (implementation)".encode())
    assert 0 <= top < bottom
