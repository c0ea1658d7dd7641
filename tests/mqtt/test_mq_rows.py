"""The stream's rows of a spool and its re-run (MQ-R8, MQ-R9)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from timealign import registry
from timealign.mqtt.rows import NOT, ROW, TICK, rerun, row_check, spool_rows
from timealign.mqtt.spool import SPOOL_NAME, Spool, read_entries

EB = registry.get("event_time_batcher")
CONFIG = EB.codec.config_from_json({"batching_window": 50_000_000, "max_message_delay": 20_000_000})
MS = 1_000_000
A, B = "te/device/a///m/env", "te/device/b///m/env"


def _spool(tmp_path: Path) -> Path:
    spool = Spool(tmp_path)
    spool.receive([(A, b'{"t": 1, "h": 2}', 1, False, False, 1000 * MS),
                   (B, b'{"t": 1}', 2, False, False, 1001 * MS),
                   (A, b"not json", 3, False, False, 1002 * MS),
                   (A, b'{"t": 1, "h": 2}', 1, True, False, 1003 * MS)])  # a redelivery
    spool.tick(1010 * MS)
    spool.receive([(A, b'{"t": 3}', 4, False, False, 1020 * MS)])
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


AT = registry.get("approximate_time")
AT_CONFIG = AT.codec.config_from_json({"topics": ["t", "h"], "queue_size": 5})


def test_mq_r2_a_series_the_algorithm_refuses_is_an_outcome(tmp_path: Path) -> None:
    """MQ-R2: approximate_time refuses a row whose topic is not one of its ``topics``
    (AT-D21); a message with such a series stopped the stream at every restart. Checked by
    the algorithm's row form, it is one ``not`` row, reason ``refused``, naming the rule."""
    spool = Spool(tmp_path)
    spool.receive([(A, b'{"t": 1, "h": 2}', 1, False, False, 1000 * MS),
                   (A, b'{"t": 1, "pressure": 2}', 2, False, False, 1001 * MS)])
    spool.tick(1100 * MS)
    entries, _ = read_entries(tmp_path / SPOOL_NAME)
    rows = list(spool_rows(entries, check=row_check(AT, AT_CONFIG)))
    assert [(r[0], r[2]) for r in rows] == [(ROW, f"{A}#0/t"), (ROW, f"{A}#0/h"),
                                            (NOT, f"{A}#1"), (TICK, "tick#2")]
    assert rows[2][7] is not None and rows[2][7].startswith("refused: ")
    assert "AT-D21" in rows[2][7] and "'pressure'" in rows[2][7]
    columns, refused, held = rerun(AT, AT_CONFIG, rows)  # no InvalidInput: runs through
    assert [r[1] for r in refused] == [f"{A}#1"]
    assert sorted(columns["ids"][0]) == [f"{A}#0/h", f"{A}#0/t"] and held == []
    assert [r[0] for r in spool_rows(entries, check=row_check(EB, CONFIG))] == [
        ROW, ROW, ROW, ROW, TICK]  # the event-time batcher takes any series name


POISON = [b'{"a.b": 1, "a": {"b": 2}}', b'{"x": ' + b"7" * 5001 + b"}", b'{"": 1}',
          b'{"\\ud800": 1}', b'{"x": 1, "time": "2262-04-11T23:47:16.854775807Z"}',
          b'{"x": 1, "time": 0}', b'{"q": 1e-400}', b'{"x": NaN}']


@pytest.mark.parametrize(("algorithm", "config", "not_rows"), [
    (EB, CONFIG, [1, 2, 3, 4, 8]),  # 2262: rejected too far in future; 1e-400 is 0.0
    (AT, AT_CONFIG, [1, 2, 3, 4, 5, 6, 7, 8])])  # x and q are not topics of it (AT-D21)
def test_mq_r2_poison_payloads_never_stop_the_rerun(tmp_path: Path, algorithm: Any,
                                                    config: Any, not_rows: list[int]) -> None:
    """MQ-R2, MQ-R9: poison payloads among good ones, re-run as the stream runs them: every
    message ends in outcomes or held rows, none raises (each stopped the stream before)."""
    spool = Spool(tmp_path)
    spool.receive([(A, payload, n + 1, False, False, (1000 + n) * MS)
                   for n, payload in enumerate([b'{"t": 1}', *POISON, b'{"h": 1}'])])
    spool.tick(2000 * MS)
    entries, _ = read_entries(tmp_path / SPOOL_NAME)
    rows = list(spool_rows(entries, check=row_check(algorithm, config)))
    columns, refused, held = rerun(algorithm, config, rows)
    settled = {i for ids in columns["ids"] if ids for i in ids} | {
        i for i, table in zip(columns["id"], columns["table"], strict=True)
        if table == "outcomes"}
    messages = {r[2].split("/")[-2] if r[0] == ROW else r[2] for r in rows if r[0] != TICK}
    assert len(messages) == len(POISON) + 2
    assert {r[2] for r in rows if r[0] == ROW} <= settled | {i for _, i in held}
    assert [ident for _, ident, _ in refused] == [f"{A}#{n}" for n in not_rows]
