"""What each of the event-time batcher's batches waited and filled (spec/spark.md SP-R74;
issue 42 item 5: its spread and latency are the configured window and delay in every batch)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import SparkSession

from timealign import registry
from timealign.spark.batch import run_batch
from timealign.spark.schema import ColumnMap, read_input
from timealign.spark.summary import format_summary, summarize

MS = 1_000_000
CONFIG = {"batching_window": 100 * MS, "max_message_delay": 1000 * MS}


def test_sp_r74_the_batchers_summary_says_what_each_batch_waited_and_filled(
        spark: SparkSession, tmp_path: Path) -> None:
    """SP-R74: from its members' event times, each batch's wait (emission minus its newest
    event time) and fill (the share of its window they span) vary where spread and latency
    do not; the summary gives their percentiles, equal to those computed here from the
    tables and the input, and prints them."""
    stamps = {"a": 0, "b": 30 * MS, "c": 60 * MS,  # one batch, 60 % filled
              "d": 5000 * MS, "e": 5010 * MS,  # 10 %
              "f": 9000 * MS}  # one message: 0 %
    data = tmp_path / "in"
    data.mkdir()
    pq.write_table(pa.table({"source": ["s"] * len(stamps), "id": list(stamps),
                             "topic": list(stamps),  # a key each: one batch holds them
                             "stamp": list(stamps.values()),
                             "arrival": [t + MS for t in stamps.values()]}),
                   data / "a.parquet")
    algorithm = registry.get("event_time_batcher")
    config = algorithm.codec.config_from_json(CONFIG)
    run_batch(spark, algorithm, config, str(data), str(tmp_path / "out"))
    groups = spark.read.parquet(str(tmp_path / "out" / "groups"))
    outcomes = spark.read.parquet(str(tmp_path / "out" / "outcomes"))
    rows = read_input(spark, str(data), "parquet", ColumnMap())
    summary = summarize(groups, outcomes, rows)
    batches = groups.orderBy("seq").collect()
    assert [sorted(b["ids"]) for b in batches] == [["a", "b", "c"], ["d", "e"], ["f"]]
    assert {b["end"] - b["start"] for b in batches} == {100 * MS}  # the same in every one
    waited = sorted(b["at"] - max(stamps[i] for i in b["ids"]) for b in batches)
    fills = sorted((max(stamps[i] for i in b["ids"]) - min(stamps[i] for i in b["ids"]))
                   * 1000 // (b["end"] - b["start"]) for b in batches)
    assert fills == [0, 100, 600]
    assert (summary["waited_ns"]["p50"], summary["waited_ns"]["p100"]) == (waited[1], waited[2])
    assert (summary["fill_permille"]["p50"], summary["fill_permille"]["p100"]) == (100, 600)
    assert len(set(waited)) > 1  # what varies, where latency (at - end) does not
    text = format_summary(summary, "event_time_batcher").splitlines()
    assert "fill (% of its window the batch's event times span): p50 10.0  p90 " \
        f"{summary['fill_permille']['p90'] // 10}.{summary['fill_permille']['p90'] % 10}  " \
        "p99 59.0  p100 60.0" in text
    assert any(line.startswith("waited (ms, newest member's event time to emission): p50 ")
               for line in text)
    assert "waited_ns" not in summarize(groups, outcomes)  # only given the input rows
