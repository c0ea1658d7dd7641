"""The search loops of ``timealign conform``: ``--where`` (CF-R31), several distinct
differences in one run (CF-R32), ``--budget`` (CF-R33), Ctrl-C (CF-R34) and the
interleaved explorer (CF-R35). Small budgets with fixed seeds; no test is timed (a budget
runs on a counting clock, or is tiny)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

from tests.conformance import no_age_penalty
from tests.conformance import two_faults as two_faults_adapter
from timealign import registry, vectors
from timealign.cli import main
from timealign.conformance import Command, InProcess, check, shipped
from timealign.conformance.harness import Judge, Progress, cause, check_explore, check_fuzz
from timealign.conformance.instances import instances, traces
from timealign.errors import InvalidInput

JSON = dict[str, Any]
AT = registry.get("approximate_time")
WHERE = "not age_penalty=0.0 (--where, CF-R31)"


def counting_clock(step: float = 1.0) -> Any:
    """A clock that advances ``step`` seconds each time it is read: budgets without time."""
    now = [0.0]

    def clock() -> float:
        now[0] += step
        return now[0]
    return clock


# --- --where (CF-R31) --------------------------------------------------------------------

def test_a_port_without_age_penalty_agrees_under_where_with_zero_refusals_cf_r31() -> None:
    """CF-R31: within ``--target ros2 --where age_penalty=0`` the stand-in port without an
    age penalty refuses nothing and agrees on every source; the vectors with another
    penalty are skipped and counted; every generated trace carries the value."""
    with Command(no_age_penalty.command()) as port:
        report = check("approximate_time", port, target="ros2", where=["age_penalty=0"],
                       fuzz=100, seed=1, explore=2)
    assert report.ok, report.text()
    by_source = {s.source: s for s in report.sources}
    assert all(s.refused == 0 and s.run > 0 for s in report.sources), report.text()
    assert by_source["vectors"].skipped[WHERE] > 0, report.text()
    assert not by_source["fuzz"].skipped and not by_source["explore"].skipped


def test_without_where_the_note_names_the_refused_values_not_the_target_cf_r20_cf_r31(
) -> None:
    """CF-R20, CF-R31: within a target, ten refusals in a row stop the source with the
    config values refused and the hint of --where, never "does it need --target?"."""
    with Command(no_age_penalty.command()) as port:
        report = check("approximate_time", port, vectors=[], explore=2, target="ros2")
    [source] = report.sources
    assert source.refused == 10 and "does it need" not in report.text()
    assert "refused 10 traces in a row within --target ros2, with configs" in source.note
    assert "age_penalty 0.1" in source.note and "--where KEY=VALUE" in source.note


def test_where_narrows_the_explorer_and_fuzz_and_composes_with_the_target_cf_r31() -> None:
    """CF-R31: every explorer instance and fuzz trace holds the values; a vector holding
    them runs, one without is skipped; ``0`` and ``0.0`` are one penalty."""
    from hypothesis import HealthCheck, Phase, find, settings

    from timealign.conformance.strategies import traces as fuzzed
    from timealign.conformance.where import parse

    where = parse(AT, ["age_penalty=0", "queue_size=5"],
                  [AT.codec.config_to_json(i.config) for i in instances(AT)])
    assert where is not None and where.changes == {"age_penalty": 0.0, "queue_size": 5}
    explored = [v for _, _, v in traces(AT, 1, None, where)]
    assert explored and all(v.config["age_penalty"] == 0.0 and v.config["queue_size"] == 5
                            for v in explored)
    target = AT.checks.traces.targets["ros2"] if AT.checks.traces else None
    drawn = find(fuzzed(AT, 10, target, where), lambda v: len(v.inputs) > 3,
                 settings=settings(database=None, phases=[Phase.generate],
                                   suppress_health_check=list(HealthCheck)))
    assert drawn.config["age_penalty"] == 0.0 and drawn.config["queue_size"] == 5
    assert where.outside(AT.codec, {"topics": 2, "queue_size": 5, "age_penalty": 0}) is None
    assert where.outside(AT.codec, {"topics": 2, "queue_size": 5}) == WHERE  # default 0.1
    assert "queue_size=5" in str(where.outside(AT.codec, {"topics": 2, "queue_size": 4,
                                                     "age_penalty": 0}))


def test_where_topics_drops_lower_bounds_of_another_length_cf_r31() -> None:
    """CF-R31: a value that makes another field of a generated config wrong (lower bounds
    for three topics under ``topics=1``) lets that field fall back to its default."""
    from timealign.conformance.where import parse

    where = parse(AT, ["topics=1"], [AT.codec.config_to_json(i.config) for i in instances(AT)])
    assert where is not None
    fitted = where.apply(AT.codec, {"topics": 3, "queue_size": 2,
                              "inter_message_lower_bounds": [1, 2, 3]})
    assert fitted == {"topics": 1, "queue_size": 2}


@pytest.mark.parametrize(("where", "named"), [
    ("age_penalties=0", "age_penalties is not a config field of approximate_time"),
    ("age_penalty=abc", "the reference refuses age_penalty=abc"),
    ("queue_size=-1", "the reference refuses queue_size=-1"),
    ("age_penalty", "must be KEY=VALUE"),
])
def test_where_usage_errors_exit_2_naming_it_cf_r31(
        where: str, named: str, capsys: pytest.CaptureFixture[str]) -> None:
    """CF-R31: a key the config does not have, or a value the reference refuses there (a
    wrong type), is exit 2 naming it, before any trace."""
    code = main(["conform", "approximate_time", "--cmd", "true", "--target", "ros2",
                 "--where", where])
    err = capsys.readouterr().err
    assert code == 2 and named in err and "CF-R31" in err, err


def test_target_list_shows_each_domain_cf_r18_cf_r31(capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    """CF-R18, CF-R31: one line per target, with its profile and the config values of its
    explorer instances (what --where may narrow)."""
    assert main(["conform", "approximate_time", "--target", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    ros2 = next(line for line in lines if line.startswith("approximate_time --target ros2:"))
    assert "observe upstream; explorer configs:" in ros2 and "age_penalty 0.1" in ros2


# --- several faults in one run (CF-R32) ------------------------------------------------

two_faults = two_faults_adapter.run  # in process, where the protocol is not the point


def test_one_fuzz_run_finds_shrinks_and_saves_two_faults_cf_r32(tmp_path: Path) -> None:
    """CF-R32, CF-R43: one fuzz run against an adapter with two seeded faults goes on after
    the first difference and finds the other; each is shrunk (no input can go without
    losing its cause, unless another entry's explanation reproduces what is left), saved,
    and still differs; the same seed finds the same traces."""
    with Command(two_faults_adapter.command()) as adapter:
        first = check("approximate_time", adapter, vectors=[], fuzz=300, seed=2,
                      save_to=tmp_path)
    [source] = first.sources
    reasons = {o["reason"] for d in source.differences for o in d.expected
               if o.get("kind") == "dropped"}
    assert {"superseded", "queue_overflow"} <= reasons, first.text()
    assert "distinct differences" in source.note
    judge = Judge(AT, InProcess(two_faults))
    for difference in source.differences:
        assert len(difference.vector.inputs) <= difference.original_size
        assert len(difference.vector.inputs) <= 8, first.text()
        trace = difference.vector
        key = cause(judge, trace, judge(trace))
        # CF-R43: a smaller trace of the same cause that another entry's explanation
        # reproduces belongs to that entry
        others = [e.variants for d in source.differences if d is not difference
                  and d.diagnosis is not None for e in d.diagnosis.explanations]
        for k in range(len(trace.inputs)):
            smaller = attrs.evolve(trace, inputs=trace.inputs[:k] + trace.inputs[k + 1:])
            verdict = judge(smaller)
            assert verdict.status != "differ" or cause(judge, smaller, verdict) != key or any(
                judge.diagnoser.reproduces(o, smaller, verdict.observed) for o in others)
    saved = [v for p in vectors.files([tmp_path]) for v in vectors.load(p)]
    assert len(saved) == len(source.differences) >= 2
    assert main(["check", str(tmp_path)]) == 0
    assert check("approximate_time", two_faults, vectors=saved).sources[0].differ == len(saved)
    again = check("approximate_time", two_faults, vectors=[], fuzz=300, seed=2)
    assert [d.vector for d in again.sources[0].differences] == [
        d.vector for d in source.differences]


def test_max_differences_bounds_fuzz_and_explore_cf_r32() -> None:
    """CF-R32: ``max_differences=1`` stops the fuzz at its first cause and keeps one
    explorer difference."""
    report = check("approximate_time", two_faults, vectors=[], fuzz=300, seed=2, explore=2,
                   max_differences=1)
    fuzz, explore = report.sources
    assert len(fuzz.differences) == 1 and "--max-differences 1 reached" in fuzz.note
    assert len(explore.differences) == 1


def test_explore_keeps_the_first_trace_of_each_cause_cf_r32() -> None:
    """CF-R32: the explorer reports each distinct cause once, by its first (shortest) trace."""
    report = check("approximate_time", two_faults, vectors=[], explore=3)
    [source] = report.sources
    firsts = [d.vector.inputs for d in source.differences]
    assert len(firsts) == len({json.dumps(list(f)) for f in firsts}) >= 2
    assert [len(f) for f in firsts] == sorted(len(f) for f in firsts)


def test_failures_of_one_kind_are_one_group_whatever_they_quote_cf_r32() -> None:
    """CF-R32: a port failing every trace of queue size 3 with a message quoting the trace's
    length is one failed group, whatever length it quotes: one entry, with every failed
    trace counted alike, beside both seeded faults, and the search goes on past it (it
    never fills the places of distinct differences)."""
    def failing(config: JSON, inputs: list[JSON]) -> list[JSON]:
        if config.get("queue_size") == 3:
            raise ValueError(f"queue size 3 is not supported ({len(inputs)} inputs)")
        return two_faults(config, inputs)

    report = check("approximate_time", failing, vectors=[], fuzz=300, seed=2,
                   max_differences=4)
    [fuzz] = report.sources
    failed = [d for d in fuzz.differences if d.status == "failed"]
    assert len(failed) == 1 and failed[0].alike == fuzz.failed > 1, report.text()
    reasons = {o["reason"] for d in fuzz.differences for o in d.expected
               if o.get("kind") == "dropped"}
    assert {"superseded", "queue_overflow"} <= reasons, report.text()
    assert f"and {fuzz.failed - 1} more traces alike" in report.text()


def test_the_grouping_is_one_function_a_judge_is_given_cf_r32() -> None:
    """CF-R32: fuzz and explore group differences by the judge's one grouping function:
    with every differing trace in one group, each source reports one entry, its first
    (explore: shortest) trace, with every differing trace counted alike; by default
    (:func:`cause`) every differing trace is counted in exactly one entry."""
    def one(_judge: Judge, _vector: Any, verdict: Any) -> str:
        return str(verdict.status)

    judge = Judge(AT, InProcess(two_faults), grouping=one)
    explore = check_explore(judge, 3, Progress(False))
    fuzz = check_fuzz(judge, 200, 2, Progress(False))
    for source in (explore, fuzz):
        [entry] = source.differences
        assert entry.alike == source.differ > 1, source.note
    assert len(explore.differences[0].vector.inputs) == 3  # two moves and the end: shortest
    grouped = check_explore(Judge(AT, InProcess(two_faults)), 3, Progress(False))
    assert len(grouped.differences) >= 2 and "distinct differences" in grouped.note
    assert sum(d.alike for d in grouped.differences) == grouped.differ


# --- --budget (CF-R33) and Ctrl-C (CF-R34) -----------------------------------------------

def test_budget_cuts_fuzz_and_explore_and_says_so_cf_r33() -> None:
    """CF-R33: on a clock advancing 1 s per reading, a 20 s budget cuts both sources; each
    says it was cut by the budget and what it covered."""
    judge = Judge(AT, _reference_subject())
    fuzz = check_fuzz(judge, 1000, 1, Progress(False), budget=20, clock=counting_clock())
    explore = check_explore(judge, 4, Progress(False), budget=20, clock=counting_clock())
    for source in (fuzz, explore):
        assert source.stopped == "budget" and "cut by --budget 20 s after" in source.note
        assert 0 < source.run < 1000
    assert "depth 1 in part" in explore.note


def test_budget_on_the_command_line_writes_the_report_cf_r33(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CF-R33: a tiny ``--budget`` still prints the summary and writes the report, saying
    the source was cut by the budget."""
    report = tmp_path / "report.json"
    vector = Path(__file__).resolve().parents[2] / "vectors" / "approximate_time" / \
        "exact_match_publishes_at_once.json"
    code = main(["conform", "approximate_time", "--cmd",
                 f"{sys.executable} -m timealign.conformance.adapter approximate_time",
                 "--vectors", str(vector), "--explore", "3", "--budget", "0.001",
                 "--report", str(report), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0 and "cut by --budget 0.001 s" in out, out
    body = json.loads(report.read_text(encoding="utf-8"))
    assert body["sources"]["explore"]["stopped"] == "budget"


def _reference_subject() -> Any:
    from timealign.conformance import implementation

    return InProcess(implementation(AT))


def test_ctrl_c_prints_the_summary_writes_the_report_exit_130_cf_r34(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """CF-R34, CLI-R2: Ctrl-C during the explorer ends the run with the summary of what was
    checked, the JSON report, the later sources not run, and exit 130."""
    asked = [0]
    original = Judge.__call__
    suite = len(shipped("approximate_time"))
    later = suite + 5  # interrupted in fuzz, after the whole suite

    def interrupted_later(self: Judge, vector: Any) -> Any:
        asked[0] += 1
        if asked[0] > later:
            raise KeyboardInterrupt
        return original(self, vector)

    monkeypatch.setattr(Judge, "__call__", interrupted_later)
    report = tmp_path / "report.json"
    code = main(["conform", "approximate_time", "--cmd",
                 f"{sys.executable} -m timealign.conformance.adapter approximate_time",
                 "--fuzz", "50", "--explore", "3", "--report", str(report), "--quiet"])
    captured = capsys.readouterr()
    assert code == 130
    assert "explore  not run: interrupted (Ctrl-C)" in captured.out, captured.out
    assert f"interrupted (Ctrl-C) after {later - suite} of 50 traces" in captured.out
    assert "interrupted (Ctrl-C): the report covers the traces checked so far" in captured.out
    assert captured.err.strip().endswith("timealign: interrupted")
    body = json.loads(report.read_text(encoding="utf-8"))
    assert body["interrupted"] is True and body["not_run"] == ["explore"]
    assert body["sources"]["vectors"]["run"] == suite
    fuzz = body["sources"].get("fuzz")  # a signal before its first trace: fuzz not run
    assert (fuzz or {}).get("stopped") == "interrupted" or body["not_run"] == ["fuzz"], body
    assert body["sources"]["fuzz"]["run"] == later - suite


def test_ctrl_c_in_fuzz_keeps_what_it_found_cf_r34() -> None:
    """CF-R34: Ctrl-C in the middle of a fuzz run keeps the differences found so far."""
    calls = [0]

    def faulty_then_interrupted(config: JSON, inputs: list[JSON]) -> list[JSON]:
        calls[0] += 1
        if calls[0] > 150:
            raise KeyboardInterrupt
        return two_faults(config, inputs)

    report = check("approximate_time", faulty_then_interrupted, vectors=[], fuzz=1000, seed=2,
                   explore=2)
    [fuzz] = report.sources
    assert report.interrupted and fuzz.stopped == "interrupted" and report.not_run == [
        "explore"]
    assert fuzz.differences and "interrupted (Ctrl-C) after" in fuzz.note


@pytest.mark.parametrize("signals", [("SIGINT", "SIGINT"), ("SIGTERM",),
                                     ("SIGINT", "SIGTERM", "SIGINT")])
def test_signals_to_the_process_group_print_the_summary_and_write_the_report_cf_r34(
        signals: tuple[str, ...], tmp_path: Path) -> None:
    """CF-R34, CLI-R2: SIGINT sent to the whole process group twice (as `timeout -s INT`
    does: the command, then its group), SIGTERM, or a mix, during fuzz: the summary is
    printed, the report written with the process's exit status 130, whatever the later
    signals find the command doing."""
    import os
    import signal
    import subprocess

    report = tmp_path / "report.json"
    vector = Path(__file__).resolve().parents[2] / "vectors" / "approximate_time" / \
        "exact_match_publishes_at_once.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "timealign", "conform", "approximate_time", "--cmd",
         two_faults_adapter.command(), "--vectors", str(vector), "--fuzz", "1000000",
         "--quiet", "--report", str(report)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert process.stderr is not None
    assert process.stderr.readline().startswith("conform: vectors")  # fuzz is running now
    for name in signals:
        os.killpg(process.pid, getattr(signal, name))
    out, err = process.communicate(timeout=60)
    said = "Ctrl-C" if signals[0] == "SIGINT" else signals[0]
    assert process.returncode == 130, out + err
    assert f"interrupted ({said}): the report covers the traces checked so far" in out, out
    assert "Traceback" not in err and err.strip().endswith("timealign: interrupted"), err
    body = json.loads(report.read_text(encoding="utf-8"))
    assert body["exit_status"] == 130 and body["interrupted"] is True
    fuzz = body["sources"].get("fuzz")  # a signal before its first trace: fuzz not run
    assert (fuzz or {}).get("stopped") == "interrupted" or body["not_run"] == ["fuzz"], body


# --- interleaved explorer (CF-R35) -------------------------------------------------------

def test_explorer_interleaves_instances_depth_by_depth_cf_r35() -> None:
    """CF-R35: every instance's one-move traces come before any two-move trace, and within
    a depth the instances take turns by chunks; the traces are those of a walk of each
    instance alone."""
    walked = list(traces(AT, 2, chunk=3))
    levels = [level for _, level, _ in walked]
    assert levels == sorted(levels)
    first = [name for name, level, _ in walked if level == 1][:6]
    assert len(set(first)) >= 2  # a second instance's turn before the first is done
    from timealign.conformance.instances import walk
    for item in instances(AT):
        mine = [v for name, _, v in walked if name == item.name]
        assert len(mine) == sum(1 for _ in walk(item.moves, 2))


def test_explorer_instance_names_follow_where_cf_r31() -> None:
    """CF-R31: after ``--where queue_size=9`` no ApproximateTime instance is still named
    ``q1`` (its name spells the values it now runs with, ``at/n2-q9-any-order``), an
    instance already at 9 keeps its name; a name spelling none of the values changed gets
    them appended (``eb/two-keys-batching_window7``), one spelling them is spelled anew
    (``eb/zero-window`` as ``eb/window-7``, ``rb/factor-3.5`` as ``rb/factor-2``). The
    traces' vector names follow."""
    from timealign.conformance import probes
    from timealign.conformance.where import parse

    where = parse(AT, ["queue_size=9"], probes(AT))
    walked = list(traces(AT, 1, None, where))
    names = {name for name, _, _ in walked}
    assert not any("q1" in name or "q2" in name for name in names), names
    assert {"at/n2-q9-any-order", "at/n3-q9-ties", "at/n2-bounds"} <= names, names
    for name, _, vector in walked:
        assert vector.name.startswith(name.replace("/", "_") + "_")
        assert vector.config["queue_size"] == 9
    penalty = {name for name, _, _ in traces(AT, 1, None, parse(AT, ["age_penalty=0"],
                                                                  probes(AT)))}
    assert "at/n2-q1-any-order-age_penalty0.0" in penalty, penalty  # spelled by no name
    for algorithm, value, expected in (
            ("event_time_batcher", "batching_window=7",
             {"eb/two-keys-batching_window7", "eb/window-7"}),  # was eb/zero-window
            ("rate_aware_batcher", "timeout_factor=2",
             {"rb/factor-2", "rb/far-outliers-timeout_factor2"})):  # was rb/factor-3.5
        other = registry.get(algorithm)
        narrowed = parse(other, [value], probes(other))
        walked_names = {name for name, _, _ in traces(other, 1, None, narrowed)}
        assert expected <= walked_names, walked_names


def test_explorer_refuses_an_instance_the_where_makes_invalid_cf_r31_cf_r35() -> None:
    """CF-R31: an instance whose config the reference refuses with the values is left out."""
    from timealign.conformance.where import parse

    where = parse(AT, ["inter_message_lower_bounds=[1,1]"],
                  [AT.codec.config_to_json(i.config) for i in instances(AT)])
    assert where is not None
    names = {name for name, _, _ in traces(AT, 1, None, where)}
    assert names and all(
        i.config.topics == 2 for i in instances(AT) if i.name in names)
    with pytest.raises(InvalidInput) as caught:
        parse(AT, ["inter_message_lower_bounds=[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]"],
              [AT.codec.config_to_json(i.config) for i in instances(AT)])
    assert caught.value.rule == "CF-R31"
