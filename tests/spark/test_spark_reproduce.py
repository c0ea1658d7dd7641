"""A run that reproduces itself (SP-R32, PL-R15) and gates with thresholds (SP-R38), for
every command that writes a report (`run`, `stream`): the report's command line, generated
from the parsed options, reruns to equal tables; `--fail-on` takes thresholds per outcome
and reason in `run`, `stream` and `verify`; `verify` repeats the run's `--conf`."""

from __future__ import annotations

import html
import json
import re
import shlex
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from timealign.cli import main
from timealign.outputs import read_manifest

CONFIG = json.dumps({"batching_window": "100ms", "max_message_delay": "50ms"})
BASE = 1_772_366_400 * 10**9


def _seconds(ns: int) -> str:
    return f"{ns // 10**9}.{ns % 10**9:09d}"


def _input(folder: Path) -> Path:
    """Two files of an event-time batcher's input in decimal seconds (so --time-unit s is
    needed), its stamp in a column of another name (so --column is); 4 rows of 80 too old."""
    folder.mkdir()
    for part in range(2):
        stamps = [BASE + (part * 40 + i) * 10_000_037 for i in range(40)]
        arrivals = [t + (400_000_000 if i in (10, 30) else 1_000_000)
                    for i, t in enumerate(stamps)]
        order = sorted(range(40), key=lambda i: arrivals[i])
        pq.write_table(pa.table({
            "source": ["dev"] * 40, "topic": ["temp"] * 40,
            "id": [f"m{part}-{i}" for i in order],
            "t": [_seconds(stamps[i]) for i in order],
            "arrival": [_seconds(arrivals[i]) for i in order]}), folder / f"p{part}.parquet")
    return folder


def _tables(spark: SparkSession, out: Path) -> dict[str, list[tuple[Any, ...]]]:
    return {name: sorted((tuple(r) for r in spark.read.parquet(str(out / name)).collect()),
                         key=repr) for name in ("groups", "outcomes")}


def _command(report: Path) -> list[str]:
    page = (report / "index.html").read_text(encoding="utf-8")
    found = re.search(r'<code class="command">(.*?)</code>', page)
    assert found is not None
    return shlex.split(html.unescape(found.group(1)))


def _moved(words: list[str], places: dict[str, Path]) -> list[str]:
    """``words`` with the value of each option of ``places`` put there."""
    words = list(words)
    for flag, path in places.items():
        words[words.index(flag) + 1] = str(path)
    return words


