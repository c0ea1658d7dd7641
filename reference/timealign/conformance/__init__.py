"""Conformance checking of other implementations against the reference (spec/conformance.md).

``timealign conform ALGORITHM --cmd "..."`` drives an external command through the line
protocol of :mod:`.protocol`; :func:`check` does the same from Python, for an
implementation given as a function or a command::

    from timealign import conformance

    def mine(config: dict, inputs: list[dict]) -> list[dict]:
        ...  # run your implementation, return outputs in vector form

    report = conformance.check("approximate_time", mine, fuzz=200, seed=1)
    assert report.ok, report.text()
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from timealign import Algorithm, registry
from timealign.conformance.harness import (
    MAX_DIFFERENCES,
    Difference,
    InProcess,
    Judge,
    Progress,
    Refusal,
    Report,
    SourceReport,
    Subject,
    check_explore,
    check_fuzz,
    check_vectors,
    confirm,
    implementation,
    interruption,
    run_reference,
    save,
)
from timealign.conformance.protocol import Command
from timealign.conformance.suites import shipped
from timealign.conformance.where import Where, parse
from timealign.errors import InvalidInput
from timealign.traces import Target
from timealign.vectors import Vector

JSON = dict[str, Any]

__all__ = [
    "Command", "Difference", "InProcess", "Refusal", "Report", "SourceReport", "Where", "check",
    "find_target", "implementation", "probes", "run_reference", "shipped", "targets",
]


def targets(algorithm: str | Algorithm[Any, Any, Any, Any]) -> dict[str, Target]:
    """The targets of ``algorithm`` by name (CF-R18): the real upstreams it claims
    equality with, each on its own domain."""
    reference = registry.get(algorithm) if isinstance(algorithm, str) else algorithm
    return dict(reference.checks.traces.targets) if reference.checks.traces is not None else {}


def find_target(algorithm: str | Algorithm[Any, Any, Any, Any], name: str) -> Target:
    """The target ``name`` of ``algorithm``; :class:`InvalidInput` (CF-R18) when unknown."""
    known = targets(algorithm)
    if name not in known:
        shown = algorithm if isinstance(algorithm, str) else algorithm.name
        raise InvalidInput("target", "CF-R18",
                           f"unknown target for {shown}, expected one of {sorted(known)}",
                           name)
    return known[name]


def probes(algorithm: str | Algorithm[Any, Any, Any, Any]) -> list[JSON]:
    """The configs of the explorer's instances (the algorithm's and its targets'), as JSON:
    where ``--where`` values are tried (CF-R31)."""
    reference = registry.get(algorithm) if isinstance(algorithm, str) else algorithm
    knowledge = reference.checks.traces
    if knowledge is None:
        return []
    every = [*knowledge.instances, *(i for t in knowledge.targets.values() for i in t.instances)]
    return [reference.codec.config_to_json(i.config) for i in every]


def check(
    algorithm: str | Algorithm[Any, Any, Any, Any],
    implementation: Any,
    *,
    vectors: Iterable[Vector] | None = None,
    fuzz: int = 0,
    seed: int = 0,
    size: int = 30,
    explore: int = 0,
    observe: str | None = None,
    save_to: str | Path | None = None,
    progress: bool = False,
    target: str | None = None,
    where: Iterable[str] | Where | None = None,
    max_differences: int = MAX_DIFFERENCES,
    budget: float | None = None,
    source_lines: bool = False,
) -> Report:
    """Check ``implementation`` against the reference of ``algorithm`` (CF-R6 to CF-R27).

    ``algorithm`` is a registered name (the reference is ``registry.get(name)``) or an
    :class:`Algorithm` descriptor used as the reference. ``implementation`` is a function
    ``(config JSON, inputs JSON) -> outputs JSON`` (raise :class:`Refusal` to refuse a
    trace), a :class:`Command`, or any object with ``ask(request) -> Answer``. ``vectors``
    defaults to the shipped suite of the algorithm; pass ``[]`` to skip it. ``target``
    names a real upstream (CF-R18, :func:`targets`): only traces inside its domain are
    generated and compared, and ``observe`` defaults to its profile (``full`` without a
    target). ``where`` (``["age_penalty=0"]``) narrows every source to configs holding
    those values (CF-R31). The suite details up to ``max_differences`` traces per status
    (CF-R38), fuzz and explore each up to ``max_differences`` distinct differences (CF-R32);
    fuzz and explore stop after ``budget`` seconds (CF-R33). Ctrl-C
    ends the run with the report of what was checked, ``Report.interrupted`` (CF-R34).
    ``source_lines``: one line on stderr as each source finishes, also without
    ``progress`` (CF-R15).
    """
    reference = registry.get(algorithm) if isinstance(algorithm, str) else algorithm
    chosen_target = find_target(reference, target) if target is not None else None
    if observe is None:
        observe = chosen_target.observe if chosen_target is not None else "full"
    subject: Subject = implementation if hasattr(implementation, "ask") else \
        InProcess(implementation)
    narrowed = where if isinstance(where, Where) or where is None else \
        parse(reference, list(where), probes(reference))
    judge = Judge(reference, subject, observe, chosen_target, narrowed)
    shown = getattr(implementation, "command", None) or getattr(
        implementation, "__qualname__", type(implementation).__name__)
    report = Report(reference.name, str(shown), observe, target=target)
    ticker = Progress(progress, finished=source_lines)
    chosen = shipped(reference.name) if vectors is None else list(vectors)
    sources: list[tuple[str, Callable[[], SourceReport]]] = \
        ([("vectors", lambda: check_vectors(judge, chosen, ticker, most=max_differences))]
         if chosen else []) \
        + ([("fuzz", lambda: check_fuzz(judge, fuzz, seed, ticker, size,
                                        most=max_differences, budget=budget))]
           if fuzz else []) \
        + ([("explore", lambda: check_explore(judge, explore, ticker, most=max_differences,
                                              budget=budget))] if explore else [])
    for name, source in sources:
        if report.never_answered() or report.interrupted:  # CF-R27, CF-R34: not asked
            report.not_run.append(name)
            continue
        try:
            report.sources.append(source())
            ticker.finished(report.sources[-1])
        except KeyboardInterrupt as halt:  # between two traces' sources (CF-R34)
            report.signal = interruption(halt)
            if not any(s.source == name for s in report.sources):
                report.not_run.append(name)
    confirm(judge, report)  # CF-R42: each explanation on the run's differing traces
    if save_to is not None:
        save(report, save_to)
    return report
