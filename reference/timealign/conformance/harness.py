"""The conformance harness: run traces through the reference and an implementation,
compare what both report, shrink every divergence and report it by rule.

Sources of traces (CF-R6 to CF-R8): the shipped or given vectors, random traces from the
algorithm's strategies (Hypothesis finds and shrinks a divergence), and every trace of the
bounded explorer's small instances up to a depth; each algorithm keeps its strategies,
instances, profiles, rule map and targets in its own package (``Algorithm.checks.traces``). With
a target (CF-R18) traces outside its domain are skipped and counted; refusals are
reported as refusals (CF-R19, CF-R20). The reference is an :class:`Algorithm`
descriptor (``timealign.registry.get(name)`` by default); the implementation is anything
with an ``ask(vector) -> Answer`` method: a :class:`~timealign.conformance.protocol.Command`
or :class:`InProcess` around a Python function.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import Counter
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from random import Random
from typing import Any, Protocol

import attrs

from timealign import Algorithm, jsontext
from timealign.algorithm import run_json
from timealign.conformance import observe, rules
from timealign.conformance.catalogue import Implementation
from timealign.conformance.diagnose import Diagnoser, Diagnosis
from timealign.conformance.protocol import STDERR_MARK, Answer, Failed, Outputs, Refused
from timealign.conformance.where import Where, config_values
from timealign.errors import (
    EXIT_DIFFERENT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_UNANSWERED,
    InvalidInput,
)
from timealign.outputs import filled, resolved
from timealign.progress import Progress as Progress  # re-exported: the harness API
from timealign.progress import counted
from timealign.traces import Profile, Target
from timealign.vectors import Vector

JSON = dict[str, Any]
FAILURES_IN_A_ROW = 10  # a source stops after this many consecutive failed traces (CF-R5)
REFUSALS_IN_A_ROW = 10  # ... or refused traces (CF-R20)
SAFE_NAME = 80  # characters of a vector name kept in a saved file's name (CF-R16)
STDERR_LINES = 5  # last lines of the command's stderr a failure shows (CF-R27)
#: differences each source details by default (CF-R32, CF-R38): the suite's traces per
#: status, fuzz's and explore's distinct ones; the rest are named
MAX_DIFFERENCES = 10
SHRINK_SECONDS = 20.0  # Hypothesis's shrinking of one difference (CF-R7)
Clock = Callable[[], float]  # seconds; the budgets' wall clock, at this edge only (CF-R33)


class Subject(Protocol):
    """What the harness talks to: one answer per trace."""

    def ask(self, request: JSON) -> Answer: ...


class Refusal(Exception):
    """Raised by a Python implementation that refuses a whole trace (CF-R3)."""


@attrs.frozen
class InProcess:
    """A Python implementation: ``function(config JSON, inputs JSON) -> outputs JSON``.

    :class:`Refusal` refuses the trace (CF-R3); any other exception fails it (CF-R5).
    """

    function: Implementation

    def ask(self, request: JSON) -> Answer:
        try:
            produced = self.function(request["config"], list(request["inputs"]))
        except Refusal as refusal:
            return Refused(str(refusal))
        except Exception as error:
            return Failed(f"raised {type(error).__name__}: {error}")
        if not isinstance(produced, list) or not all(isinstance(o, dict) for o in produced):
            return Failed(f"returned {type(produced).__name__}, not a list of output objects",
                          answered=True)
        return Outputs(tuple(produced))


#: The reference's outputs in vector form: one loop for the harness, the vectors and
#: ``timealign check`` (:func:`timealign.algorithm.run_json`).
run_reference = run_json


def implementation(algorithm: Algorithm[Any, Any, Any, Any]) -> Implementation:
    """A descriptor (for example the reference with its fast step) as an implementation."""
    return lambda config, inputs: run_reference(algorithm, config, inputs)


def request(vector: Vector) -> JSON:
    """The protocol line of a trace: the vector without its outputs, nor what another
    implementation was seen to answer (CF-R2, VEC-R15)."""
    return attrs.evolve(vector, outputs=None, observed=None, first_diverging_input=None,
                        observed_error="").to_json()


@attrs.frozen
class Verdict:
    """How one trace went: ``agree``, ``differ``, ``refused`` (CF-R19), ``failed`` (CF-R15),
    or ``skipped`` (outside the target, CF-R18; the implementation was not asked)."""

    status: str
    expected: tuple[JSON, ...]
    observed: tuple[JSON, ...] = ()
    message: str = ""
    at: int | None = None
    answered: bool = False  # a failed trace the command did write a line for (CF-R27)

    def answer_text(self) -> str:
        """What the implementation answered, as the report quotes it (CF-R37)."""
        if self.status == "refused":
            return json.dumps({"error": self.message})
        if self.status == "failed":
            return f"no usable answer ({self.message})"
        return json.dumps(list(self.observed))


@attrs.frozen
class Difference:
    """One (minimal) divergence, as reported and saved (CF-R15, CF-R16)."""

    source: str
    status: str
    vector: Vector  # the minimal trace with the reference's full expected outputs
    at: int | None
    input: JSON | None
    expected: tuple[JSON, ...]
    observed: tuple[JSON, ...]
    message: str
    rules: tuple[str, ...]
    original_size: int
    saved: str = ""
    alike: int = 1  # the traces of the run in its group, itself included (CF-R32)
    diagnosis: Diagnosis | None = None  # of a differing trace by the catalogue (CF-R42)

    def to_json(self) -> JSON:
        return {"source": self.source, "status": self.status, "name": self.vector.name,
                "alike": self.alike,
                "diagnosis": self.diagnosis.to_json() if self.diagnosis is not None else None,
                "inputs": len(self.vector.inputs), "original_inputs": self.original_size,
                "at": self.at, "input": self.input, "expected": list(self.expected),
                "observed": list(self.observed), "message": self.message,
                "rules": list(self.rules), "saved": self.saved or None}


@attrs.define
class SourceReport:
    """The counts of one source of traces (CF-R15, CF-R18, CF-R19)."""

    source: str
    run: int = 0
    agree: int = 0
    differ: int = 0
    failed: int = 0
    refused: int = 0
    skipped: Counter[str] = attrs.Factory(Counter)  # reason -> traces outside the target
    differences: list[Difference] = attrs.Factory(list)
    note: str = ""
    stopped: str = ""  # "budget" or "interrupted" when the source was cut (CF-R33, CF-R34)
    signal: str = ""  # what interrupted it: "Ctrl-C" or a signal's name (CF-R34)
    #: CF-R38: status -> the name of every trace of that status (differ, refused, failed)
    named: dict[str, list[str]] = attrs.Factory(dict)
    garbled: int = 0  # failed traces the command answered with an unusable line (CF-R27)

    in_a_row: int = 0
    refused_in_a_row: int = 0
    refused_configs: list[JSON] = attrs.Factory(list)  # of the refusals in a row (CF-R20)

    def count(self, verdict: Verdict, name: str | None = None) -> None:
        """Count one trace; ``name`` names it in the report when it did not agree (CF-R38)."""
        if verdict.status == "skipped":
            self.skipped[verdict.message] += 1
            return
        self.run += 1
        if verdict.status == "agree":
            self.agree += 1
        elif verdict.status == "differ":
            self.differ += 1
        elif verdict.status == "refused":
            self.refused += 1
        else:
            self.failed += 1
            self.garbled += verdict.answered
        if name is not None and verdict.status != "agree":
            self.named.setdefault(verdict.status, []).append(name)
        self.in_a_row = self.in_a_row + 1 if verdict.status == "failed" else 0
        self.refused_in_a_row = self.refused_in_a_row + 1 if verdict.status == "refused" else 0
        if verdict.status != "refused":
            self.refused_configs.clear()

    def refusing(self, vector: Vector, verdict: Verdict) -> None:
        """Remember the config of a refused trace, for the note of CF-R20."""
        if verdict.status == "refused":
            self.refused_configs.append(dict(vector.config))

    def detail(self, status: str, most: int = MAX_DIFFERENCES) -> bool:
        """Whether a trace of ``status`` is still detailed (shrunk, shown, saved): up to
        ``most`` per status, so refusals never take the places of differences (CF-R38)."""
        return sum(d.status == status for d in self.differences) < most

    def more(self) -> list[tuple[str, list[str]]]:
        """(status, names) of the named traces not detailed, per status (CF-R38)."""
        detailed = Counter((d.status, d.vector.name) for d in self.differences)
        left: list[tuple[str, list[str]]] = []
        for status in ("differ", "refused", "failed"):
            names = []
            for name in self.named.get(status, []):
                if detailed[(status, name)]:
                    detailed[(status, name)] -= 1
                else:
                    names.append(name)
            if names:
                left.append((status, names))
        return left

    def progress_line(self, total: int | None) -> str:
        """The progress line of CF-R15 (:class:`timealign.progress.Progress`)."""
        run = f"{self.run}/{total} traces" if total else counted(self.run, "trace")
        return (f"conform: {self.source} {run}, {self.differ} differ, "
                f"{self.failed} failed")

    def given_up(self, target: str | None = None) -> bool:
        """CF-R5, CF-R20: a command failing or refusing trace after trace is not run any
        further; within a target the note names the config values it refused."""
        if self.in_a_row >= FAILURES_IN_A_ROW:
            said = f"stopped after {FAILURES_IN_A_ROW} failed traces in a row"
        elif self.refused_in_a_row >= REFUSALS_IN_A_ROW and target is None:
            said = (f"the implementation refused {REFUSALS_IN_A_ROW} traces in a row: wrong "
                    "algorithm, or does it need `--target`?")
        elif self.refused_in_a_row >= REFUSALS_IN_A_ROW:
            said = (f"the implementation refused {REFUSALS_IN_A_ROW} traces in a row within "
                    f"--target {target}, with configs {config_values(self.refused_configs)}: if it "
                    "takes only some of them, narrow the traces with --where KEY=VALUE")
        else:
            return False
        self.note = (self.note + "; " if self.note else "") + said
        return True

    def cut(self, how: str, said: str, signal: str = "") -> None:
        """Mark the source as cut short (CF-R33: ``budget``, CF-R34: ``interrupted`` by
        ``signal``)."""
        self.stopped, self.signal = how, signal
        self.note = (self.note + "; " if self.note else "") + said

    def skipped_text(self) -> str:
        """``12 skipped: ros1 arithmetic (AT-R16); 2 skipped: ...`` (CF-R18)."""
        return "; ".join(f"{n} skipped: {why}" for why, n in sorted(
            self.skipped.items(), key=lambda item: (-item[1], item[0])))

    def to_json(self) -> JSON:
        return {"run": self.run, "agree": self.agree, "differ": self.differ,
                "refused": self.refused, "failed": self.failed,
                "skipped": sum(self.skipped.values()), "skipped_why": dict(self.skipped),
                "note": self.note, "stopped": self.stopped or None,
                "differences": [d.to_json() for d in self.differences],
                "traces": {status: list(self.named.get(status, []))
                           for status in ("differ", "refused", "failed")}}


@attrs.define
class Report:
    """Everything one conformance run found (CF-R15)."""

    algorithm: str
    implementation: str
    observe: str
    sources: list[SourceReport] = attrs.Factory(list)
    target: str | None = None
    not_run: list[str] = attrs.Factory(list)  # sources left out: never answered (CF-R27)
    signal: str = ""  # what interrupted the run between two sources (CF-R34)

    @property
    def ok(self) -> bool:
        """True when every trace of every source agreed (CF-R17: exit status 0)."""
        return all(s.differ == 0 and s.failed == 0 and s.refused == 0 for s in self.sources)

    @property
    def rules(self) -> tuple[str, ...]:
        """The rules named by the differing traces; a failed or refused trace names none in
        the verdict (CF-R27, CF-R39)."""
        return tuple(sorted({r for s in self.sources for d in s.differences
                             if d.status == "differ" for r in d.rules}, key=rules.order))

    def explained(self) -> tuple[list[str], int]:
        """CF-R42: the labels of the differences' best explanations, in the order found
        (each once), and how many differing entries no catalogued variant explains."""
        labels: dict[str, None] = {}
        unexplained = 0
        for d in (d for s in self.sources for d in s.differences):
            if d.diagnosis is None:
                continue
            if d.diagnosis.explanations:
                labels[d.diagnosis.explanations[0].label] = None
            else:
                unexplained += 1
        return list(labels), unexplained

    @property
    def interrupted(self) -> bool:
        """Ctrl-C or a signal ended the run: the report covers what was checked (CF-R34)."""
        return bool(self.signal) or any(s.stopped == "interrupted" for s in self.sources)

    @property
    def interrupted_by(self) -> str:
        """What ended the run early (CF-R34): ``Ctrl-C``, ``SIGTERM``; empty when nothing."""
        return self.signal or next((s.signal or "Ctrl-C" for s in self.sources
                                    if s.stopped == "interrupted"), "")

    def never_answered(self) -> bool:
        """CF-R27: the command under test failed every trace it was asked without writing
        a line (it could not start, or died or hung before any answer), so nothing was
        compared. A command that answered garbage did answer: the report quotes it."""
        return any(s.failed for s in self.sources) and not any(
            s.agree or s.differ or s.refused or s.garbled for s in self.sources)

    def exit_code(self) -> int:
        """CF-R39: 130 the run was interrupted (CF-R34); else 0 every trace agreed; 1 a
        trace differed; else 6 a trace failed; else 5 a trace was refused."""
        if self.interrupted:
            return EXIT_INTERRUPTED
        if any(s.differ for s in self.sources):
            return EXIT_DIFFERENT
        if any(s.failed for s in self.sources):
            return EXIT_UNANSWERED
        if any(s.refused for s in self.sources):
            return EXIT_REFUSED
        return EXIT_OK

    def to_json(self) -> JSON:
        return {"format": "timealign.conformance/1", "algorithm": self.algorithm,
                "implementation": self.implementation, "target": self.target,
                "observe": self.observe,
                "ok": self.ok, "verdict": self.verdict()[0],
                "exit_status": self.exit_code(), "differs_on": list(self.rules),
                "explained_by": self.explained()[0], "unexplained": self.explained()[1],
                "never_answered": self.never_answered(), "not_run": list(self.not_run),
                "interrupted": self.interrupted,
                "sources": {s.source: s.to_json() for s in self.sources}}

    def text(self) -> str:
        """The human report printed by ``timealign conform``."""
        aimed = f"target: {self.target}, " if self.target else ""
        lines = [f"conformance of {self.implementation!r} to {self.algorithm} "
                 f"({aimed}observe: {self.observe})"]
        for s in self.sources:
            refused = f"  refused {s.refused:4}" if s.refused else ""
            notes = "; ".join(n for n in (s.skipped_text(), s.note) if n)
            lines.append(f"  {s.source:8} run {s.run:6}  agree {s.agree:6}  differ {s.differ:4}"
                         f"{refused}  failed {s.failed:4}{'  (' + notes + ')' if notes else ''}")
        for name in self.not_run:
            lines.append(f"  {name:8} not run: " + (f"interrupted ({self.interrupted_by})"
                                                    if self.interrupted
                                                    else "the command never answered"))
        never = self.never_answered()
        for s in self.sources:
            for d in s.differences:
                if d.status == "failed" and never:
                    continue  # the verdict says it once (CF-R27)
                if d.status in ("refused", "failed"):
                    lines.append(f"- {s.source} {d.status}: {d.vector.name}, "
                                 f"{counted(len(d.vector.inputs), 'input')} (the trace as sent)")
                    lines.extend(_failure(f"    {d.status}: {d.message}", "      "))
                else:
                    where = "config" if d.at is None else f"input {d.at}"
                    lines.append(f"- {s.source} {d.status}: {d.vector.name}, "
                                 f"{counted(len(d.vector.inputs), 'input')} (from "
                                 f"{d.original_size}), first at {where}"
                                 + (f": {json.dumps(d.input)}" if d.input is not None else ""))
                    if d.message:
                        lines.append(f"    {d.message}")
                if d.diagnosis is not None:  # CF-R42
                    lines.append(f"    {d.diagnosis.text()}")
                if d.alike > 1:  # CF-R32: the others of its group
                    others = counted(d.alike - 1, "more trace", "more traces")
                    lines.append(f"    and {others} alike")
                lines.append(f"    expected {json.dumps(list(d.expected))}")
                if d.status == "differ":
                    lines.append(f"    observed {json.dumps(list(d.observed))}")
                if d.rules:
                    lines.append(f"    rules {', '.join(d.rules)}")
                if d.saved:
                    lines.append(f"    saved {d.saved}")
            for status, names in s.more():  # CF-R38: every other one is in the JSON report
                lines.append(f"- {s.source}: and {len(names)} more {status} "
                             f"(see --report), the first {names[0]}")
        labels, unexplained = self.explained()
        if labels or unexplained:  # CF-R42
            lines.append("diagnosis: " + "; ".join(
                ([f"explained by {', '.join(labels)}"] if labels else [])
                + ([f"{counted(unexplained, 'difference')} not explained by any catalogued "
                    "variant"] if unexplained else [])))
        if self.interrupted:
            lines.append(f"interrupted ({self.interrupted_by}): the report covers the traces "
                         "checked so far")
        lines.extend(self.verdict())
        return "\n".join(lines)

    def verdict(self) -> list[str]:
        """The closing lines (CF-R15, CF-R27, CF-R39): ``AGREES``; ``DIFFERS on <rules>``
        only when a trace differed; ``REFUSED`` for traces the implementation refused;
        ``FAILED`` for traces it gave no usable answer to, with how the command failed,
        never blamed on rules."""
        if self.ok:
            return ["AGREES"]
        failed = sum(s.failed for s in self.sources)
        refused = sum(s.refused for s in self.sources)
        run = sum(s.run for s in self.sources)
        first = next((d.message for s in self.sources for d in s.differences
                      if d.status == "failed"), "")
        if self.never_answered():
            return _failure(f"FAILED: the command under test never answered "
                            f"({counted(failed, 'trace')} failed): {first}", "    ")
        found = [] if not any(s.differ for s in self.sources) else [
            "DIFFERS" + (f" on {', '.join(self.rules)}" if self.rules else "")]
        if refused:
            found.append(f"REFUSED: the implementation refused {refused} of "
                         f"{counted(run, 'trace')} (above)")
        if failed:
            found.append(f"FAILED: the command under test gave no usable answer to "
                         f"{failed} of {counted(run, 'trace')} (above)")
        return ["; ".join(found)]


def _failure(line: str, indent: str) -> list[str]:
    """A line quoting a failure message as report lines: how the command failed, then the
    last lines of its stderr on their own lines, indented (CF-R27)."""
    how, mark, stderr = line.partition(STDERR_MARK)
    if not mark:
        return [how]
    tail = [text for text in stderr.splitlines() if text.strip()][-STDERR_LINES:]
    return [f"{how}; its stderr ends:", *(f"{indent}{text}" for text in tail)]


#: How differences are grouped (CF-R32): two traces of one group are one difference.
Grouping = Callable[["Judge", Vector, "Verdict"], Hashable]


class Judge:
    """Runs traces through reference and implementation and compares them (CF-R10); with a
    target, traces outside its domain are skipped without asking (CF-R18)."""

    def __init__(self, reference: Algorithm[Any, Any, Any, Any], subject: Subject,
                 profile: str = "full", target: Target | None = None,
                 where: Where | None = None, grouping: Grouping | None = None) -> None:
        self.reference, self.subject, self.target = reference, subject, target
        self.where = where
        self.profile = observe.profile(reference, profile)
        self.diagnoser = Diagnoser(reference, self.profile)
        self.grouping: Grouping = grouping if grouping is not None else explanation

    def keep(self, vector: Vector, verdict: Verdict) -> None:
        """A trace of the run as generated: a differing one is kept to confirm the
        explanations on (CF-R42)."""
        if verdict.status == "differ":
            self.diagnoser.keep(vector, verdict.observed)

    def settle(self, key: Hashable, vector: Vector, verdict: Verdict) -> Hashable:
        """The group of a new difference's (shrunk) trace once diagnosed (CF-R43): its
        explanation when the catalogue has one (remembered, so later traces it reproduces
        join it), else ``key``, its symptoms. Only under the default grouping."""
        if verdict.status != "differ" or self.grouping is not explanation:
            return key
        diagnosis = self.diagnoser.explain(vector, verdict.observed)
        if not diagnosis.explanations:
            return key
        self.diagnoser.known(diagnosis)
        return diagnosis.key

    def group(self, vector: Vector, verdict: Verdict) -> Hashable:
        """The group of a trace that did not agree (CF-R32): fuzz and explore report one
        entry per group, with its smallest trace, and go on past a group already found.
        One function (``grouping``, :func:`cause` by default) decides it."""
        return self.grouping(self, vector, verdict)

    def outside(self, vector: Vector, expected: tuple[JSON, ...]) -> str | None:
        """Why ``vector`` lies outside the target (CF-R18) or the ``--where`` values
        (CF-R31), or ``None``."""
        if self.where is not None:
            reason = self.where.outside(self.reference.codec, vector.config)
            if reason is not None:
                return reason
        if self.target is None:
            return None
        reason = self.target.outside(vector.config, vector.inputs)
        if reason is not None:
            return reason
        for output in expected:
            if output.get("kind") == "error":
                rule = str(output.get("rule"))
                return self.target.refused.get(rule, f"refused by the reference ({rule})")
        return None

    def __call__(self, vector: Vector) -> Verdict:
        expected = tuple(run_json(self.reference, vector.config, vector.inputs))
        reason = self.outside(vector, expected)
        if reason is not None:
            return Verdict("skipped", expected, message=reason)
        answer = self.subject.ask(request(vector))
        if isinstance(answer, Failed):
            return Verdict("failed", expected, message=answer.message,
                           answered=answer.answered)
        if isinstance(answer, Outputs):
            if jsontext.same(list(answer.outputs), list(expected)):  # VEC-R12
                return Verdict("agree", expected, answer.outputs)  # whatever the profile
            # CF-R36: in full, before any projection
            problem = malformed(self.reference, len(vector.inputs), answer.outputs,
                                self.profile)
            if problem is not None:
                return Verdict("failed", expected, answer.outputs, answered=True,
                               message=f"malformed answer (CF-R36): {problem}")
        config_refused = len(expected) == 1 and expected[0].get("input") is None \
            and expected[0].get("kind") == "error"
        if isinstance(answer, Refused):
            if config_refused:
                return Verdict("agree", expected)  # the reference refuses the config too
            return Verdict("refused", expected, message=answer.message)
        if config_refused:  # CF-R19: whatever the profile, the config is the difference
            return Verdict("differ", expected, answer.outputs, at=None, message=(
                f"the reference refuses the config ({expected[0].get('rule')}, field "
                f"{expected[0].get('field')}); the implementation accepted it"))
        want = observe.project(self.profile, expected)
        got = observe.project(self.profile, answer.outputs)
        if jsontext.same(want, got):  # with JSON types: 0.0 and false are not 0 (VEC-R12)
            return Verdict("agree", expected, answer.outputs)
        at = _first_input(want, got)
        refusal = _refused_input(expected, answer.outputs, at)
        if refusal is not None:  # CF-R19: pinned to the input the reference refuses
            return Verdict("differ", expected, answer.outputs, at=refusal[0], message=(
                f"the reference refuses input {refusal[0]} ({refusal[1]}); the "
                "implementation did not"))
        return Verdict("differ", expected, answer.outputs, at=at)

    def again(self, vector: Vector, verdict: Verdict) -> Verdict:
        """CF-R37: a trace that differed or was refused is asked once more; an
        implementation answering it otherwise the second time fails it, quoting both
        answers (state leaking between traces, or more than one line per trace), so the
        search never trips over an answer it cannot reproduce."""
        if verdict.status not in ("differ", "refused"):
            return verdict
        return self.unstable(verdict, self(vector))

    def unstable(self, first: Verdict, second: Verdict) -> Verdict:
        """``first``, or the failed verdict of CF-R37 when ``second`` (the same trace asked
        again) was answered otherwise as the profile sees it: a batch's ids in another
        order, under a profile comparing them as a set, are the same answer."""
        if first.status == second.status and first.message == second.message \
                and jsontext.same(observe.project(self.profile, first.observed),
                                  observe.project(self.profile, second.observed)):
            return first
        return Verdict("failed", first.expected, first.observed, answered=True, message=(
            "answered the same trace differently when asked again (CF-R37; state leaking "
            "between traces, or more than one answer line per trace?): first "
            f"{first.answer_text()}, then {second.answer_text()}"))

    def difference(self, source: str, vector: Vector, verdict: Verdict,
                   original_size: int) -> Difference:
        """The report entry of a diverging trace: the outputs at its first diverging input
        (projected, unless the reference refused the config or that input: then as they
        are), and the rules they exercise (CF-R14, CF-R19)."""
        at = verdict.at
        want = observe.project(self.profile, verdict.expected)
        got = observe.project(self.profile, verdict.observed)
        raw_want = [o for o in verdict.expected if o.get("input") == at]
        refused_here = verdict.status == "differ" and any(
            o.get("kind") == "error" for o in raw_want)
        if refused_here:
            shown_want = raw_want
            shown_got = [o for o in verdict.observed if o.get("input") == at]
        elif verdict.status in ("failed", "refused") or verdict.message:
            shown_want, shown_got = want, got
        else:
            shown_want = [o for o in want if o.get("input") == at]
            shown_got = [o for o in got if o.get("input") == at]
        named = set() if verdict.status == "failed" else (  # nothing compared (CF-R27)
            set(vector.rules) | set(rules.exercised(self.reference, raw_want + shown_got)))
        named_rules = tuple(sorted(named, key=rules.order))
        diagnosis = None
        if verdict.status == "differ":  # CF-R42
            diagnosis = attrs.evolve(self.diagnoser.explain(vector, verdict.observed),
                                     symptoms=named_rules)
        explaining = tuple(sorted({r for e in diagnosis.explanations for r in e.rules},
                                  key=rules.order)) if diagnosis is not None else ()
        # CF-R16, VEC-R15, CF-R42: the trace keeps its description (one of its own once
        # shrunk) and rules (the explaining rules first, the rules of the difference added),
        # and what the implementation answered beside the reference's
        saved = attrs.evolve(
            vector, outputs=verdict.expected,
            description=described(source, vector, at, original_size),
            rules=tuple(dict.fromkeys((*explaining, *vector.rules, *named_rules))),
            observed=verdict.observed if verdict.status == "differ" else None,
            first_diverging_input=at if verdict.status == "differ" else None,
            observed_error=verdict.message if verdict.status in ("refused", "failed")
            else "")
        item = vector.inputs[at] if isinstance(at, int) and 0 <= at < len(vector.inputs) else None
        return Difference(source, verdict.status, saved, at, item, tuple(shown_want),
                          tuple(shown_got), verdict.message, named_rules, original_size,
                          diagnosis=diagnosis)


#: inputs a generated description spells out; the rest are counted (CF-R16)
DESCRIBED_INPUTS = 12


def described(source: str, vector: Vector, at: int | None, original_size: int) -> str:
    """CF-R16: the description of a difference's trace: its own while it is the trace as
    found; once shrunk, one generated from the inputs it kept (the one it had before, which
    may name inputs shrinking removed, kept after ``shrunk from``)."""
    if len(vector.inputs) >= original_size:
        return vector.description
    shown = [_input_text(item) for item in vector.inputs[:DESCRIBED_INPUTS]]
    if len(vector.inputs) > DESCRIBED_INPUTS:
        shown.append(f"and {len(vector.inputs) - DESCRIBED_INPUTS} more")
    where = "at the config" if at is None else f"first at input {at}"
    text = (f"Found by timealign conform ({source}), shrunk to {len(vector.inputs)} of "
            f"{counted(original_size, 'input')}, differing {where}: {'; '.join(shown)}.")
    return text + (f" Shrunk from: {vector.description}" if vector.description else "")


def _input_text(item: JSON) -> str:
    """One input as a description spells it: ``message topic 0, stamp 5, id a2``."""
    fields = ", ".join(f"{key} {value if isinstance(value, str) else json.dumps(value)}"
                       for key, value in item.items() if key != "op")
    return f"{item.get('op', 'input')}" + (f" {fields}" if fields else "")


def malformed(reference: Algorithm[Any, Any, Any, Any], inputs: int,
              outputs: Iterable[JSON], seen: Profile = None) -> str | None:
    """CF-R36: how an answer's outputs break the protocol (VEC-R4, VEC-R5), or ``None``.
    Checked in full before any projection, which would forget what it does not show: every
    output's ``input`` is the index of one of the trace's ``inputs`` (``null`` only for
    the config's ``error``), its ``kind`` is one of the algorithm's, its fields are that
    kind's and nothing else (decoded and encoded again by the algorithm's codec, they come
    back unchanged; under a profile ``seen``, an output of a kind it shows may carry only
    the fields it shows, as an upstream reports them), and a reason is one the algorithm
    gives for that kind."""
    table = reference.checks.traces.rules if reference.checks.traces is not None else {}
    reasons: dict[str, set[str]] = {}
    for kind, reason in table:
        if reason is not None:
            reasons.setdefault(kind, set()).add(reason)
    for position, output in enumerate(outputs):
        problem = _malformed_output(reference, inputs, reasons, seen, output)
        if problem is not None:
            shown = json.dumps(output)
            shown = shown if len(shown) <= 200 else shown[:200] + "..."
            return f"output {position} {shown}: {problem}"
    return None


def _malformed_output(reference: Algorithm[Any, Any, Any, Any], inputs: int,
                      reasons: dict[str, set[str]], seen: Profile,
                      output: JSON) -> str | None:
    """What is wrong with one output of an answer (:func:`malformed`), or ``None``."""
    index, kind = output.get("input"), output.get("kind")
    if kind == "error":
        if set(output) != {"input", "kind", "field", "rule"} or not all(
                isinstance(output[key], str) for key in ("field", "rule")):
            return "an error output has the fields input, kind, field and rule, each a string"
        if index is None:
            return None
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < inputs:
        return f"input must be the index of one of the trace's {counted(inputs, 'input')}"
    if kind == "error" or reference.codec.output_from_json is None:
        return None
    try:
        again = {"input": index, **reference.codec.output_to_json(
            reference.codec.output_from_json(output, ()))}
    except (InvalidInput, TypeError, ValueError) as error:
        shown = seen.get(kind) if seen is not None and isinstance(kind, str) else None
        if shown is not None and {*shown[0], "input", "kind"} == output.keys():
            return None  # the fields the profile shows, as an upstream reports them
        return f"not an output of {reference.name}: {error}"
    if again.keys() != output.keys():
        return f"a {kind} output has the fields {', '.join(sorted(again))}"
    if not jsontext.same(again, dict(output)):
        return f"a field of the wrong type: {reference.name} reads it as {json.dumps(again)}"
    reason = output.get("reason")
    if kind in reasons and reason not in reasons[kind]:
        return f"reason must be one of {', '.join(sorted(reasons[kind]))}"
    return None


def _refused_input(expected: Iterable[JSON], observed: Iterable[JSON],
                   at: int | None) -> tuple[int, str] | None:
    """The first input up to ``at`` that the reference refuses and the implementation did
    not refuse the same way: (index, rule), or ``None``."""
    theirs = [o for o in observed if o.get("kind") == "error"]
    for output in expected:
        index = output.get("input")
        if output.get("kind") != "error" or not isinstance(index, int):
            continue
        if at is not None and index > at:
            break
        if output not in theirs:
            return index, str(output.get("rule"))
    return None


def _first_input(want: list[JSON], got: list[JSON]) -> int | None:
    """The input index of the first position where the projected outputs differ."""
    for position in range(max(len(want), len(got))):
        a = want[position] if position < len(want) else None
        b = got[position] if position < len(got) else None
        if not jsontext.same(a, b):  # the earlier input of the two is the first that differs
            inputs = [int(o["input"]) for o in (a, b)
                      if o is not None and jsontext.kind(o.get("input")) == "integer"]
            return min(inputs, default=None)
    return None


def shrink(vector: Vector, diverges: Callable[[Vector], bool]) -> Vector:
    """Greedy input deletion (chunks, then single inputs) keeping the trace diverging."""
    inputs = list(vector.inputs)
    chunk = max(1, len(inputs) // 2)
    while chunk >= 1:
        start = 0
        while start < len(inputs):
            trial = inputs[:start] + inputs[start + chunk:]
            if diverges(attrs.evolve(vector, inputs=tuple(trial))):
                inputs = trial
            else:
                start += chunk
        chunk //= 2
    return attrs.evolve(vector, inputs=tuple(inputs))


def explanation(judge: Judge, vector: Vector, verdict: Verdict) -> Hashable:
    """The default grouping of a :class:`Judge` (CF-R43): a differing trace joins the
    first explanation found so far that reproduces it (:meth:`Diagnoser.group`); else its
    group is its :func:`cause`, until :meth:`Judge.settle` diagnoses it as a new
    difference."""
    if verdict.status == "differ":
        known = judge.diagnoser.group(vector, verdict.observed)
        if known is not None:
            return known
    return cause(judge, vector, verdict)


def confirm(judge: Judge, report: Report) -> None:
    """CF-R42: every diagnosed difference of the run with its explanations confirmed on
    the run's differing traces."""
    for source in report.sources:
        source.differences[:] = [
            attrs.evolve(d, diagnosis=judge.diagnoser.confirmed(d.diagnosis))
            if d.diagnosis is not None else d for d in source.differences]


