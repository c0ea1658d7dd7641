"""Reading bags into rows without Spark (spec/formats.md, BAG-…)."""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rosbag.bags import (
    ROS1,
    ROS2,
    build,
    expected_rows,
    plan,
    with_stamp,
    write_fleet,
    write_ros1,
    write_rosbag2,
)
from timealign.errors import InvalidInput
from timealign.rosbag.discovery import (
    FLAGS,
    OPTIONS,
    Bag,
    Naming,
    Options,
    bags_under,
    source_of,
)
from timealign.rosbag.header import stamp_layout
from timealign.rosbag.read import read_bag
from timealign.rosbag.rows import BagError

LOG_CHATTER = Options(log_stamp_topics=frozenset({"/chatter"}))


def rows_of(bag: Bag, options: Options = LOG_CHATTER) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = pa.Table.from_batches(list(read_bag(bag, options))).to_pylist()
    return rows


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bags")
    write_fleet(root)
    return root


def test_bag_r1_finds_rosbag2_folders_and_ros1_files(fleet: Path) -> None:
    """BAG-R1: a folder with metadata.yaml is one bag, a .bag file another; path order."""
    assert [b.relative for b in bags_under(str(fleet), "bag", FLAGS)] == ["r1", "r2", "r3.bag"]
    assert [b.relative for b in bags_under(str(fleet / "r1"), "bag", FLAGS)] == ["r1"]
    with pytest.raises(InvalidInput, match="BAG-R1"):
        bags_under(str(fleet / "missing"), "bag", FLAGS)


def test_bag_r2_r3_d1_rows_equal_full_deserialization(fleet: Path) -> None:
    """BAG-R2, BAG-R3, BAG-D1: MCAP, SQLite 3 and ROS 1 bags give, in the library's read
    order, the header stamps of full deserialization, log times as arrival (written out of
    order, different from the stamps), ids counting per topic, and `--stamp TOPIC=log`."""
    for bag in bags_under(str(fleet), "bag", FLAGS):
        got = rows_of(bag)
        assert got == expected_rows(Path(bag.path), bag.relative, frozenset({"/chatter"}),
                                    bag.source)
        arrivals = [r["arrival"] for r in got]
        assert arrivals == sorted(arrivals)
        assert len(got) == 40 and any(r["stamp"] != r["arrival"] for r in got)
    written = [log for _, _, _, log in plan(1)]
    assert written != sorted(written)  # the receive times really were out of order


def test_bag_r2_source_rules() -> None:
    """BAG-R2: the source is the bag, its folder or a regex group; ids of sources that
    may hold several bags carry the bag."""
    assert source_of("robots/a/day1", "bag", FLAGS) == "robots/a/day1"
    assert source_of("robots/a/day1", "folder", FLAGS) == "robots/a"
    assert source_of("robots/a/day1", r"regex:robots/(\w+)/", FLAGS) == "a"
    with pytest.raises(InvalidInput, match="BAG-R2"):
        source_of("other", r"regex:robots/(\w+)/", FLAGS)
    assert Bag.at(Path("x"), "robots/a/day1", "folder", FLAGS).prefix == "robots/a/day1:"


