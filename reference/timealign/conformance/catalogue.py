"""The catalogue of rule variants (CF-R41) as implementations: a stand-in port that is the
reference's rule text with catalogued variants swapped in, for the diagnosis of a
difference, the adequacy table and the tests over the whole catalogue.

A variant is a table of the algorithm's :class:`~timealign.rulebook.Book`, declared in the
package's ``variants`` module with the rule it misreads (``BOOK.variant(name, {slot:
replacement}, rule="AT-R6")``); the replacement's docstring says what it does, and the
spec names and describes it under its rule.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from timealign import jsontext, registry, rulebook
from timealign.algorithm import Algorithm, run_json
from timealign.vectors import Vector

JSON = dict[str, Any]
#: A port as the harness runs it in process: ``function(config JSON, inputs JSON) -> outputs
#: JSON`` (defined here, where the harness and the stand-in ports both take it from)
Implementation = Callable[[JSON, list[JSON]], list[JSON]]


def variants(algorithm: str) -> tuple[rulebook.Table, ...]:
    """The catalogued variants of ``algorithm``'s rules, in declaration order."""
    return rulebook.catalogue(registry.package(algorithm))


def book(algorithm: str) -> rulebook.Book:
    """The book of ``algorithm``, which every algorithm with a catalogue has."""
    found = rulebook.book_of(registry.package(algorithm))
    if found is None:
        raise LookupError(f"{algorithm} has no rule book, so no variants")
    found.catalogue()  # imports the package's variants module, which declares the tables
    return found


def run_variants(algorithm: str | Algorithm[Any, Any, Any, Any],
                 names: Sequence[str | rulebook.Table], config: JSON,
                 inputs: Sequence[JSON]) -> list[JSON]:
    """The outputs of the rule text with the variants ``names`` swapped in (none: the rule
    text itself). The swap lasts for this call only, so the reference run around it (its
    fast path included) is unchanged."""
    rule_text = registry.get(algorithm) if isinstance(algorithm, str) else algorithm
    with book(rule_text.name).swapped(*names):
        return run_json(rule_text, config, inputs)


def port(algorithm: str, *names: str) -> Implementation:
    """A stand-in port: the reference's rule text with the variants ``names`` planted."""
    return lambda config, inputs: run_variants(algorithm, names, config, list(inputs))


def kills(algorithm: str, variant: str | rulebook.Table, traces: Iterable[Vector],
          expected: dict[str, list[JSON]] | None = None) -> bool:
    """CF-R44: whether the stand-in port with ``variant`` planted answers some trace of
    ``traces`` otherwise than the reference (compared in full; a variant raising on a trace
    is caught there). ``expected`` keeps the reference's outputs of each trace, for the
    next variant tried on the same traces."""
    known = {} if expected is None else expected
    for vector in traces:
        config, inputs = dict(vector.config), list(vector.inputs)
        try:
            planted = run_variants(algorithm, (variant,), config, inputs)
        except Exception:
            return True
        key = json.dumps([algorithm, config, inputs], sort_keys=True)
        if key not in known:
            known[key] = run_variants(algorithm, (), config, inputs)
        if not jsontext.same(planted, known[key]):
            return True
    return False
