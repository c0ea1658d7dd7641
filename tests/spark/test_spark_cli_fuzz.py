"""The Spark commands at the command line under generated paths and corrupted input folders
(CLI-R1, CLI-R3, CLI-R4, SP-R1, SP-R20, BAG-R6, BAG-R11), in process on the shared session.

Each case asserts what every command promises: an exit code of the table in docs/commands.md (bad
input 2, never 4), no traceback, no file outside the declared outputs changed (the tree is
digested before and after), and either every input row accounted for or a refusal naming
the file. A refused case costs no Spark job; an accepted one a few seconds, so the budget is
a small share of Hypothesis's profile: short under ``make test`` (``ci``), longer under
``make proofs`` (``nightly``). The one-byte sweep of the MCAP reader is
tests/rosbag/test_rosbag_damage.py; the single reproducers are in
tests/spark/test_spark_third_hardening.py and tests/test_written_paths.py.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from tests.rosbag.bags import plan, write_ros1, write_rosbag2
from tests.test_cli_fuzz import PLACES, _tree, _within, assert_paths_kept, placed
from timealign import registry
from timealign.cli import main
from timealign.spark.streaming import open_ids, read_table

SPARK_FUZZ = settings(suppress_health_check=[HealthCheck.function_scoped_fixture,
                                             HealthCheck.too_slow], deadline=None)
DOCUMENTED = {0, 2, 3}  # a job: ok, bad input, a broken promise about rows; never 4
AT = {"topics": ["a", "b"], "queue_size": 2}
BAG_CONFIG = {"topics": ["/imu", "/camera_info"], "queue_size": 10,
              "max_interval_duration": 8_000_000}
ROWS = 12  # rows of the table input


def _rows(count: int, first: int = 0) -> pa.Table:
    return pa.table({"source": ["s"] * count, "id": [f"m{first + i}" for i in range(count)],
                     "topic": ["a", "b"] * (count // 2),
                     "stamp": [10_000 * (first + i) for i in range(count)]})


def _one_line(err: str) -> None:
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


# --- Generated paths of `run` and `stream` --------------------------------------------------

def _world(tmp: Path) -> dict[str, str]:
    """The user's files: the input folder, a config file, a file, and a folder of the
    user's holding a table-named folder (`groups/`) a job must never replace."""
    data = tmp / "data"
    data.mkdir()
    pq.write_table(_rows(ROWS), data / "a.parquet")
    (tmp / "at.json").write_text(json.dumps(AT), encoding="utf-8")
    (tmp / "plain.txt").write_text("mine\n", encoding="utf-8")
    (tmp / "mine" / "groups").mkdir(parents=True)
    (tmp / "mine" / "notes.txt").write_text("keep me\n", encoding="utf-8")
    (tmp / "mine" / "groups" / "part-important.parquet").write_bytes(b"precious")
    return {"data": str(data), "config": str(tmp / "at.json")}


JOBS: dict[str, tuple[list[str], dict[str, str], dict[str, tuple[str, str, bool]]]] = {
    "run": (["run", "approximate_time", "--input", "{data}", "--config", "{config}",
             "--quiet"], {"--input": "data", "--config": "config"},
            {"--output": ("folder", "", True), "--summary": ("file", ".json", False),
             "--report": ("folder", "", False)}),
    "stream": (["stream", "approximate_time", "--source", "{data}", "--config", "{config}",
                "--quiet", "--available-now"], {"--source": "data", "--config": "config"},
               {"--output": ("folder", "", True), "--checkpoint": ("folder", "", True)}),
}


def _accounted(spark: SparkSession, command: str, out: str, paths: dict[str, str]) -> int:
    """The input rows a finished job accounts for: outcome rows, plus for a stream the rows
    still held in its state store (SP-D1)."""
    if command == "run":
        return int(spark.read.parquet(f"{out}/outcomes").count())
    algorithm = registry.get("approximate_time")
    config = algorithm.codec.config_from_json(AT)
    held = open_ids(spark, algorithm, config, paths["--checkpoint"]).count()
    return int(read_table(spark, out, "outcomes").count() + held)


