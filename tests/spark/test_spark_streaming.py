"""The streaming job (spec/spark.md, SP-R11 to SP-R16): equality with batch, SIGKILL."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from tests.spark.conftest import ROOT
from tests.spark.expected import source_records, table
from tests.spark.formats import write_formats
from tests.spark.machines import CASES, Case
from timealign.spark.batch import run_batch
from timealign.spark.census import check_no_loss
from timealign.spark.outcomes import SourceRun
from timealign.spark.schema import ColumnMap, read_input
from timealign.spark.streaming import open_ids, read_table, run_stream

# Clock-free machines; the real ones when they exist (the test-only pairs then add nothing
# but time), and the kill test runs the last of them.
CLOCK_FREE = [case for case in CASES if not case.clocked]
CLOCK_FREE = [case for case in CLOCK_FREE if case.name != "pairs"] or CLOCK_FREE
KILLED = CLOCK_FREE[-1]
# SP-R13, SP-D5: a clocked machine's stream follows its rows' clock, so it is compared with
# the batch driver too (issue 43 item 9: the event-time batcher's stream died at batch 1).
STREAMED = CLOCK_FREE + [case for case in CASES if case.name == "event_time_batcher"]


def outcome_rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted(((r["source"], r["id"], r["outcome"], r["seq"], r["reason"], r["at"],
                    r["input"]) for r in frame.collect()), key=repr)


def group_rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted((r["source"], r["seq"], list(r["ids"]), r["start"], r["end"], r["at"],
                   r["input"]) for r in frame.collect())


def stream(spark: SparkSession, case: Case, source: Path, base: Path) -> tuple[Path, Path]:
    output, checkpoint = base / "out", base / "checkpoint"
    run_stream(spark, case.algorithm, case.config, str(source), str(output), str(checkpoint),
               available_now=True, max_files=1, report=False)
    return output, checkpoint


@pytest.fixture(scope="module")
def uninterrupted(spark: SparkSession, fleet: Path,
                  tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """One uninterrupted available-now stream per machine compared with batch, one file
    per batch."""
    return {case.name: stream(spark, case, fleet, tmp_path_factory.mktemp(case.name))
            for case in STREAMED}


def fed_without_end(case: Case, fleet: Path) -> tuple[list[Any], list[Any], list[Any]]:
    """Groups, outcomes and open ids of the batch driver fed every row of every source, but
    not ended: what a stream over the same rows must leave (SP-D1, DRV-R8)."""
    groups: list[Any] = []
    outcomes: list[Any] = []
    held: list[Any] = []
    for source, records in source_records(fleet).items():
        run = SourceRun(case.algorithm, case.config, source)
        run.feed_all(records)
        columns = run.take()
        groups += [(r["source"], r["seq"], r["ids"], r["start"], r["end"], r["at"], r["input"])
                   for r in table(columns, "groups")]
        outcomes += [(r["source"], r["id"], r["outcome"], r["seq"], r["reason"], r["at"],
                      r["input"]) for r in table(columns, "outcomes")]
        held += [(source, message_id) for message_id in run.open]
    return sorted(groups), sorted(outcomes, key=repr), sorted(held)


@pytest.mark.parametrize("case", STREAMED, ids=lambda c: c.name)
def test_sp_i3_d1_r15_stream_equals_batch_minus_the_end(
        spark: SparkSession, fleet: Path, batch_output: Any, case: Case,
        uninterrupted: dict[str, tuple[Path, Path]]) -> None:
    """SP-I3, SP-D1, SP-R11, SP-R15, DRV-R8, SP-R13: over three micro-batches, the
    stream's tables are the batch driver's without the end of input (for the rate-aware
    batcher the last poll stays held too; for the event-time batcher the ticks after the
    last row), every streamed row is in the batch tables, and the held ids are exactly the
    batch rows the stream has not settled."""
    output, checkpoint = uninterrupted[case.name]
    batch = batch_output(case)
    batch_groups = group_rows(spark.read.parquet(str(batch / "groups")))
    batch_outcomes = outcome_rows(spark.read.parquet(str(batch / "outcomes")))
    streamed = spark.read.parquet(str(output / "outcomes"))
    assert sorted({r["batch"] for r in streamed.select("batch").collect()}) == [0, 1, 2]
    got_groups = group_rows(read_table(spark, str(output), "groups"))
    got_outcomes = outcome_rows(read_table(spark, str(output), "outcomes"))
    held = sorted(map(tuple, open_ids(spark, case.algorithm, case.config,
                                      str(checkpoint)).collect()))
    assert (got_groups, got_outcomes, held) == fed_without_end(case, fleet)
    assert not Counter(map(repr, got_groups)) - Counter(map(repr, batch_groups))
    assert not Counter(map(repr, got_outcomes)) - Counter(map(repr, batch_outcomes))
    settled = {(r[0], r[1]) for r in got_outcomes}
    assert held == sorted({(r[0], r[1]) for r in batch_outcomes} - settled)


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_sp_r1_i3_csv_and_json_streams_equal_their_batch_run(
        spark: SparkSession, fleet: Path, tmp_path: Path, fmt: str) -> None:
    """SP-R1, SP-I3: a stream over CSV (schema inferred from the files present) or JSON
    lines with mapped columns gives the batch job's result over the same files, without
    the end input's outputs."""
    case = CLOCK_FREE[0]
    files = write_formats(fleet, tmp_path / "data")
    folder = tmp_path / fmt
    folder.mkdir()
    shutil.copy(files[fmt], folder)
    mapping = ColumnMap.parse(["source=robot", "id=msg", "stamp=t_ns"])
    run_batch(spark, case.algorithm, case.config, str(folder), str(tmp_path / "batch"), fmt,
              mapping)
    run_stream(spark, case.algorithm, case.config, str(folder), str(tmp_path / "out"),
               str(tmp_path / "checkpoint"), fmt, mapping, available_now=True, report=False)
    batch_outcomes = spark.read.parquet(str(tmp_path / "batch" / "outcomes"))
    streamed = read_table(spark, str(tmp_path / "out"), "outcomes")
    assert streamed.count() > 0
    assert outcome_rows(streamed) == outcome_rows(batch_outcomes.where("at is not null"))


