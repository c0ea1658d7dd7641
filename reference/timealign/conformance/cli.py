"""``timealign conform``: check an external implementation against the reference.

Exit status (CF-R17, README "Exit codes"): 0 when every trace agreed, 1 when any trace
differed, was refused or failed, 2 on a usage error or bad input (unknown algorithm or profile,
unreadable vectors), raised as :class:`InvalidInput` and mapped by
:func:`timealign.command.guarded`.
The report goes to stdout, progress lines to stderr, the JSON report to ``--report``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from timealign import options, registry, vectors
from timealign.conformance import observe
from timealign.conformance.protocol import Command
from timealign.errors import EXIT_DIFFERENT, EXIT_OK, InvalidInput

# Bounds of the numeric options, checked at parse time (CLI-R1): a --fuzz trace longer than
# MAX_SIZE inputs is beyond what Hypothesis generates, an --explore depth beyond MAX_DEPTH
# would not end in a lifetime.
MAX_TRACES = 10**9
MAX_SIZE = 1000
MAX_DEPTH = 20


def _vectors(algorithm: str, paths: list[str]) -> list[vectors.Vector]:
    found = [v for path in vectors.files(paths) for v in vectors.load(path)]
    for vector in found:
        if vector.algorithm != algorithm:
            raise InvalidInput(f"{vector.source}.algorithm", "CF-R6",
                               f"a vector of another algorithm than {algorithm}",
                               vector.algorithm)
    return found


def target_lines(algorithm: str | None = None) -> list[str]:
    """One line per target (CF-R18): ``ALGORITHM --target NAME: what it is``."""
    from timealign.conformance import targets

    return [f"{name} --target {target}: {found.summary}"
            for name in ([algorithm] if algorithm else registry.names())
            for target, found in sorted(targets(name).items())]


def _conform(args: argparse.Namespace) -> int:
    from timealign.conformance import check, find_target

    registry.get(args.algorithm)
    if args.target == "list":
        print("\n".join(target_lines(args.algorithm)))
        return EXIT_OK
    if args.cmd is None:
        raise InvalidInput("--cmd", "CF-R1", "is required: the implementation's adapter "
                           "command", None)
    observed = args.observe
    if args.target is not None:
        observed = observed or find_target(args.algorithm, args.target).observe
    observe.profile(args.algorithm, observed or "full")
    for option, value, least in (("--fuzz", args.fuzz, 0), ("--explore", args.explore, 0),
                                 ("--size", args.size, 1), ("--timeout", args.timeout, 0.001)):
        if value < least:
            raise InvalidInput(option, "CF-R17", f"must be at least {least}", value)
    if args.fuzz:
        try:
            import hypothesis  # noqa: F401
        except ImportError:
            raise InvalidInput("--fuzz", "CF-R7", "needs Hypothesis: pip install "
                               "'timealign[conform]'", args.fuzz) from None
    if args.no_vectors and args.vectors:
        raise InvalidInput("--no-vectors", "CF-R17", "contradicts --vectors: give one",
                           args.vectors)
    chosen: list[vectors.Vector] | None = None
    if args.no_vectors:
        chosen = []
    elif args.vectors:
        chosen = _vectors(args.algorithm, args.vectors)
    if chosen == [] and not args.fuzz and not args.explore:
        raise InvalidInput("--vectors" if args.vectors else "--no-vectors", "VEC-R13",
                           "nothing to check: no vector found and no --fuzz or --explore",
                           args.vectors)
    with Command(args.cmd, timeout=args.timeout) as command:
        report = check(args.algorithm, command, vectors=chosen, fuzz=args.fuzz, seed=args.seed,
                       size=args.size, explore=args.explore, observe=observed,
                       save_to=args.save, progress=not args.quiet, target=args.target)
    print(report.text())
    if args.report:
        Path(args.report).write_text(json.dumps(report.to_json(), indent=1) + "\n",
                                     encoding="utf-8")
    if not any(source.run for source in report.sources):  # VEC-R13: no trace ran
        raise InvalidInput("conform", "VEC-R13", "nothing to check: no trace was run", None)
    return EXIT_OK if report.ok else EXIT_DIFFERENT


def register(commands: Any) -> None:
    """Add the ``conform`` sub-command to the ``timealign`` parser."""
    parser = commands.add_parser(
        "conform", help="check an implementation against the reference (spec/conformance.md)",
        description="Run traces through the reference and through COMMAND (the line protocol "
                    "of spec/conformance.md) and report, shrink and save every divergence. "
                    "Exit 0: everything agrees; 1: a trace differed, was refused or failed; "
                    "2: bad usage.",
        epilog="`timealign conform ALGORITHM --target list` prints the targets of ALGORITHM, "
               "the real upstreams it checks against, one line each (CF-R18).")
    parser.add_argument("algorithm", choices=registry.names())
    parser.add_argument("--cmd",
                        help="the implementation's adapter, run through the shell from here")
    parser.add_argument("--target", metavar="NAME",
                        help="a real upstream: generate and compare only traces of its domain "
                             "(`--target list` prints the targets)")
    parser.add_argument("--vectors", nargs="+", metavar="PATH",
                        help="vector files or folders instead of the shipped suite")
    parser.add_argument("--no-vectors", action="store_true", help="skip the vector suite")
    parser.add_argument("--fuzz", type=options.integer(0, MAX_TRACES), default=0, metavar="N",
                        help="N random traces; the first divergence is shrunk by Hypothesis")
    parser.add_argument("--seed", type=options.integer(0, 2**64 - 1), default=0,
                        help="seed of --fuzz (default 0)")
    parser.add_argument("--size", type=options.integer(1, MAX_SIZE), default=30,
                        metavar="INPUTS",
                        help=f"maximum inputs of a --fuzz trace (default 30, at most {MAX_SIZE})")
    parser.add_argument("--explore", type=options.integer(0, MAX_DEPTH), default=0,
                        metavar="DEPTH",
                        help="every trace of the bounded explorer's instances up to DEPTH")
    parser.add_argument("--observe",
                        help="what the implementation reports: full or upstream (default: "
                             "the target's, else full)")
    parser.add_argument("--save", metavar="DIR",
                        help="write each minimal divergence as a timealign.vector/1 file")
    parser.add_argument("--report", metavar="FILE", help="write the report as JSON")
    parser.add_argument("--timeout", type=options.number(0.001, 86_400.0), default=10.0,
                        metavar="SECONDS",
                        help="per-trace answer timeout (default 10)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.set_defaults(handler=_conform)
