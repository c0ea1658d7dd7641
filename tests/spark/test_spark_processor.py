"""The streaming processor's logic without a JVM, through PySpark's ``TwsTester``."""

from __future__ import annotations

from typing import Any

import pandas as pd
from pyspark.sql.streaming.tws_tester import TwsTester

from tests.pairs_toy import PAIRS, TIMED_PAIRS, PairsConfig
from timealign.spark.checkpoint_codec import StateCodec
from timealign.spark.streaming import STATE_NAME, MachineProcessor

CONFIG = PairsConfig(window=5, timeout=10_000_000)  # 10 ms


def frame(*rows: tuple[str, str, int, int]) -> pd.DataFrame:
    return pd.DataFrame({
        "source": ["r"] * len(rows), "id": [r[0] for r in rows], "topic": [r[1] for r in rows],
        "stamp": [r[2] for r in rows], "arrival": [r[3] for r in rows],
        "kind": [None] * len(rows), "poll": [None] * len(rows),
        "order_file": ["f"] * len(rows), "order_row": list(range(len(rows))),
    })


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


def test_sp_r13_timers_deliver_ticks_and_rearm() -> None:
    """SP-R13, SP-D5: one Spark timer at the earliest instant; the processing-time clock
    decides when it expires, and then due ticks fire at their own instants."""
    tester = TwsTester(MachineProcessor(TIMED_PAIRS, CONFIG), timeMode="ProcessingTime")
    tester.testInPandas("r", frame(("a", "x", 0, 1_000_000)))
    assert list(tester.handle._timers.listTimers("r")) == [11]
    assert outcomes(tester.setProcessingTime(10)) == []
    fired: pd.DataFrame = tester.setProcessingTime(11)
    assert outcomes(fired) == [("a", "dropped", "TOY-timeout")]
    assert list(fired["at"]) == [11_000_000]
    assert list(tester.handle._timers.listTimers("r")) == []