def test_bag_r2_one_naming_rule_for_every_format(fleet: Path, tmp_path: Path) -> None:
    """BAG-R2: with the default rule a bag's source is its path below the input without the
    format's suffix, alike for a ROS 1 `.bag`, a lone `.mcap`, a lone `.db3` and rosbag2
    folders of either storage (the issue saw `robot02.bag` next to `robot03`); the `bag`
    column keeps the path. A bag given alone is named by its own name. Two bags that would
    share a name are refused, naming both; the other rules keep the suffix in what they
    match."""
    root = tmp_path / "in"
    (root / "site").mkdir(parents=True)
    shutil.copytree(fleet / "r1", root / "site" / "mcapfolder")
    shutil.copytree(fleet / "r2", root / "sqlitefolder")
    shutil.copy(fleet / "r3.bag", root / "site" / "ros1.bag")
    shutil.copy(next((fleet / "r1").glob("*.mcap")), root / "lone.mcap")
    shutil.copy(next((fleet / "r2").glob("*.db3")), root / "lone2.db3")
    bags = bags_under(str(root), "bag", FLAGS)
    assert [(b.relative, b.source) for b in bags] == [
        ("lone.mcap", "lone"), ("lone2.db3", "lone2"), ("site/mcapfolder", "site/mcapfolder"),
        ("site/ros1.bag", "site/ros1"), ("sqlitefolder", "sqlitefolder")]
    for bag in bags:  # every format's rows carry the name as source and the path as bag
        rows = rows_of(bag, Options(log_stamp_all=True))
        assert len(rows) == 40
        assert {(r["source"], r["bag"]) for r in rows} == {(bag.source, bag.relative)}
    assert [b.source for b in bags_under(str(root / "site" / "ros1.bag"), "bag", FLAGS)] \
        == ["ros1"]
    assert [b.source for b in bags_under(str(root / "lone.mcap"), "bag", FLAGS)] == ["lone"]
    assert source_of("site/ros1.bag", r"regex:(\w+\.bag)", FLAGS) == "ros1.bag"
    assert source_of("site/ros1.bag", "folder", FLAGS) == "site"
    shutil.copy(fleet / "r3.bag", root / "lone.bag")
    for naming, said in ((FLAGS, "--source-from"), (OPTIONS, "sourceFrom")):
        with pytest.raises(InvalidInput, match="BAG-R2") as error:
            bags_under(str(root), "bag", naming)
        assert "lone.bag and lone.mcap" in str(error.value) and "'lone'" in str(error.value)
        assert f"{said} regex:PATTERN" in str(error.value)
    assert len(bags_under(str(root), "folder", FLAGS)) == 6  # several bags per source: fine


def test_bag_r15_errors_name_the_callers_options(fleet: Path, tmp_path: Path) -> None:
    """BAG-R15: the reader's option errors name the data source's options (`path`,
    `stamp`, `sourceFrom`, `.option("logStampTopics", ...)`) by default, and the command
    line's flags (`--input`, `--stamp`, `--source-from`, `--stamp TOPIC=log`) when it
    reads through the data source with `errorNames=flags`."""
    from timealign.spark.bags import reader_options
    from timealign.spark.rosbag_source import options_of

    cases: tuple[tuple[Naming, dict[str, str], tuple[str, str, str, str]], ...]
    cases = ((OPTIONS, {}, ("path", "stamp", "sourceFrom", '.option("logStampTopics", '
                                                            '"/chatter")')),
             (FLAGS, {"errorNames": "flags"}, ("--input", "--stamp", "--source-from",
                                               "--stamp /chatter=log")))
    for naming, extra, (path, stamp, source_from, log) in cases:
        with pytest.raises(InvalidInput) as error:
            bags_under(str(tmp_path / "missing"), "bag", naming)
        assert (error.value.field, error.value.rule) == (path, "BAG-R1")
        with pytest.raises(InvalidInput) as error:
            options_of({"stamp": "sometimes", **extra})
        assert (error.value.field, error.value.rule) == (stamp, "BAG-R3")
        assert "--" not in str(error.value) or naming is FLAGS
        for rule in ("robot", "regex:("):
            with pytest.raises(InvalidInput) as error:
                options_of({"sourceFrom": rule, **extra})
            assert (error.value.field, error.value.rule) == (source_from, "BAG-R2")
        with pytest.raises(InvalidInput, match=f"{source_from} regex:x does not match"):
            source_of("r1", "regex:x", naming)
        options = options_of(extra)
        assert options.naming is naming
        with pytest.raises(InvalidInput, match="BAG-R3") as error:
            rows_of(bags_under(str(fleet), "bag", naming)[0], options)
        assert f"use {log} (or " in str(error.value)
        assert ("--" in str(error.value)) == (naming is FLAGS)
    assert options_of(reader_options([], "bag", False, None)).naming is FLAGS
    with pytest.raises(InvalidInput, match="errorNames"):
        options_of({"errorNames": "shell"})


def test_bag_r3_type_without_header_needs_log_stamp(fleet: Path) -> None:
    """BAG-R3: std_msgs/msg/String has no header: without --stamp log the read stops,
    naming the bag, the topic and the type; with `--stamp log` every topic takes it."""
    bag = bags_under(str(fleet), "bag", FLAGS)[0]
    with pytest.raises(InvalidInput, match=r"'/chatter'.*std_msgs/msg/String") as error:
        rows_of(bag, Options())
    assert error.value.rule == "BAG-R3" and error.value.field == "r1"
    assert all(r["stamp"] == r["arrival"] for r in rows_of(bag, Options(log_stamp_all=True)))


