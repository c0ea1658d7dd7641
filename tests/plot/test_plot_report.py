"""The run report's page and its folder check (spec/plots.md PL-R9), without Spark."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import pytest

from timealign.cli import main
from timealign.plot.report import (
    GROUPED,
    LOOK,
    NORMAL,
    SOURCE_ROWS,
    WINDOWS,
    Histogram,
    Report,
    histogram_svg,
    page,
    rule_texts,
    rules_page,
    shares_svg,
    single_value,
    timeline_window,
    write,
)

SUMMARY: dict[str, Any] = {
    "rows": 1000, "sources": 60, "groups": 90, "seconds": 1.5, "rows_per_second": 667,
    "outcomes": [{"outcome": "grouped", "reason": None, "rows": 900},
                 {"outcome": "dropped", "reason": "superseded", "rows": 100}],
    "spread_ns": {"p50": 1_000_000, "p90": 2_000_000, "p99": 3_000_000, "p100": None},
    "latency_ns": {"p50": 5_000_000, "p90": 6_000_000, "p99": 7_000_000, "p100": 8_000_000},
}


def _source(name: str, grouped: int) -> dict[str, object]:
    return {"source": name, "rows": 20, "grouped": grouped, "dropped": 20 - grouped,
            "rejected": 0, "pending": 0, "groups": 3, "latency_p99_ns": 7_000_000,
            "spread_max_ns": None}


def test_pl_r9_page_holds_every_part_escaped_and_self_contained(tmp_path: Path) -> None:
    """PL-R9: summary, shares, histograms, the first 50 sources in the given order with a
    note for the rest; text is escaped; pictures are embedded SVG."""
    sources = [_source("<robot & co>", 2), *(_source(f"r{k:02d}", 15) for k in range(59))]
    histograms = [Histogram("spread", 0, 1_000_000, (3, 0, 5)),
                  Histogram("latency", 2_000_000, 500_000, (1, 1))]
    text = page(Report("approximate_time", SUMMARY, sources, histograms))
    assert "&lt;robot &amp; co&gt;" in text and "<robot" not in text
    assert text.index("&lt;robot") < text.index(">r00<") < text.index(f">r{SOURCE_ROWS - 2:02d}<")
    assert f">r{SOURCE_ROWS - 1:02d}<" not in text
    assert f"{len(sources) - SOURCE_ROWS} more sources not listed" in text
    assert "dropped (superseded)" in text and "10.000 %" in text and "–" in text
    images = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', text)
    assert len(images) == 3  # shares and two histograms; no timeline given
    assert all(base64.b64decode(i).lstrip().startswith(b"<?xml") for i in images)
    assert b"spread" in histogram_svg(histograms[0])
    target = write(Report("approximate_time", SUMMARY, sources, histograms),
                   tmp_path / "new" / "folder")
    assert target == tmp_path / "new" / "folder" / "index.html" and target.read_text() == text


@pytest.mark.parametrize("where", ["file", "file/below", "missing/report", "out/groups"])
def test_pl_r9_report_folder_is_checked_before_spark_starts(
        tmp_path: Path, where: str, capsys: pytest.CaptureFixture[str]) -> None:
    """PL-R9: a report path that is a file, lies below one, or overlaps the input or the
    tables (SP-R20) exits 2 naming --report, before Spark starts (nothing written)."""
    (tmp_path / "file").write_text("mine")
    code = main(["run", "approximate_time", "--input", str(tmp_path / "missing"),
                 "--output", str(tmp_path / "out"), "--report", str(tmp_path / where)])
    assert code == 2
    assert "--report" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
    assert (tmp_path / "file").read_text() == "mine"


def _kinds(name: str, **counts: int) -> dict[str, object]:
    entry: dict[str, object] = {"source": name, "rows": 100, "grouped": 100, "dropped": 0,
                                "rejected": 0, "pending": 0, "groups": 10,
                                "latency_p99_ns": 1_000_000, "spread_max_ns": 2_000_000}
    entry.update(counts)
    entry["grouped"] = 100 - sum(counts.values())
    return entry


def test_pl_r14_only_outcomes_abnormal_for_the_algorithm_are_coloured() -> None:
    """PL-R14, SP-R31: ApproximateTime's drops are normal (no row coloured, "normal"),
    the event-time batcher's rejections need a look (their rows coloured)."""
    summary = {**SUMMARY, "outcomes": [
        {"outcome": "grouped", "reason": None, "rows": 220},
        {"outcome": "dropped", "reason": "superseded", "rows": 780}]}
    at = page(Report("approximate_time", summary, [_kinds("a", dropped=78)], []))
    assert 'class="bad"' not in at and "needs a look" not in at and ">normal<" in at
    eb_summary = {**SUMMARY, "outcomes": [
        {"outcome": "grouped", "reason": None, "rows": 900},
        {"outcome": "rejected", "reason": "too_old", "rows": 100}]}
    eb = page(Report("event_time_batcher", eb_summary,
                     [_kinds("late", rejected=10), _kinds("fine")], []))
    assert eb.count('<tr class="bad">') == 2  # the rejected outcome and the source "late"
    assert re.search(r'<tr class="bad"><td class="text">late<', eb)
    assert not re.search(r'<tr class="bad"><td class="text">fine<', eb)
    assert "needs a look" in eb


