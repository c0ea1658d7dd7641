"""Bounded exhaustive exploration of the reference machines.

No mainstream Python library does bounded model checking, and none is needed: states are
immutable and hashable, so a depth-first walk over every input sequence up to a length,
stepping once per tree node, is short and enough. At every node the instance's checker sees
the whole trace (inputs and outputs so far, and the same trace closed by the end input), so
trace properties such as "no loss" and "optimality" are checked on every prefix.

The walk steps the rule text (``Algorithm.machine.step``). When the algorithm has a fast path
(``Algorithm.machine.fast``), every node is also stepped by it in lockstep, and its outputs and its
state (converted to the spec's form) must equal the rule text's at every node, the end
input included: a bounded equivalence proof of the fast path (``compared`` counts nodes).

``python -m proofs.explore`` runs every instance declared in a ``proofs/explore_*.py``
module (a list ``INSTANCES``) and prints what was covered next to the result; the table in
``proofs/README.md`` records it.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from timealign.algorithm import Algorithm

Trace = tuple[Any, ...]
Outputs = tuple[tuple[int, Any], ...]
Checker = Callable[[Any, Trace, Outputs], list[str]]


@attrs.frozen
class Instance:
    """One bounded problem: a machine, a config, an input alphabet and a trace length.

    ``moves(trace)`` lists the inputs allowed after ``trace`` (so ids can stay unique);
    ``check(config, inputs, outputs)`` returns violations of a finished run; ``check`` is
    called on every prefix closed by the machine's end input, and on every prefix itself
    when ``check_open_prefixes`` is set.
    """

    name: str
    algorithm: Algorithm[Any, Any, Any, Any]
    config: Any
    moves: Callable[[Trace], Sequence[Any]]
    depth: int
    check: Checker
    bounds: str = ""
    check_open_prefixes: bool = True


@attrs.define
class Report:
    """What one exploration covered, and the first violations found."""

    name: str
    bounds: str
    depth: int
    nodes: int = 0
    traces: int = 0
    states: int = 0
    compared: int = 0
    seconds: float = 0.0
    violations: list[str] = attrs.Factory(list)


def explore(instance: Instance, limit: int = 5) -> Report:
    """Walk every input sequence up to ``instance.depth``; stop after ``limit`` violations."""
    algorithm, config = instance.algorithm, instance.config
    report = Report(instance.name, instance.bounds, instance.depth)
    seen: set[Any] = set()
    end = algorithm.machine.end(config)
    started = time.perf_counter()

    fast = algorithm.machine.fast

    def lockstep(fast_state: Any, item: Any, expected: tuple[Any, tuple[Any, ...]],
                 trace: Trace) -> Any:
        """The fast path's next state; a violation when it differs from the rule text."""
        if fast is None:
            return None
        following, produced = fast.step(config, fast_state, item)
        report.compared += 1
        if produced != expected[1] or fast.to_spec(following) != expected[0]:
            _record(report, (*trace, item), ["lockstep: the fast path differs from the rule "
                                             f"text (outputs {list(produced)} vs "
                                             f"{list(expected[1])})"])
        return following

    def visit(state: Any, fast_state: Any, trace: Trace, outputs: Outputs) -> None:
        report.nodes += 1
        seen.add(state)
        if instance.check_open_prefixes:
            _record(report, trace, instance.check(config, trace, outputs))
        ending = algorithm.machine.step(config, state, end)
        lockstep(fast_state, end, ending, trace)
        closed = outputs + tuple((len(trace), o) for o in ending[1])
        _record(report, (*trace, end), instance.check(config, (*trace, end), closed))
        if len(trace) == instance.depth:
            report.traces += 1
            return
        if len(report.violations) >= limit:
            return
        for move in instance.moves(trace):
            following, produced = algorithm.machine.step(config, state, move)
            fast_following = lockstep(fast_state, move, (following, produced), trace)
            visit(following, fast_following, (*trace, move),
                  outputs + tuple((len(trace), o) for o in produced))

    visit(algorithm.machine.initial(config), None if fast is None else fast.initial(config), (), ())
    report.states = len(seen)
    report.seconds = time.perf_counter() - started
    return report


def _record(report: Report, trace: Trace, problems: list[str]) -> None:
    for problem in problems:
        if len(report.violations) < 5:
            report.violations.append(f"{problem}\n    trace: {list(trace)}")


def instances(selected: Sequence[str] = ()) -> list[Instance]:
    """Every instance of every ``proofs/explore_*.py`` module, optionally filtered by name."""
    found: list[Instance] = []
    for path in sorted(Path(__file__).parent.glob("explore_*.py")):
        module = importlib.import_module(f"proofs.{path.stem}")
        found.extend(module.INSTANCES)
    return [i for i in found if not selected or any(s in i.name for s in selected)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False,
                                     description="bounded exhaustive exploration")
    parser.add_argument("names", nargs="*", help="run only instances whose name contains one")
    args = parser.parse_args(argv)
    chosen = instances(args.names)
    if not chosen:
        print("explore: no instances", file=sys.stderr)
        return 1
    failed = False
    print(f"{'instance':40} {'depth':>5} {'nodes':>10} {'traces':>10} {'states':>9} "
          f"{'lockstep':>10} {'sec':>7}  result")
    for instance in chosen:
        report = explore(instance)
        verdict = "ok" if not report.violations else f"{len(report.violations)} VIOLATION(S)"
        print(f"{report.name:40} {report.depth:>5} {report.nodes:>10} {report.traces:>10} "
              f"{report.states:>9} {report.compared or '-':>10} {report.seconds:>7.1f}  "
              f"{verdict}", flush=True)
        if report.bounds:
            print(f"    bounds: {report.bounds}")
        for violation in report.violations:
            print(f"    {violation}")
        failed = failed or bool(report.violations)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
