"""Issue 41's planted one-line bugs in the real upstreams, built and checked by `conform`.

Each :data:`PLANTS` entry names a real upstream at its pinned commit, one line of it and the
one-line change planted there. The script extracts the upstream's files from a git snapshot
into ``build/planted/<name>/`` (the snapshot is never modified), changes that line (it must
occur exactly once), builds the shipped adapter of ``examples/`` against the copy as a user
would, and runs ``timealign conform`` (the shipped suite, ``--fuzz``, ``--explore``) with
``--report`` and ``--save`` there. It prints, per plant, what the harness named: the
verdict, the rules of the differing traces and, where the harness diagnoses, the
explanations; and whether the planted change's rule is the one named. A plant whose
toolchain (``g++``, ``cargo``, nlohmann/json, Debian's Rust crates, ``structlog``) or
snapshot is missing is skipped with the reason. One entry is no planted bug but
fkie/message_filters as it is, a ROS 1 port whose own behaviours differ from ROS's (issue
41). Not part of ``make test``: it needs the toolchains and the snapshots and takes minutes.

    python -m proofs.planted_upstreams                      # or: make planted
    python -m proofs.planted_upstreams --only thin-edge-lookup --fuzz 300 --explore 3

The snapshots are bare git repositories (or clones' ``.git``) named by environment
variables: ``ROS2_MF_GIT`` and ``ROS2_RCLCPP_GIT`` (as the Makefile's ROS 2 baseline),
``THIN_EDGE_GIT``, ``ESSLIVEDATA_GIT``, ``FKIE_MF_GIT``; ``CXX`` names the C++ compiler,
``ESS_PYTHON`` an interpreter with ``structlog`` (else a virtual environment with it is made
under ``build/planted/``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "planted"
MIRROR = Path("/work/.mirror")
DEBIAN_REGISTRY = Path("/usr/share/cargo/registry")
NLOHMANN = Path("/usr/include/nlohmann/json.hpp")


class Missing(Exception):
    """A toolchain or snapshot the plant needs is not here: the plant is skipped."""


@dataclass(frozen=True)
class Snapshot:
    """An upstream repository at a pinned commit, read from a git snapshot."""

    repo: str  # owner/name on GitHub
    commit: str
    variable: str  # the environment variable naming the git directory

    @property
    def git_dir(self) -> Path:
        default = MIRROR / self.repo.replace("/", "+") / "repo"
        return Path(os.environ.get(self.variable, str(default)))

    def extract(self, paths: Sequence[str], into: Path) -> None:
        """``paths`` of the commit, as files under ``into`` (``git archive``)."""
        git = shutil.which("git")
        if git is None:
            raise Missing("no git on PATH")
        found = subprocess.run([git, "--git-dir", str(self.git_dir), "cat-file", "-e",
                                f"{self.commit}^{{commit}}"], capture_output=True)
        if found.returncode != 0:
            raise Missing(f"no {self.repo} @{self.commit[:8]} in {self.git_dir} (set "
                          f"{self.variable} to a git repository holding it)")
        into.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run([git, "--git-dir", str(self.git_dir), "archive", self.commit,
                                  *paths], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)


ROS2_MF = Snapshot("ros2/message_filters", "361e42c78ee08a7b63397a143eae87fda7514d61",
                   "ROS2_MF_GIT")
ROS2_RCLCPP = Snapshot("ros2/rclcpp", "a0a2a067d84fd6a38ab4f71b691d51ca5aa97ba5",
                       "ROS2_RCLCPP_GIT")
THIN_EDGE = Snapshot("thin-edge/thin-edge.io", "c6cc23d6a0bd10d65854b5cbde45f92d14c8a9f6",
                     "THIN_EDGE_GIT")
ESS_CARD = Snapshot("scipp/esslivedata", "fb65e75e4d2b81cab42e22d5324495d594c9d2fc",
                    "ESSLIVEDATA_GIT")
FKIE_MF = Snapshot("fkie/message_filters", "4437729f01479c8ee7e5b40e7e868d7b219bd813",
                   "FKIE_MF_GIT")


@dataclass(frozen=True)
class Plant:
    """One planted bug: where, the line before and after, and how the copy is checked.

    ``old`` and ``new`` empty: the upstream as it is (a port whose own behaviours differ)."""

    name: str
    algorithm: str
    target: str
    snapshot: Snapshot
    path: str  # the file of the snapshot the bug is planted in
    function: str  # upstream's function holding the line, for the citation
    old: str
    new: str
    rule: str  # the rule whose variant the planted change is (issue 41); "" for none
    explore: int  # the default explore depth
    build: Callable[[Plant, Path], str]  # builds the copy in a folder, returns --cmd
    options: tuple[str, ...] = ()  # more options of `timealign conform`

    def citation(self) -> str:
        return f"{self.snapshot.repo}@{self.snapshot.commit[:8]}/{self.path}, {self.function}"

    def stamp(self) -> str:
        """What the built copy depends on, so an unchanged plant is not built again."""
        text = json.dumps([self.snapshot.commit, self.path, self.old, self.new])
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def plant(plant: Plant, root: Path) -> Path:
    """Replace the planted line in the extracted copy under ``root``; it must occur once."""
    target = root / plant.path
    if not plant.old:
        return target
    text = target.read_text(encoding="utf-8")
    count = text.count(plant.old)
    if count != 1:
        raise SystemExit(f"{plant.name}: {plant.old!r} occurs {count} times in {target} "
                         f"(expected once at {plant.citation()})")
    target.write_text(text.replace(plant.old, plant.new), encoding="utf-8")
    return target


def _run_build(command: Sequence[str], cwd: Path, what: str) -> None:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
        raise Missing(f"{what} failed (exit {done.returncode}):\n{textwrap.indent(tail, '    ')}")


def build_ros2(plant_: Plant, folder: Path) -> str:
    """The shipped ROS 2 adapter against the planted rolling policy, with rclcpp's time
    sources and ``benchmarks/ros2_standin/`` (its README's compile line)."""
    cxx = shutil.which(os.environ.get("CXX", "g++"))
    if cxx is None:
        raise Missing(f"no C++ compiler ({os.environ.get('CXX', 'g++')}) on PATH")
    if not NLOHMANN.is_file():
        raise Missing(f"no {NLOHMANN} (apt-get install nlohmann-json3-dev)")
    mf, rclcpp = folder / "src" / "message_filters", folder / "src" / "rclcpp"
    ROS2_MF.extract(["include", "src/connection.cpp"], mf)
    ROS2_RCLCPP.extract(["rclcpp/include/rclcpp/time.hpp", "rclcpp/include/rclcpp/duration.hpp",
                         "rclcpp/src/rclcpp/time.cpp", "rclcpp/src/rclcpp/duration.cpp"], rclcpp)
    plant(plant_, mf)
    adapter = folder / "ros2_adapter"
    time_sources = rclcpp / "rclcpp" / "src" / "rclcpp"
    _run_build([cxx, "-std=c++17", "-O2", f"-I{rclcpp / 'rclcpp' / 'include'}",
                f"-I{ROOT / 'benchmarks' / 'ros2_standin'}", f"-I{mf / 'include'}",
                "-o", str(adapter), str(ROOT / "examples" / "ros2_message_filters" / "adapter.cpp"),
                str(mf / "src" / "connection.cpp"), str(time_sources / "time.cpp"),
                str(time_sources / "duration.cpp")], ROOT, "the ROS 2 adapter's build")
    return str(adapter)


def build_thin_edge(plant_: Plant, folder: Path) -> str:
    """The shipped thin-edge crate (``examples/thin_edge_batcher``) with the planted copy as
    its ``upstream/``, built offline with Debian's crates when there is no crates.io."""
    cargo = shutil.which("cargo")
    if cargo is None:
        raise Missing("no cargo on PATH")
    crate = folder / "crate"
    example = ROOT / "examples" / "thin_edge_batcher"
    crate.mkdir(parents=True, exist_ok=True)
    for name in ("Cargo.toml", "build.rs"):
        shutil.copy2(example / name, crate / name)
    shutil.copytree(example / "src", crate / "src", dirs_exist_ok=True)
    THIN_EDGE.extract(["crates/common/batcher/src"], crate / "upstream")
    plant(plant_, crate / "upstream")
    command = [cargo, "build", "--release", "--offline", "--quiet", "--bin", "thin_edge_adapter"]
    if DEBIAN_REGISTRY.is_dir():
        command += ["--config", 'source.crates-io.replace-with="debian"',
                    "--config", f'source.debian.directory="{DEBIAN_REGISTRY}"']
    _run_build(command, crate, "the thin-edge crate's build (cargo, offline)")
    return str(crate / "target" / "release" / "thin_edge_adapter")


def _ess_python(folder: Path) -> Path:
    """An interpreter with ``structlog`` (upstream's ``message_batcher.py`` imports it)."""
    named = os.environ.get("ESS_PYTHON")
    if named:
        return Path(named)
    venv = folder.parent / "ess-venv"
    python = venv / "bin" / "python"
    if subprocess.run([str(python), "-c", "import structlog"], capture_output=True).returncode \
            if python.exists() else True:
        _run_build([sys.executable, "-m", "venv", str(venv)], ROOT, "a venv for the ESS adapter")
        _run_build([str(python), "-m", "pip", "install", "-q", "structlog"], ROOT,
                   "pip install structlog (or set ESS_PYTHON to a Python with it)")
    return python


def build_ess(plant_: Plant, folder: Path) -> str:
    """The shipped ESS adapter over the planted copy of the batcher's modules."""
    ESS_CARD.extract(["src/ess/livedata/core"], folder)
    plant(plant_, folder)
    python = _ess_python(folder)
    adapter = ROOT / "examples" / "esslivedata" / "adapter.py"
    return f"{python} {adapter} --upstream {folder / 'src'}"


ROS1_LIBS = ("-lroscpp", "-lrostime", "-lrosconsole", "-lroscpp_serialization",
             "-lboost_system", "-lboost_thread")


def build_fkie(plant_: Plant, folder: Path) -> str:
    """``examples/fkie_message_filters/adapter.cpp`` against fkie's headers (ROS 1: Debian's
    roscpp and rostime, as the ROS 1 adapter)."""
    cxx = shutil.which(os.environ.get("CXX", "g++"))
    if cxx is None:
        raise Missing(f"no C++ compiler ({os.environ.get('CXX', 'g++')}) on PATH")
    for header in (NLOHMANN, Path("/usr/include/ros/time.h")):
        if not header.is_file():
            raise Missing(f"no {header} (apt-get install libmessage-filters-dev "
                          "nlohmann-json3-dev)")
    FKIE_MF.extract(["fkie_message_filters/include"], folder / "src")
    plant(plant_, folder / "src")
    adapter = folder / "fkie_adapter"
    _run_build([cxx, "-std=c++17", "-O2",
                f"-I{folder / 'src' / 'fkie_message_filters' / 'include'}", "-o", str(adapter),
                str(ROOT / "examples" / "fkie_message_filters" / "adapter.cpp"), *ROS1_LIBS],
               ROOT, "the fkie adapter's build")
    return str(adapter)


PLANTS = (
    Plant("ros2-checkboundary", "approximate_time", "ros2", ROS2_MF,
          "include/message_filters/sync_policies/approximate_time.hpp",
          "ApproximateTime::checkBoundary",
          "value(*m.getMessage()) < time) ^ end", "value(*m.getMessage()) <= time) ^ end",
          "AT-R6", 5, build_ros2),
    Plant("thin-edge-lookup", "event_time_batcher", "thin-edge", THIN_EDGE,
          "crates/common/batcher/src/batcher.rs", "Batcher::find_target_batch",
          "event_time <= batch.batch_end()", "event_time < batch.batch_end()",
          "EB-R7", 3, build_thin_edge),
    Plant("thin-edge-too-old", "event_time_batcher", "thin-edge", THIN_EDGE,
          "crates/common/batcher/src/batcher.rs", "Batcher::event",
          "if event_time < processing_time - self.config.delivery_jitter()",
          "if event_time <= processing_time - self.config.delivery_jitter()",
          "EB-R5", 3, build_thin_edge),
    Plant("ess-card-slots", "rate_aware_batcher", "esslivedata-card", ESS_CARD,
          "src/ess/livedata/core/rate_aware_batcher.py", "_GatedStream.refresh_grid",
          "slots_per_batch = round(int_rate * batch_length_s)",
          "slots_per_batch = round(int_rate * batch_length_s) - 1",
          "RB-R4", 5, build_ess),
    Plant("fkie-as-is", "approximate_time", "ros1", FKIE_MF,
          "fkie_message_filters/include/fkie_message_filters/combiner_policies/"
          "approximate_time_impl.h", "ApproximateTime::add", "", "", "", 4, build_fkie,
          ("--where", "age_penalty=0")),
)


def built(plant_: Plant, folder: Path, rebuild: bool) -> str:
    """The ``--cmd`` of the plant's copy built in ``folder``, building it unless an unchanged
    build is there."""
    record = folder / "built.json"
    if not rebuild and record.is_file():
        known = json.loads(record.read_text(encoding="utf-8"))
        if known.get("stamp") == plant_.stamp():
            return str(known["cmd"])
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    command = plant_.build(plant_, folder)
    record.write_text(json.dumps({"stamp": plant_.stamp(), "cmd": command}), encoding="utf-8")
    return command


def conform(plant_: Plant, folder: Path, command: str, fuzz: int, seed: int,
            explore: int | None, budget: float | None) -> tuple[int, str]:
    """Run ``timealign conform`` on the built copy as a user would; the console and the exit
    status, the report and the saved vectors beside the build, in ``folder``."""
    found, report = folder / "found", folder / "report.json"
    shutil.rmtree(found, ignore_errors=True)
    report.unlink(missing_ok=True)
    timealign = Path(sys.executable).with_name("timealign")
    arguments = [str(timealign), "conform", plant_.algorithm, "--target", plant_.target,
                 *plant_.options, "--cmd", command, "--fuzz", str(fuzz), "--seed", str(seed),
                 "--explore", str(plant_.explore if explore is None else explore),
                 "--timeout", "60", "--quiet", "--save", str(found), "--report", str(report)]
    if budget is not None:
        arguments += ["--budget", str(budget)]
    done = subprocess.run(arguments, cwd=ROOT, capture_output=True, text=True)
    shown = " ".join(arguments[1:]).replace(str(ROOT) + "/", "")
    console = f"$ timealign {shown}\n{done.stdout}"
    (folder / "conform.txt").write_text(console + done.stderr, encoding="utf-8")
    return done.returncode, console


def named(report: Path, rule: str) -> str:
    """What the run's report says of the plant's rule: its diagnosis (``explained_by``, the
    variants explaining its differences, and how many stayed unexplained), and whether a
    variant of ``rule`` is among them; without a diagnosis, whether ``rule`` is among the
    differing rules."""
    if not report.is_file():
        return "no report"
    found = json.loads(report.read_text(encoding="utf-8"))
    if "explained_by" not in found:  # a harness without the diagnosis
        among = "among" if rule in found.get("differs_on", []) else "not among"
        return f"no diagnosis; {rule or 'no rule'} {among} the differing rules"
    labels, unexplained = found["explained_by"], found.get("unexplained", 0)
    said = (f"explained by {'; '.join(labels) or 'nothing'}"
            + (f"; {unexplained} unexplained" if unexplained else ""))
    if not rule:
        return said
    hit = any(part.strip().startswith(f"{rule} ~") for label in labels
              for part in label.split("+"))
    return f"{'named' if hit else 'NOT named'} ({rule}): {said}"


def sources(report: Path) -> list[str]:
    """Per source of the run's JSON report: traces that differed of those run, distinct
    differences, and the rules the detailed differences name."""
    if not report.is_file():
        return ["no report"]
    lines = []
    for source, counts in json.loads(report.read_text(encoding="utf-8"))["sources"].items():
        rules = sorted({rule for difference in counts.get("differences", [])
                        for rule in difference.get("rules", [])},
                       key=lambda rule: ("RIDH".find(rule.split("-")[1][0]),
                                         int(rule.split("-")[1][1:])))
        lines.append(f"{source} {counts['differ']} of {counts['run']} differ "
                     f"({counts['note'] or 'suite'}): {', '.join(rules) or '-'}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--only", action="append", choices=[p.name for p in PLANTS],
                        help="only this plant (repeatable)")
    parser.add_argument("--fuzz", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--explore", type=int, default=None,
                        help="explore depth (default: the plant's, 3 to 5)")
    parser.add_argument("--budget", type=float, default=None, help="conform's --budget")
    parser.add_argument("--rebuild", action="store_true", help="build even when unchanged")
    parser.add_argument("--out", type=Path, default=BUILD,
                        help="where the copies, builds and reports go (default build/planted)")
    options = parser.parse_args(argv)
    out: Path = options.out
    summary = []
    for plant_ in PLANTS:
        if options.only and plant_.name not in options.only:
            continue
        change = f"{plant_.old!r} -> {plant_.new!r}" if plant_.old else "unmodified"
        print(f"== {plant_.name}: {change} ({plant_.citation()})", flush=True)
        try:
            command = built(plant_, out / plant_.name, options.rebuild)
        except Missing as missing:
            print(f"skipped {plant_.name}: {missing}", flush=True)
            summary.append(f"{plant_.name}: skipped ({str(missing).splitlines()[0]})")
            continue
        status, console = conform(plant_, out / plant_.name, command, options.fuzz,
                                  options.seed, options.explore, options.budget)
        print(console, flush=True)
        verdict = console.rstrip().splitlines()[-1] if console.strip() else "(no output)"
        report = out / plant_.name / "report.json"
        summary.append(f"{plant_.name}: exit {status}; {named(report, plant_.rule)}; "
                       f"{verdict}")
        summary.extend(f"    {line}" for line in sources(report))
    print("\n".join(["== summary", *summary]))
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.txt").write_text("\n".join(summary) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