def _bar_fills(text: str) -> list[str]:
    """The fill colours of the share chart's bars (the first picture of the page)."""
    first = re.search(r'src="data:image/svg\+xml;base64,([^"]+)"', text)
    assert first is not None
    svg = base64.b64decode(first.group(1)).decode("utf-8")
    return re.findall(r'<g id="patch_\d+">\s*<path d="[^"]*"\s*clip-path="[^"]*"\s*'
                      r'style="fill: (#[0-9a-f]{6})', svg)


def test_pl_r14_share_chart_colours_only_what_needs_a_look() -> None:
    """PL-R14, SP-R31: the outcome chart follows the page's rule: ApproximateTime's drops
    (normal) are not red; the event-time batcher's rejections and overwrites are."""
    summary = {**SUMMARY, "outcomes": [
        {"outcome": "grouped", "reason": None, "rows": 220},
        {"outcome": "dropped", "reason": "superseded", "rows": 770},
        {"outcome": "pending", "reason": "end_of_input", "rows": 10}]}
    at = _bar_fills(page(Report("approximate_time", summary, [], [])))
    assert at == [GROUPED, NORMAL, NORMAL] and LOOK not in at
    eb_summary = {**SUMMARY, "outcomes": [
        {"outcome": "grouped", "reason": None, "rows": 880},
        {"outcome": "rejected", "reason": "too_old", "rows": 100},
        {"outcome": "dropped", "reason": "overwritten", "rows": 20}]}
    assert _bar_fills(page(Report("event_time_batcher", eb_summary, [], []))) == [
        GROUPED, LOOK, LOOK]
    assert b"red: needs a look" in shares_svg(eb_summary["outcomes"], 1000,
                                              "event_time_batcher")
    assert b"needs a look" not in shares_svg(summary["outcomes"], 1000, "approximate_time")


def test_pl_r15_rule_links_resolve_inside_the_report_folder(tmp_path: Path) -> None:
    """PL-R14, PL-R15: each (outcome, reason) links its rules to rules.html beside the page,
    which holds each cited rule's text rendered as HTML under its id (no file:// link, no
    raw Markdown, no link leaving the folder)."""
    report = Report("approximate_time", SUMMARY, [], [])
    text = page(report)
    assert '<a href="rules.html#at-r11">AT-R11</a>' in text and "file://" not in text
    write(report, tmp_path / "r")
    rules = (tmp_path / "r" / "rules.html").read_text()
    linked = set(re.findall(r'href="rules\.html#([a-z0-9-]+)"', text))
    assert linked and all(f'id="{anchor}"' in rules for anchor in linked)
    assert "<h2>AT-R11 " in rules and "<p>" in rules and "`" not in rules.split("<body>")[1]
    for href in re.findall(r'href="([^"]+)"', rules):
        assert href == "index.html" or (href.startswith("#") and f'id="{href[1:]}"' in rules)


def test_pl_r15_rule_texts_are_current_and_cover_every_cited_rule() -> None:
    """PL-R15: the shipped texts hold every rule a report can cite, each equal to its
    section in spec/ (make spec-index writes them; tests/test_spec_index.py keeps the file
    current as a whole)."""
    from timealign import reasons

    texts = rule_texts()
    assert set(reasons.cited()) <= set(texts)
    spec = (Path(__file__).resolve().parents[2] / texts["AT-R11"]["file"]).read_text()
    assert f"### AT-R11 {texts['AT-R11']['title']}" in spec
    assert texts["AT-R11"]["markdown"].splitlines()[0] in spec
    assert "Cross-reference" not in texts["AT-R11"]["markdown"]
    page_text = rules_page("approximate_time", ["AT-R11", "XX-R1"])
    assert 'id="at-r11"' in page_text and "no text shipped" in page_text