@settings(SPARK_FUZZ, max_examples=max(6, settings().max_examples // 8))
@given(command=st.sampled_from(sorted(JOBS)), data=st.data())
def test_cli_r3_r4_sp_r20_generated_paths_of_the_jobs(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        command: str, data: st.DataObject) -> None:
    """CLI-R3, CLI-R4, SP-R20: `run` and `stream` with every written path (tables,
    summary, report, checkpoint) placed anywhere: equal to, inside or the parent of the
    input, the config or another output, a file, below a file, a folder of the user's files,
    /proc, an over-long name. A refusal is exit 2 before Spark runs, naming an option, with
    nothing changed; a success accounts for every input row and changed nothing outside
    its outputs."""
    tmp = Path(tempfile.mkdtemp(dir=tmp_path))
    known = _world(tmp)
    argv, reads, writes = JOBS[command]
    taken = {option: known[role] for option, role in reads.items()}
    files: list[str] = []
    folders: list[str] = []
    given: dict[str, str] = {}
    for option, (kind, suffix, required) in writes.items():
        if not required and not data.draw(st.booleans(), label=f"give {option}"):
            continue
        where = data.draw(st.sampled_from(PLACES), label=option)
        other = data.draw(st.sampled_from(sorted(taken.values())), label="other")
        path = placed(where, tmp, option, suffix, other)
        taken[option] = given[option] = path
        (files if kind == "file" else folders).append(path)
    before = _tree(tmp)
    code = main([a.format(**known) for a in argv]
                + [part for option, path in given.items() for part in (option, path)])
    out, err = capsys.readouterr()
    assert code in DOCUMENTED, (code, err)
    assert "Traceback" not in out + err, err
    assert_paths_kept(tmp, before, _tree(tmp), files, folders)
    if code != 0:
        assert code == 2, err
        _one_line(err)
        assert any(option in err for option in writes), err
        return
    for option, path in given.items():
        for role in reads:
            assert not (_within(path, taken[role]) or _within(taken[role], path)), \
                (option, path, role)
    assert _accounted(spark, command, given["--output"], given) == ROWS


# --- Corrupted input folders -----------------------------------------------------------------

@pytest.fixture(scope="module")
def originals(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One input folder per format, written once: two Parquet files, two `.csv.gz` files,
    an MCAP bag and a ROS 1 bag (40 messages each, tests/rosbag/bags.py)."""
    root = tmp_path_factory.mktemp("fuzz-inputs")
    made: dict[str, Path] = {}
    for fmt in ("parquet", "csv"):
        folder = root / fmt
        folder.mkdir()
        for name, first in (("a", 0), ("b", ROWS // 2)):
            table = _rows(ROWS // 2, first)
            if fmt == "parquet":
                pq.write_table(table, folder / f"{name}.parquet")
            else:
                text = table.to_pandas().to_csv(index=False).encode()
                (folder / f"{name}.csv.gz").write_bytes(gzip.compress(text, mtime=0))
        made[fmt] = folder
    made["mcap"] = root / "mcap"
    write_rosbag2(made["mcap"] / "r1", plan(1), "mcap", 1)
    made["ros1"] = root / "ros1"
    made["ros1"].mkdir()
    write_ros1(made["ros1"] / "r3.bag", plan(3), 3)
    return made


def _damaged_file(folder: Path, fmt: str, pick: int) -> Path:
    candidates = sorted(p for p in folder.rglob("*") if p.is_file() and (
        p.suffix in (".mcap", ".bag", ".parquet") or p.name.endswith(".gz")))
    return candidates[pick % len(candidates)]


DAMAGE = st.one_of(
    st.tuples(st.just("flip"), st.lists(st.tuples(st.integers(0, 10**9), st.integers(0, 7)),
                                        min_size=1, max_size=3)),
    st.tuples(st.just("cut"), st.integers(0, 10**9)))


@settings(SPARK_FUZZ, max_examples=max(6, settings().max_examples // 10))
@given(fmt=st.sampled_from(["parquet", "csv", "mcap", "ros1"]), pick=st.integers(0, 1),
       damage=DAMAGE)
def test_cli_r1_sp_r1_bag_r6_corrupted_input_folders(
        spark: SparkSession, originals: dict[str, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], fmt: str, pick: int,
        damage: tuple[str, Any]) -> None:
    """CLI-R1, SP-R1, BAG-R6, BAG-R11: `run` over an input folder with one file (a Parquet
    file, a `.csv.gz`, an MCAP or a ROS 1 bag) bit-flipped or truncated: exit 0 with every
    message of the input accounted for (outcomes, and a bag's unconfigured topics), or exit
    2 naming the damaged file (or 3 naming a row that breaks a promise); never 4, never a
    traceback, the input unchanged."""
    tmp = Path(tempfile.mkdtemp(dir=tmp_path))
    data = tmp / "in"
    shutil.copytree(originals[fmt], data)
    target = _damaged_file(data, fmt, pick)
    content = bytearray(target.read_bytes())
    kind, how = damage
    if kind == "flip":
        for position, bit in how:
            content[position % len(content)] ^= 1 << bit
    else:
        content = content[:how % len(content)]
    target.write_bytes(bytes(content))
    bags = fmt in ("mcap", "ros1")
    config = BAG_CONFIG if bags else AT
    out, summary = tmp / "out", tmp / "summary.json"
    argv = ["run", "approximate_time", "--input", str(data), "--output", str(out),
            "--config", json.dumps(config), "--summary", str(summary), "--quiet",
            "--format", "rosbag" if bags else fmt]
    before = _tree(tmp)
    code = main(argv)
    printed, err = capsys.readouterr()
    assert code in DOCUMENTED, (code, err)
    assert "Traceback" not in printed + err, err
    assert_paths_kept(tmp, before, _tree(tmp), [str(summary)], [str(out)])
    if code == 0:
        report = json.loads(summary.read_text(encoding="utf-8"))
        whole = 40 if bags else ROWS
        unconfigured = sum(t["rows"] for t in report.get("not_configured", []))
        assert report["rows"] + unconfigured == whole, (report, damage)
        return
    _one_line(err)
    named = target.parent.name if fmt == "mcap" else target.name
    if code == 2:
        assert named in err, (err, damage)
    else:
        assert re.search(r"SP-R(6|10|22|42)", err), err


# --- The one write rule over every writing option of the Spark commands (CLI-R5) -------------

def _ship(argv: list[str]) -> int:
    from timealign.commands import spark_ship as ship

    return ship.main(argv)


def _demo(argv: list[str]) -> int:
    from timealign.commands import rosbag_demo as demo

    return demo.main(argv)


#: Per writing option of the Spark extra: how to run it with the target last (``{data}``,
#: ``{config}`` and ``{fresh}`` filled in), and the names its output takes.
SPARK_WALK: dict[tuple[str, str], tuple[Any, list[str], tuple[str, ...]]] = {
    ("generate", "--output"): (main, ["generate", "--messages", "300", "--robots", "1"],
                               ("part-00000.parquet",)),
    ("run", "--output"): (main, ["run", "approximate_time", "--input", "{data}", "--config",
                                 "{config}", "--quiet"], ("groups", "outcomes")),
    ("run", "--summary"): (main, ["run", "approximate_time", "--input", "{data}", "--config",
                                  "{config}", "--quiet", "--output", "{fresh}"], ()),
    ("run", "--report"): (main, ["run", "approximate_time", "--input", "{data}", "--config",
                                 "{config}", "--quiet", "--output", "{fresh}"],
                          ("index.html",)),
    ("stream", "--output"): (main, ["stream", "approximate_time", "--source", "{data}",
                                    "--config", "{config}", "--quiet", "--available-now",
                                    "--checkpoint", "{fresh}"], ("groups", "outcomes")),
    ("stream", "--checkpoint"): (main, ["stream", "approximate_time", "--source", "{data}",
                                        "--config", "{config}", "--quiet", "--available-now",
                                        "--output", "{fresh}"], ("metadata", "offsets")),
    ("stream", "--summary"): (main, ["stream", "approximate_time", "--source", "{data}",
                                     "--config", "{config}", "--quiet", "--available-now",
                                     "--output", "{fresh}", "--checkpoint", "{fresh}-ck"], ()),
    ("stream", "--report"): (main, ["stream", "approximate_time", "--source", "{data}",
                                    "--config", "{config}", "--quiet", "--available-now",
                                    "--output", "{fresh}", "--checkpoint", "{fresh}-ck"],
                             ("index.html",)),
    ("ship", "FOLDER"): (_ship, [], ("log4j2.properties",
                                                    "timealign_submit.py")),
    ("demo", "--output"): (_demo, ["--robots", "1", "--seconds", "1"],
                                            ("robot00",)),
}


def test_cli_r5_the_spark_walk_is_spark_walked() -> None:
    """CLI-R5: this file walks exactly the writing options tests/test_cli_fuzz.py leaves to
    it (SPARK_WALKED), so together they walk all of outputs.WRITES."""
    from tests.test_cli_fuzz import SPARK_WALKED

    assert set(SPARK_WALK) == SPARK_WALKED


@pytest.mark.parametrize("entry", sorted(SPARK_WALK), ids=" ".join)
def test_cli_r5_every_spark_writing_option_keeps_the_users_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], entry: tuple[str, str]) -> None:
    """CLI-R5: every writing option of `run`, `stream`, `generate`, `python -m
    timealign.spark.ship` and `python -m timealign.rosbag.demo`, given an existing file or
    folder of the user's (a folder holding files of the names the command writes), is
    refused before Spark starts or anything is written, and leaves it byte-identical
    (`ship` used to replace the user's log4j2.properties and timealign_submit.py; a
    stream's checkpoint, the user's metadata)."""
    from tests.test_cli_fuzz import assert_refused_and_kept, users_target
    from timealign import outputs

    command, option = entry
    run, argv, clashes = SPARK_WALK[entry]
    known = {**_world(tmp_path), "fresh": str(tmp_path / "fresh")}
    target = users_target(tmp_path, outputs.writes(command, option).kind, clashes)
    before = _tree(tmp_path)
    code = run([a.format(**known) for a in argv] + [option, str(target)]
               if option != "FOLDER" else [str(target)])
    assert_refused_and_kept(code, capsys.readouterr().err, option, tmp_path, before)


# --- Inputs whose readers would skip rows (issue 30: the inventory) ---------------------------

def _inventory_case(case: str, data: Path) -> tuple[str, int, str]:
    """An input the reader would read short: (format, messages it holds, the name a
    refusal must give)."""
    import re
    import sqlite3

    from tests.rosbag.test_rosbag_damage import _ros1_one_fewer

    data.mkdir()
    if case == "subfolder":
        (data / "day2").mkdir()
        pq.write_table(_rows(ROWS // 2), data / "day1.parquet")
        pq.write_table(_rows(ROWS // 2, ROWS // 2), data / "day2" / "part.parquet")
        return "parquet", ROWS, "part.parquet"
    if case == "ros1-index":
        _ros1_one_fewer(write_ros1(data / "r3.bag", plan(3), 3))
        return "rosbag", 40, "r3.bag"
    bag = write_rosbag2(data / "r2", plan(2), "sqlite3", 2)
    if case == "sqlite-deleted":
        with sqlite3.connect(next(bag.glob("*.db3"))) as database:
            database.execute("delete from messages where id % 10 = 3")
    else:
        metadata = bag / "metadata.yaml"
        metadata.write_text(re.sub(r"message_count: 40", "message_count: 41",
                                   metadata.read_text(encoding="utf-8")), encoding="utf-8")
    return "rosbag", 40, "r2"


@pytest.mark.parametrize("case", ["subfolder", "ros1-index", "sqlite-deleted",
                                  "metadata-edited"])
def test_sp_r42_r43_bag_r20_r21_inputs_the_reader_would_read_short(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        case: str) -> None:
    """SP-R42, SP-R43, BAG-R20, BAG-R21: `run` over an input its reader read short before the
    inventory (Parquet files in a subfolder, a ROS 1 bag whose index lists a message fewer,
    a SQLite 3 bag with rows deleted, a `metadata.yaml` count edited): exit 0 with every
    message the input holds accounted for, or a refusal naming the file or bag; never
    fewer rows with exit 0, never 4, never a traceback, nothing outside the outputs
    changed. (A stream's grown file is tests/spark/test_spark_inventory.py.)"""
    data, out, summary = tmp_path / "in", tmp_path / "out", tmp_path / "summary.json"
    fmt, whole, named = _inventory_case(case, data)
    config = BAG_CONFIG if fmt == "rosbag" else AT
    before = _tree(tmp_path)
    code = main(["run", "approximate_time", "--input", str(data), "--output", str(out),
                 "--config", json.dumps(config), "--summary", str(summary), "--quiet",
                 "--format", fmt])
    printed, err = capsys.readouterr()
    assert code in DOCUMENTED, (code, err)
    assert "Traceback" not in printed + err, err
    assert_paths_kept(tmp_path, before, _tree(tmp_path), [str(summary)], [str(out)])
    if code == 0:
        report = json.loads(summary.read_text(encoding="utf-8"))
        unconfigured = sum(t["rows"] for t in report.get("not_configured", []))
        assert report["rows"] + unconfigured == whole, report
        return
    _one_line(err)
    assert named in err and re.search(r"BAG-R6|SP-R4[12]", err), err