def cause(judge: Judge, vector: Vector, verdict: Verdict) -> tuple[str, ...]:
    """What makes two differences distinct (CF-R32), the default grouping of a
    :class:`Judge`: for a refused or failed trace its status and the gist of its message
    (:func:`gist`); else the kind of difference (at the config, an input the reference
    refuses, or which outputs are missing or extra at the first diverging input, by kind
    and reason) and the rules those outputs name (CF-R14)."""
    if verdict.status in ("failed", "refused"):
        return verdict.status, gist(verdict.message)
    at = verdict.at
    if at is None or verdict.message:  # the config, or an input the reference refuses
        refused = [o for o in verdict.expected if o.get("input") == at
                   and o.get("kind") == "error"]
        return (verdict.status, "config" if at is None else "input refused",
                *rules.exercised(judge.reference, refused))
    want = [o for o in observe.project(judge.profile, verdict.expected) if o.get("input") == at]
    got = [o for o in observe.project(judge.profile, verdict.observed) if o.get("input") == at]
    missing = [o for o in want if not any(jsontext.same(o, g) for g in got)]
    extra = [o for o in got if not any(jsontext.same(o, w) for w in want)]
    kinds = {f"{sign}{o.get('kind')}" + (f":{o['reason']}" if isinstance(o.get("reason"), str)
                                         else "")
             for sign, found in (("-", missing), ("+", extra)) for o in found}
    return (verdict.status, *sorted(kinds), "rules:",
            *rules.exercised(judge.reference, missing + extra))


