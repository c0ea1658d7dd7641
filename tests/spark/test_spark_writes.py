"""The write rule's cases of issue 30 that need the spark extra (CLI-R5, CLI-R6, CLI-R7,
SP-R17): two runs writing one output, a `--conf` value Spark refuses, a run's own summary
and report replaced by the next run, the bag demo run twice. The walk over every writing
option is in tests/spark/test_spark_cli_fuzz.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from tests.spark.test_spark_cli_fuzz import AT, ROWS, _rows
from tests.test_writes import _HOLDER, _tree
from timealign.cli import main


def _input(tmp: Path) -> list[str]:
    data = tmp / "data"
    data.mkdir()
    pq.write_table(_rows(ROWS), data / "a.parquet")
    return ["run", "approximate_time", "--input", str(data), "--config", json.dumps(AT),
            "--quiet"]


def test_cli_r6_two_runs_writing_one_output(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R6: a `run` whose --output another run is writing is refused before Spark
    starts, exit 2, saying which run (its process) writes it; it used to fail late with
    exit 4 and no cause."""
    run = _input(tmp_path)
    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, "run", str(out)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        before = _tree(tmp_path)
        assert main([*run, "--output", str(out)]) == 2
        err = capsys.readouterr().err
        assert f"another run (process {holder.pid}" in err and "--output" in err, err
        assert _tree(tmp_path) == before
    finally:
        holder.kill()
        holder.wait()


def test_sp_r17_a_conf_value_spark_refuses_is_exit_2(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R17: `--conf spark.sql.shuffle.partitions=0` is exit 2 naming --conf, the key and
    Spark's reason (it was exit 4, "failed (IllegalArgumentException)"); no table."""
    run = _input(tmp_path)
    code = main([*run, "--output", str(tmp_path / "out"), "--conf",
                 "spark.sql.shuffle.partitions=0"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "--conf" in err and "spark.sql.shuffle.partitions=0" in err and "SP-R17" in err
    assert "must be positive" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out" / "groups").exists()
    assert spark.conf.get("spark.sql.shuffle.partitions") != "0"


def test_cli_r5_a_run_replaces_its_own_summary_and_report(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R5: the summary carries its format as its first key and the report folder its
    manifest, so the next run over the same --output, --summary and --report replaces
    them; a summary file of the user's in their place is refused."""
    pytest.importorskip("matplotlib", reason="the plot extra is not installed")
    run = _input(tmp_path)
    targets = ["--output", str(tmp_path / "out"), "--summary", str(tmp_path / "s.json"),
               "--report", str(tmp_path / "report")]
    for _ in range(2):
        assert main([*run, *targets]) == 0, capsys.readouterr().err
    summary = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert next(iter(summary)) == "format" and summary["format"] == "timealign.summary/1"
    assert summary["rows"] == ROWS
    assert sorted(p.name for p in (tmp_path / "report").iterdir()) == [
        "_timealign.json", "index.html", "rules.html"]  # PL-R15: the rules beside the page
    (tmp_path / "s.json").write_text('{"rows": 1}\n', encoding="utf-8")
    assert main([*run, *targets]) == 2
    assert "--summary" in capsys.readouterr().err
    assert (tmp_path / "s.json").read_text(encoding="utf-8") == '{"rows": 1}\n'


def test_cli_r5_r7_the_bag_demo_twice_writes_what_was_asked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R5, CLI-R7: the bag demo run twice into one folder replaces its own bags and
    says how many messages it wrote both times (it said "wrote 0 messages" the second
    time); a length that gives no message is refused, nothing written."""
    pytest.importorskip("rosbags", reason="the spark extra is not installed")
    from timealign.commands import rosbag_demo as demo
    from timealign.rosbag.demo import messages_per_robot

    argv = ["--output", str(tmp_path / "bags"), "--robots", "2", "--seconds", "0.5"]
    wanted = 2 * messages_per_robot(0.5)
    for _ in range(2):
        assert demo.main(argv) == 0
        assert f"wrote {wanted} messages from 2 robots" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "bags").iterdir()) == [
        "_timealign.json", "robot00", "robot01"]
    assert demo.main(["--output", str(tmp_path / "none"), "--seconds", "0.001"]) == 2
    assert "CLI-R7" in capsys.readouterr().err and not (tmp_path / "none").exists()
