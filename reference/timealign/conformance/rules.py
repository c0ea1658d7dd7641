"""Which spec rules an output exercises, so a divergence can be named by rule (CF-R14).

Each output kind (and reason) is produced by known rules of its algorithm's spec; an
``error`` output names its rule itself (VEC-R5). The harness takes the rules of the
reference's and the implementation's outputs at the first diverging input, plus the
``rules`` a shipped vector declares.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

JSON = dict[str, Any]

# (kind, reason or None) -> rule ids; the reason-less entry is the fallback of a kind.
RULES: dict[str, dict[tuple[str, str | None], tuple[str, ...]]] = {
    "approximate_time": {
        ("published", None): ("AT-R12", "AT-R14"),
        ("dropped", "interval_too_wide"): ("AT-R8", "AT-D10"),
        ("dropped", "pivot_refused"): ("AT-R9", "AT-D3"),
        ("dropped", "superseded"): ("AT-R11", "AT-D1"),
        ("dropped", "queue_overflow"): ("AT-R5", "AT-D4"),
        ("warning", "out_of_order"): ("AT-R4", "AT-D12"),
        ("warning", "closer_than_bound"): ("AT-R4",),
        ("pending", None): ("AT-R17", "AT-D20"),
    },
    "event_time_batcher": {
        ("batch", None): ("EB-R13", "EB-R14", "EB-R16"),
        ("timer", None): ("EB-R13",),
        ("rejected", "too_old"): ("EB-R5",),
        ("rejected", "too_far_in_future"): ("EB-R6",),
        ("rejected", "duplicate"): ("EB-R10",),
        ("dropped", "overwritten"): ("EB-R12",),
    },
    "rate_aware_batcher": {
        ("batch", None): ("RB-R10", "RB-R14", "RB-D6"),
        ("pending", None): ("RB-R16", "RB-D15"),
    },
}


KINDS = "RIDH"  # rules, invariants, decisions, hazards: the order of spec/README.md


def order(rule: str) -> tuple[str, int, int]:
    """Sort key: family, then rules before decisions, then the number (AT-R9 < AT-R12 <
    AT-D4)."""
    family, _, rest = rule.rpartition("-")
    kind = KINDS.find(rest[:1]) % (len(KINDS) + 1)
    return family, kind, int(rest[1:]) if rest[1:].isdigit() else -1


def exercised(algorithm: str, outputs: Iterable[JSON]) -> tuple[str, ...]:
    """The sorted rule ids the given outputs exercise (CF-R14)."""
    table = RULES.get(algorithm, {})
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
