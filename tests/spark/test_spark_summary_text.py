"""The printed summary says what is normal for the algorithm (spec/spark.md SP-R31)."""

from __future__ import annotations

from typing import Any

from timealign import reasons
from timealign.spark.summary import format_summary, verdict, with_held, with_verdict


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
    first = text.splitlines()[1]  # after the verdict (SP-R38)
    assert first.startswith("rows 3999 read = 3979 settled + 20 held (pending: still held "
                            "by the machines, by their rules; no outcome yet)")
    assert "  pending (held): 20  0.5%  normal" in text
    assert "  dropped (superseded): 1000  25.0%  normal" in text
    assert text.splitlines()[-1] == "every outcome is normal for approximate_time"


def test_sp_r38_the_verdict_comes_first_and_names_what_needs_a_look() -> None:
    """SP-R38: the first line is the verdict: normal only when every outcome is normal, some
    group was formed, every source has rows of every configured topic and no bag was
    skipped or missing a topic; the JSON carries it first, for --fail-on and the report."""
    normal = with_verdict(_summary(("grouped", None, 22), ("dropped", "superseded", 78)),
                          "approximate_time")
    assert next(iter(normal)) == "verdict" and not normal["verdict"]["needs_a_look"]
    assert format_summary(normal, "approximate_time").splitlines()[0] == (
        "verdict: normal: every outcome is normal for approximate_time, 5 groups")
    no_group = {**_summary(("dropped", "queue_overflow", 99), ("pending", "end_of_input", 1)),
                "groups": 0, "missing_topics": {"sources": 4, "examples": [
                    {"source": f"r{i}", "topics": ["/imu"]} for i in range(4)]}}
    found = verdict(no_group, "approximate_time")
    assert found["needs_a_look"] and found["items"][0] == "no group at all from 100 rows"
    assert found["items"][1] == ("4 sources without rows of a configured topic "
                                 "(r0: /imu; r1: /imu; r2: /imu …)")
    text = format_summary(no_group, "approximate_time")
    assert text.splitlines()[0].startswith("verdict: needs a look: no group at all")
    assert "  source 'r3' has no rows of configured topic(s) /imu" in text
    rejected = verdict(_summary(("grouped", None, 90), ("rejected", "too_old", 10)),
                       "event_time_batcher")
    assert rejected["items"] == ["rejected (too_old): 10.0% of the rows"]
    bags = verdict({**_summary(("grouped", None, 1)), "warnings": ["the configured topic "
                    "/imu is in no bag"], "skipped_bags": [{"bag": "b", "error": "x"}]},
                   "approximate_time")
    assert bags["items"] == ["the configured topic /imu is in no bag", "1 bag skipped as "
                             "unreadable"]


def test_sp_r38_fail_on_needs_a_look_exits_1_only_when_asked() -> None:
    """SP-R38: --fail-on needs-a-look turns a verdict that needs a look into exit 1 (the
    option is one definition shared by run and stream)."""
    import argparse

    from timealign.commands.spark import fail_on_argument, failed_on

    parser = argparse.ArgumentParser()
    fail_on_argument(parser)
    look = with_verdict({**_summary(("dropped", "queue_overflow", 3)), "groups": 0},
                        "approximate_time")
    fine = with_verdict(_summary(("grouped", None, 3)), "approximate_time")
    asked = parser.parse_args(["--fail-on", "needs-a-look"])
    assert failed_on(asked, look, "timealign run") == 1
    assert failed_on(asked, fine, "timealign run") == 0
    assert failed_on(parser.parse_args([]), look, "timealign run") == 0


def test_sp_r62_a_stream_summary_names_its_late_files() -> None:
    """SP-R56: the late files, most rows first, each with its rows, source, earliest
    arrival and the arrival it came after; then the way to take a copy at once. Past
    LATE_SHOWN files the printed summary says how many more (the JSON has them all)."""
    from timealign.spark.summary import LATE_SHOWN, with_late_files

    late = [{"file": f"in/part-{n:05d}.parquet", "source": "r1", "rows": n + 1,
             "first_arrival": 1000 * n, "after": 1000 * n + 500} for n in range(LATE_SHOWN + 2)]
    summary = with_late_files(with_held(_summary(("rejected", "late_file", 78)), 0), late)
    assert [f["rows"] for f in summary["late_files"]] == list(range(LATE_SHOWN + 2, 0, -1))
    text = format_summary(summary, "approximate_time")
    last = LATE_SHOWN + 1
    assert (f"  late file in/part-{last:05d}.parquet: {last + 1} rows of source 'r1' arrive "
            f"from {1000 * last} ns, before the source's last row already taken "
            f"({1000 * last + 500} ns): the file was taken after a file of later rows "
            f"(SP-R14, SP-R46)") in text
    assert "in/part-00000.parquet" not in text and "… and 2 more late files" in text
    assert "under a name starting with '.', then rename it (SP-R56)" in text
    assert with_late_files(summary, []) is summary