def test_pl_r15_run_section_reads_as_tables_not_json() -> None:
    """PL-R15: the page opens with the verdict; the Run section shows the command line,
    input, start, duration, versions and the config as a table of fields, never the
    manifest's JSON."""
    manifest = {"format": "timealign.run/1", "command": "run", "files": ["groups"],
                "run": {"algorithm": "approximate_time", "input": "/data/fleet",
                        "input_format": "parquet",
                        "config": {"topics": ["camera", "lidar"], "queue_size": 30}},
                "timealign": {"version": "0.1.0", "build": "compiled"},
                "spark": {"master": "local[2]", "version": "4.3.0"},
                "started": "2026-01-01T10:00:00+00:00", "ended": "2026-01-01T10:03:05+00:00",
                "counts": {"rows": 1000}}
    summary = {**SUMMARY, "verdict": {
        "needs_a_look": False, "items": [],
        "line": "verdict: normal: every outcome is normal for approximate_time"}}
    text = page(Report("approximate_time", summary, [], [], manifest=manifest,
                       command="timealign run approximate_time --input /data/fleet"))
    assert text.index('<p class="verdict') < text.index("<h2>Run</h2>") \
        < text.index("<h2>Summary</h2>")
    run = text[text.index("<h2>Run</h2>"):text.index("<h2>Summary</h2>")]
    assert "timealign run approximate_time --input /data/fleet" in run
    for shown in ("/data/fleet (parquet)", "2026-01-01 10:00:00 UTC", "3 min 05 s",
                  "0.1.0 (compiled)", "4.3.0 on local[2]", ">queue_size<", ">30<",
                  "[&quot;camera&quot;, &quot;lidar&quot;]"):
        assert shown in run, shown
    assert '"format"' not in run and "timealign.run/1" not in run and "counts" not in run


def test_pl_r14_tables_are_sortable_by_inline_script() -> None:
    """PL-R14: many-row tables are sortable; numbers carry their value; one file."""
    text = page(Report("approximate_time", SUMMARY, [_source("a", 3), _source("b", 9)], []))
    assert text.count('<table class="sortable">') == 2  # outcomes and sources
    assert '<td data-sort="20.0">20</td>' in text
    assert "<script>" in text and "src=\"http" not in text and "<link" not in text


def test_pl_r14_one_value_histogram_is_written_plainly() -> None:
    """PL-R14: every group with one value is a sentence, not a degenerate chart; a narrow
    range far from zero has its origin on the axis, no offset notation."""
    one = Histogram("latency", 50_000_000, 1, (7, *([0] * 39)))
    assert single_value(one) == "every one of the 7 groups: 50.000 ms"
    text = page(Report("approximate_time", SUMMARY, [], [one]))
    assert "latency: every one of the 7 groups: 50.000 ms" in text
    assert len(re.findall(r'src="data:image/svg\+xml', text)) == 1  # only the shares
    narrow = Histogram("latency", 50_000_000, 1, (3, 0, 4))
    assert single_value(narrow) is None
    svg = histogram_svg(narrow).decode()
    assert "ns after 50 ms" in svg and "1e" not in svg.split("<text")[-1]  # PL-R19


@pytest.mark.parametrize(("span", "rows", "groups", "window"), [
    (60 * 10**9, 6_000, 3_000, 500_000_000),  # 50 groups/s: 30 groups fit in 0.6 s
    (60 * 10**9, 6_000_000, 3_000, 2_000_000),  # 100 000 rows/s: 400 rows in 4 ms
    (60 * 10**9, 600, 30, 2_000_000_000),  # sparse: at most 2 s
    (0, 1, 1, 2_000_000_000),
    (10**6, 10**6, 10**6, 1_000),  # denser than the smallest window
])
def test_pl_r14_timeline_window_follows_the_density(span: int, rows: int, groups: int,
                                                    window: int) -> None:
    """PL-R14: the largest 1-2-5 window with about 30 groups and at most 400 rows."""
    assert timeline_window(span, rows, groups) == window
    assert window in WINDOWS


def test_pl_r14_given_origin_is_written_on_the_axis() -> None:
    """PL-R14: a timeline with an origin counts from it and says so on the axis."""
    from timealign.plot.draw import Scale, render
    from timealign.plot.timeline import Timeline

    scale = Scale([3 * 10**9, 4 * 10**9], origin=10**9)
    assert scale(3 * 10**9) == 2000.0 and scale.label("event time") == \
        "event time (ms after 1 s)"
    svg = render(Timeline("t", (), (), (), origin=1_500_000_000)).decode()
    assert "after 1.5 s" in svg


