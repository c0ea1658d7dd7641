"""The protocol client against misbehaving commands (CF-R1 to CF-R5): every failure is a
clear verdict for that one trace, the command is restarted, and later traces still agree."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest

from timealign.cli import main
from timealign.conformance import Command, check
from timealign.conformance.protocol import Failed, Outputs, Refused, parse
from timealign.vectors import Vector

CONFIG = {"topics": 2, "queue_size": 2}
INPUTS = ({"op": "message", "topic": 0, "stamp": 5, "id": "a"},
          {"op": "message", "topic": 1, "stamp": 6, "id": "b"})


def trace(name: str) -> Vector:
    return Vector(algorithm="approximate_time", name=name, config=CONFIG, inputs=INPUTS)


def misbehaving(mode: str) -> Command:
    return Command(f"{sys.executable} -m tests.conformance.misbehaving {mode}", timeout=3.0)


def run(mode: str) -> list[tuple[str, str]]:
    """good, bad, good through one command: (status, message) of each."""
    with misbehaving(mode) as command:
        report = check("approximate_time", command,
                       vectors=[trace("good1"), trace("bad"), trace("good2")])
    source = report.sources[0]
    assert (source.run, source.agree) == (3, 2), report.text()
    assert len(source.differences) == 1 and source.differences[0].vector.name == "bad"
    difference = source.differences[0]
    return [(difference.status, difference.message)]


def test_answers_in_one_process_cf_r1_cf_r2_cf_d1() -> None:
    """CF-R1, CF-R2, CF-D1: one process serves every trace; the answers are the reference's."""
    with misbehaving("none") as command:
        report = check("approximate_time", command, vectors=[trace("a"), trace("b")])
        assert command.starts == 1
    assert report.ok and report.sources[0].agree == 2


def test_crash_reports_exit_status_and_stderr_cf_r4() -> None:
    """CF-R4: a command that dies is reported with its status and stderr tail, restarted."""
    [(status, message)] = run("crash")
    assert status == "failed"
    assert "exited with status 3" in message and "boom: cannot handle this trace" in message


def test_stderr_is_quoted_without_terminal_escapes_from_a_line_start_cf_r4_cf_r27() -> None:
    """CF-R4, CF-R27: a command dying after a long stderr in terminal colours is quoted
    without the escapes (colours, a window title) and from the start of a line, never from
    the middle of one."""
    [(status, message)] = run("colour_crash")
    assert status == "failed" and "exited with status 3" in message
    quoted = message.partition("; stderr: ")[2]
    assert "\x1b" not in quoted and "\x07" not in quoted and "\r" not in quoted, repr(quoted)
    lines = quoted.splitlines()
    assert lines[-2:] == ["error: cannot", "handle this trace"]
    assert re.fullmatch(r"line \d{3}: \.{30}", lines[0]), lines[0]


def test_hang_times_out_and_restarts_cf_r4() -> None:
    """CF-R4: no answer within the timeout fails the trace; the next trace is answered."""
    started = time.monotonic()
    [(status, message)] = run("hang")
    assert status == "failed" and "no answer within 3 s" in message
    assert time.monotonic() - started < 30


@pytest.mark.parametrize(("mode", "expected"), [
    ("garbage", "garbage answer (not JSON): 'Segmentation fault (core dumped)'"),
    ("wrong_name", "answer names trace 'other', expected 'bad'"),
    ("no_outputs", "answer has no list of output objects"),
])
def test_bad_answer_is_a_clear_failure_cf_r5(mode: str, expected: str) -> None:
    """CF-R5: garbage, a wrong name or a missing output list fail that trace only."""
    [(status, message)] = run(mode)
    assert status == "failed" and expected in message


def test_extra_line_cannot_shift_later_answers_cf_r5() -> None:
    """CF-R5: a command answering twice is caught at the next trace, restarted, and the
    trace after that agrees again."""
    with misbehaving("extra_line") as command:
        report = check("approximate_time", command,
                       vectors=[trace("bad"), trace("good1"), trace("good2")])
    source = report.sources[0]
    assert (source.agree, source.failed) == (2, 1), report.text()
    assert "answer names trace 'bad', expected 'good1'" in source.differences[0].message