def test_sp_r32_runs_command_line_reruns_to_equal_tables(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """PL-R15: with --time-unit, --column, --conf and --fail-on given, the report's command
    holds every one of them and reruns to equal tables; SP-R32: `verify` starts its session
    with the run's --conf (from the manifest); SP-R38: thresholds in run and verify."""
    source = _input(tmp_path / "in")
    out, report = tmp_path / "out", tmp_path / "report"
    given = ["run", "event_time_batcher", "--input", str(source), "--output", str(out),
             "--config", CONFIG, "--column", "stamp=t", "--time-unit", "s",
             "--conf", "spark.sql.shuffle.partitions=3", "--report", str(report),
             "--fail-on", "rejected>5%", "--quiet"]
    assert main(given) == 0, capsys.readouterr().err  # 4 of 80 rejected: 5 %, not more
    words = _command(report)
    assert words[:3] == ["timealign", "run", "event_time_batcher"]
    for option in ("--time-unit", "--column", "--conf", "--fail-on"):
        assert option in words, option
    again = tmp_path / "again"
    rerun = _moved(words, {"--output": again, "--report": tmp_path / "report2"})
    assert main(rerun[1:]) == 0, capsys.readouterr().err
    assert _tables(spark, again) == _tables(spark, out)
    assert sum(1 for r in _tables(spark, out)["outcomes"] if "too_old" in r) == 4
    manifest = read_manifest(out, "--output")
    assert manifest is not None and manifest["run"]["conf"] == ["spark.sql.shuffle.partitions=3"]
    spark.conf.set("spark.sql.shuffle.partitions", "7")
    capsys.readouterr()
    assert main(["verify", str(out), "--fail-on", "too_old>0", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "--fail-on too_old>0: 4 of 80 rows are too_old (5.00%)" in err
    assert spark.conf.get("spark.sql.shuffle.partitions") == "3"  # the run's --conf
    assert main(["run", "event_time_batcher", "--input", str(source), "--output",
                 str(tmp_path / "gated"), "--config", CONFIG, "--column", "stamp=t",
                 "--time-unit", "s", "--fail-on", "too_olde>0", "--quiet"]) == 2
    assert "writes no outcome or reason 'too_olde'" in capsys.readouterr().err
    assert not (tmp_path / "gated").exists()  # refused before any work


def test_sp_r32_streams_command_line_reruns_to_equal_tables(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """PL-R15: a stream's report is titled `timealign stream` and its command line holds
    --checkpoint and every option given; rerun into new folders it writes equal tables;
    SP-R38: a stream's threshold fails it (exit 1) after everything is written, and the
    rerun too, since the gate is part of the command."""
    source = _input(tmp_path / "in")
    out, check, report = tmp_path / "out", tmp_path / "ck", tmp_path / "report"
    given = ["stream", "event_time_batcher", "--source", str(source), "--output", str(out),
             "--checkpoint", str(check), "--config", CONFIG, "--column", "stamp=t",
             "--time-unit", "s", "--available-now", "--max-files-per-trigger", "1",
             "--report", str(report), "--fail-on", "too_old>1", "--quiet"]
    assert main(given) == 1
    assert "--fail-on too_old>1: 4 of 80 rows are too_old" in capsys.readouterr().err
    page = (report / "index.html").read_text(encoding="utf-8")
    assert "<h1>timealign stream: event_time_batcher</h1>" in page
    words = _command(report)
    assert words[:3] == ["timealign", "stream", "event_time_batcher"]
    for option in ("--checkpoint", "--time-unit", "--column", "--available-now",
                   "--max-files-per-trigger", "--fail-on"):
        assert option in words, option
    again = tmp_path / "again"
    rerun = _moved(words, {"--output": again, "--checkpoint": tmp_path / "ck2",
                           "--report": tmp_path / "report2"})
    assert main(rerun[1:]) == 1, capsys.readouterr().err
    assert _tables(spark, again) == _tables(spark, out)


def test_sp_r32_a_bag_runs_command_line_reruns_to_equal_tables(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """PL-R15, SP-R32 (issue 42 item 4): a run over ROS bags, with the bag options given
    (`--format rosbag`, `--stamp TOPIC=log` for the topic without a header, `--skip-bad-files`),
    writes a report whose command line holds each of them and reruns to equal tables."""
    from tests.rosbag.bags import write_fleet

    bags = tmp_path / "bags"
    bags.mkdir()
    write_fleet(bags)
    out, report = tmp_path / "out", tmp_path / "report"
    config = json.dumps({"topics": ["/imu", "/chatter"], "queue_size": 10})
    given = ["run", "approximate_time", "--input", str(bags), "--format", "rosbag",
             "--output", str(out), "--config", config, "--stamp", "/chatter=log",
             "--skip-bad-files", "--report", str(report), "--quiet"]
    assert main(given) == 0, capsys.readouterr().err
    words = _command(report)
    assert words[:3] == ["timealign", "run", "approximate_time"]
    assert words[words.index("--format") + 1] == "rosbag"
    assert words[words.index("--stamp") + 1] == "/chatter=log" and "--skip-bad-files" in words
    again = tmp_path / "again"
    rerun = _moved(words, {"--output": again, "--report": tmp_path / "report2"})
    assert main(rerun[1:]) == 0, capsys.readouterr().err
    assert _tables(spark, again) == _tables(spark, out)
    assert main(["verify", str(again), "--quiet"]) == 0, capsys.readouterr().err