#: What a failure or refusal message quotes, which :func:`gist` leaves out: a JSON object or
#: list, a quoted text, a number
_QUOTED = re.compile(r"\{.*\}|\[.*\]|'[^']*'|\"[^\"]*\"|\d+(?:\.\d+)?")


def gist(message: str) -> str:
    """A failure's or refusal's message without what it quotes (CF-R32): the command's
    stderr (CF-R27), the answers and outputs it shows, names and numbers; so the failures
    of one kind (``answered the same trace differently when asked again``, ``malformed
    answer: output K {...}: input must be ...``) are one group, whatever they quote."""
    return _QUOTED.sub("_", message.partition(STDERR_MARK)[0])


def check_vectors(judge: Judge, vectors: Iterable[Vector], progress: Progress,
                  reduce: bool = True, most: int = MAX_DIFFERENCES) -> SourceReport:
    """CF-R6: every vector; up to ``most`` divergences per status detailed (CF-R38), each
    shrunk by input deletion. Ctrl-C ends the source with what was checked (CF-R34)."""
    report = SourceReport("vectors")
    chosen = list(vectors)
    aimed = judge.target.name if judge.target is not None else None
    try:
        for vector in chosen:
            verdict = judge.again(vector, judge(vector))  # CF-R37
            judge.keep(vector, verdict)
            report.count(verdict, vector.name)
            report.refusing(vector, verdict)
            progress(report, len(chosen))
            if verdict.status not in ("agree", "skipped") and report.detail(verdict.status, most):
                minimal = vector
                if verdict.status == "differ" and reduce:
                    minimal = shrink(vector, lambda candidate: judge(candidate).status == "differ")
                    if minimal is not vector:  # CF-R37: kept only when it differs again
                        shrunk = judge(minimal)
                        minimal, verdict = (minimal, shrunk) if shrunk.status == "differ" \
                            else (vector, verdict)
                report.differences.append(judge.difference("vectors", minimal, verdict,
                                                           len(vector.inputs)))
            if report.given_up(aimed):
                break
    except KeyboardInterrupt as halt:
        report.cut("interrupted", f"interrupted ({interruption(halt)}) after "
                                  f"{report.run + sum(report.skipped.values())} of {len(chosen)} "
                                  "vectors", interruption(halt))
    return report


