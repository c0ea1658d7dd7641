"""The printed summary says what is normal for the algorithm (spec/spark.md SP-R31)."""

from __future__ import annotations

from typing import Any

from timealign import reasons
from timealign.spark.summary import format_summary, with_held


def _summary(*outcomes: tuple[str, str | None, int]) -> dict[str, Any]:
    return {"rows": sum(n for _o, _r, n in outcomes), "sources": 2, "groups": 5,
            "outcomes": [{"outcome": o, "reason": r, "rows": n} for o, r, n in outcomes],
            "spread_ns": {"p50": 1}, "latency_ns": {"p50": None}}


def test_sp_r31_approximate_time_drops_are_normal() -> None:
    """SP-R31: ApproximateTime's drops and pending rows are normal; the last line says so."""
    text = format_summary(_summary(("grouped", None, 22), ("dropped", "superseded", 78),
                                   ("pending", "end_of_input", 1)), "approximate_time")
    assert "dropped (superseded): 78  77.2%  normal" in text
    assert text.splitlines()[-1] == "every outcome is normal for approximate_time"


def test_sp_r31_batcher_rejections_need_a_look() -> None:
    """SP-R31: the event-time batcher's rejections and overwrites are named on the last
    line; without an algorithm the summary is as before (no verdicts)."""
    summary = _summary(("grouped", None, 90), ("rejected", "too_old", 8),
                       ("dropped", "overwritten", 2))
    text = format_summary(summary, "event_time_batcher")
    assert "rejected (too_old): 8  8.0%  needs a look" in text
    assert text.splitlines()[-1] == "needs a look: rejected (too_old), dropped (overwritten)"
    assert "normal" not in format_summary(summary) and "look" not in format_summary(summary)


def test_sp_r31_every_algorithm_has_its_normal_outcomes() -> None:
    """SP-R31: the table covers every registered algorithm; grouping is always normal."""
    from timealign import registry

    assert set(reasons.NORMAL) == set(registry.names())
    assert all(reasons.normal(name, "grouped") for name in registry.names())
    assert reasons.rules("approximate_time", "dropped", "queue_overflow") == ("AT-R5", "AT-D4")
    assert reasons.rules("event_time_batcher", "grouped", None)[0] == "EB-R13"


def test_sp_r33_a_stream_summary_accounts_for_every_row_read() -> None:
    """SP-R33, SP-D1: a stream's summary says how the rows read divide into settled (its
    tables) and held (pending by the machines' rules); shares are of the rows read, and
    the held rows are a line of their own."""
    summary = with_held(_summary(("grouped", None, 2979), ("dropped", "superseded", 1000)),
                        20)
    assert (summary["read"], summary["rows"], summary["held"]) == (3999, 3979, 20)
    text = format_summary(summary, "approximate_time")
    first = text.splitlines()[0]
    assert first.startswith("rows 3999 read = 3979 settled + 20 held (pending: still held "
                            "by the machines, by their rules; no outcome yet)")
    assert "  pending (held): 20  0.5%  normal" in text
    assert "  dropped (superseded): 1000  25.0%  normal" in text
    assert text.splitlines()[-1] == "every outcome is normal for approximate_time"
