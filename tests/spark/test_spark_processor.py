"""The streaming processor's logic without a JVM, through PySpark's ``TwsTester``."""

from __future__ import annotations

from typing import Any

import pandas as pd
from pyspark.sql.streaming.tws_tester import TwsTester

from tests.pairs_toy import PAIRS, TIMED_PAIRS, PairsConfig
from timealign import registry
from timealign.algorithm import Record
from timealign.spark.checkpoint_codec import StateCodec
from timealign.spark.outcomes import SourceRun
from timealign.spark.streaming import STATE_NAME, TICK_KIND, MachineProcessor

CONFIG = PairsConfig(window=5, timeout=10_000_000)  # 10 ms


def frame(*rows: tuple[str, str, int, int]) -> pd.DataFrame:
    return pd.DataFrame({
        "source": ["r"] * len(rows), "id": [r[0] for r in rows], "topic": [r[1] for r in rows],
        "stamp": [r[2] for r in rows], "arrival": [r[3] for r in rows],
        "kind": [None] * len(rows), "poll": [None] * len(rows),
        "order_file": ["f"] * len(rows), "order_row": list(range(len(rows))),
    })


def with_members_frame(columns: dict[str, list[Any]]) -> pd.DataFrame:
    return pd.DataFrame(columns)


def outcomes(result: pd.DataFrame) -> list[tuple[Any, ...]]:
    if "table" not in result.columns:  # no output at all
        return []
    found: list[tuple[Any, ...]] = []
    for row in result.itertuples():  # a group's members are grouped outcomes (SP-R5)
        if row.table == "groups":
            found += [(member, "grouped", None) for member in row.ids]
        elif row.table == "outcomes":
            found.append((row.id, row.outcome, row.reason))
    return found


def test_sp_r11_one_state_value_per_source_sorted_rows() -> None:
    """SP-R11: rows sorted by (arrival, input order); one blob per source, read back."""
    tester = TwsTester(MachineProcessor(PAIRS, CONFIG))
    result: pd.DataFrame = tester.testInPandas("r", frame(("b", "y", 2, 5), ("a", "x", 0, 4)))
    groups = result[result["table"] == "groups"]
    assert [list(ids) for ids in groups["ids"]] == [["a", "b"]]
    tester.testInPandas("r", frame(("c", "x", 100, 6)))
    stored = tester.peekValueState(STATE_NAME, "r")
    assert stored is not None
    (blob,) = stored
    codec = StateCodec("pairs", type(PAIRS.machine.initial(CONFIG)))
    checkpoint, seq, open_ids, recent = codec.decode(blob)
    assert (seq, open_ids, checkpoint.arrival, checkpoint.index) == (1, ["c"], 6, 3)
    assert recent == ["a", "b"]  # SP-R22: the settled ids a stream remembers


def test_sp_r14_late_row_is_rejected_not_fed() -> None:
    """SP-R14: a row older than the source's last replayed arrival is rejected, with the
    reason word late_file."""
    tester = TwsTester(MachineProcessor(PAIRS, CONFIG))
    tester.testInPandas("r", frame(("a", "x", 0, 10)))
    result = tester.testInPandas("r", frame(("late", "y", 1, 9), ("b", "y", 2, 11)))
    assert outcomes(result) == [("late", "rejected", "late_file"), ("a", "grouped", None),
                                ("b", "grouped", None)]


def test_sp_r13_d5_ticks_follow_the_rows_not_a_timer() -> None:
    """SP-R13, SP-D5, DRV-R3: no Spark timer; a pending tick fires before the first row of a
    later micro-batch at or after its instant, at its own instant, and never at the end of
    the micro-batch that asked for it."""
    tester = TwsTester(MachineProcessor(TIMED_PAIRS, CONFIG))
    assert outcomes(tester.testInPandas("r", frame(("a", "x", 0, 1_000_000)))) == []
    assert list(tester.handle._timers.listTimers("r")) == []
    fired: pd.DataFrame = tester.testInPandas("r", frame(("b", "x", 100, 30_000_000)))
    assert outcomes(fired) == [("a", "dropped", "TOY-timeout")]
    assert list(fired.loc[fired["table"] == "outcomes", "at"]) == [11_000_000]


def test_sp_r13_d5_in_order_micro_batches_of_the_event_time_batcher() -> None:
    """SP-R13, SP-D5 (issue 43 item 9): rows in order over two micro-batches, the first
    ending with a window still open, are all fed (the stream's own tick never ran ahead of
    them: EB-R3 "processing time must not go backwards" blamed the user's file), and the
    outputs are the batch driver's over the same rows, not ended (SP-D1)."""
    algorithm = registry.get("event_time_batcher")
    config = algorithm.codec.config_from_json({"batching_window": 100_000,
                                               "max_message_delay": 50_000})
    first = (("a", "x", 1_000_000, 1_000_000), ("b", "y", 1_003_000, 1_003_100))
    second = (("c", "x", 1_003_100, 1_003_140), ("d", "y", 1_200_000, 1_200_000))
    tester = TwsTester(MachineProcessor(algorithm, config))
    got = outcomes(tester.testInPandas("r", frame(*first)))
    got += outcomes(tester.testInPandas("r", frame(*second)))
    run = SourceRun(algorithm, config, "r")
    run.feed_all(Record(i, topic, stamp, arrival) for i, topic, stamp, arrival in first + second)
    assert got == outcomes(with_members_frame(run.take()))
    assert {row[0] for row in got} == {"a", "b", "c"}  # d is held: its window is open


def test_sp_r33_a_call_counts_the_rows_it_read_not_the_ticks() -> None:
    """SP-R33 (issue 42 item 3): each call adds one row of the table ``read`` holding the
    rows it was given, tick rows (MQ-R8) left out; a call of tick rows only adds none. The
    micro-batch line adds them up, so it counts the rows the machines read, not Spark's
    input rows (which counted tick rows, and a source read twice)."""
    from timealign.spark.streaming import READ

    tester = TwsTester(MachineProcessor(TIMED_PAIRS, CONFIG, tick_rows=True))
    rows = frame(("a", "x", 0, 1_000_000), ("t1", "", 0, 2_000_000), ("b", "y", 1, 3_000_000))
    rows.loc[1, "kind"] = TICK_KIND
    result: pd.DataFrame = tester.testInPandas("r", rows)
    read = result[result["table"] == READ]
    assert (list(read["source"]), list(read["input"])) == (["r"], [2])
    ticks = frame(("t2", "", 0, 4_000_000))
    ticks.loc[0, "kind"] = TICK_KIND
    later: pd.DataFrame = tester.testInPandas("r", ticks)
    assert "table" not in later.columns or READ not in set(later["table"])