def interruption(stop: KeyboardInterrupt) -> str:
    """What interrupted a run, as its report says (CF-R34): ``Ctrl-C`` for SIGINT, else the
    signal's name the command's handler raised it with (``SIGTERM``)."""
    said = stop.args[0] if stop.args and isinstance(stop.args[0], str) else ""
    return said or "Ctrl-C"


class _OutOfBudget(BaseException):
    """Ends a Hypothesis search early: not an ``Exception``, so Hypothesis neither catches
    nor shrinks it (CF-R7). ``args[0]`` says why: ``shrink`` (the shrinking budget of one
    difference), ``budget`` (CF-R33), ``enough`` (CF-R32) or ``given up`` (CF-R5, CF-R20)."""


def check_fuzz(judge: Judge, count: int, seed: int, progress: Progress,
               size: int = 30, shrink_budget: float = SHRINK_SECONDS,
               most: int = MAX_DIFFERENCES, budget: float | None = None,
               clock: Clock = time.monotonic) -> SourceReport:
    """CF-R7, CF-R32: up to ``count`` random traces. A difference is shrunk by Hypothesis
    (for at most ``shrink_budget`` seconds), then by greedy input deletion keeping its
    cause (:func:`cause`); the search then goes on for a difference of another cause, in
    rounds seeded from ``seed``, until ``count`` traces ran, ``most`` causes were found or
    ``budget`` seconds were spent (CF-R33). A failed or refused trace of a new cause is
    reported as sent (CF-R19). Ctrl-C ends the search with what it found (CF-R34)."""
    from hypothesis import HealthCheck, Phase, Verbosity, find, settings
    from hypothesis.errors import Flaky, NoSuchExample

    from timealign.conformance.strategies import reproducible, traces

    report = SourceReport("fuzz")
    strategy = traces(judge.reference, size, judge.target, judge.where)
    aimed = judge.target.name if judge.target is not None else None
    deadline = None if budget is None else clock() + budget
    found: dict[Hashable, Difference] = {}
    alike: Counter[Hashable] = Counter()  # the traces of each group generated (CF-R32)
    stop = ""

    def named(vector: Vector) -> Vector:
        number = f"_{len(found)}" if found else ""
        return attrs.evolve(vector, name=f"{judge.reference.name}_fuzz_seed{seed}{number}")

    def spent() -> bool:
        return deadline is not None and clock() >= deadline

    def record(vector: Vector, verdict: Verdict, key: Hashable, size: int) -> None:
        found[key] = judge.difference("fuzz", named(vector), verdict, size)
        alike[key] += 1
        report.differences.append(found[key])
        report.named.setdefault(verdict.status, []).append(found[key].vector.name)  # CF-R38

    def again_in(key: Hashable, vector: Vector, verdict: Verdict) -> None:
        """A generated trace of a group already found: counted, and in the group's place
        when it differs with fewer inputs than the group's trace (CF-R32)."""
        alike[key] += 1
        entry = found[key]
        if verdict.status == "differ" and len(vector.inputs) < len(entry.vector.inputs):
            smaller = judge.difference("fuzz", attrs.evolve(vector, name=entry.vector.name),
                                       verdict, len(vector.inputs))
            report.differences[report.differences.index(entry)] = found[key] = smaller

    hit: list[tuple[Vector, Verdict]] = []  # the round's smallest new difference
    since: list[tuple[float, int]] = []  # when it was found, and its size

    asked = [0]

    def diverges(vector: Vector) -> bool:
        if spent():
            raise _OutOfBudget("budget")
        if since and clock() - since[0][0] > shrink_budget:
            raise _OutOfBudget("shrink")
        # CF-R5: every trace asked has a name of its own, so an answer left over from the
        # trace before (more than one line for it) is caught by its name
        asked[0] += 1
        vector = attrs.evolve(vector, name=f"{judge.reference.name}_fuzz_{asked[0]}")
        verdict = judge(vector)
        key = judge.group(vector, verdict) if verdict.status == "differ" else None
        if not since:  # generating: every trace counts (shrink steps do not)
            verdict = judge.again(vector, verdict)  # CF-R37: a divergence answered alike
            judge.keep(vector, verdict)
            report.count(verdict)
            report.refusing(vector, verdict)
            progress(report, count)
            if verdict.status in ("differ", "failed", "refused"):
                key = judge.group(vector, verdict)
                if key in found:  # a group found: the search goes on past it (CF-R32)
                    again_in(key, vector, verdict)
                elif verdict.status != "differ":  # reported as sent, never shrunk (CF-R19)
                    record(vector, verdict, key, len(vector.inputs))
                    if len(found) >= most:
                        raise _OutOfBudget("enough")
            if report.given_up(aimed):
                raise _OutOfBudget("given up")
        if verdict.status != "differ" or key in found:
            return False
        since[:] = since or [(clock(), len(vector.inputs))]
        hit[:] = [(vector, verdict)]
        return True

    round_ = 0
    try:
        while len(found) < most and report.run < count and not stop:
            hit.clear()
            since.clear()
            chosen = settings(max_examples=count - report.run, database=None, deadline=None,
                              phases=(Phase.generate, Phase.shrink),
                              verbosity=Verbosity.quiet, suppress_health_check=list(HealthCheck))
            try:
                with reproducible():  # the seed alone decides the traces (CF-R7)
                    find(strategy, diverges, settings=chosen,
                         random=Random(seed) if round_ == 0 else Random(f"{seed}/{round_}"))
            except _OutOfBudget as why:
                stop = "" if why.args[0] == "shrink" else str(why.args[0])
            except NoSuchExample:
                stop = "done"
            except Flaky:  # an answer Hypothesis could not reproduce (CF-R37): next round
                pass
            round_ += 1
            if not hit:
                continue
            vector, verdict = hit[-1]
            key = judge.group(vector, verdict)
            if not spent():
                minimal = shrink(vector, _keeps(judge, key, spent))
                again = judge(minimal)
                if again.status == "differ":  # else a command answering otherwise twice
                    vector, verdict = minimal, judge.unstable(again, judge(minimal))  # CF-R37
            key = judge.settle(key, vector, verdict)  # CF-R43: its explanation
            if key in found:
                again_in(key, vector, verdict)
            else:
                record(vector, verdict, key, since[0][1])
    except KeyboardInterrupt as halt:
        report.cut("interrupted", f"interrupted ({interruption(halt)}) after {report.run} of "
                                  f"{counted(count, 'trace')}", interruption(halt))
    if stop == "budget":
        report.cut("budget", f"cut by --budget {budget:g} s after {report.run} of "
                             f"{counted(count, 'trace')}")
    for key, entry in found.items():
        report.differences[report.differences.index(entry)] = attrs.evolve(
            entry, alike=alike[key])
    notes = [f"seed {seed}"]
    if found:
        notes.append(counted(len(found), "distinct difference") + (
            f" (--max-differences {most} reached)" if len(found) >= most else ""))
    report.note = "; ".join([*notes, *([report.note] if report.note else [])])
    return report


