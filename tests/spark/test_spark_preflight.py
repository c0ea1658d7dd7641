"""What is checked before Spark starts (SP-R39, SP-R1, PL-R17): a master that cannot be
reached, a Java that is not 17, a missing input, an unknown plot source. No session."""

from __future__ import annotations

import os
import socket
import stat
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark import SparkContext

from timealign.cli import main
from timealign.errors import EXIT_BAD_INPUT, InvalidInput
from timealign.spark import session
from timealign.spark.session import check_java, check_master


def test_sp_r39_an_unreachable_master_is_said_at_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A spark:// master nobody listens on is refused in well under a second, naming
    --master (it took 84 s and then py4j's text); a URL without a port is refused too."""
    with socket.socket() as probe:  # a port that is free, so nothing listens on it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(InvalidInput, match="cannot be reached") as caught:
        check_master(f"spark://127.0.0.1:{port}")
    assert caught.value.rule == "SP-R39"
    with pytest.raises(InvalidInput, match="spark://HOST:PORT"):
        check_master("spark://head")
    check_master("local[2]")  # other masters are Spark's
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        check_master(f"spark://127.0.0.1:{port},127.0.0.1:{server.getsockname()[1]}")
    pq.write_table(pa.table({"id": ["a"], "stamp": [1]}), tmp_path / "in.parquet")
    began = time.monotonic()
    code = main(["run", "approximate_time", "--input", str(tmp_path / "in.parquet"),
                 "--output", str(tmp_path / "out"), "--config",
                 '{"topics": ["a"], "queue_size": 1}', "--master",
                 f"spark://127.0.0.1:{port}"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == EXIT_BAD_INPUT and time.monotonic() - began < 20
    assert err[-1].startswith("timealign: error: --master: the Spark master cannot be "
                              "reached"), err


def test_sp_r39_a_bad_java_home_says_java_17_was_not_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "submitted", lambda: False)
    monkeypatch.setattr(SparkContext, "_active_spark_context", None)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    with pytest.raises(InvalidInput, match="Java 17 or 21 was not found") as caught:
        check_java()
    assert caught.value.field == "JAVA_HOME" and caught.value.rule == "SP-R39"
    fake = tmp_path / "old-jdk" / "bin" / "java"
    fake.parent.mkdir(parents=True)
    fake.write_text('#!/bin/sh\necho \'java version "1.8.0_402"\' >&2\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "old-jdk"))
    with pytest.raises(InvalidInput, match="is Java 8"):
        check_java()
    monkeypatch.delenv("JAVA_HOME")
    if any(os.access(os.path.join(p, "java"), os.X_OK)
           for p in os.environ.get("PATH", "").split(os.pathsep)):
        check_java()  # this machine's Java 17 passes


def test_sp_r1_a_missing_input_is_refused_before_spark(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    began = time.monotonic()
    code = main(["run", "approximate_time", "--input", str(tmp_path / "nope"), "--output",
                 str(tmp_path / "out"), "--config", '{"topics": ["a"], "queue_size": 1}'])
    err = capsys.readouterr().err
    assert code == EXIT_BAD_INPUT and time.monotonic() - began < 20
    assert "--input: no such file or folder" in err and "SQLSTATE" not in err
    assert "starting Spark" not in err


@pytest.mark.parametrize("command", ["run", "stream"])
def test_sp_r1_a_glob_is_refused_as_a_glob_before_spark(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    """SP-R1, SP-R46: a local input is a folder or one file, for `run` and `stream` alike;
    a glob is refused as a glob (it was "no such file or folder" although SP-R46 said a
    stream takes one as given)."""
    (tmp_path / "in").mkdir()
    pq.write_table(pa.table({"id": ["a"], "stamp": [1]}), tmp_path / "in" / "a.parquet")
    given = ["--input" if command == "run" else "--source", str(tmp_path / "in" / "*.parquet")]
    code = main([command, "approximate_time", *given, "--output", str(tmp_path / "out"),
                 "--config", '{"topics": ["a"], "queue_size": 1}',
                 *(["--checkpoint", str(tmp_path / "ck")] if command == "stream" else [])])
    err = capsys.readouterr().err
    assert code == EXIT_BAD_INPUT, err
    assert f"{given[0]}: a glob is not an input (no file or folder has this name): give " \
        f"{given[0]} the folder that holds the files, or one file (rule SP-R1" in err, err
    assert "starting Spark" not in err and not (tmp_path / "out").exists()


def test_pl_r17_an_unknown_plot_source_is_refused_before_spark(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for table in ("groups", "outcomes"):
        (tmp_path / "run" / table / "batch=0").mkdir(parents=True)
    pq.write_table(pa.table({"source": ["r1", "r2", "r1"], "id": ["a", "b", "c"]}),
                   tmp_path / "run" / "outcomes" / "batch=0" / "part-0.parquet")
    pq.write_table(pa.table({"id": ["a"], "stamp": [1]}), tmp_path / "in.parquet")
    code = main(["plot", "approximate_time", "--run", str(tmp_path / "run"), "--input",
                 str(tmp_path / "in.parquet"), "--config",
                 '{"topics": ["a"], "queue_size": 1}', "--source", "r3", "--out",
                 str(tmp_path / "p.svg")])
    err = capsys.readouterr().err
    assert code == EXIT_BAD_INPUT, err
    assert "--source: the run has no source 'r3'; its 2 sources: 'r1', 'r2'" in err
    assert "starting Spark" not in err


def test_sp_r40_a_slow_spark_start_is_announced(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R40: a session that takes longer than ANNOUNCE to start is announced on stderr
    (Spark's start-up was silent for up to a minute); a quick one, or --quiet, says nothing."""
    import argparse

    from timealign.commands import run_input as cli

    monkeypatch.setattr(cli, "ANNOUNCE", 0.1)

    def slow(*_: object) -> str:
        time.sleep(0.5)
        return "spark"

    monkeypatch.setattr(session, "build_session", slow)
    args = argparse.Namespace(master=None, quiet=False)
    assert cli.start_session(args, "verify") == "spark"
    assert capsys.readouterr().err == "[timealign verify] starting Spark (local[*])\n"
    assert cli.start_session(argparse.Namespace(master=None, quiet=True), "verify") == "spark"
    monkeypatch.setattr(session, "build_session", lambda *a: "spark")
    assert cli.start_session(args, "run approximate_time") == "spark"
    time.sleep(0.3)
    assert capsys.readouterr().err == ""
