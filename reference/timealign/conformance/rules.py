"""Which spec rules an output exercises, so a divergence can be named by rule (CF-R14).

Each output kind (and reason) is produced by known rules of its algorithm's spec (the map
lives with the algorithm, ``<algorithm>/traces.py``, as ``Algorithm.checks.traces.rules``); an
``error`` output names its rule itself (VEC-R5). The harness takes the rules of the
reference's and the implementation's outputs at the first diverging input, plus the
``rules`` a shipped vector declares.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from timealign import Algorithm, registry

JSON = dict[str, Any]

KINDS = "RIDH"  # rules, invariants, decisions, hazards: the order of spec/README.md


def order(rule: str) -> tuple[str, int, int]:
    """Sort key: family, then rules before decisions, then the number (AT-R9 < AT-R12 <
    AT-D4)."""
    family, _, rest = rule.rpartition("-")
    kind = KINDS.find(rest[:1]) % (len(KINDS) + 1)
    return family, kind, int(rest[1:]) if rest[1:].isdigit() else -1


def exercised(algorithm: str | Algorithm[Any, Any, Any, Any],
              outputs: Iterable[JSON]) -> tuple[str, ...]:
    """The sorted rule ids the given outputs exercise (CF-R14): an ``error`` names its
    rule, other outputs map through the algorithm's ``traces.rules``."""
    found_algorithm = registry.get(algorithm) if isinstance(algorithm, str) else algorithm
    table = found_algorithm.checks.traces.rules if found_algorithm.checks.traces is not None else {}
    found: set[str] = set()
    for output in outputs:
        kind = str(output.get("kind"))
        if kind == "error" and isinstance(output.get("rule"), str):
            found.add(output["rule"])
            continue
        reason = output.get("reason")
        found.update(table.get((kind, reason if isinstance(reason, str) else None),
                               table.get((kind, None), ())))
    return tuple(sorted(found, key=order))