def test_missing_command_fails_every_trace_then_stops_cf_r5() -> None:
    """CF-R4, CF-R5: a command that cannot start fails clearly (shell status 127) and the
    source stops after 10 failures in a row."""
    with Command("./no-such-implementation --serve", timeout=3.0) as command:
        report = check("approximate_time", command, vectors=[trace(f"t{k}") for k in range(30)])
    source = report.sources[0]
    assert source.run == 10 and source.failed == 10 and not report.ok
    assert "stopped after 10 failed traces in a row" in source.note
    assert "exited with status 127" in source.differences[0].message


def test_refusal_agrees_only_with_a_rejected_config_cf_r3() -> None:
    """CF-R3, CF-R19: refusing a trace the reference runs is a refusal, reported with the
    trace as sent (not shrunk); refusing a config the reference rejects agrees."""
    rejected = Vector(algorithm="approximate_time", name="bad_config",
                      config={"topics": 2, "queue_size": 0}, inputs=INPUTS)
    with misbehaving("refuse") as command:
        report = check("approximate_time", command, vectors=[trace("bad"), rejected])
    source = report.sources[0]
    assert (source.agree, source.differ, source.refused) == (1, 0, 1)
    assert not report.ok
    [refusal] = source.differences
    assert (refusal.status, refusal.message) == ("refused", "config not supported")
    assert len(refusal.vector.inputs) == len(INPUTS) == refusal.original_size
    assert "refused: config not supported" in report.text()


def test_parse_answer_lines_cf_r2_cf_r3_cf_r5() -> None:
    """CF-R2, CF-R3, CF-R5: the answer line decoder."""
    assert parse(b'{"name":"x","outputs":[{"input":0,"kind":"k"}]}', "x") == \
        Outputs(({"input": 0, "kind": "k"},))
    assert parse(b'{"name":"x","error":"no"}', "x") == Refused("no")
    assert isinstance(parse(b"[1]", "x"), Failed)
    assert isinstance(parse(b'{"name":"x","outputs":[1]}', "x"), Failed)
    assert isinstance(parse(b"\xff\xfe", "x"), Failed)


def test_a_command_that_never_answers_is_not_blamed_on_rules_cf_r27(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CF-R27, CF-R17, CF-R39: an adapter that cannot start (exit 127) or dies on an import
    error is reported as the command failing, with its exit status and the last lines of its
    stderr, exit 6 (failures alone); no rule is named, no later source is run."""
    code = main(["conform", "approximate_time", "--cmd", "./no-such-implementation --serve",
                 "--explore", "1", "--quiet", "--report", str(tmp_path / "report.json")])
    out = capsys.readouterr().out
    assert code == 6, out
    assert "DIFFERS" not in out and "rules" not in out and "config: null" not in out
    assert "  explore  not run: the command never answered" in out
    assert out.splitlines()[-2:] == [
        "FAILED: the command under test never answered (10 traces failed): the command "
        "exited with status 127 without answering; its stderr ends:",
        "    /bin/sh: 1: ./no-such-implementation: not found"]
    body = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert body["differs_on"] == [] and body["never_answered"] and body["not_run"] == [
        "explore"]
    assert all(d["rules"] == [] for d in body["sources"]["vectors"]["differences"])

    broken = tmp_path / "adapter.py"
    broken.write_text("import timealign_no_such_module\n", encoding="utf-8")
    with Command(f"{sys.executable} {broken}", timeout=3.0) as command:
        report = check("approximate_time", command, vectors=[trace("a")], explore=1)
    assert report.never_answered() and report.rules == () and report.not_run == ["explore"]
    text = report.text().splitlines()
    assert text[-5].startswith("FAILED: the command under test never answered (1 trace "
                               "failed): the command exited with status 1 without answering")
    assert text[-1] == "    ModuleNotFoundError: No module named 'timealign_no_such_module'"


def test_a_failed_trace_among_answers_names_no_rule_cf_r27() -> None:
    """CF-R27: one trace the command died on, among answered ones, is listed as failed with
    its stderr and no rule; the verdict counts it without blaming a rule."""
    with misbehaving("crash") as command:
        report = check("approximate_time", command,
                       vectors=[trace("good1"), trace("bad"), trace("good2")])
    [failure] = report.sources[0].differences
    assert failure.rules == () and failure.vector.rules == () and not report.never_answered()
    text = report.text()
    assert "- vectors failed: bad, 2 inputs (the trace as sent)\n    failed: the command " \
           "exited with status 3 without answering; its stderr ends:\n      boom: cannot " \
           "handle this trace\n" in text
    assert "observed" not in text and "rules" not in text
    assert text.splitlines()[-1] == ("FAILED: the command under test gave no usable answer "
                                     "to 1 of 3 traces (above)")
