"""Write the shipped conformance vectors from their cases, by running the reference.

Each family ``vectors/<algorithm>/`` has a ``cases.py`` with ``CASES``: vectors without
outputs (name, description, rule ids, config, inputs). This script replays each case
through the reference and writes ``vectors/<algorithm>/<name>.json`` with the outputs
filled in. ``tests/test_vector_suites.py`` checks that the shipped files are exactly what
this script would write, so the suite can never drift from the reference.

    python -m vectors.generate [ALGORITHM ...]
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

ROOT = Path(__file__).resolve().parent


def families() -> list[str]:
    """The algorithm names that have a ``cases.py`` under ``vectors/``."""
    return sorted(p.parent.name for p in ROOT.glob("*/cases.py"))


def cases(family: str) -> list[Vector]:
    """The declared cases of one family, in declaration order."""
    found: list[Vector] = importlib.import_module(f"vectors.{family}.cases").CASES
    return found


def render(case: Vector) -> str:
    """The exact file text of one generated vector."""
    complete = attrs.evolve(case, outputs=tuple(vectors.reference_outputs(case)))
    return json.dumps(complete.to_json(), indent=1) + "\n"


def expected_files(family: str) -> dict[str, str]:
    """File name -> file text for every case of ``family``."""
    return {f"{case.name}.json": render(case) for case in cases(family)}


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
        print(f"{family}: {len(wanted)} vectors written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
