"""ROS bags through the Spark jobs (spec/formats.md), on the shared session: a fleet of
three small bags (MCAP, SQLite 3, ROS 1), each robot its own source."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from tests.rosbag.bags import expected_rows, plan, write_fleet, write_ros1
from tests.spark.expected import expected_of_records, spark_tables
from timealign import registry
from timealign.algorithm import Record
from timealign.cli import main
from timealign.commands.spark import verify_main
from timealign.rosbag.discovery import FLAGS, bags_under
from timealign.spark.rosbag_source import register
from timealign.spark.streaming import open_ids, read_table

TOPICS = ["/imu", "/camera_info"]
CONFIG = {"topics": TOPICS, "queue_size": 10, "max_interval_duration": 8_000_000}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bag-fleet")
    write_fleet(root)
    return root


def driver_records(root: Path) -> dict[str, list[Record]]:
    """Each bag's configured rows by full deserialization, in (arrival, position) order."""
    out = {}
    for bag in bags_under(str(root), "bag", FLAGS):
        rows = [r for r in expected_rows(Path(bag.path), bag.relative, frozenset({"/chatter"}),
                                         bag.source)
                if r["topic"] in TOPICS]
        rows.sort(key=lambda r: (r["arrival"], r["position"]))
        out[bag.source] = [Record(r["id"], r["topic"], r["stamp"], r["arrival"])
                           for r in rows]
    return out


def test_bag_r1_r2_data_source_reads_every_bag(spark: SparkSession, fleet: Path) -> None:
    """BAG-R1, BAG-R2: `spark.read.format("rosbag")` gives one partition per bag and the
    rows of the reader (MCAP, SQLite 3 and ROS 1)."""
    register(spark)
    frame = spark.read.format("rosbag").option("stamp", "log").load(str(fleet))
    rows = frame.withColumn("part", F.spark_partition_id()).collect()
    assert len(rows) == 120 and {r["source"] for r in rows} == {"r1", "r2", "r3"}
    assert len({(r["part"], r["bag"]) for r in rows}) == len({r["part"] for r in rows}) == 3
    assert {r["type"] for r in rows} == {"sensor_msgs/msg/Imu", "sensor_msgs/msg/CameraInfo",
                                         "std_msgs/msg/String"}


