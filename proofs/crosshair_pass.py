"""Run CrossHair over every reference module that carries PEP 316 contracts.

A module takes part when its source contains a ``post:`` contract line; adding contracts to
a module is therefore enough to have them checked by ``make test`` (short, bounded seconds
per condition) and by ``make proofs`` (longer, with ``--report-all`` so that "Confirmed over
all paths" is distinguished from "nothing found in time").
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "reference" / "timealign"


def contract_modules() -> list[Path]:
    """Every module of the package with at least one ``post:`` contract."""
    return sorted(
        path
        for path in PACKAGE.rglob("*.py")
        if any(line.strip().startswith("post:") for line in path.read_text().splitlines())
    )


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0, help="per-condition timeout")
    parser.add_argument("--report-all", action="store_true", help="report confirmed paths too")
    args = parser.parse_args()
    modules = contract_modules()
    if not modules:
        print("crosshair: no contract modules found", file=sys.stderr)
        return 1
    status = 0
    for module in modules:
        command = [
            sys.executable, "-m", "crosshair", "check", str(module.relative_to(ROOT)),
            f"--per_condition_timeout={args.seconds}",
        ]
        if args.report_all:
            command.append("--report_all")
        print(f"crosshair check {module.relative_to(ROOT)}", flush=True)
        result = subprocess.run(command, cwd=ROOT, check=False)
        if result.returncode != 0:
            print(f"  -> exit {result.returncode}", flush=True)
            status = 1
    print("crosshair: " + ("FAILED" if status else f"{len(modules)} modules, no counterexample"))
    return status


if __name__ == "__main__":
    sys.exit(main())
