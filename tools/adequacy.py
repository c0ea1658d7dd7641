"""Write the adequacy table of the catalogued rule variants into spec/conformance.md
(CF-R44): per algorithm, rule and variant, whether the shipped suite, the default fuzz and
the default explore kill it (a source kills a variant when the stand-in port, the rule
text with that variant swapped in, differs from the reference on some trace of it).

``tests/conformance/test_cf_adequacy.py`` checks that the table lists the catalogue and that
its suite column is current (cheap), and that suite + explore kill every variant;
``python -m tools.adequacy --check`` (``make adequacy-check``, run by ``.ci/run``)
recomputes the whole table and fails when the committed one is stale.

    python -m tools.adequacy          # or: make adequacy
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

from timealign import registry, rulebook
from timealign.conformance import catalogue, rules, shipped
from timealign.conformance.harness import InProcess, Judge, Progress, cause, check_fuzz
from timealign.conformance.instances import traces
from timealign.vectors import Vector

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec" / "conformance.md"
BEGIN = "<!-- adequacy: written by make adequacy (tools/adequacy.py); do not edit -->"
END = "<!-- /adequacy -->"
#: The default fuzz and explore of the table (CF-R44): ``--fuzz 1000 --seed 0``, and the
#: explore depth each algorithm's real upstreams are run with (docs/conformance.md): the
#: event-time batcher's alphabet is wide (185 676 traces to depth 4)
FUZZ, SEED = 1000, 0
EXPLORE = {"approximate_time": 5, "event_time_batcher": 3, "rate_aware_batcher": 5}
SOURCES = ("suite", f"fuzz {FUZZ}", "explore (depth)")


def depth(algorithm: str) -> int:
    """The default explore depth of ``algorithm`` in the table."""
    return EXPLORE.get(algorithm, 3)



@attrs.frozen
class Row:
    """One catalogued variant and the sources that kill it."""

    algorithm: str
    rule: str
    name: str
    suite: bool
    fuzz: bool
    explore: bool

    def cells(self) -> list[str]:
        return [self.algorithm, self.rule, f"`{self.name}`",
                *("killed" if k else "**missed**" for k in (self.suite, self.fuzz)),
                f"{'killed' if self.explore else '**missed**'} ({depth(self.algorithm)})"]


#: the reference's outputs of the traces tried, shared by the variants
_EXPECTED: dict[str, list[dict[str, Any]]] = {}


def kills(algorithm: str, table: rulebook.Table, vectors: Iterable[Vector]) -> bool:
    """Whether the stand-in port with ``table`` differs on some trace of ``vectors``."""
    return catalogue.kills(algorithm, table, vectors, _EXPECTED)


def suite_kills(algorithm: str, table: rulebook.Table) -> bool:
    return kills(algorithm, table, shipped(algorithm))


def explore_kills(algorithm: str, table: rulebook.Table, moves: int | None = None) -> bool:
    reference = registry.get(algorithm)
    chosen = depth(algorithm) if moves is None else moves
    return kills(algorithm, table, (v for _, _, v in traces(reference, chosen)))


def fuzz_kills(algorithm: str, table: rulebook.Table, count: int = FUZZ,
               seed: int = SEED) -> bool:
    """The default fuzz as ``conform`` runs it, stopped at its first difference."""
    judge = Judge(registry.get(algorithm), InProcess(catalogue.port(algorithm, table.name)),
                  grouping=cause)
    found = check_fuzz(judge, count, seed, Progress(False), most=1, shrink_budget=0.0)
    return found.differ > 0 or found.failed > 0


def rows(algorithms: Sequence[str] | None = None) -> list[Row]:
    """The table: every catalogued variant of every algorithm, in declaration order."""
    made = []
    for algorithm in algorithms or registry.names():
        for table in catalogue.variants(algorithm):
            assert table.rule is not None
            made.append(Row(algorithm, table.rule, table.name, suite_kills(algorithm, table),
                            fuzz_kills(algorithm, table), explore_kills(algorithm, table)))
    return sorted(made, key=lambda r: (r.algorithm, rules.order(r.rule)))


def markdown(made: Sequence[Row]) -> str:
    """The table between its markers."""
    lines = [BEGIN, "",
             f"| algorithm | rule | variant | {' | '.join(SOURCES)} |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {' | '.join(r.cells())} |" for r in made]
    if not made:
        lines.append("| (no catalogued variant yet) | | | | | |")
    return "\n".join([*lines, "", END])


def written(text: str, table: str) -> str:
    """``text`` (the spec) with its table replaced by ``table``."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"{SPEC}: no adequacy markers ({BEGIN} ... {END})")
    return text[:start] + table + text[end + len(END):]


def committed(text: str | None = None) -> list[list[str]]:
    """The rows of the committed table, as cells."""
    text = SPEC.read_text(encoding="utf-8") if text is None else text
    start, end = text.find(BEGIN), text.find(END)
    body = text[start:end].splitlines()
    return [[c.strip() for c in line.strip("|").split("|")] for line in body
            if line.startswith("| ") and not line.startswith("| algorithm")
            and "no catalogued variant" not in line]


def main(argv: Sequence[str]) -> int:
    """``--check``: fail when stale; algorithm names: recompute their rows only, keeping
    the committed rows of the others."""
    text = SPEC.read_text(encoding="utf-8")
    only = [a for a in argv if not a.startswith("-")]
    made = rows(only or None)
    if only:
        kept = [Row(c[0], c[1], c[2].strip("`"), c[3] == "killed", c[4] == "killed",
                    c[5].startswith("killed")) for c in committed(text) if c[0] not in only]
        made = sorted([*kept, *made], key=lambda r: (r.algorithm, rules.order(r.rule)))
    fresh = written(text, markdown(made))
    if "--check" in argv:
        if fresh != text:
            print("spec/conformance.md: the adequacy table (CF-R44) is stale: run make "
                  "adequacy", file=sys.stderr)
            return 1
        return 0
    SPEC.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
