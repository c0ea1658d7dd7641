"""``timealign conform``: check an external implementation against the reference.

Exit status (CF-R17, CF-R39, docs/commands.md "Exit codes"): 0 when every trace agreed, 1 when a
trace differed, 6 when none differed but the command gave no usable answer to some, 5 when
the only trouble is refused traces; 2 on a usage error or bad input (unknown algorithm or
profile, unreadable vectors), raised as :class:`InvalidInput` and mapped by
:func:`timealign.command.guarded`.
The report goes to stdout, progress lines to stderr, the JSON report to ``--report``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import signal
import sys
import threading
from typing import Any

from timealign import options, outputs, registry, vectors
from timealign.conformance import observe
from timealign.conformance.protocol import Command
from timealign.errors import EXIT_DIFFERENT, EXIT_OK, InvalidInput

# Bounds of the numeric options, checked at parse time (CLI-R1): a --fuzz trace longer than
# MAX_SIZE inputs is beyond what Hypothesis generates, an --explore depth beyond MAX_DEPTH
# would not end in a lifetime.
MAX_TRACES = 10**9
MAX_SIZE = 1000
MAX_DEPTH = 20
MAX_BUDGET = 10**7  # seconds (about four months)


def _vectors(algorithm: str, paths: list[str]) -> list[vectors.Vector]:
    found = [v for path in vectors.files(paths) for v in vectors.load(path)]
    for vector in found:
        if vector.algorithm != algorithm:
            raise InvalidInput(f"{vector.source}.algorithm", "CF-R6",
                               f"a vector of another algorithm than {algorithm}",
                               vector.algorithm)
    return found


def _check_targets(args: argparse.Namespace, command: str) -> None:
    """CLI-R4 (``conform``, ``diff``): ``--report`` and ``--save`` checked before the first
    trace: neither may be,
    hold or lie inside a vector file or folder read (given or the shipped suite), nor each
    other; the report's folder must exist, ``--save`` must be a folder; both writable."""
    from timealign.conformance.suites import bundle

    read: list[str] = [] if args.no_vectors else list(args.vectors or [])
    if not args.no_vectors and not args.vectors:
        read.append(str(bundle(args.algorithm)))
    reads = {(f"--vectors {path}" if args.vectors else "the shipped suite"): path
             for path in read}
    outputs.check_targets(reads, {"--report": args.report}, {"--save": args.save},
                          command=command)  # CLI-R5, CLI-R6


def _chosen_vectors(args: argparse.Namespace, fuzz_rule: str,
                    usage_rule: str) -> list[vectors.Vector] | None:
    """The vectors ``--vectors``/``--no-vectors`` choose (None: the shipped suite), after
    checking that ``--fuzz`` has Hypothesis; shared by ``conform`` and ``diff``."""
    if args.fuzz:
        try:
            import hypothesis  # noqa: F401
        except ImportError:
            raise InvalidInput("--fuzz", fuzz_rule, "needs Hypothesis: pip install "
                               "'timealign[conform]'", args.fuzz) from None
    if args.no_vectors and args.vectors:
        raise InvalidInput("--no-vectors", usage_rule, "contradicts --vectors: give one",
                           args.vectors)
    if args.no_vectors:
        return []
    return _vectors(args.algorithm, args.vectors) if args.vectors else None


def target_lines(algorithm: str | None = None) -> list[str]:
    """One line per target (CF-R18): ``ALGORITHM --target NAME: what it is``, then its
    domain: the profile it observes and the config values of its explorer instances,
    which ``--where`` can narrow (CF-R31)."""
    from timealign.conformance import targets

    return [f"{name} --target {target}: {found.summary}; {_domain(name, found)}"
            for name in ([algorithm] if algorithm else registry.names())
            for target, found in sorted(targets(name).items())]


def _domain(algorithm: str, target: Any) -> str:
    """``observe upstream; explorer configs: age_penalty 0.1, 0.7; topics 2, 3``."""
    from timealign.conformance.where import config_values

    reference = registry.get(algorithm)
    configs = [reference.codec.config_to_json(i.config) for i in target.instances]
    return f"observe {target.observe}; explorer configs: {config_values(configs, most=6)}"


