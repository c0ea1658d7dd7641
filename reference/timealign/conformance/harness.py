"""The conformance harness: run traces through the reference and an implementation,
compare what both report, shrink every divergence and report it by rule.

Sources of traces (CF-R6 to CF-R8): the shipped or given vectors, random traces from the
algorithm's strategies (Hypothesis finds and shrinks a divergence), and every trace of the
bounded explorer's small instances up to a depth; each algorithm keeps its strategies,
instances, profiles, rule map and targets in its own package (``Algorithm.traces``). With
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
from collections.abc import Callable, Iterable
from pathlib import Path
from random import Random
from typing import Any, Protocol

import attrs

from timealign import Algorithm, jsontext
from timealign.algorithm import run_json
from timealign.conformance import observe, rules
from timealign.conformance.protocol import STDERR_MARK, Answer, Failed, Outputs, Refused
from timealign.outputs import filled, resolved
from timealign.progress import Progress as Progress  # re-exported: the harness API
from timealign.progress import counted
from timealign.traces import Target
from timealign.vectors import Vector

JSON = dict[str, Any]
Implementation = Callable[[JSON, list[JSON]], list[JSON]]
DETAILED = 10  # differences per source shrunk, detailed and saved; the rest are counted
FAILURES_IN_A_ROW = 10  # a source stops after this many consecutive failed traces (CF-R5)
REFUSALS_IN_A_ROW = 10  # ... or refused traces (CF-R20)
SAFE_NAME = 80  # characters of a vector name kept in a saved file's name (CF-R16)
STDERR_LINES = 5  # last lines of the command's stderr a failure shows (CF-R27)


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
            return Failed(f"returned {type(produced).__name__}, not a list of output objects")
        return Outputs(tuple(produced))


#: The reference's outputs in vector form: one loop for the harness, the vectors and
#: ``timealign check`` (:func:`timealign.algorithm.run_json`).
run_reference = run_json


def implementation(algorithm: Algorithm[Any, Any, Any, Any]) -> Implementation:
    """A descriptor (for example the reference with its fast step) as an implementation."""
    return lambda config, inputs: run_reference(algorithm, config, inputs)


def request(vector: Vector) -> JSON:
    """The protocol line of a trace: the vector without its outputs (CF-R2)."""
    return attrs.evolve(vector, outputs=None).to_json()


@attrs.frozen
class Verdict:
    """How one trace went: ``agree``, ``differ``, ``refused`` (CF-R19), ``failed`` (CF-R15),
    or ``skipped`` (outside the target, CF-R18; the implementation was not asked)."""

    status: str
    expected: tuple[JSON, ...]
    observed: tuple[JSON, ...] = ()
    message: str = ""
    at: int | None = None


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

    def to_json(self) -> JSON:
        return {"source": self.source, "status": self.status, "name": self.vector.name,
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

    in_a_row: int = 0
    refused_in_a_row: int = 0

    def count(self, verdict: Verdict) -> None:
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
        self.in_a_row = self.in_a_row + 1 if verdict.status == "failed" else 0
        self.refused_in_a_row = self.refused_in_a_row + 1 if verdict.status == "refused" else 0

    def progress_line(self, total: int | None) -> str:
        """The progress line of CF-R15 (:class:`timealign.progress.Progress`)."""
        run = f"{self.run}/{total} traces" if total else counted(self.run, "trace")
        return (f"conform: {self.source} {run}, {self.differ} differ, "
                f"{self.failed} failed")

    def given_up(self) -> bool:
        """CF-R5, CF-R20: a command failing or refusing trace after trace is not run any
        further."""
        if self.in_a_row >= FAILURES_IN_A_ROW:
            said = f"stopped after {FAILURES_IN_A_ROW} failed traces in a row"
        elif self.refused_in_a_row >= REFUSALS_IN_A_ROW:
            said = (f"the implementation refused {REFUSALS_IN_A_ROW} traces in a row: wrong "
                    "algorithm, or does it need `--target`?")
        else:
            return False
        self.note = (self.note + "; " if self.note else "") + said
        return True

    def skipped_text(self) -> str:
        """``12 skipped: ros1 arithmetic (AT-R16); 2 skipped: ...`` (CF-R18)."""
        return "; ".join(f"{n} skipped: {why}" for why, n in sorted(
            self.skipped.items(), key=lambda item: (-item[1], item[0])))

    def to_json(self) -> JSON:
        return {"run": self.run, "agree": self.agree, "differ": self.differ,
                "refused": self.refused, "failed": self.failed,
                "skipped": sum(self.skipped.values()), "skipped_why": dict(self.skipped),
                "note": self.note, "differences": [d.to_json() for d in self.differences]}


@attrs.define
class Report:
    """Everything one conformance run found (CF-R15)."""

    algorithm: str
    implementation: str
    observe: str
    sources: list[SourceReport] = attrs.Factory(list)
    target: str | None = None
    not_run: list[str] = attrs.Factory(list)  # sources left out: never answered (CF-R27)

    @property
    def ok(self) -> bool:
        """True when every trace of every source agreed (CF-R17: exit status 0)."""
        return all(s.differ == 0 and s.failed == 0 and s.refused == 0 for s in self.sources)

    @property
    def rules(self) -> tuple[str, ...]:
        """The rules named by the differences; a failed trace names none (CF-R27)."""
        return tuple(sorted({r for s in self.sources for d in s.differences for r in d.rules},
                            key=rules.order))

    def never_answered(self) -> bool:
        """CF-R27: the command under test failed every trace it was asked (it could not
        start, or died or hung before any answer), so nothing was compared."""
        return any(s.failed for s in self.sources) and not any(
            s.agree or s.differ or s.refused for s in self.sources)

    def to_json(self) -> JSON:
        return {"format": "timealign.conformance/1", "algorithm": self.algorithm,
                "implementation": self.implementation, "target": self.target,
                "observe": self.observe,
                "ok": self.ok, "differs_on": list(self.rules),
                "never_answered": self.never_answered(), "not_run": list(self.not_run),
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
            lines.append(f"  {name:8} not run: the command never answered")
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
                lines.append(f"    expected {json.dumps(list(d.expected))}")
                if d.status == "differ":
                    lines.append(f"    observed {json.dumps(list(d.observed))}")
                if d.rules:
                    lines.append(f"    rules {', '.join(d.rules)}")
                if d.saved:
                    lines.append(f"    saved {d.saved}")
        lines.extend(self.verdict())
        return "\n".join(lines)

    def verdict(self) -> list[str]:
        """The closing lines (CF-R15, CF-R27): ``AGREES``; ``DIFFERS on <rules>`` for what
        the command answered; and for traces it gave no usable answer to, ``FAILED``
        with how the command failed, never blamed on rules."""
        if self.ok:
            return ["AGREES"]
        failed = sum(s.failed for s in self.sources)
        first = next((d.message for s in self.sources for d in s.differences
                      if d.status == "failed"), "")
        if self.never_answered():
            return _failure(f"FAILED: the command under test never answered "
                            f"({counted(failed, 'trace')} failed): {first}", "    ")
        found = [] if not any(s.differ or s.refused for s in self.sources) else [
            "DIFFERS" + (f" on {', '.join(self.rules)}" if self.rules else "")]
        if failed:
            run = sum(s.run for s in self.sources)
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


class Judge:
    """Runs traces through reference and implementation and compares them (CF-R10); with a
    target, traces outside its domain are skipped without asking (CF-R18)."""

    def __init__(self, reference: Algorithm[Any, Any, Any, Any], subject: Subject,
                 profile: str = "full", target: Target | None = None) -> None:
        self.reference, self.subject, self.target = reference, subject, target
        self.profile = observe.profile(reference, profile)

    def outside(self, vector: Vector, expected: tuple[JSON, ...]) -> str | None:
        """Why ``vector`` lies outside the target (CF-R18), or ``None``."""
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
            return Verdict("failed", expected, message=answer.message)
        config_refused = len(expected) == 1 and expected[0].get("input") is None \
            and expected[0].get("kind") == "error"
        if isinstance(answer, Refused):
            if config_refused:
                return Verdict("agree", expected)  # the reference refuses the config too
            return Verdict("refused", expected, message=answer.message)
        if config_refused:  # CF-R19: whatever the profile, the config is the difference
            if jsontext.same(list(answer.outputs), list(expected)):  # VEC-R12
                return Verdict("agree", expected, answer.outputs)
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
        saved = attrs.evolve(vector, outputs=verdict.expected,
                             rules=named_rules if named_rules else vector.rules)
        item = vector.inputs[at] if isinstance(at, int) and 0 <= at < len(vector.inputs) else None
        return Difference(source, verdict.status, saved, at, item, tuple(shown_want),
                          tuple(shown_got), verdict.message, named_rules, original_size)


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


def check_vectors(judge: Judge, vectors: Iterable[Vector], progress: Progress,
                  reduce: bool = True) -> SourceReport:
    """CF-R6: every vector; each divergence shrunk by input deletion."""
    report = SourceReport("vectors")
    chosen = list(vectors)
    for vector in chosen:
        verdict = judge(vector)
        report.count(verdict)
        progress(report, len(chosen))
        if verdict.status not in ("agree", "skipped") and len(report.differences) < DETAILED:
            minimal = vector
            if verdict.status == "differ" and reduce:
                minimal = shrink(vector, lambda candidate: judge(candidate).status == "differ")
                verdict = judge(minimal) if minimal is not vector else verdict
            report.differences.append(judge.difference("vectors", minimal, verdict,
                                                       len(vector.inputs)))
        if report.given_up():
            break
    return report


class _OutOfBudget(BaseException):
    """Ends Hypothesis's shrinking early: not an ``Exception``, so Hypothesis neither
    catches nor shrinks it (CF-R7)."""


def check_fuzz(judge: Judge, count: int, seed: int, progress: Progress,
               size: int = 30, budget: float = 20.0) -> SourceReport:
    """CF-R7: ``count`` random traces; Hypothesis shrinks the first divergence for at most
    ``budget`` seconds, then greedy input deletion finishes the job. A failed or refused
    trace stops the search and is reported as sent (CF-R19)."""
    from hypothesis import HealthCheck, Phase, Verbosity, find, settings
    from hypothesis.errors import NoSuchExample

    from timealign.conformance.strategies import reproducible, traces

    report = SourceReport("fuzz")
    found: list[tuple[Vector, Verdict]] = []
    first: list[tuple[int, float]] = []  # size of the first divergence, when it was found

    def diverges(vector: Vector) -> bool:
        if found and (found[0][1].status in ("failed", "refused")  # reported as sent
                      or time.monotonic() - first[0][1] > budget):
            raise _OutOfBudget
        verdict = judge(vector)
        if not first:
            report.count(verdict)
            progress(report, count)
        if verdict.status == "differ" or (verdict.status in ("failed", "refused")
                                          and not found):
            first[:] = first or [(len(vector.inputs), time.monotonic())]
            found[:] = [(vector, verdict)]
            return True
        return False

    chosen = settings(max_examples=count, database=None, deadline=None,
                      phases=(Phase.generate, Phase.shrink), verbosity=Verbosity.quiet,
                      suppress_health_check=list(HealthCheck))
    try:
        with reproducible():  # the seed alone decides the traces (CF-R7)
            find(traces(judge.reference, size, judge.target), diverges, settings=chosen,
                 random=Random(seed))
    except _OutOfBudget:
        pass
    except NoSuchExample:
        report.note = f"seed {seed}"
        return report
    vector, verdict = found[-1]
    if verdict.status == "differ":
        vector = shrink(vector, lambda candidate: judge(candidate).status == "differ")
        verdict = judge(vector)
    vector = attrs.evolve(vector, name=f"{judge.reference.name}_fuzz_seed{seed}")
    report.note = f"seed {seed}; stopped at the first divergence" + (
        f", shrunk in {time.monotonic() - first[0][1]:.1f} s" if verdict.status == "differ"
        else "")
    report.differences.append(judge.difference("fuzz", vector, verdict, first[0][0]))
    return report


def check_explore(judge: Judge, depth: int, progress: Progress) -> SourceReport:
    """CF-R8: every trace of the small instances up to ``depth`` inputs, shortest first;
    the first (so shortest) divergence of each instance is reported."""
    from timealign.conformance.instances import traces

    report = SourceReport("explore")
    diverged: set[str] = set()
    for instance, vector in traces(judge.reference, depth, judge.target):
        verdict = judge(vector)
        report.count(verdict)
        progress(report)
        if verdict.status not in ("agree", "skipped") and instance not in diverged \
                and len(report.differences) < DETAILED:
            diverged.add(instance)
            report.differences.append(judge.difference("explore", vector, verdict,
                                                       len(vector.inputs)))
        if report.given_up():
            break
    report.note = f"depth {depth}" + (f"; {report.note}" if report.note else "")
    return report


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
    """CF-R16: write every reported divergence as a ``timealign.vector/1`` file inside
    ``folder``, under a safe name (:func:`file_name`); the folder is filled as CLI-R5 says
    (absent, empty or an earlier ``--save`` of conform, replaced whole)."""
    target = Path(resolved(folder))
    written: list[Path] = []
    with filled(folder, "conform --save", "--save") as staging:
        _save_into(report, target, staging, written)
    return written


def _save_into(report: Report, target: Path, staging: Path, written: list[Path]) -> None:
    for source in report.sources:
        for position, difference in enumerate(source.differences):
            name = f"{difference.vector.name}_{source.source}_{position}"
            where = "config" if difference.at is None else f"input {difference.at}"
            vector = attrs.evolve(difference.vector, name=name, description=(
                f"timealign conform ({source.source}): {difference.status}" + (
                    f": {difference.message}" if difference.status == "refused"
                    else ": the command gave no usable answer (CF-R27)"
                    if difference.status == "failed" else f" at {where}")))
            path = staging / f"{file_name(name)}.json"
            assert path.resolve().parent == staging.resolve(), path  # never outside
            path.write_text(json.dumps(vector.to_json(), indent=1) + "\n", encoding="utf-8")
            final = target / path.name
            source.differences[position] = attrs.evolve(difference, saved=str(final))
            written.append(final)