def test_sp_r16_i1_available_now_with_timers_terminates(spark: SparkSession, fleet: Path,
                                                        tmp_path: Path) -> None:
    """SP-R16, SP-R13, SP-I1: a clocked machine's available-now stream stops by itself, and
    every row has an outcome or is held in the state store."""
    case = next(c for c in CASES if c.clocked)
    output, checkpoint = stream(spark, case, fleet, tmp_path)
    outcomes = read_table(spark, str(output), "outcomes")
    held = open_ids(spark, case.algorithm, case.config, str(checkpoint))
    rows = read_input(spark, str(fleet), "parquet", ColumnMap())
    assert check_no_loss(rows, outcomes, held) == rows.count()
    reasons = {r["reason"] for r in outcomes.select("reason").distinct().collect()}
    assert "TOY-timeout" in reasons


def _child(args: list[str]) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_PYTHON": sys.executable}
    return subprocess.Popen([sys.executable, "-m", "tests.spark.stream_child", *args],
                            cwd=ROOT, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _wait_for(path: Path, child: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert child.poll() is None, (child.stderr.read() if child.stderr else b"").decode()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


# Two jobs in processes of their own (the first one SIGKILLed): make test-cluster.
@pytest.mark.cluster
def test_sp_i4_r15_sigkill_and_restart_loses_and_duplicates_nothing(
        spark: SparkSession, fleet: Path, tmp_path: Path,
        uninterrupted: dict[str, tuple[Path, Path]]) -> None:
    """SP-I4, SP-R15: SIGKILL the stream in the middle of micro-batch 1, add the last file,
    restart from the checkpoint with --available-now: the outputs equal the uninterrupted
    run's, with no duplicate and no gap."""
    source, output, checkpoint = tmp_path / "in", tmp_path / "out", tmp_path / "checkpoint"
    source.mkdir()
    files = sorted(fleet.glob("*.parquet"))
    for path in files[:2]:
        shutil.copy2(path, source / path.name)
    common = ["stream", KILLED.name, "--source", str(source), "--output", str(output),
              "--checkpoint", str(checkpoint), "--max-files-per-trigger", "1", "--quiet",
              "--config", json.dumps(KILLED.algorithm.codec.config_to_json(KILLED.config))]
    child = _child([*common, "--trigger-seconds", "0.2"])
    try:
        _wait_for(checkpoint / "commits" / "0", child, 240)
        _wait_for(checkpoint / "offsets" / "1", child, 60)
        assert not (checkpoint / "commits" / "1").exists()
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    assert child.returncode == -signal.SIGKILL
    shutil.copy2(files[2], source / files[2].name)
    restarted = _child([*common, "--available-now"])
    _, errors = restarted.communicate(timeout=300)
    assert restarted.returncode == 0, errors.decode()
    reference, reference_checkpoint = uninterrupted[KILLED.name]
    got = outcome_rows(read_table(spark, str(output), "outcomes"))
    assert len(got) == len(set(got))
    assert got == outcome_rows(read_table(spark, str(reference), "outcomes"))
    assert group_rows(read_table(spark, str(output), "groups")) == \
        group_rows(read_table(spark, str(reference), "groups"))
    held = open_ids(spark, KILLED.algorithm, KILLED.config, str(checkpoint))
    again = open_ids(spark, KILLED.algorithm, KILLED.config, str(reference_checkpoint))
    assert sorted(map(tuple, held.collect())) == sorted(map(tuple, again.collect()))


def test_sp_r46_files_of_one_time_are_taken_by_name() -> None:
    """SP-R46: a watched folder is read through a glob (Hadoop lists matches by name), its
    partition discovery kept by basePath; a file or a glob is left as given. SP-R33: a
    micro-batch's line counts what needs a look (SP-R31) or says nothing does."""
    from timealign.spark.streaming import BatchCount, batch_line, name_ordered

    assert name_ordered(str(ROOT)) == (f"{ROOT}/[^._]*", {"basePath": str(ROOT)})
    assert name_ordered(str(ROOT / "README.md")) == (str(ROOT / "README.md"), {})
    assert name_ordered("in/*.parquet") == ("in/*.parquet", {})
    count = BatchCount(9, 7, (("dropped", "superseded", 5), ("rejected", "late_file", 2)))
    assert batch_line("approximate_time", 3, count) == "[timealign stream] batch 3: 9 rows " \
        "read, 7 settled; needs a look: rejected (late_file) 2"
    assert batch_line("approximate_time", 4, BatchCount(1, 0)).endswith(
        "batch 4: 1 rows read, 0 settled; nothing needs a look")


def test_sp_r46_r42_r43_files_copied_together_stream_and_verify(
        spark: SparkSession, fleet: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R46: the files of one copy (one modification time) taken one per micro-batch are
    taken in name order: none is late (SP-R14). SP-R33: the stream says what it watches
    and each micro-batch's counts. SP-R47: --summary and --report as `run` writes them.
    SP-R48: `verify` of the stream's output passes, counting the rows the checkpoint's
    state holds per source."""
    from tests.spark.machines import REAL_CONFIGS
    from timealign.cli import main

    source = tmp_path / "in"
    source.mkdir()
    for path in sorted(fleet.glob("*.parquet")):
        shutil.copy(path, source / path.name)
        os.utime(source / path.name, (1_790_000_000, 1_790_000_000))
    out, summary, report = tmp_path / "out", tmp_path / "summary.json", tmp_path / "report"
    code = main(["stream", "approximate_time", "--source", str(source), "--output", str(out),
                 "--checkpoint", str(tmp_path / "cp"), "--available-now",
                 "--max-files-per-trigger", "1", "--summary", str(summary), "--report",
                 str(report), "--config", json.dumps(REAL_CONFIGS["approximate_time"])])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert printed.err.splitlines()[0].startswith(f"[timealign stream] watching {source} ")
    lines = [line for line in printed.err.splitlines() if " rows read, " in line]
    assert len(lines) == 3 and all(line.endswith("nothing needs a look") for line in lines)
    # SP-R33 (issue 42 item 3): each line's rows read are its file's rows (one file per
    # micro-batch, in name order), its rows settled the rows of its outcomes/batch=N
    files = sorted(fleet.glob("*.parquet"))
    outcomes = spark.read.parquet(str(out / "outcomes"))
    assert lines == [
        f"[timealign stream] batch {n}: {pq.read_metadata(path).num_rows} rows read, "
        f"{outcomes.where(f'batch = {n}').count()} settled; nothing needs a look"
        for n, path in enumerate(files)]
    written = json.loads(summary.read_text(encoding="utf-8"))
    assert not [c for c in written["outcomes"] if c["outcome"] == "rejected"], written
    assert written["held"] > 0 and (report / "index.html").is_file()
    assert main(["verify", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"or held in the checkpoint's state ({written['held']}) (held per source: " in said
    assert f"verified: {written['read']} rows of a stream" in said
