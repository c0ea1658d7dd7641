"""Write the shipped conformance vectors from their cases, by running the reference.

Each family has a module ``cases/<algorithm>.py`` with ``CASES``: vectors without
outputs (name, description, rule ids, config, inputs). This script replays each case
through the reference and writes ``vectors/<algorithm>/<name>.json`` with the outputs
filled in. ``tests/test_vector_suites.py`` checks that the shipped files are exactly what
this script would write, so the suite can never drift from the reference.

    python -m cases.generate [ALGORITHM ...]
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import attrs

from timealign import vectors
from timealign.vectors import Vector

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent / "vectors"  # the vector files, one folder per family
SUITES = HERE.parent / "reference" / "timealign" / "suites"  # installed with the package


def families() -> list[str]:
    """The algorithm names that have a module of cases in ``cases/``."""
    tools = {"__init__", "generate", "figures"}
    return sorted(p.stem for p in HERE.glob("*.py") if p.stem not in tools)


def cases(family: str) -> list[Vector]:
    """The declared cases of one family, in declaration order."""
    found: list[Vector] = importlib.import_module(f"cases.{family}").CASES
    return found


def complete(case: Vector) -> Vector:
    """The case with the reference's outputs filled in."""
    return attrs.evolve(case, outputs=tuple(vectors.reference_outputs(case)))


def render(case: Vector) -> str:
    """The exact file text of one generated vector."""
    return json.dumps(complete(case).to_json(), indent=1) + "\n"


def expected_files(family: str) -> dict[str, str]:
    """File name -> file text for every case of ``family``."""
    return {f"{case.name}.json": render(case) for case in cases(family)}


def bundle_text(family: str) -> str:
    """The installed suite of ``family``: every vector on one line (CF-R6)."""
    lines = [json.dumps(complete(case).to_json(), separators=(",", ":")) for case in cases(family)]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    chosen = list(argv if argv is not None else sys.argv[1:]) or families()
    for family in chosen:
        folder = ROOT / family
        wanted = expected_files(family)
        for stale in folder.glob("*.json"):
            if stale.name not in wanted:
                stale.unlink()
        for name, text in wanted.items():
            (folder / name).write_text(text, encoding="utf-8")
        SUITES.mkdir(exist_ok=True)
        (SUITES / f"{family}.jsonl").write_text(bundle_text(family), encoding="utf-8")
        print(f"{family}: {len(wanted)} vectors written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