def test_bag_r15_data_source_and_command_line_name_their_own_options(
        spark: SparkSession, fleet: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """BAG-R15: the same bad values read through `spark.read.format("rosbag")` are refused
    naming the data source's options (`stamp`, `sourceFrom`, `path`), and through `timealign
    run --format rosbag` naming its flags (`--stamp`, `--source-from`, `--input`), one
    line, exit 2."""
    register(spark)
    cases: tuple[tuple[dict[str, str], str, str], ...]
    cases = (({"stamp": "sometimes"}, str(fleet), "stamp: must be header or log"),
             ({"sourceFrom": "regex:^zz"}, str(fleet), "sourceFrom regex:^zz does not match"),
             ({}, str(tmp_path / "missing"), "path: no such file or folder"))
    for options, path, words in cases:  # a reader each: .option() changes the reader
        with pytest.raises(Exception) as error:
            spark.read.format("rosbag").options(**options).load(path).collect()
        assert words in str(error.value) and "--" not in str(error.value).split(words)[0][-80:]
    run = ["run", "approximate_time", "--format", "rosbag", "--config", json.dumps(CONFIG),
           "--output", str(tmp_path / "out"), "--quiet"]
    capsys.readouterr()
    for flags, words in ((["--input", str(fleet), "--stamp", "sometimes"],
                          "--stamp: must be header, log or TOPIC=log"),
                         (["--input", str(fleet), "--source-from", "regex:^zz"],
                          "--source-from regex:^zz does not match"),
                         (["--input", str(tmp_path / "missing")], "--input")):
        assert main([*run, *flags]) == 2
        err = capsys.readouterr().err
        assert words in err and len(err.splitlines()) == 1, err


def test_bag_r6_r7_sp_i2_run_equals_driver(spark: SparkSession, fleet: Path,
                                           tmp_path: Path) -> None:
    """SP-I2, BAG-R7, BAG-R6: `timealign run --format rosbag` writes the driver's tables
    over the configured topics' rows; /chatter is reported as not configured, a truncated
    bag is listed as skipped with --skip-bad-files and fails the job without it."""
    data = tmp_path / "bags"
    shutil.copytree(fleet, data)
    shutil.copytree(fleet / "r1", data / "zz_cut")
    cut = next((data / "zz_cut").glob("*.mcap"))
    cut.write_bytes(cut.read_bytes()[:1500])
    out, summary = tmp_path / "out", tmp_path / "summary.json"
    common = ["run", "approximate_time", "--format", "rosbag", "--input", str(data),
              "--output", str(out), "--config", json.dumps(CONFIG), "--quiet"]
    assert main([*common, "--skip-bad-files", "--summary", str(summary)]) == 0
    report = json.loads(summary.read_text())
    assert report["not_configured"] == [{"topic": "/chatter", "rows": 39}]
    assert [s["bag"] for s in report["skipped_bags"]] == ["zz_cut"]
    algorithm = registry.get("approximate_time")
    config = algorithm.codec.config_from_json(CONFIG)
    want = expected_of_records(algorithm, config, driver_records(fleet))
    got = spark_tables(spark.read.parquet(str(out / "groups")),
                       spark.read.parquet(str(out / "outcomes")))
    assert got == want and len(want[0]) > 5
    assert main([*common]) == 2  # the truncated bag, named on stderr


def test_bag_r8_r7_stream_of_bags(spark: SparkSession, fleet: Path, tmp_path: Path) -> None:
    """BAG-R8, BAG-R7, SP-I1: `stream --format rosbag` over the bags present: every
    configured row has an outcome or is held in the state store, and the rows of the other
    topic are listed in `not_configured/`."""
    algorithm = registry.get("approximate_time")
    config = algorithm.codec.config_from_json(CONFIG)
    out, checkpoint = tmp_path / "out", tmp_path / "ck"
    assert main(["stream", "approximate_time", "--format", "rosbag", "--source", str(fleet),
                 "--output", str(out), "--checkpoint", str(checkpoint), "--config",
                 json.dumps(CONFIG), "--available-now", "--quiet"]) == 0
    outcomes: Any = read_table(spark, str(out), "outcomes")
    seen = {(r["source"], r["id"]) for r in outcomes.collect()}
    seen |= {(r["source"], r["id"]) for r in open_ids(spark, algorithm, config,
                                                      str(checkpoint)).collect()}
    want = {(source, r.id) for source, records in driver_records(fleet).items()
            for r in records}
    assert seen == want
    other = read_table(spark, str(out), "not_configured").collect()
    assert len(other) == 39 and {r["topic"] for r in other} == {"/chatter"}
    assert {r["id"] for r in other} == {f"/chatter#{n}" for n in range(13)}


@pytest.fixture(scope="module")
def bag_run(fleet: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """(output, bag options) of `run --format rosbag` over the fleet plus a truncated bag
    `r9`, with every bag option given: `--stamp /camera_info=log`, `--source-from regex`
    (r1, r2, r3), `--skip-bad-files` and the config's topics."""
    root = tmp_path_factory.mktemp("bag-run")
    data = root / "bags"
    shutil.copytree(fleet, data)
    shutil.copytree(fleet / "r1", data / "r9")
    cut = next((data / "r9").glob("*.mcap"))
    cut.write_bytes(cut.read_bytes()[:1500])
    out = root / "out"
    bag_options = ["--format", "rosbag", "--input", str(data), "--config", json.dumps(CONFIG),
                   "--stamp", "/camera_info=log", "--source-from", r"regex:^(r\d)",
                   "--skip-bad-files"]
    assert main(["run", "approximate_time", *bag_options, "--output", str(out),
                 "--quiet"]) == 0
    return out, bag_options


def test_pl_r10_plot_of_a_bag_run(spark: SparkSession, fleet: Path, tmp_path: Path,
                                  bag_run: tuple[Path, list[str]],
                                  capsys: pytest.CaptureFixture[str]) -> None:
    """PL-R10, BAG-R6: `plot --format rosbag` of a `run --format rosbag` reads the bags
    with the run's options (`--stamp`, `--source-from`, `--skip-bad-files`, the config's
    topics): the picture draws the source's configured messages in the window (chosen so
    that header and log stamps select different messages) and one labelled set per group
    of the run's `groups/` table holding them. Without the run's `--skip-bad-files` the
    truncated bag stops the picture (exit 2), writing nothing; with the run's manifest
    (SP-R32) no option is needed."""
    out, bag_options = bag_run
    capsys.readouterr()

    def shown(log_topics: frozenset[str]) -> set[str]:
        rows = [r for r in expected_rows(fleet / "r3.bag", "r3.bag", log_topics)
                if r["topic"] in TOPICS]
        first = min(r["stamp"] for r in rows)
        return {f"r3.bag:{r['id']}" for r in rows
                if first + 30_000_000 <= r["stamp"] <= first + 170_000_000}

    wanted = shown(frozenset({"/chatter", "/camera_info"}))
    assert wanted != shown(frozenset({"/chatter"}))  # the window tells the stamps apart
    outcomes = spark.read.parquet(str(out / "outcomes")).where(F.col("source") == "r3")
    seqs = {r["seq"] for r in outcomes.where(F.col("id").isin(sorted(wanted))).collect()
            if r["outcome"] == "grouped"}
    groups = spark.read.parquet(str(out / "groups")).where(F.col("seq").isin(sorted(seqs)))
    assert len(seqs) > 2 and groups.where(F.col("source") == "r3").count() == len(seqs)
    picture = tmp_path / "r3.svg"
    plot = ["plot", "approximate_time", "--run", str(out), "--source", "r3",
            "--from", "30ms", "--to", "170ms", *bag_options]
    assert main([*plot, "--out", str(picture)]) == 0, capsys.readouterr().err
    assert f"{len(wanted)} messages, {len(seqs)} groups" in capsys.readouterr().out
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", picture.read_text(encoding="utf-8"))
    assert {t for t in texts if t.startswith("r3.bag:")} == wanted  # ids beside marks
    assert {t for t in texts if t.startswith("#")} == {f"#{seq}" for seq in seqs}
    # SP-R32: from the run's manifest alone, the same picture
    alone = tmp_path / "alone.svg"
    assert main([*plot[:10], "--out", str(alone)]) == 0, capsys.readouterr().err
    assert alone.read_bytes() == picture.read_bytes()
    capsys.readouterr()
    plain = tmp_path / "plain"  # a run without a manifest: the options as given
    plain.mkdir()
    for table in ("groups", "outcomes"):
        (plain / table).symlink_to(out / table)
    refused = tmp_path / "refused.svg"
    unrecorded = [o if o != str(out) else str(plain) for o in plot]
    assert main([*unrecorded[:-1], "--out", str(refused)]) == 2  # without --skip-bad-files
    err = capsys.readouterr().err
    assert "BAG-R6" in err and "r9" in err and not refused.exists()


def test_sp_r18_bag_r1_bags_per_file_equal_the_driver(spark: SparkSession, fleet: Path,
                                                      tmp_path: Path) -> None:
    """SP-R18, BAG-R1: `run --format rosbag --sources-per-file` replays each bag as read,
    without a shuffle (its positions have gaps where /chatter was set aside), and writes the
    driver's tables, as the shuffled path does."""
    out = tmp_path / "out"
    assert main(["run", "approximate_time", "--format", "rosbag", "--input", str(fleet),
                 "--output", str(out), "--config", json.dumps(CONFIG), "--quiet",
                 "--sources-per-file"]) == 0
    algorithm = registry.get("approximate_time")
    want = expected_of_records(algorithm, algorithm.codec.config_from_json(CONFIG),
                               driver_records(fleet))
    got = spark_tables(spark.read.parquet(str(out / "groups")),
                       spark.read.parquet(str(out / "outcomes")))
    assert got == want and len(want[0]) > 5


def test_bag_r10_verify_over_bags(spark: SparkSession, fleet: Path, tmp_path: Path,
                                  bag_run: tuple[Path, list[str]],
                                  capsys: pytest.CaptureFixture[str]) -> None:
    """BAG-R10, SP-R6, SP-I2: `python -m timealign.spark.verify --format rosbag` reads the
    bags with the run's options and passes a `run --format rosbag`: every configured row
    of the readable bags (no /chatter row, none of the truncated bag) has one outcome and
    the tables equal the re-run. A copy of the tables without one outcome row fails
    (exit 3) naming the (source, id) and SP-R6; so do the run's tables checked with
    another `--stamp` (the re-run differs); without the run's `--skip-bad-files` the
    truncated bag stops it (exit 2, BAG-R6)."""
    out, bag_options = bag_run
    verify = ["approximate_time", "--output", str(out), *bag_options]
    assert verify_main(verify) == 0, capsys.readouterr().err
    configured = sum(len(records) for records in driver_records(fleet).values())
    assert f"verified: {configured} rows" in capsys.readouterr().out
    outcomes = spark.read.parquet(str(out / "outcomes"))
    dropped = outcomes.where((F.col("source") == "r2") & (F.col("outcome") != "grouped")
                             ).orderBy("id").first()
    assert dropped is not None
    doctored = tmp_path / "doctored"
    shutil.copytree(out / "groups", doctored / "groups")
    kept = (F.col("source") != "r2") | (F.col("id") != dropped["id"])
    outcomes.where(kept).write.parquet(str(doctored / "outcomes"))
    assert verify_main([*verify, "--output", str(doctored)]) == 3
    err = capsys.readouterr().err
    assert "SP-R6" in err and f"r2/{dropped['id']}: 1 row(s), 0 outcome(s)" in err, err
    said = [line for line in err.splitlines() if not line.startswith("[timealign verify]")]
    assert len(said) == 1 and "Traceback" not in err  # the progress lines (SP-R40) aside
    # SP-R32: the run's manifest holds its bag options: `timealign verify OUT` needs none,
    # and refuses one that differs
    assert main(["verify", str(out)]) == 0, capsys.readouterr().err
    assert f"verified: {configured} rows" in capsys.readouterr().out
    other_stamps = [o for o in verify if o != "/camera_info=log" and o != "--stamp"]
    assert verify_main([*other_stamps, "--stamp", "log"]) == 2
    err = capsys.readouterr().err
    assert "--stamp" in err and "differs from the run's manifest" in err
    # a run without a manifest: the options as given are used as they are
    plain = tmp_path / "plain"
    plain.mkdir()
    for table in ("groups", "outcomes"):
        (plain / table).symlink_to(out / table)
    unrecorded = [o if o != str(out) else str(plain) for o in verify]
    other_stamps = [o for o in unrecorded if o != "/camera_info=log" and o != "--stamp"]
    assert verify_main([*other_stamps, "--stamp", "log"]) == 3
    assert "row(s) of the re-run missing" in capsys.readouterr().err
    assert verify_main(unrecorded[:-1]) == 2  # without --skip-bad-files
    err = capsys.readouterr().err
    assert "BAG-R6" in err and "r9" in err


def test_sp_r51_verify_reconciles_bag_rows_with_the_inventory(
        bag_run: tuple[Path, list[str]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R51: `verify` of a run over bags counts the rows read of each bag (all topics)
    against the bag's own counts in the run's inventory, as `run` does (SP-R42): a
    manifest whose inventory counts one more message of r2 than the bag holds (the bags
    unchanged, so SP-R44 passes) is exit 3 naming r2 and both counts."""
    out, _ = bag_run
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    manifest = copy / "_timealign.json"
    body = json.loads(manifest.read_text(encoding="utf-8"))
    (unit,) = [u for u in body["inventory"]["units"] if u["name"] == "r2"]
    held = unit["rows"]
    unit["rows"] += 1
    body["inventory"]["rows"] += 1
    manifest.write_text(json.dumps(body), encoding="utf-8")
    assert main(["verify", str(copy)]) == 3
    err = capsys.readouterr().err
    assert f"r2 holds {held + 1} rows" in err and f"read {held}" in err, err
    assert "SP-R42" in err and "Traceback" not in err, err


def test_sp_r53_stream_bag_changed_after_it_was_taken(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R53, SP-R45: a stream of bags logs every file of each bag it takes (its offset's
    `listed`, with the modification time) and records it in the manifest; a bag changed
    after it was taken is refused by name when the stream starts again (exit 3), before
    Spark reads anything."""
    source, out, checkpoint = tmp_path / "incoming", tmp_path / "out", tmp_path / "ck"
    source.mkdir()
    bag = write_ros1(source / "r3.bag", plan(3), 3)
    argv = ["stream", "approximate_time", "--format", "rosbag", "--source", str(source),
            "--output", str(out), "--checkpoint", str(checkpoint), "--config",
            json.dumps(CONFIG), "--available-now", "--quiet"]
    assert main(argv) == 0, capsys.readouterr().err
    capsys.readouterr()
    (taken,) = json.loads((out / "_timealign.json").read_text(encoding="utf-8"))["taken"]
    assert taken["path"] == os.path.realpath(bag) and taken["bytes"] == bag.stat().st_size
    assert '"listed"' in (checkpoint / "offsets" / "0").read_text(encoding="utf-8")

    with bag.open("ab") as grown:
        grown.write(b"\0" * 64)
    os.utime(bag, ns=(bag.stat().st_mtime_ns + 5_000_000,) * 2)
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert "r3.bag changed after the stream took it" in err and "SP-R45" in err, err
    assert f"{taken['bytes']} bytes" in err and "Traceback" not in err, err


def test_bag_r13_a_configured_topic_in_no_bag_is_said(
        spark: SparkSession, fleet: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """BAG-R13: a configured topic no bag holds is a warning in the summary (text and
    JSON), an error with --strict (exit 2, naming it, before the replay)."""
    config = json.dumps({**CONFIG, "topics": [*TOPICS, "/lidar"]})
    common = ["run", "approximate_time", "--format", "rosbag", "--input", str(fleet),
              "--config", config, "--quiet"]
    summary = tmp_path / "summary.json"
    assert main([*common, "--output", str(tmp_path / "out"), "--summary", str(summary)]) == 0
    out = capsys.readouterr().out
    assert "warning: the configured topic /lidar is in no bag" in out
    assert json.loads(summary.read_text(encoding="utf-8"))["absent_topics"] == ["/lidar"]
    assert main([*common, "--output", str(tmp_path / "strict"), "--strict"]) == 2
    err = capsys.readouterr().err
    assert "BAG-R13" in err and "/lidar" in err
    assert not (tmp_path / "strict" / "groups").exists()
    assert main(["run", "approximate_time", "--input", str(fleet), "--output",
                 str(tmp_path / "x"), "--strict"]) == 2  # BAG-R9: only with rosbag
    assert "BAG-R9" in capsys.readouterr().err


# A fresh session in a process of its own, with its own JVM: make test-cluster.
@pytest.mark.cluster
def test_bag_r12_a_fresh_session_finds_the_rosbag_source(fleet: Path) -> None:
    """BAG-R12: with the package installed, `spark.read.format("rosbag")` works in a fresh
    session that never called `register` (PySpark's discovery of `pyspark_rosbag`)."""
    script = ("import sys\nfrom pyspark.sql import SparkSession\n"
              "spark = SparkSession.builder.master('local[1]')"
              ".config('spark.ui.enabled', 'false').getOrCreate()\n"
              "frame = spark.read.format('rosbag').option('stamp', 'log').load(sys.argv[1])\n"
              "print('rows', frame.where(frame.error.isNull()).count())\n")
    done = subprocess.run([sys.executable, "-c", script, str(fleet)], capture_output=True,
                          text=True, timeout=600, check=False,
                          env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.split("rows")[-1]) > 0


# A user's script in a process of its own, with its own JVM: make test-cluster.
@pytest.mark.cluster
def test_bag_r22_r21_a_user_session_outside_the_venv(fleet: Path, tmp_path: Path) -> None:
    """BAG-R22: `.venv/bin/python script.py` with a `python3` on the PATH that lacks
    timealign (a venv not activated, a Jupyter kernel) reads bags after `register(spark)`:
    the local workers run the driver's interpreter. BAG-R23: a `topics` entry that no bag
    holds is refused, naming it and the topics the bags hold, instead of returning every
    row with a null stamp."""
    plain = tmp_path / "bin"
    plain.mkdir()
    (plain / "python3").symlink_to("/usr/bin/python3")
    assert subprocess.run([str(plain / "python3"), "-c", "import timealign"],
                          capture_output=True, check=False).returncode != 0
    script = tmp_path / "nb.py"
    script.write_text(
        "import sys\nfrom pyspark.sql import SparkSession\n"
        "from timealign.spark.rosbag_source import register\n"
        "spark = SparkSession.builder.master('local[1]').config('spark.ui.enabled', 'false')"
        ".getOrCreate()\nregister(spark)\n"
        "frame = spark.read.format('rosbag').option('stamp', 'log').load(sys.argv[1])\n"
        "print('rows', frame.where(frame.stamp.isNotNull()).count())\n"
        "try:\n"
        "    spark.read.format('rosbag').option('topics', '/lidar/points').load(sys.argv[1])"
        ".count()\n"
        "except Exception as error:\n"
        "    print('refused', ' '.join(str(error).split()))\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV",
                          "PYTHONPATH")}
    env.update(PATH=f"{plain}{os.pathsep}/usr/bin{os.pathsep}/bin",
               SPARK_LOCAL_IP="127.0.0.1")
    done = subprocess.run([sys.executable, str(script), str(fleet)], capture_output=True,
                          text=True, timeout=600, check=False, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(re.search(r"^rows (\d+)$", done.stdout, re.M).group(1)) > 0  # type: ignore[union-attr]
    refused = next(line for line in done.stdout.splitlines() if line.startswith("refused"))
    assert "topics" in refused and "BAG-R23" in refused and "/lidar/points" in refused, refused
    assert "/imu" in refused  # the topics the bags hold
