"""Bad input to the Spark jobs (issue 15, faults 2 to 4): one line, a documented exit code,
the file and rule named; tiny tables on the shared session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.tws_tester import TwsTester

from tests.pairs_toy import MISSING_MODULE, PAIRS, PairsConfig
from tests.spark.test_spark_processor import frame
from timealign import registry
from timealign.cli import main
from timealign.commands.spark import verify_main
from timealign.spark.census import HASH_COUNT_SETTINGS, Census
from timealign.spark.failures import job_error
from timealign.spark.outcomes import RECENT_IDS, DuplicateIdError
from timealign.spark.paths import PathError
from timealign.spark.schema import ColumnMap, read_input
from timealign.spark.streaming import MachineProcessor

BYPASS = "spark.sql.execution.bypassPartialAggregation"

CONFIG = json.dumps({"window": 3})


def _write(path: Path, **columns: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    count = len(columns["stamp"])
    base: dict[str, list[Any]] = {"source": ["s"] * count,
                                  "id": [f"m{i}" for i in range(count)],
                                  "topic": ["x", "y"] * (count // 2) + ["x"] * (count % 2),
                                  "arrival": list(range(count))}
    pq.write_table(pa.table({**base, **columns}), path)
    return path


@pytest.fixture
def pairs_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry._ENTRIES, "pairs", "tests.pairs_toy:PAIRS")


# name -> (input columns, expected exit code, words of the one-line message)
BATCH_CASES: dict[str, tuple[dict[str, list[Any]], int, list[str]]] = {
    "reused-id": ({"id": ["a", "b", "a", "c"], "stamp": [0, 1, 10, 11]}, 3,
                  ["source 's' id 'a' (2 rows)", "SP-R22"]),
    "null-source": ({"source": ["s", None], "stamp": [0, 1]}, 2, ["null source", "SP-R1"]),
    "corrupt-file": ({"stamp": [0, 1]}, 2, ["cannot read the file", "broken.parquet"]),
}


@pytest.mark.parametrize("case", BATCH_CASES)
def test_sp_r22_r23_batch_bad_input_exit_codes(spark: SparkSession, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               pairs_cli: None, case: str) -> None:
    """SP-R22, SP-D20: a re-used id whose first row was already settled fails the job with
    exit 3 rather than becoming a `rejected` row (it used to pass, writing two outcomes for
    one id); SP-R1: a null source is named;
    SP-R23: a corrupt Parquet file is exit 2 naming the file. No traceback, no tables."""
    columns, code, words = BATCH_CASES[case]
    data = _write(tmp_path / "in" / "a.parquet", **columns)
    if case == "corrupt-file":
        (data.parent / "broken.parquet").write_bytes(b"PAR1" + b"\0" * 64 + b"PAR1")
    got = main(["run", "pairs", "--input", str(data.parent), "--output",
                str(tmp_path / "out"), "--config", CONFIG, "--quiet"])
    err = capsys.readouterr().err
    assert got == code, err
    assert all(word in err for word in words), err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
    if case == "reused-id":  # SP-R22: verify applies the same rule (to an empty output)
        (tmp_path / "out").mkdir(exist_ok=True)
        assert verify_main(["pairs", "--input", str(data.parent), "--output",
                            str(tmp_path / "out"), "--config", CONFIG]) == 3
        assert "SP-R22" in capsys.readouterr().err


def test_sp_r22_stream_remembers_recent_ids() -> None:
    """SP-R22: the stream refuses an id still open or among the last RECENT_IDS settled
    ones (kept in the state value), naming source, id and the file to remove."""
    tester = TwsTester(MachineProcessor(PAIRS, PairsConfig(window=5)))
    tester.testInPandas("r", frame(("a", "x", 0, 1), ("b", "y", 1, 2)))  # a, b settled
    with pytest.raises(Exception) as caught:
        tester.testInPandas("r", frame(("a", "x", 20, 3)))
    error = job_error(caught.value)
    assert isinstance(error, DuplicateIdError)
    assert "'a'" in str(error) and "recently settled" in str(error) and "file" in str(error)
    assert RECENT_IDS >= 1000


def test_sp_r24_r23_stream_checkpoint_binding_and_bad_file(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        pairs_cli: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """SP-R24, SP-D21: a restart with another config or algorithm stops with exit 2 naming
    what differs (it used to be accepted; no change is let through); SP-R23: a later file
    without `id` stops the stream with exit 2 naming the file to remove; no traceback in
    either case (since SP-R1 compares the files' columns, before the query starts)."""
    source = tmp_path / "in"
    _write(source / "a.parquet", stamp=[0, 1])
    common = ["--source", str(source), "--output", str(tmp_path / "out"),
              "--checkpoint", str(tmp_path / "ck"), "--available-now", "--quiet"]
    assert main(["stream", "pairs", "--config", CONFIG, *common]) == 0, capsys.readouterr()
    capsys.readouterr()
    assert main(["stream", "pairs", "--config", '{"window": 4}', *common]) == 2
    err = capsys.readouterr().err
    assert "SP-R24" in err and "config.window: checkpoint 3, now 4" in err
    monkeypatch.setitem(registry._ENTRIES, "timed_pairs", "tests.pairs_toy:TIMED_PAIRS")
    assert main(["stream", "timed_pairs", "--config", CONFIG, *common]) == 2
    assert "algorithm: checkpoint 'pairs', now 'timed_pairs'" in capsys.readouterr().err
    pq.write_table(pa.table({"source": ["s"], "topic": ["x"], "stamp": [5], "arrival": [5]}),
                   source / "b.parquet")
    assert main(["stream", "pairs", "--config", CONFIG, *common]) == 2
    err = capsys.readouterr().err
    # present when the stream (re)starts, the file is refused before the query runs, as
    # lacking a column the other file has (SP-R1); it used to be read as a "null id"
    assert "b.parquet" in err and "column 'id' is missing" in err and "SP-R1" in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("condition", ["CANNOT_LOAD_STATE_STORE.UNCATEGORIZED",
                                       "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE",
                                       "CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED"])
def test_sp_r12_r23_damaged_state_store_names_the_checkpoint(condition: str) -> None:
    """SP-R12, SP-R23: Spark's error classes for a checkpoint it cannot use (names from
    Spark's error-conditions.json) become exit-2 errors naming the checkpoint (worded
    --checkpoint by the command line)."""
    error = job_error(RuntimeError(f"[{condition}] An error occurred during loading state."
                                   f" SQLSTATE: 58030\n\tat org.apache.spark.Foo(Foo.scala:1)"))
    assert isinstance(error, PathError) and error.field == "checkpoint"
    assert error.naming({"checkpoint": "--checkpoint"}).field == "--checkpoint"
    assert condition.split(".")[0] in str(error) and "Foo.scala" not in str(error)


def test_sp_r22_census_hash_collisions_fall_back_to_the_exact_check(
        spark: SparkSession, tmp_path: Path) -> None:
    """SP-R22, SP-D10: the batch job's census counts rows per hash of (source, id); a count above
    one runs the exact check, which raises only for a real repeat: with a hash that makes
    every row collide, unique ids (the same id in two sources included) still pass, and a
    real repeat is still named."""
    def collide(*_: str) -> Any:
        return F.lit(0)

    unique = _write(tmp_path / "u" / "a.parquet", stamp=[0, 1, 2],
                    source=["s", "s", "t"], id=["a", "b", "a"])
    census = Census(read_input(spark, str(unique.parent), "parquet", ColumnMap()),
                    key=collide)
    assert census.check_input() == 3
    census.close()
    repeated = _write(tmp_path / "r" / "a.parquet", stamp=[0, 1, 2], id=["a", "b", "a"])
    census = Census(read_input(spark, str(repeated.parent), "parquet", ColumnMap()),
                    key=collide)
    with pytest.raises(DuplicateIdError, match=r"source 's' id 'a' \(2 rows\)"):
        census.check_input()
    census.close()


def test_sp_d28_the_hash_count_alone_skips_the_partial_aggregation(
        spark: SparkSession, tmp_path: Path) -> None:
    """SP-D28: the census's hash count (SP-R22) is planned with Spark's partial aggregation
    bypassed, and only it: the setting is on while the query is built (the key is read
    then) and back to its previous value after, for the per-source counts that follow and
    for the caller's session; the count and the exact check are unchanged."""
    seen: list[str | None] = []

    def key(*columns: str) -> Any:
        seen.append(spark.conf.get(BYPASS, None))
        return F.xxhash64(*columns)

    data = _write(tmp_path / "u" / "a.parquet", stamp=[0, 1, 2], id=["a", "b", "a"])
    before = spark.conf.get(BYPASS, None)
    census = Census(read_input(spark, str(data.parent), "parquet", ColumnMap()), key=key)
    with pytest.raises(DuplicateIdError, match=r"source 's' id 'a' \(2 rows\)"):
        census.check_input()
    census.close()
    assert seen == ["true"]
    assert spark.conf.get(BYPASS, None) == before != "true"
    assert HASH_COUNT_SETTINGS == {BYPASS: "true"}


@pytest.mark.parametrize("command", ["run", "stream"])
@pytest.mark.parametrize("algorithm", ["crashing_pairs", "unshipped_pairs"])
def test_sp_r34_a_crashed_worker_is_named_by_run_and_stream(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, command: str, algorithm: str) -> None:
    """SP-R34: when a Python worker fails with an error of its own, a module it cannot
    import while stepping the machine or while unpickling what the driver sent it (as on
    executors without attrs), `run` and `stream` alike end with one line naming the
    worker's exception type and message and the fix, exit 4, no traceback (only the hint
    of exit 4, `--debug`)."""
    monkeypatch.setitem(registry._ENTRIES, "crashing_pairs", "tests.pairs_toy:CRASHING_PAIRS")
    monkeypatch.setitem(registry._ENTRIES, "unshipped_pairs",
                        "tests.pairs_toy:UNSHIPPED_PAIRS")
    source = tmp_path / "in"
    _write(source / "a.parquet", stamp=[0, 1])
    where = (["--input", str(source)] if command == "run" else
             ["--source", str(source), "--checkpoint", str(tmp_path / "ck"), "--available-now"])
    got = main([command, algorithm, "--config", CONFIG, *where, "--output",
                str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert got == 4, err
    first, *rest = err.splitlines()
    assert first.startswith("timealign: failed (WorkerError): a Python worker failed: "
                            f"ModuleNotFoundError: No module named '{MISSING_MODULE}'"), err
    assert f"pip install {MISSING_MODULE}" in first, err
    assert rest == ["timealign: run again with --debug for the traceback"], err


RUN = ["run", "approximate_time", "--config", '{"topics": 2, "queue_size": 2}']


@pytest.mark.parametrize("case", ["folder", "fifo"])
def test_vec_r16_config_that_is_not_a_regular_file_is_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    """VEC-R16: `--config DIR` says it is a folder (it said "no such file"); a FIFO is
    refused without being opened (it would block forever)."""
    import os

    target = tmp_path / "cfg"
    if case == "folder":
        target.mkdir()
    else:
        os.mkfifo(target)
    (tmp_path / "in").mkdir()
    code = main(["run", "approximate_time", "--input", str(tmp_path / "in"), "--output",
                 str(tmp_path / "out"), "--config", str(target)])
    err = capsys.readouterr().err
    assert code == 2, err
    what = "a folder" if case == "folder" else "a FIFO"
    assert f"not a regular file ({what})" in err and "VEC-R16" in err, err
    assert "no such file" not in err and str(target) in err


def test_sp_r1_option_messages_name_what_they_mean(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R1: the `--format` error lists rosbag too; a field given twice to `--column` is
    refused (the last one won before); a stray file's message names `--input`, never a
    literal `{input}`; `queue_size` is a count, not "nanoseconds" (AT-R1)."""
    out = str(tmp_path / "out")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "notes.txt").write_text("x")
    cases = [
        (["--input", str(tmp_path / "in"), "--output", out, "--format", "xml"],
         ["parquet, csv, json or rosbag", "SP-R1"]),
        (["--input", str(tmp_path / "in"), "--output", out, "--column", "id=a",
          "--column", "id=b"], ["id is mapped twice (id=a and id=b)", "SP-R1"]),
        (["--input", str(tmp_path / "in"), "--output", out],
         ["notes.txt", "remove it from --input or rename it"]),
    ]
    for argv, words in cases:
        assert main([*RUN, *argv]) == 2, argv
        err = capsys.readouterr().err
        assert all(w in err for w in words) and "{input}" not in err, err
    assert main(["run", "approximate_time", "--input", str(tmp_path / "in"), "--output", out,
                 "--config", '{"topics": 2, "queue_size": 1.5}']) == 2
    err = capsys.readouterr().err
    assert "queue_size: must be an integer (rule AT-R1" in err and "nanoseconds" not in err
    assert not Path(out).exists()