def _conform(args: argparse.Namespace) -> int:
    from timealign.conformance import check, find_target, probes
    from timealign.conformance.harness import save
    from timealign.conformance.where import parse

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
    where = parse(registry.get(args.algorithm), args.where or [],
                  probes(args.algorithm))  # CF-R31: checked before any trace
    chosen = _chosen_vectors(args, "CF-R7", "CF-R17")
    if chosen == [] and not args.fuzz and not args.explore:
        raise InvalidInput("--vectors" if args.vectors else "--no-vectors", "VEC-R13",
                           "nothing to check: no vector found and no --fuzz or --explore",
                           args.vectors)
    _check_targets(args, "conform")
    with Command(args.cmd, timeout=args.timeout) as command, _Signals() as signals:
        report = check(args.algorithm, command, vectors=chosen, fuzz=args.fuzz, seed=args.seed,
                       size=args.size, explore=args.explore, observe=observed,
                       progress=not args.quiet, target=args.target,
                       where=where, max_differences=args.max_differences,
                       budget=args.budget, source_lines=True)
        signals.armed = False  # CF-R34: from here on a signal no longer cuts anything short
        if not any(source.run for source in report.sources) and not report.interrupted:
            raise InvalidInput("conform", "VEC-R13", "nothing to check: no trace was run",
                               None)
        if args.save is not None:
            save(report, args.save)
        print(report.text(), flush=True)
        if args.report:
            outputs.write_target("conform", "--report", args.report,
                                 json.dumps(report.to_json(), indent=1) + "\n")  # CLI-R5
    if report.interrupted:  # CF-R34, CLI-R2: the summary and the report, then exit 130
        print("timealign: interrupted", file=sys.stderr, flush=True)
    return report.exit_code()  # CF-R39, CF-R34: the report's exit_status


class _Signals:
    """CF-R34, CLI-R2: while the sources run, the first SIGINT or SIGTERM ends them as
    Ctrl-C does (``KeyboardInterrupt``, naming the signal); every later one, and any once
    ``armed`` is false, is ignored, so the summary is printed and the report written
    whatever arrives after (``timeout`` signals the command, then its whole process group):
    once a signal came, they stay ignored until the process exits. Outside the main thread
    (no signal handlers there) it does nothing."""

    def __init__(self) -> None:
        self.armed = True
        self.received: list[int] = []
        self.previous: dict[int, Any] = {}

    def __enter__(self) -> _Signals:
        if threading.current_thread() is threading.main_thread():
            for number in (signal.SIGINT, signal.SIGTERM):
                self.previous[number] = signal.signal(number, self._received)
        return self

    def __exit__(self, *_: object) -> None:
        if self.received:  # a second signal may still be on its way: it too is ignored
            return
        for number, handler in self.previous.items():
            signal.signal(number, handler)

    def _received(self, number: int, _frame: Any) -> None:
        self.received.append(number)
        if self.armed and len(self.received) == 1:
            raise KeyboardInterrupt("Ctrl-C" if number == signal.SIGINT
                                    else signal.Signals(number).name)


def _diff(args: argparse.Namespace) -> int:
    """``timealign diff``: exit 0 when the variants agree on everything tried, 1 when they
    differ, 2 on bad usage (CF-R25)."""
    from timealign.conformance.diff import diff, save, variant

    registry.get(args.algorithm)
    a = variant(args.algorithm, args.a, "--a")
    b = variant(args.algorithm, args.b, "--b")
    chosen = _chosen_vectors(args, "CF-R22", "CF-R25")
    _check_targets(args, "diff")
    report = diff(args.algorithm, a, b, vectors=chosen, fuzz=args.fuzz, seed=args.seed,
                  size=args.size, explore=args.explore, progress=not args.quiet)
    if not any(t.run for t in report.tried):  # VEC-R13: nothing tried is no verdict
        raise InvalidInput("diff", "VEC-R13", "nothing to check: no trace was run", None)
    print(report.text())
    if args.save:
        pictures = not args.no_pictures
        if pictures and importlib.util.find_spec("matplotlib") is None:
            pictures = False
            print("diff: no pictures: they need matplotlib (pip install 'timealign[plot]')",
                  file=sys.stderr)
        for path in save(report, args.save, pictures=pictures):
            print(f"saved {path}")
    if args.report:
        outputs.write_target("diff", "--report", args.report,
                             json.dumps(report.to_json(), indent=1) + "\n")  # CLI-R5
    return EXIT_OK if report.ok else EXIT_DIFFERENT


