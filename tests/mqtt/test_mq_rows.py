"""The stream's rows of a spool and its re-run (MQ-R8, MQ-R9)."""

from __future__ import annotations

from pathlib import Path

from timealign import registry
from timealign.mqtt.rows import NOT, ROW, TICK, rerun, spool_rows
from timealign.mqtt.spool import SPOOL_NAME, Spool, read_entries

EB = registry.get("event_time_batcher")
CONFIG = EB.codec.config_from_json({"batching_window": 50_000_000, "max_message_delay": 20_000_000})
MS = 1_000_000
A, B = "te/device/a///m/env", "te/device/b///m/env"


def _spool(tmp_path: Path) -> Path:
    spool = Spool(tmp_path)
    spool.receive([(A, b'{"t": 1, "h": 2}', 1, False, 1000 * MS),
                   (B, b'{"t": 1}', 2, False, 1001 * MS),
                   (A, b"not json", 3, False, 1002 * MS),
                   (A, b'{"t": 1, "h": 2}', 1, True, 1003 * MS)])  # a redelivery
    spool.tick(1010 * MS)
    spool.receive([(A, b'{"t": 3}', 4, False, 1020 * MS)])
    spool.tick(1200 * MS)
    return tmp_path / SPOOL_NAME


def test_mq_r8_rows_of_a_spool(tmp_path: Path) -> None:
    """MQ-R8: one row per series, a ``not`` row per non-measurement, a tick per source seen
    before it, nothing for a redelivery; ``start`` skips earlier rows but not their sources."""
    entries, _ = read_entries(_spool(tmp_path))
    rows = list(spool_rows(entries))
    assert [(r[0], r[1], r[6]) for r in rows] == [
        (ROW, "a", 0), (ROW, "a", 0), (ROW, "b", 1), (NOT, "a", 2),
        (TICK, "a", 4), (TICK, "b", 4), (ROW, "a", 5), (TICK, "a", 6), (TICK, "b", 6)]
    assert rows[0][2:6] == (f"{A}#0/t", "t", 1000 * MS, 1000 * MS)
    assert rows[3][7] is not None and rows[3][7].startswith("not-json: ")
    assert [r[1] for r in spool_rows(entries, start=6)] == ["a", "b"]


def test_mq_r9_rerun_closes_batches_at_ticks(tmp_path: Path) -> None:
    """MQ-R9: the re-run ticks each source at the spooled instants, so a batch closes at the
    tick after its timeout, and every row has one outcome; twice run, the same."""
    entries, _ = read_entries(_spool(tmp_path))
    columns, refused, held = rerun(EB, CONFIG, spool_rows(entries))
    assert held == []
    assert refused == [("a", f"{A}#2", refused[0][2])]
    groups = [(s, sorted(ids), at) for t, s, ids, at in zip(
        columns["table"], columns["source"], columns["ids"], columns["at"], strict=True)
        if t == "groups"]
    # the split at the midpoint 1010 ms (EB rules), closed by the tick at 1200 ms at their
    # timeouts (window end + 20 ms): without the spooled ticks nothing would close yet
    assert sorted(groups) == [
        ("a", [f"{A}#0/h", f"{A}#0/t"], 1030 * MS),
        ("a", [f"{A}#5/t"], 1070 * MS),
        ("b", [f"{B}#1/t"], 1071 * MS)]
    without_ticks, _, still = rerun(EB, CONFIG, [r for r in spool_rows(entries) if r[0] != TICK])
    assert "groups" not in without_ticks["table"] and len(still) == 4
    assert rerun(EB, CONFIG, spool_rows(entries)) == (columns, refused, held)