def test_bag_r7_unread_topics_keep_null_stamps(fleet: Path) -> None:
    """BAG-R7: topics outside `topics` are still rows (to be counted), not decoded."""
    bag = bags_under(str(fleet), "bag", FLAGS)[1]
    rows = rows_of(bag, Options(topics=frozenset({"/imu", "/camera_info"})))
    assert {r["topic"] for r in rows if r["stamp"] is None} == {"/chatter"}
    assert len(rows) == 40


def _truncate(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    data = next(target.glob("*.mcap"))
    content = data.read_bytes()
    data.write_bytes(content[: len(content) * 2 // 3])
    return target


def test_bag_r6_truncated_bag_names_the_file(fleet: Path, tmp_path: Path) -> None:
    """BAG-R6: a truncated MCAP bag or ROS 1 bag is an InvalidInput naming the bag; with
    skip_bad it becomes one row carrying the error."""
    broken = Bag.at(_truncate(fleet / "r1", tmp_path / "cut"), "cut", "bag", FLAGS)
    with pytest.raises(BagError, match=r"cut: cannot read the bag") as error:
        rows_of(broken)
    assert error.value.rule == "BAG-R6"
    ros1 = tmp_path / "cut.bag"
    ros1.write_bytes((fleet / "r3.bag").read_bytes()[:3000])
    with pytest.raises(BagError, match=r"cut\.bag"):
        rows_of(Bag.at(ros1, "cut.bag", "bag", FLAGS))
    skipped = rows_of(broken, Options(skip_bad=True))
    assert len(skipped) == 1 and skipped[0]["bag"] == "cut" and "cannot read" in skipped[0][
        "error"]


def test_bag_r5_unknown_message_type(tmp_path: Path) -> None:
    """BAG-R5: a type the bag has no definition for (a SQLite 3 bag recorded without
    message definitions, as before ROS 2 Iron) and the default store does not know stops
    the read naming bag, topic and type, unless that topic takes the log time."""
    import sqlite3

    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    store = get_typestore(Stores.ROS2_HUMBLE)
    store.register(get_types_from_msg("std_msgs/Header header\nint32 x", "acme_msgs/msg/Odd"))
    odd = store.types["acme_msgs/msg/Odd"]
    message = odd(header=build(store, "std_msgs/msg/Header", random.Random(2)), x=3)
    path = tmp_path / "unknown"
    with Writer(path, version=8, storage_plugin=StoragePlugin.SQLITE3) as writer:
        connection = writer.add_connection("/odd", "acme_msgs/msg/Odd", typestore=store)
        writer.write(connection, 5, store.serialize_cdr(message, "acme_msgs/msg/Odd"))
    with sqlite3.connect(next(path.glob("*.db3"))) as db:
        db.execute("DELETE FROM message_definitions")
    bag = Bag.at(path, "unknown", "bag", FLAGS)
    with pytest.raises(InvalidInput, match=r"'/odd'.*acme_msgs/msg/Odd") as error:
        rows_of(bag, Options())
    assert error.value.rule == "BAG-R5" and error.value.field == "unknown"
    assert [r["stamp"] for r in rows_of(bag, Options(log_stamp_all=True))] == [5]


def test_bag_d2_overlapping_mcap_chunks(tmp_path: Path) -> None:
    """BAG-D2, BAG-R4: an MCAP bag of many chunks whose time ranges overlap (large messages,
    receive times out of order) is read group by group in the library's order."""
    from rosbags.rosbag2 import StoragePlugin, Writer

    rng = random.Random(5)
    path = tmp_path / "chunks"
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        connection = writer.add_connection("/cam", "sensor_msgs/msg/Image", typestore=ROS2)
        for k in range(24):
            image = with_stamp(ROS2, "sensor_msgs/msg/Image", 10**9 + k * 10**7, rng)
            image.data = np.zeros(300_000, np.uint8)
            log = 10**9 + k * 10**7 + rng.randrange(-3 * 10**7, 3 * 10**7)
            writer.write(connection, log, ROS2.serialize_cdr(image, "sensor_msgs/msg/Image",
                                                             little_endian=k % 2 == 0))
    bag = Bag.at(path, "chunks", "bag", FLAGS)
    assert rows_of(bag) == expected_rows(path, "chunks", frozenset())


HEADER_TYPES = sorted(name for name, (_, fields) in ROS2.fielddefs.items()
                      if fields and fields[0][0] == "header")


@pytest.mark.parametrize("typename", HEADER_TYPES)
@settings(max_examples=5, deadline=None)
@given(stamp=st.integers(0, 2**31 * 10**9 - 1), seed=st.integers(0, 2**16),
       little=st.booleans())
def test_bag_r4_header_read_equals_full_deserialization(typename: str, stamp: int,
                                                        seed: int, little: bool) -> None:
    """BAG-R4: for every header-carrying type of the ROS 2 and ROS 1 stores, with random
    content, the stamp read from the serialized bytes (CDR little- and big-endian, ROS 1)
    equals the one full deserialization gives."""
    rng = random.Random(seed)
    layout = stamp_layout(ROS2, typename, cdr=True)
    assert layout is not None
    message = with_stamp(ROS2, typename, stamp, rng)
    raw = ROS2.serialize_cdr(message, typename, little_endian=little)
    header = ROS2.deserialize_cdr(raw, typename).header  # type: ignore[attr-defined]
    assert layout.read(raw) == header.stamp.sec * 10**9 + header.stamp.nanosec == stamp
    if typename in ROS1.fielddefs:
        layout1 = stamp_layout(ROS1, typename, cdr=False)
        assert layout1 is not None
        message1 = with_stamp(ROS1, typename, stamp, rng)
        raw1 = ROS1.serialize_ros1(message1, typename)
        header1 = ROS1.deserialize_ros1(raw1, typename).header  # type: ignore[attr-defined]
        assert layout1.read(raw1) == header1.stamp.sec * 10**9 + header1.stamp.nanosec


def test_bag_r4_types_without_header_have_no_layout() -> None:
    """BAG-R4: only types whose first field is a std_msgs/msg/Header get a stamp layout;
    another CDR representation is left to full deserialization."""
    assert stamp_layout(ROS2, "std_msgs/msg/String", cdr=True) is None
    assert stamp_layout(ROS2, "geometry_msgs/msg/Pose", cdr=True) is None
    layout = stamp_layout(ROS2, "sensor_msgs/msg/Imu", cdr=True)
    assert layout is not None and layout.offset == 4
    raw = bytearray(ROS2.serialize_cdr(build(ROS2, "sensor_msgs/msg/Imu", random.Random(1)),
                                       "sensor_msgs/msg/Imu"))
    raw[1] = 0x03  # PL_CDR_LE: not read here
    assert layout.read(bytes(raw)) is None
    assert layout.read(bytes(raw[:8])) is None
    assert stamp_layout(ROS1, "sensor_msgs/msg/Imu", cdr=False).offset == 4  # type: ignore[union-attr]


def test_bag_r1_lone_storage_files_and_ros1(tmp_path: Path) -> None:
    """BAG-R1: a ROS 1 `.bag` file below a folder is a bag named by its relative path."""
    (tmp_path / "robots" / "a").mkdir(parents=True)
    write_ros1(tmp_path / "robots" / "a" / "day1.bag", plan(9, 6), 9)
    write_rosbag2(tmp_path / "robots" / "b", plan(8, 6), "mcap", 8)
    bags = bags_under(str(tmp_path), r"regex:robots/(\w)", FLAGS)
    assert [(b.relative, b.source) for b in bags] == [("robots/a/day1.bag", "a"),
                                                     ("robots/b", "b")]
    assert rows_of(bags[0])[0]["id"].startswith("robots/a/day1.bag:/")


def test_bag_r3_r2_command_line_options() -> None:
    """BAG-R3, BAG-R2: `--stamp` takes `header`, `log` or `TOPIC=log` (repeatable) and
    `--source-from` a known rule; anything else is refused before Spark reads a bag."""
    from timealign.spark.bags import reader_options
    from timealign.spark.rosbag_source import options_of

    options = reader_options(["/a=log", "/b=log"], "folder", True, ["/a", "/c"])
    parsed = options_of({k.lower(): v for k, v in options.items()})
    assert parsed == Options(log_stamp_topics=frozenset({"/a", "/b"}),
                             topics=frozenset({"/a", "/c"}), source_from="folder",
                             skip_bad=True, naming=FLAGS)
    assert options_of(reader_options(["log"], "bag", False, None)).log_stamp_all
    for stamps, rule in (([" /a=header"], "bag"), (["sometimes"], "bag"), (["=log"], "bag")):
        with pytest.raises(InvalidInput, match="BAG-R3"):
            reader_options(stamps, rule, False, None)
    for rule in ("robot", "regex:("):
        with pytest.raises(InvalidInput, match="BAG-R2"):
            reader_options([], rule, False, None)


def test_bag_r9_pl_r10_options_of_the_format(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """BAG-R9, PL-R10, BAG-R10: `run`, `stream`, `plot` and `verify` refuse `--column` with
    `--format rosbag` and the bag options with another format (exit 2, naming the option
    and the rule), before Spark starts or anything is written; `plot` and `verify` refuse
    a bad bag option before Spark starts too."""
    from timealign.cli import main
    from timealign.commands.spark import verify_main

    bags, out = str(tmp_path / "bags"), str(tmp_path / "out")
    (tmp_path / "run" / "groups").mkdir(parents=True)
    (tmp_path / "run" / "outcomes").mkdir()
    commands = {
        "run": ["run", "approximate_time", "--input", bags, "--output", out],
        "stream": ["stream", "approximate_time", "--source", bags, "--output", out,
                   "--checkpoint", str(tmp_path / "ck")],
        "plot": ["plot", "approximate_time", "--run", str(tmp_path / "run"), "--input", bags,
                 "--source", "r1", "--out", str(tmp_path / "r1.svg")],
        "verify": ["approximate_time", "--input", bags, "--output", str(tmp_path / "run")],
    }
    cases = [(["--format", "rosbag", "--column", "stamp=t"], "--column", "BAG-R9"),
             (["--stamp", "log"], "--stamp", "BAG-R9"),
             (["--format", "csv", "--source-from", "bag"], "--source-from", "BAG-R9"),
             (["--skip-bad-files"], "--skip-bad-files", "BAG-R9")]
    for name, command in commands.items():
        for extra, option, rule in cases:
            if option == "--skip-bad-files" and name == "stream":
                continue  # `stream` has no such option (BAG-R6)
            entry = verify_main if name == "verify" else main
            assert entry([*command, *extra]) == 2, (name, extra)
            err = capsys.readouterr().err
            assert option in err and rule in err, (name, extra, err)
    config = '{"topics": ["/imu", "/camera_info"], "queue_size": 10}'
    assert main([*commands["plot"], "--format", "rosbag", "--config", config,
                 "--stamp", "sometimes"]) == 2
    assert "BAG-R3" in capsys.readouterr().err
    assert verify_main([*commands["verify"], "--format", "rosbag", "--config", config,
                        "--source-from", "robot"]) == 2
    assert "BAG-R2" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_bag_r3_a_topic_without_header_is_refused_before_spark_starts(
        fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """BAG-R3: `run --format rosbag` with a configured topic whose type has no header stamp
    (`bags info` says so from the bag's index) is refused before Spark starts, naming the
    bag, the topic and `--stamp TOPIC=log`, not after Spark's start-up; `--stamp` fixes it."""
    import timealign.spark.session as session
    from timealign.cli import main

    def no_spark(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("Spark started")

    monkeypatch.setattr(session, "build_session", no_spark)
    config = '{"topics": ["/imu", "/chatter"], "queue_size": 10}'
    command = ["run", "approximate_time", "--input", str(fleet), "--format", "rosbag",
               "--output", str(tmp_path / "out"), "--config", config, "--quiet"]
    assert main(command) == 2
    err = capsys.readouterr().err
    assert "BAG-R3" in err and "'/chatter'" in err and "--stamp /chatter=log" in err, err
    assert not (tmp_path / "out").exists()
    assert main([*command, "--stamp", "/chatter=log"]) == 4  # past the check: Spark next
    assert "Spark started" in capsys.readouterr().err


def test_bag_r22_data_source_not_found_says_what_to_do() -> None:
    """BAG-R22: Spark's `DATA_SOURCE_NOT_FOUND` for `rosbag` (PySpark's Python is not the
    one timealign is in) is said with the fix: `register(spark)` or `PYSPARK_PYTHON`."""
    import sys

    from timealign.spark.failures import job_error

    spark_said = RuntimeError(
        "An error occurred while calling o53.load.\n: org.apache.spark.SparkClassNotFound"
        "Exception: [DATA_SOURCE_NOT_FOUND] Failed to find the data source: rosbag. Make "
        "sure the provider name is correct and the package is properly registered and "
        "compatible with your Spark version. SQLSTATE: 42K02\n\tat org.apache.spark.sql.")
    error = job_error(spark_said)
    assert isinstance(error, InvalidInput) and error.rule == "BAG-R22"
    assert "register(spark)" in error.message
    assert f"PYSPARK_PYTHON={sys.executable}" in error.message
    other = RuntimeError("[DATA_SOURCE_NOT_FOUND] Failed to find the data source: avro.")
    assert job_error(other) is other
