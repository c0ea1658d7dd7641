"""``--fail-on``: the gates a finished job's summary is held to, so that CI can stop on what
matters to it (SP-R38).

A gate is the verdict's level, ``needs-a-look``, or a threshold on one outcome or reason,
``NAME>LIMIT``: ``rejected>1%`` (more than 1 % of the rows read rejected), ``too_old>0``
(any row rejected as too old). ``run``, ``stream`` and ``verify`` take the same gates. A
name the algorithm never writes is refused before any work (a typo would never fire).
Pure: summaries in, lines out; exact arithmetic (a share is compared as a fraction).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import attrs

from timealign import reasons
from timealign.errors import InvalidInput

#: The verdict's level (SP-R38): any item of the verdict fails the job.
NEEDS_A_LOOK = "needs-a-look"
#: The outcomes of the outcomes table (SP-R5).
OUTCOMES: tuple[str, ...] = ("grouped", "dropped", "rejected", "pending")
#: Reasons written by the adapters rather than a machine's rule: a row still pending when a
#: finite input ends, a row of a late file (SP-R14), a row a stream still holds (SP-D1).
ADAPTER_REASONS: tuple[str, ...] = ("end_of_input", "late_file", "held")

_GATE = re.compile(r"([a-z_]+)>(\d{1,15}(?:\.\d{1,6})?)(%?)")


@attrs.frozen
class Gate:
    """One ``--fail-on`` gate: the level (``limit`` None) or ``name>limit`` (a count, or
    with ``percent`` a share of the rows read in percent)."""

    name: str
    limit: Fraction | None = None
    percent: bool = False

    def __str__(self) -> str:
        if self.limit is None:
            return self.name
        number = str(self.limit.numerator) if self.limit.denominator == 1 else \
            format(float(self.limit), "g")
        return f"{self.name}>{number}{'%' if self.percent else ''}"


def parse(text: str) -> Gate:
    """An argparse ``type`` (CLI-R1): ``needs-a-look`` or ``NAME>N`` / ``NAME>N%``; a count
    is whole, a share a decimal of at most 6 places."""
    compact = text.replace(" ", "")
    if compact == NEEDS_A_LOOK:
        return Gate(NEEDS_A_LOOK)
    found = _GATE.fullmatch(compact)
    if found is None:
        raise argparse.ArgumentTypeError(
            f"expected {NEEDS_A_LOOK} or OUTCOME>N, REASON>N, OUTCOME>N%: e.g. 'rejected>1%%', "
            f"'too_old>0'; got {text!r}")
    limit = Fraction(found[2])
    if not found[3] and limit.denominator != 1:
        raise argparse.ArgumentTypeError(f"a count is a whole number (or give a share with %%): "
                                         f"{text!r}")
    return Gate(found[1], limit, bool(found[3]))


parse.__name__ = "gate"  # argparse names the type in its message


def names(algorithm: str) -> tuple[str, ...]:
    """The outcomes and reasons a run of ``algorithm`` can count: the outcome kinds, the
    reasons of its rules (:func:`timealign.reasons.written`) and the adapters' own."""
    return (*OUTCOMES, *reasons.written(algorithm), *ADAPTER_REASONS)


def check(gates: Iterable[Gate], algorithm: str, option: str = "--fail-on") -> None:
    """SP-R38: refuse, before any work, a gate naming what ``algorithm`` never writes."""
    known = names(algorithm)
    for gate in gates:
        if gate.limit is not None and gate.name not in known:
            raise InvalidInput(option, "SP-R38", f"{algorithm} writes no outcome or reason "
                               f"{gate.name!r}; one of {', '.join(known)}", str(gate))


def count(summary: Mapping[str, Any], name: str) -> int:
    """The rows of the summary whose outcome or reason is ``name`` (a stream's held rows
    count as ``pending`` and ``held``)."""
    rows = sum(int(c["rows"]) for c in summary["outcomes"]
               if name in (c["outcome"], c["reason"]))
    return rows + (int(summary.get("held") or 0) if name in ("pending", "held") else 0)


def tripped(gates: Sequence[Gate], summary: Mapping[str, Any]) -> list[str]:
    """What each gate the summary trips says, one line each (empty: the job passes)."""
    lines: list[str] = []
    total = int(summary.get("read", summary["rows"]))
    for gate in gates:
        if gate.limit is None:
            verdict = summary.get("verdict") or {}
            if verdict.get("needs_a_look"):
                lines.append(f"--fail-on {gate}: {verdict['line']}")
            continue
        rows = count(summary, gate.name)
        over = (rows * 100 > gate.limit * total) if gate.percent else rows > gate.limit
        if over:
            share = f"{rows / total:.2%}" if total else "0 %"
            lines.append(f"--fail-on {gate}: {rows} of {total} rows are {gate.name} ({share})")
    return lines
