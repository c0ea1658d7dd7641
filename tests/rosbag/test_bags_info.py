"""``timealign bags info``: what bags hold, from their indexes (BAG-R14)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.rosbag.bags import TOPICS, write_fleet
from timealign.cli import main
from timealign.errors import EXIT_BAD_INPUT
from timealign.rosbag.discovery import FLAGS, Options, bags_under
from timealign.rosbag.info import bags_info
from timealign.rosbag.read import read_bag

LOG_CHATTER = Options(log_stamp_topics=frozenset({"/chatter"}))


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fleet")
    write_fleet(root)
    return root


def _read(root: Path) -> dict[str, list[dict[str, Any]]]:
    """Per bag, the rows the reader reads (the reference for the counts and span)."""
    return {bag.relative: pa.Table.from_batches(list(read_bag(bag, LOG_CHATTER))).to_pylist()
            for bag in bags_under(str(root), "bag", FLAGS)}


def test_bag_r14_info_equals_what_the_reader_reads(fleet: Path) -> None:
    read = _read(fleet)
    infos = bags_info([str(fleet)])
    assert [Path(info.path).name for info in infos] == sorted(read)
    assert [info.storage for info in infos] == ["mcap", "sqlite3", "ros1"]
    for info in infos:
        rows = read[Path(info.path).name]
        counts = Counter(row["topic"] for row in rows)
        assert {t.topic: t.count for t in info.topics} == counts
        assert info.count == len(rows)
        assert info.start == min(row["arrival"] for row in rows)
        assert info.end == max(row["arrival"] for row in rows)
        headers = {t.topic: t.header for t in info.topics}
        assert headers == {"/imu": "yes", "/camera_info": "yes", "/chatter": "no"}
        types = {t.topic: t.types for t in info.topics}
        assert {topic: types[topic][0].replace("/msg/", "/") for topic in types} == {
            topic: msgtype.replace("/msg/", "/") for topic, msgtype in TOPICS}


def test_bag_r14_cli_text_and_json(fleet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    read = _read(fleet)
    assert main(["bags", "info", "--json", str(fleet)]) == 0
    out = json.loads(capsys.readouterr().out)
    every = out["all"]
    assert every["messages"] == sum(len(rows) for rows in read.values())
    totals = Counter(row["topic"] for rows in read.values() for row in rows)
    assert {t["topic"]: t["count"] for t in every["topics"]} == totals
    assert {t["topic"]: t["bags"] for t in every["topics"]} == dict.fromkeys(totals, 3)
    arrivals = [row["arrival"] for rows in read.values() for row in rows]
    assert (every["start"], every["end"]) == (min(arrivals), max(arrivals))
    assert len(out["bags"]) == 3

    assert main(["bags", "info", str(fleet / "r1"), str(fleet / "r3.bag")]) == 0
    text = capsys.readouterr().out
    assert "Bag:      " in text and "All:      2 bags" in text
    assert "/imu" in text and "sensor_msgs/msg/Imu" in text


def test_bag_r14_bad_paths_exit_2_naming_the_file(
        fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope"
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    broken = tmp_path / "broken.bag"
    broken.write_bytes(b"#ROSBAG V2.0\n garbage")
    empty = tmp_path / "empty"
    empty.mkdir()
    for path in (missing, text, broken, empty):
        assert main(["bags", "info", str(fleet), str(path)]) == EXIT_BAD_INPUT
        err = capsys.readouterr().err
        assert str(path) in err and "Traceback" not in err, err


def test_bag_r14_without_the_extra_exit_2_naming_it(
        fleet: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from timealign.commands import rosbag as cli

    monkeypatch.setattr(cli, "BAG_MODULES", ("rosbags_is_not_installed",))
    assert main(["bags", "info", str(fleet)]) == EXIT_BAD_INPUT
    assert "pip install 'timealign[spark]'" in capsys.readouterr().err


def test_bag_r16_a_truncated_bag_is_named_and_the_rest_listed(
        fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """BAG-R16: one truncated bag in a folder no longer stops `bags info` for the folder:
    every other bag is listed with the source a run gives it (BAG-R2), the damaged one is
    named with its error, and the command ends with one line naming it, exit 2."""
    import shutil

    folder = tmp_path / "bags"
    shutil.copytree(fleet, folder)
    whole = (folder / "r3.bag").read_bytes()
    (folder / "r3.bag").write_bytes(whole[: len(whole) // 3])
    assert main(["bags", "info", str(folder)]) == EXIT_BAD_INPUT
    captured = capsys.readouterr()
    assert f"Bag:      {folder / 'r1'}\nSource:   'r1'\nStorage:" in captured.out
    assert f"Bag:      {folder / 'r3.bag'}\nSource:   'r3'\nError:    cannot read" \
        in captured.out
    assert "All:      2 bags" in captured.out
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and "1 of 3 bags cannot be read" in err[0] and "r3.bag" in err[0]
    assert "BAG-R16" in err[0]
    assert main(["bags", "info", "--json", str(folder)]) == EXIT_BAD_INPUT
    out = json.loads(capsys.readouterr().out)
    assert [bag["source"] for bag in out["bags"]] == ["r1", "r2", "r3"]
    assert "error" in out["bags"][2] and "error" not in out["bags"][0]


def test_bag_r14_a_clock_span_is_printed_as_dates() -> None:
    """BAG-R14: a bag recorded on a clock says its start and end as UTC dates to the
    nanosecond, not as `1772366400.009988513 s`."""
    from timealign.rosbag.info import BagInfo, render

    text = render(BagInfo("b", "mcap", 1_772_366_400_009_988_513, 1_772_366_460_000_000_001,
                          ()))
    assert "Start:    2026-03-01 12:00:00.009988513 UTC" in text
    assert "End:      2026-03-01 12:01:00.000000001 UTC" in text