def _keeps(judge: Judge, key: Hashable, spent: Callable[[], bool]
           ) -> Callable[[Vector], bool]:
    """Whether a smaller trace still differs in the same group (CF-R32), while the budget
    lasts (CF-R33)."""
    def keeps(vector: Vector) -> bool:
        if spent():
            return False
        verdict = judge(vector)
        return verdict.status == "differ" and judge.group(vector, verdict) == key
    return keeps


def check_explore(judge: Judge, depth: int, progress: Progress,
                  most: int = MAX_DIFFERENCES, budget: float | None = None,
                  clock: Clock = time.monotonic) -> SourceReport:
    """CF-R8, CF-R35: every trace of the small instances up to ``depth`` inputs,
    interleaved and shortest first; the first (so shortest) trace of each distinct cause
    (CF-R32) is reported, up to ``most``. ``budget`` seconds end the walk (CF-R33), and so
    does Ctrl-C (CF-R34), with what was checked."""
    from timealign.conformance.instances import traces

    report = SourceReport("explore")
    seen: dict[Hashable, int] = {}  # group -> its entry's place in report.differences
    alike: Counter[Hashable] = Counter()  # the traces of each group (CF-R32)
    beyond: set[Hashable] = set()  # groups found after --max-differences
    aimed = judge.target.name if judge.target is not None else None
    deadline = None if budget is None else clock() + budget
    level = 0
    try:
        for _instance, level, vector in traces(judge.reference, depth, judge.target,
                                               judge.where):
            if deadline is not None and clock() >= deadline:
                report.cut("budget", f"cut by --budget {budget:g} s after "
                                     f"{counted(report.run, 'trace')}: {_reached(level)}")
                break
            verdict = judge(vector)
            judge.keep(vector, verdict)
            grouped = verdict.status not in ("agree", "skipped")
            key = judge.group(vector, verdict) if grouped else None
            if grouped and key not in seen and len(report.differences) < most:
                verdict = judge.again(vector, verdict)  # CF-R37: a trace detailed is asked again
                key = judge.settle(judge.group(vector, verdict), vector, verdict)  # CF-R43
                if key not in seen:
                    seen[key] = len(report.differences)
                    report.differences.append(judge.difference("explore", vector, verdict,
                                                               len(vector.inputs)))
            report.count(verdict, vector.name)
            report.refusing(vector, verdict)
            progress(report)
            if grouped:
                alike[key] += 1
                if key not in seen:
                    beyond.add(key)
            if report.given_up(aimed):
                break
    except KeyboardInterrupt as halt:
        report.cut("interrupted", f"interrupted ({interruption(halt)}) after "
                                  f"{counted(report.run, 'trace')}: {_reached(level)}",
                   interruption(halt))
    for key, place in seen.items():
        report.differences[place] = attrs.evolve(report.differences[place], alike=alike[key])
    groups = ""
    if seen:
        groups = f"; {counted(len(seen), 'distinct difference')}" + (
            f" (--max-differences {most} reached: {len(beyond)} more not detailed)"
            if beyond else "")
    report.note = f"depth {depth}{groups}" + (f"; {report.note}" if report.note else "")
    return report