def _register_diff(commands: Any) -> None:
    parser = commands.add_parser(
        "diff", help="what changes between two config variants of the reference "
                     "(spec/conformance.md)",
        description="Run the reference under two config variants (--a, --b: KEY=VALUE "
                    "changes applied to every trace's config) over the shipped vectors, the "
                    "explorer's instances and seeded random traces, and report every distinct "
                    "way they differ, by the rules only one variant runs at the first "
                    "diverging input, each with its minimal trace and both outputs. Exit 0: "
                    "they agree on everything tried; 1: they differ; 2: bad usage.",
        epilog="Examples: `timealign diff rate_aware_batcher --a profile=card --b "
               "profile=esslivedata-head`; `timealign diff approximate_time --a "
               "arithmetic=ros2 --b arithmetic=ros1`.")
    parser.add_argument("algorithm", choices=registry.names())
    parser.add_argument("--a", nargs="+", required=True, metavar="KEY=VALUE",
                        help="the config changes of variant A (VALUE read as JSON, else text)")
    parser.add_argument("--b", nargs="+", required=True, metavar="KEY=VALUE",
                        help="the config changes of variant B")
    parser.add_argument("--vectors", nargs="+", metavar="PATH",
                        help="vector files or folders instead of the shipped suite")
    parser.add_argument("--no-vectors", action="store_true", help="skip the vector suite")
    parser.add_argument("--explore", type=options.integer(0, MAX_DEPTH), default=3,
                        metavar="DEPTH",
                        help="every trace of the explorer's instances up to DEPTH (default 3)")
    parser.add_argument("--fuzz", type=options.integer(0, MAX_TRACES), default=100,
                        metavar="N",
                        help="random traces per strategy and search round (default 100)")
    parser.add_argument("--seed", type=options.integer(0, 2**64 - 1), default=0,
                        help="seed of --fuzz (default 0)")
    parser.add_argument("--size", type=options.integer(1, MAX_SIZE), default=12,
                        metavar="INPUTS",
                        help=f"maximum inputs of a random trace (default 12, at most {MAX_SIZE})")
    parser.add_argument("--save", metavar="DIR",
                        help="write each difference as two timealign.vector/1 files (one per "
                             "variant) and its picture")
    parser.add_argument("--no-pictures", action="store_true",
                        help="with --save, write no pictures")
    parser.add_argument("--report", metavar="FILE", help="write the report as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.set_defaults(handler=_diff)


def register(commands: Any) -> None:
    """Add the ``conform`` and ``diff`` sub-commands to the ``timealign`` parser."""
    parser = commands.add_parser(
        "conform", help="check an implementation against the reference (spec/conformance.md)",
        description="Run traces through the reference and through COMMAND (the line protocol "
                    "of spec/conformance.md) and report, shrink and save every divergence. "
                    "Exit 0: everything agrees; 1: a trace differed; 5: no trace differed, "
                    "some were refused; 6: no trace differed, the command gave no usable "
                    "answer to some; 2: bad usage.",
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
                        help="N random traces; each distinct divergence is shrunk by Hypothesis")
    parser.add_argument("--seed", type=options.integer(0, 2**64 - 1), default=0,
                        help="seed of --fuzz (default 0)")
    parser.add_argument("--size", type=options.integer(1, MAX_SIZE), default=30,
                        metavar="INPUTS",
                        help=f"maximum inputs of a --fuzz trace (default 30, at most {MAX_SIZE})")
    parser.add_argument("--explore", type=options.integer(0, MAX_DEPTH), default=0,
                        metavar="DEPTH",
                        help="every trace of the bounded explorer's instances up to DEPTH")
    parser.add_argument("--where", action="append", metavar="KEY=VALUE",
                        help="only configs with this value (repeatable; e.g. age_penalty=0): "
                             "vectors without it are skipped, generated traces carry it")
    parser.add_argument("--max-differences", type=options.integer(1, MAX_TRACES), default=10,
                        metavar="N",
                        help="differences each source details (default 10): the suite's "
                             "differing, refused and failed vectors each, the distinct ones "
                             "of fuzz and explore; the rest are named in --report")
    parser.add_argument("--budget", type=options.number(0.001, MAX_BUDGET), metavar="SECONDS",
                        help="fuzz and explore each stop after SECONDS (wall clock) and report "
                             "what they covered")
    parser.add_argument("--observe",
                        help="what the implementation reports: full or upstream (default: "
                             "the target's, else full)")
    parser.add_argument("--save", metavar="DIR",
                        help="write each minimal divergence as a timealign.vector/1 file")
    parser.add_argument("--report", metavar="FILE", help="write the report as JSON")
    parser.add_argument("--timeout", type=options.number(0.001, 86_400.0), default=10.0,
                        metavar="SECONDS",
                        help="per-trace answer timeout (default 10)")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress lines on stderr, one line per finished source")
    parser.set_defaults(handler=_conform)
    _register_diff(commands)