def test_pl_r14_timeline_greys_what_is_normal_for_the_algorithm() -> None:
    """PL-R14: in a timeline, ApproximateTime's drops (normal) are light grey, never red;
    the event-time batcher's rejections keep their warm colour; the strip follows."""
    from timealign.plot.draw import NORMAL_COLOUR, OUTCOME_COLOURS, render
    from timealign.plot.timeline import Mark, Timeline

    def svg(algorithm: str, outcome: str) -> str:
        marks = (Mark("m1", "a", 10, 20, outcome, "why"),)
        return render(Timeline("t", ("a",), marks, (), algorithm=algorithm)).decode()

    at = svg("approximate_time", "dropped")
    assert NORMAL_COLOUR in at and OUTCOME_COLOURS["dropped"] not in at
    eb = svg("event_time_batcher", "rejected")
    assert OUTCOME_COLOURS["rejected"] in eb and NORMAL_COLOUR not in eb
    unknown = render(Timeline("t", ("a",), (Mark("m1", "a", 10, 20, "dropped", "x"),),
                              ())).decode()
    assert OUTCOME_COLOURS["dropped"] in unknown  # no algorithm: nothing is known normal


def test_pl_r14_clock_origin_is_written_as_a_date() -> None:
    """PL-R14: an axis origin that is a clock reading reads as a UTC date, not seconds."""
    from timealign.plot.draw import Scale

    origin = 1_767_225_600_270_000_000  # 2026-01-01 00:00:00.27 UTC
    assert Scale([origin, origin + 10**9], origin=origin).label("event time") == \
        "event time (ms after 2026-01-01 00:00:00.27 UTC)"
    assert Scale([0, 10**9], origin=5 * 10**8).label("t") == "t (ms after 500 ms)"  # PL-R19


def test_pl_r15_verdict_opens_the_page_red_when_something_needs_a_look() -> None:
    """PL-R15, SP-R38: the summary's verdict line is the page's first paragraph, marked as
    needing a look when it does."""
    line = "verdict: needs a look: source r1 has no row of topic lidar"
    summary = {**SUMMARY, "verdict": {"needs_a_look": True, "line": line, "items": [line]}}
    text = page(Report("approximate_time", summary, [], []))
    assert f'<p class="verdict look">{line}</p>' in text
    assert text.index('class="verdict') < text.index("<h2>")


def test_pl_r15_config_durations_job_time_and_the_timelines_heading() -> None:
    """PL-R15: the config's durations read as durations (ROS's Duration maximum as "no
    limit"), the job's time in the Run section's one format; PL-R14: the timeline of an
    all-normal run is not headed "worst source"."""
    from timealign.plot.timeline import Timeline

    manifest = {"command": "run", "run": {"config": {
        "topics": ["a"], "queue_size": 3, "max_interval_duration": 2_147_483_647_999_999_999,
        "inter_message_lower_bounds": [0, 5_000_000], "age_penalty": 0.1}}}
    normal = {**SUMMARY, "seconds": 185.2, "verdict": {
        "needs_a_look": False, "items": [], "line": "verdict: normal"}}
    text = page(Report("approximate_time", normal, [], [], manifest=manifest,
                       timeline=Timeline("t", ("a",), (), ()), worst="r7"))
    assert ">no limit<" in text and ">0 s, 5 ms<" in text and ">0.1<" in text
    assert ">job time<" in text and ">3 min 05 s<" in text
    assert "Timeline of the source with the most rows not grouped, r7" in text
    assert "worst source" not in text
    looks = {**normal, "verdict": {"needs_a_look": True, "items": ["x"], "line": "x"}}
    assert "Timeline of the worst source, r7" in page(Report(
        "approximate_time", looks, [], [], timeline=Timeline("t", ("a",), (), ()),
        worst="r7"))


def test_sp_r74_the_report_shows_what_each_batch_waited_and_filled() -> None:
    """SP-R74, PL-R9: the figures table has a row of each batch's wait (ms) and one of its
    fill (% of its window), when the summary has them; none otherwise."""
    summary = {**SUMMARY, "waited_ns": {"p50": 1_040_000_000, "p90": 1_070_000_000,
                                        "p99": 1_089_000_000, "p100": 1_090_000_000},
               "fill_permille": {"p50": 100, "p90": 500, "p99": 590, "p100": 600}}
    text = page(Report("event_time_batcher", summary, [], []))
    assert ">waited (at − newest event time), ms<" in text and ">1,040.000<" in text
    assert ">fill, % of the window<" in text and ">10.0<" in text and ">60.0<" in text
    assert "waited (at" not in page(Report("event_time_batcher", SUMMARY, [], []))


def test_sp_r9_the_event_time_batchers_report_says_its_windows_and_sizes() -> None:
    """SP-R9, PL-R14: rows per group beside spread and latency; the first-arrival anchor
    of the event-time batcher's windows (EB-D2) said under them."""
    summary = {**SUMMARY, "size": {"p50": 3, "p90": 5, "p99": 6, "p100": 6}}
    text = page(Report("event_time_batcher", summary, [], []))
    assert ">rows per group<" in text and "EB-D2" in text
    assert "EB-D2" not in page(Report("approximate_time", summary, [], []))
