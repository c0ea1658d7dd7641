"""Which spec rules the rule text executes on one input (CF-R23).

``timealign diff`` names a difference between two variants of a config by the rules that
run under one variant and not under the other at the first input where they diverge. Every
algorithm's rule text registers its rule functions (:mod:`timealign.rulebook`), and what
ran is read from those calls alone: a call of a registered function is its rule firing,
recorded in order with its plain arguments and result; comments are never read (they
drift), nor is an error's message: a refusal is named by its ``rule``, the id of the
registered function that raised it (``tests/test_rulebook.py`` holds every refusal to
that). It reads, never decides: the outputs come from
:func:`timealign.algorithm.run_json` as always.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import CodeType
from typing import Any

import attrs

from timealign import Algorithm, rulebook
from timealign.errors import InvalidInput

JSON = dict[str, Any]
Line = tuple[str, int]  # (file, first line) of a rule function


def family_of(algorithm: Algorithm[Any, Any, Any, Any]) -> str:
    """The id family of an algorithm (``AT``, ``RB``, ...): its rule functions'."""
    return _registered(package_of(algorithm))[0].family


def _registered(package: str) -> tuple[rulebook.Rule, ...]:
    found = rulebook.registered(package)
    if not found:
        raise LookupError(f"{package} registers no rule function (timealign.rulebook)")
    return found


def _line(code: CodeType) -> Line:
    return code.co_filename, code.co_firstlineno


@functools.cache
def citations(package: str) -> Mapping[Line, frozenset[str]]:
    """Each registered rule function of ``package``: its first line -> its rule."""
    return {_line(r.code): frozenset({r.id}) for r in _registered(package)}


def package_of(algorithm: Algorithm[Any, Any, Any, Any]) -> str:
    """The package holding an algorithm's rule text (``timealign.approximate_time``)."""
    return algorithm.machine.step.__module__.rpartition(".")[0]


@contextmanager
def _recording(into: set[Line], calls: list[rulebook.Call],
               details: bool = True) -> Iterator[None]:
    """The calls of registered rule functions made inside the block: their first lines
    into ``into``, the calls in order into ``calls``."""
    start = len(calls)
    try:
        with rulebook.calls(calls, details):
            yield
    finally:
        into.update(_line(c.rule.code) for c in calls[start:])


@attrs.frozen
class Executed:
    """What one variant's rule text did on one input: the rule functions it called (their
    first lines), the rule calls in order, and the rule of its refusal (the error's
    ``rule``, raised inside that rule's function) when it refused."""

    lines: frozenset[Line]
    refused: frozenset[str] = frozenset()
    calls: tuple[rulebook.Call, ...] = ()
    rule: str | None = None  # the refusal's own rule

    @property
    def ran(self) -> frozenset[str]:
        """The ids of the rule functions called, from the record of calls."""
        return frozenset(c.rule.id for c in self.calls)


def executed_at(algorithm: Algorithm[Any, Any, Any, Any], config: JSON,
                inputs: Sequence[JSON], at: int | None) -> Executed:
    """What the rule text executes on input ``at`` of a run (``None``: decoding the
    config), after replaying the inputs before it as :func:`timealign.algorithm.run_json`
    does (a refused input leaves the state as it was)."""
    found: set[Line] = set()
    calls: list[rulebook.Call] = []

    def done(refused: frozenset[str] = frozenset(), rule: str | None = None) -> Executed:
        return Executed(frozenset(found), refused, tuple(calls), rule)

    try:
        if at is None:
            with _recording(found, calls):
                algorithm.codec.config_from_json(config)
            return done()
        decoded = algorithm.codec.config_from_json(config)
    except InvalidInput as error:
        return done(frozenset({error.rule}), error.rule)
    state = algorithm.machine.initial(decoded)
    for raw in inputs[:at]:
        try:
            state, _ = algorithm.machine.step(decoded, state, algorithm.codec.input_from_json(raw))
        except InvalidInput:
            continue
    try:
        with _recording(found, calls):
            algorithm.machine.step(decoded, state, algorithm.codec.input_from_json(inputs[at]))
    except InvalidInput as error:
        return done(frozenset({error.rule}), error.rule)
    return done()


def named(algorithm: Algorithm[Any, Any, Any, Any], lines: Iterable[Line]) -> frozenset[str]:
    """The rule ids naming ``lines``."""
    cited = citations(package_of(algorithm))
    return frozenset().union(*(cited.get(line, frozenset()) for line in lines))


def differing_rules(algorithm: Algorithm[Any, Any, Any, Any], a: Executed, b: Executed
                    ) -> tuple[frozenset[str], frozenset[str]]:
    """The rules only ``a`` runs and those only ``b`` runs at one input: the ids of the
    rule functions each calls; a refusal on one side only is named by the refusal's rules
    alone (the other side's going on is not the difference)."""
    del algorithm
    if a.refused != b.refused and (a.refused or b.refused):
        return a.refused - b.refused, b.refused - a.refused
    return a.ran - b.ran, b.ran - a.ran


def run_executed(algorithm: Algorithm[Any, Any, Any, Any], config: JSON,
                 inputs: Sequence[JSON]) -> Executed:
    """Every rule function the rule text calls over a whole run (the config's decoding
    included), and the rules of every refusal."""
    found: set[Line] = set()
    refused: set[str] = set()
    calls: list[rulebook.Call] = []
    with _recording(found, calls, details=False):
        try:
            decoded = algorithm.codec.config_from_json(config)
        except InvalidInput as error:
            decoded = None
            refused.add(error.rule)
        if decoded is not None:
            state = algorithm.machine.initial(decoded)
            for raw in inputs:
                try:
                    state, _ = algorithm.machine.step(decoded, state,
                                                      algorithm.codec.input_from_json(raw))
                except InvalidInput as error:
                    refused.add(error.rule)
    return Executed(frozenset(found), frozenset(refused), tuple(calls))