def _reached(level: int) -> str:
    """How deep an interleaved walk cut at ``level`` moves got (CF-R35)."""
    if level <= 1:
        return "depth 1 in part"
    return f"every instance to depth {level - 1}, depth {level} in part"


def file_name(name: str) -> str:
    """A file name (without ``.json``) for a vector named ``name``, safe whatever the name
    holds (``/``, ``..``, an absolute path, thousands of characters): letters, digits,
    ``.``, ``_`` and ``-`` only, no leading dot, at most :data:`SAFE_NAME` characters; a
    changed name gets a short hash of the original, so distinct names stay distinct
    (CF-R16)."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", name).lstrip("._-")[:SAFE_NAME].rstrip("._-")
    if stem != name or not stem:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        stem = f"{stem or 'trace'}_{digest}"
    return stem


def save(report: Report, folder: str | Path) -> list[Path]:
    """CF-R16: write every detailed divergence as a ``timealign.vector/1`` file inside
    ``folder``, under a safe name (:func:`file_name`), with its own description and rules
    and the implementation's answer beside the reference's outputs (VEC-R15); the folder is
    filled as CLI-R5 says (absent, empty or an earlier ``--save`` of conform, replaced
    whole)."""
    target = Path(resolved(folder))
    written: list[Path] = []
    with filled(folder, "conform --save", "--save") as staging:
        _save_into(report, target, staging, written)
    return written


def _save_into(report: Report, target: Path, staging: Path, written: list[Path]) -> None:
    for source in report.sources:
        for position, difference in enumerate(source.differences):
            name = f"{difference.vector.name}_{source.source}_{position}"
            # VEC-R15: the description stays the trace's own; what the implementation
            # answered is in observed, first_diverging_input and observed_error
            vector = attrs.evolve(difference.vector, name=name, description=(
                difference.vector.description
                or f"found by timealign conform ({source.source}): {difference.status}"))
            path = staging / f"{file_name(name)}.json"
            assert path.resolve().parent == staging.resolve(), path  # never outside
            path.write_text(json.dumps(vector.to_json(), indent=1) + "\n", encoding="utf-8")
            final = target / path.name
            source.differences[position] = attrs.evolve(difference, saved=str(final))
            written.append(final)
