"""The mutation study of the conformance harness at full budget (CF-I1; README table).

Every seeded fault of ``tests/conformance/mutants.py`` is run as an external command
through the protocol against the shipped vectors, ``--fuzz 1000 --seed 1`` and
``--explore`` at a depth per algorithm; the table says which sources caught it and the
size of the smallest diverging trace. Then the same run within each target of the
algorithm (CF-R18, ``--observe full``: the faults report everything): the last column
names the targets that caught it. A fault of one arithmetic (``at-round-not-trunc``
breaks ros2's AT-D23) is not a fault in the other's domain. ``make test`` runs the same
faults with small budgets (``tests/conformance/test_cf_mutants.py``).

    python -m proofs.conformance_study [FAULT ...]
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

from tests.conformance.mutants import FAULTS, command
from timealign.conformance import Command, check, targets

FUZZ, SEED = 1000, 1
DEPTH = {"approximate_time": 4, "event_time_batcher": 3, "rate_aware_batcher": 5}


def main(argv: Sequence[str]) -> int:
    print("| fault | what it does | vectors | fuzz | explore | minimal trace (inputs) "
          "| caught within targets |")
    print("|---|---|---|---|---|---|---|")
    missed = 0
    for fault, (algorithm, make) in FAULTS.items():
        if argv and fault not in argv:
            continue
        started = time.monotonic()
        with Command(command(fault)) as implementation:
            report = check(algorithm, implementation, fuzz=FUZZ, seed=SEED,
                           explore=DEPTH[algorithm])
        cells = []
        for source in report.sources:
            if source.differ or source.failed:
                found = (f"{source.differ} of {source.run}" if source.source != "fuzz"
                         else f"after {source.run} traces")
                cells.append(f"yes ({found})")
            else:
                cells.append(f"no ({source.run} run)")
        sizes = [len(d.vector.inputs) for s in report.sources for d in s.differences]
        within = []
        for target in targets(algorithm):
            with Command(command(fault)) as implementation:
                aimed = check(algorithm, implementation, fuzz=FUZZ, seed=SEED,
                              explore=DEPTH[algorithm], target=target, observe="full")
            if not aimed.ok:
                within.append(target)
        missed += not sizes or not within
        doc = (make.__doc__ or "").strip().splitlines()[0].replace("``", "`")
        print(f"| `{fault}` | {doc} | {' | '.join(cells)} | "
              f"{min(sizes) if sizes else '-'} | {', '.join(within) or 'none'} |", flush=True)
        print(f"  {fault}: {time.monotonic() - started:.1f} s", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
