"""The command line under generated options and corrupted files (CLI-R1, VEC-R10, VEC-R11).

Each run asserts what every command promises: an exit code of the table in docs/commands.md (never 4
for bad usage or bad input), no traceback, and no file changed outside the declared
outputs. The budget is Hypothesis's profile: short under ``make test`` (``ci``), longer
under ``make proofs`` (``nightly``). Spark-free commands only, in process, so the suite is
fast; the Spark jobs' paths are covered by tests/spark.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import math
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from timealign import outputs
from timealign.cli import main

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "reference" / "timealign" / "suites" / "approximate_time.jsonl"
DOCUMENTED = {0, 1, 2}  # replay/check: ok, differs, bad input; never 3 or 4 here

FUZZ = settings(suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow], deadline=None)


def _digest(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@FUZZ
@given(flips=st.lists(st.tuples(st.integers(0, 10**9), st.integers(0, 7)), min_size=1,
                      max_size=4),
       compressed=st.booleans(), command=st.sampled_from(["check", "replay"]))
def test_cli_r1_vec_r10_bit_flipped_vector_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        flips: list[tuple[int, int]], compressed: bool, command: str) -> None:
    """CLI-R1, VEC-R10: a vector file (plain or gzip) with flipped bits: a documented exit
    code, no traceback, the file itself untouched."""
    body = SUITE.read_bytes()[:20_000]
    body = body[:body.rfind(b"\n") + 1]
    if compressed:
        body = gzip.compress(body, mtime=0)
    damaged = bytearray(body)
    for position, bit in flips:
        damaged[position % len(damaged)] ^= 1 << bit
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    path = folder / ("v.jsonl.gz" if compressed else "v.jsonl")
    path.write_bytes(bytes(damaged))
    before = _digest(folder)
    code = main([command, str(path)])
    captured = capsys.readouterr()
    assert code in DOCUMENTED, captured.err
    assert "Traceback" not in captured.err + captured.out
    assert _digest(folder) == before


_NUMBERS = st.one_of(st.integers(-10**20, 10**20).map(str),
                     st.floats(allow_nan=True, allow_infinity=True).map(repr),
                     st.sampled_from(["nan", "inf", "-inf", "", "1e400", "0x10", "3.5", "-0"]),
                     st.text(max_size=6))


@FUZZ
@given(option=st.sampled_from(["--timeout", "--fuzz", "--size", "--explore", "--seed"]),
       value=_NUMBERS.filter(lambda v: _bad(v)))
def test_cli_r1_conform_numeric_options(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        option: str, value: str) -> None:
    """CLI-R1: a non-number, non-finite or negative value of a numeric `conform` option is
    refused at parse time (exit 2): no report, no traceback, the command never started."""
    report = tmp_path / "report.json"
    code = main(["conform", "approximate_time", "--cmd", "false", "--no-vectors",
                 "--report", str(report), option, value, "--quiet"])
    captured = capsys.readouterr()
    assert code == 2, captured.err
    assert "Traceback" not in captured.err and not report.exists()


def _bad(text: str) -> bool:
    """A value no numeric option takes: not a number, not finite, or negative (a valid one
    could ask for a billion rows or an hour of fuzzing)."""
    try:
        number = float(text)
    except ValueError:
        return True
    return not math.isfinite(number) or number < 0


@FUZZ
@given(option=st.sampled_from(["--jitter-ms", "--seed", "--robots", "--messages", "--loss",
                               "--files", "--seconds"]),
       value=_NUMBERS.filter(lambda v: _bad(v)))
def test_cli_r1_generate_refuses_bad_numbers_before_writing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str) -> None:
    """CLI-R1: a non-number, non-finite or negative value of a `generate` option is exit 2
    at parse time: nothing is written."""
    pytest.importorskip("pyarrow", reason="the spark extra is not installed")
    output = tmp_path / "fleet"
    code = main(["generate", "--output", str(output), "--messages", "200", "--robots", "1",
                 option, value])
    captured = capsys.readouterr()
    assert code == 2, captured.err
    assert "Traceback" not in captured.err
    assert list(tmp_path.iterdir()) == []


# --- Generated paths of the Spark-free commands (CLI-R3, CLI-R4) ---------------------------

AT_VECTORS = ROOT / "vectors" / "approximate_time"
ADAPTER = f"{sys.executable} -m timealign.conformance.adapter approximate_time"
#: Where a generated write path lies: new, equal to / inside / the parent of another path of
#: the command, an existing file of the user's (or below one), a folder of the user's files,
#: an unwritable place, a name too long, a missing folder.
PLACES = ("fresh", "same", "inside", "parent", "user_file", "under_file", "user_folder",
          "proc", "long", "missing_parent")


def world(tmp: Path) -> dict[str, Path]:
    """The user's files every path case starts from: two vector files, a file and a folder
    holding a file."""
    vecs = tmp / "vecs"
    vecs.mkdir()
    for name in ("exact_match_publishes_at_once.json", "max_interval_is_strict.json"):
        (vecs / name).write_bytes((AT_VECTORS / name).read_bytes())
    (tmp / "plain.txt").write_text("mine\n", encoding="utf-8")
    (tmp / "mine").mkdir()
    (tmp / "mine" / "notes.txt").write_text("keep me\n", encoding="utf-8")
    return {"vecs": vecs, "vector": vecs / "exact_match_publishes_at_once.json"}


def placed(kind: str, tmp: Path, role: str, suffix: str, other: str | None) -> str:
    """A path for the written ``role`` at the place ``kind`` (``other``: the path it is
    equal to, inside of, or the parent of)."""
    name = f"{role.strip('-')}{suffix}"
    if kind in ("same", "inside", "parent") and other is not None:
        at = Path(other)
        return str(at if kind == "same" else at / name if kind == "inside" else at.parent)
    return str({"user_file": tmp / "plain.txt", "under_file": tmp / "plain.txt" / name,
                "user_folder": tmp / "mine", "proc": Path("/proc") / f"timealign-{name}",
                "long": tmp / ("n" * 300 + suffix),
                "missing_parent": tmp / "nope" / name}.get(kind, tmp / name))


#: Per command: its argv (paths by role), the roles it reads and writes (file or folder
#: targets, each with a suffix) and the exit codes its table allows.
PATH_COMMANDS: dict[str, tuple[list[str], dict[str, str], dict[str, tuple[str, str]],
                               set[int]]] = {
    "diff": (["diff", "approximate_time", "--a", "arithmetic=ros2", "--b", "arithmetic=ros1",
              "--vectors", "{vecs}", "--fuzz", "0", "--explore", "1", "--quiet",
              "--no-pictures"], {"--vectors": "vecs"},
             {"--report": ("file", ".json"), "--save": ("folder", "")}, {0, 1, 2}),
    "conform": (["conform", "approximate_time", "--cmd", ADAPTER, "--vectors", "{vecs}",
                 "--quiet"], {"--vectors": "vecs"},
                {"--report": ("file", ".json"), "--save": ("folder", "")}, {0, 1, 2}),
    "generate": (["generate", "--messages", "60", "--robots", "1", "--files", "1"], {},
                 {"--output": ("folder", "")}, {0, 2}),
    "plot": (["plot", "{vector}", "--no-arrivals"], {"the vector": "vector"},
             {"--out": ("file", ".svg")}, {0, 2}),
}


def _tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            if p.is_file() else "<dir>" for p in sorted(folder.rglob("*"))}


def _within(path: str, outer: str) -> bool:
    inner, outside = outputs.resolved(path), outputs.resolved(outer)
    return inner == outside or inner.startswith(outside.rstrip("/") + "/")


def assert_paths_kept(tmp: Path, before: dict[str, str], after: dict[str, str],
                      files: list[str], folders: list[str]) -> None:
    """No file outside the declared outputs changed, appeared or vanished; a file of the
    user's inside a filled folder is kept too (CLI-R3); a file target may be written only
    where no file was (CLI-R5: the user's file is never replaced)."""
    for name in sorted(set(before) | set(after)):
        path = str(tmp / name)
        if any(_within(path, f) for f in files):
            assert name not in before or before[name] == after.get(name), \
                f"{name}, a file of the user's, was replaced or removed"
            continue
        if before.get(name) == after.get(name):
            continue
        new_in_folder = name not in before and (
            any(_within(path, f) for f in folders)
            or any(_within(f, path) for f in files + folders))  # a folder made for one
        assert new_in_folder, f"{name} changed outside the declared outputs " \
                              f"({before.get(name)} -> {after.get(name)})"


@settings(FUZZ, max_examples=max(4, settings().max_examples // 3))
@given(command=st.sampled_from(sorted(PATH_COMMANDS)), data=st.data())
def test_cli_r3_r4_generated_paths_of_the_spark_free_commands(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str,
        data: st.DataObject) -> None:
    """CLI-R3, CLI-R4: every written path of `diff`, `conform`, `generate` and `plot` placed
    anywhere (overlapping a path read or another output, nested, a file where a folder is
    due, below a file, a folder of the user's files, /proc, an over-long name): a documented
    exit code, no traceback, no file outside the declared outputs changed; a refusal names
    an option; a success wrote where no path read lies."""
    if command in ("generate", "plot"):
        pytest.importorskip("pyarrow" if command == "generate" else "matplotlib")
    tmp = Path(tempfile.mkdtemp(dir=tmp_path))
    known = {role: str(path) for role, path in world(tmp).items()}
    argv, reads, writes, codes = PATH_COMMANDS[command]
    taken = {option: known[role] for option, role in reads.items()}
    files: list[str] = []
    folders: list[str] = []
    extra: list[str] = []
    for option, (kind, suffix) in writes.items():
        if option not in ("--out", "--output") and not data.draw(st.booleans(),
                                                                  label=f"give {option}"):
            continue
        where = data.draw(st.sampled_from(PLACES), label=option)
        other = data.draw(st.sampled_from(sorted(taken.values()))) if taken else None
        path = placed(where, tmp, option, suffix, other)
        taken[option] = path
        (files if kind == "file" else folders).append(path)
        extra += [option, path]
    before = _tree(tmp)
    code = main([a.format(**known) for a in argv] + extra)
    out, err = capsys.readouterr()
    assert code in codes, (code, err)
    assert "Traceback" not in out + err, err
    assert_paths_kept(tmp, before, _tree(tmp), files, folders)
    if code == 2:
        assert len(err.strip().splitlines()) == 1, err
        assert any(option in err for option in writes), err
    else:
        for option, path in zip(extra[::2], extra[1::2], strict=True):
            for role, read in reads.items():
                assert not (_within(path, known[read]) or _within(known[read], path)), \
                    f"{option} {path} overlaps {role} {known[read]}, exit {code}"
        assert all(Path(f).is_file() for f in files), files


# --- The one write rule over every writing option (CLI-R5) ---------------------------------

#: Every option of every parser that does not write (it reads, or names no path), per
#: command; with outputs.WRITES it must cover the parsers exactly, so an option added to a
#: parser is classified here or listed as writing, never forgotten.
NOT_WRITING: dict[str, set[str]] = {
    "info": {"--debug"},
    "replay": {"files", "--debug"},
    "check": {"files", "--verbose", "--debug"},
    "conform": {"algorithm", "--cmd", "--target", "--vectors", "--no-vectors", "--fuzz",
                "--where", "--seed", "--size", "--explore", "--observe", "--timeout", "--quiet",
                "--max-differences", "--budget", "--debug"},
    "diff": {"algorithm", "--a", "--b", "--vectors", "--no-vectors", "--explore", "--fuzz",
             "--seed", "--size", "--no-pictures", "--quiet", "--debug"},
    "run": {"algorithm", "--config", "--format", "--column", "--master", "--conf", "--quiet",
            "--verbose", "--input", "--sources-per-file", "--stamp", "--source-from",
            "--skip-bad-files", "--strict", "--time-unit", "--fail-on", "--debug"},
    "stream": {"algorithm", "--config", "--format", "--column", "--master", "--conf",
               "--quiet", "--verbose", "--source", "--available-now", "--trigger-seconds",
               "--max-files-per-trigger", "--stamp", "--source-from", "--time-unit",
               "--fail-on", "--debug"},
    "verify": {"OUT", "--algorithm", "--input", "--config", "--format", "--column",
               "--master", "--stamp", "--source-from", "--skip-bad-files", "--time-unit",
               "--quiet", "--debug"},
    "generate": {"--robots", "--messages", "--seconds", "--seed", "--loss", "--jitter-ms",
                 "--files", "--file-per-robot", "--debug"},
    "plot": {"target", "--name", "--run", "--input", "--config", "--format", "--column",
             "--master", "--stamp", "--source-from", "--skip-bad-files", "--source", "--from",
             "--to", "--no-arrivals", "--width", "--time-unit", "--quiet", "--debug"},
    "bags": {"--debug"},
    "bags info": {"PATH", "--json", "--debug"},
    "timealign.spark.verify": {"algorithm", "--output", "--input", "--config", "--format",
                               "--column", "--master", "--stamp", "--source-from",
                               "--skip-bad-files", "--time-unit", "--quiet", "--debug"},
    "timealign.conformance.adapter": {"algorithm"},
    "ship": set(),  # python -m timealign.spark.ship
    "demo": {"--robots", "--seconds"},  # python -m timealign.rosbag.demo
}


def _options(parser: argparse.ArgumentParser, name: str) -> dict[str, set[str]]:
    """Every option of ``parser`` and of its sub-commands (a positional by its metavar or
    name), per command."""
    found: dict[str, set[str]] = {name: set()}
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if isinstance(action, argparse._SubParsersAction):
            for sub, child in action.choices.items():
                found.update(_options(child, f"{name} {sub}".strip()))
            continue
        if action.option_strings:
            found[name].add(next((s for s in action.option_strings if s.startswith("--")),
                                 action.option_strings[0]))
        else:
            found[name].add(str(action.metavar or action.dest))
    return found


def every_option() -> dict[str, set[str]]:
    """The options of `timealign` and of every `python -m` entry point, per command."""
    from timealign.cli import build_parser
    from timealign.commands import conformance_adapter as adapter
    from timealign.commands import rosbag_demo as demo
    from timealign.commands import spark_ship as ship
    from timealign.commands.spark import verify_parser

    found = _options(build_parser(), "")
    found.pop("")  # the top level: --version, --debug
    for name, parser in (("timealign.spark.verify", verify_parser()),
                         ("timealign.conformance.adapter", adapter.parser()),
                         ("ship", ship.build_parser()), ("demo", demo.build_parser())):
        found.update(_options(parser, name))
    return found


def test_cli_r5_every_writing_option_is_listed() -> None:
    """CLI-R5: outputs.WRITES and NOT_WRITING together are exactly the options of every
    parser: a writing option added without a WRITES entry (and so without its walk below)
    fails here."""
    writing: dict[str, set[str]] = {}
    for entry in outputs.WRITES:
        writing.setdefault(entry.command, set()).add(entry.option)
        assert entry.kind in ("file", "folder"), entry
    found = every_option()
    assert set(found) == set(NOT_WRITING) | set(writing), "a command is not classified"
    for command, options in found.items():
        listed = NOT_WRITING.get(command, set()) | writing.get(command, set())
        assert options == listed, (command, options ^ listed)
        assert not NOT_WRITING.get(command, set()) & writing.get(command, set()), command


#: The writing options walked by tests/spark/test_spark_cli_fuzz.py (they need the spark
#: extra); the Spark-free ones are in WALK.
SPARK_WALKED = {("generate", "--output"), ("run", "--output"), ("run", "--summary"),
                ("run", "--report"), ("stream", "--output"), ("stream", "--checkpoint"),
                ("stream", "--summary"), ("stream", "--report"), ("ship", "FOLDER"),
                ("demo", "--output")}
_DIFF = ["diff", "approximate_time", "--a", "arithmetic=ros2", "--b", "arithmetic=ros1",
         "--fuzz", "0", "--explore", "0", "--no-pictures", "--quiet"]
_CONFORM = ["conform", "approximate_time", "--cmd", ADAPTER, "--vectors",
            str(AT_VECTORS / "max_interval_is_strict.json"), "--quiet"]
#: Per Spark-free writing option: the argv before it, and the names its output takes (a
#: user's file of such a name in a folder target must be kept).
WALK: dict[tuple[str, str], tuple[list[str], tuple[str, ...]]] = {
    ("conform", "--report"): (_CONFORM, ()),
    ("conform", "--save"): (_CONFORM, ("max_interval_is_strict_vectors_0.json",)),
    ("diff", "--report"): (_DIFF, ()),
    ("diff", "--save"): (_DIFF, ("approximate_time_diff_1_a.json",)),
    ("plot", "--out"): (["plot", str(AT_VECTORS / "max_interval_is_strict.json")], ()),
}


def test_cli_r5_the_walk_covers_every_writing_option() -> None:
    """CLI-R5: WALK here and SPARK_WALKED (tests/spark) are every entry of outputs.WRITES."""
    assert set(WALK) | SPARK_WALKED == {(w.command, w.option) for w in outputs.WRITES}
    assert not set(WALK) & SPARK_WALKED


def users_target(tmp: Path, kind: str, clashes: tuple[str, ...], suffix: str = ".json"
                 ) -> Path:
    """A target holding the user's things: a file (for a file option), or a folder holding
    a note and files named as the command's outputs (for a folder option)."""
    if kind == "file":
        target = tmp / f"users{suffix}"
        target.write_bytes(b'{"mine": true}\n')
        return target
    target = tmp / "users"
    target.mkdir()
    (target / "notes.txt").write_text("keep me\n", encoding="utf-8")
    for name in clashes:
        (target / name).write_bytes(b"mine\n")
    return target


def assert_refused_and_kept(code: int, err: str, option: str, tmp: Path,
                            before: dict[str, str]) -> None:
    """A refusal of CLI-R3/R4/R5: exit 2, one line naming the option and a rule, and every
    file and folder under ``tmp`` byte-identical."""
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert option in err and "CLI-R" in err, err
    assert _tree(tmp) == before


@pytest.mark.parametrize("entry", sorted(WALK), ids=" ".join)
def test_cli_r5_every_writing_option_keeps_the_users_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], entry: tuple[str, str]) -> None:
    """CLI-R5: every Spark-free writing option given an existing file or folder of the
    user's (a folder holding files of the names the command writes) is refused before any
    work, and leaves it byte-identical."""
    command, option = entry
    if command == "plot":
        pytest.importorskip("matplotlib", reason="the plot extra is not installed")
    argv, clashes = WALK[entry]
    kind = outputs.writes(command, option).kind
    target = users_target(tmp_path, kind, clashes, ".svg" if command == "plot" else ".json")
    before = _tree(tmp_path)
    code = main([*argv, option, str(target)])
    assert_refused_and_kept(code, capsys.readouterr().err, option, tmp_path, before)
