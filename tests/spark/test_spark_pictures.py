"""Pictures of a run (spec/plots.md PL-R6, spec/plots.md PL-R9) on the shared session."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from tests.spark.machines import CASES, REAL_CONFIGS
from timealign.cli import main
from timealign.plot.timeline import GROUPED
from timealign.spark.pictures import per_source, source_timeline
from timealign.spark.schema import ColumnMap, read_input

RB = next(c for c in CASES if c.name == "rate_aware_batcher")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--hide-scrollbars")


def test_pl_r6_source_timeline_shows_what_the_run_wrote(
        spark: SparkSession, fleet: Path, batch_output: Any) -> None:
    """PL-R6, PL-R3: the marks are the source's rows in the event-time range, in arrival
    order, with the outcomes and groups of the written tables; the rate-aware batcher's
    slot grid comes from replaying the source."""
    output = batch_output(RB)
    rows = read_input(spark, str(fleet), "parquet", ColumnMap())
    source = sorted(r["source"] for r in rows.select("source").distinct().collect())[0]
    timeline = source_timeline(RB.algorithm, RB.config, rows, str(output), source,
                               500_000_000, 1_500_000_000)
    mine = rows.where(F.col("source") == source)
    earliest = mine.agg(F.min("stamp")).first()
    assert earliest is not None
    first = earliest[0]
    wanted = (mine.where(F.col("stamp").between(first + 500_000_000, first + 1_500_000_000))
              .orderBy("arrival", "order_file", "order_row").collect())
    assert [m.id for m in timeline.marks] == [r["id"] for r in wanted]
    assert [m.stamp for m in timeline.marks] == [r["stamp"] for r in wanted]
    written = {r["id"]: r for r in spark.read.parquet(f"{output}/outcomes")
               .where(F.col("source") == source).collect()}
    for mark in timeline.marks:
        row = written[mark.id]
        assert mark.outcome == row["outcome"]
        if mark.outcome == GROUPED:
            assert timeline.groups[mark.group or 0].seq == row["seq"]
        else:
            assert mark.reason == row["reason"]
    assert timeline.slots and {s.lane for s in timeline.slots} <= {"camera", "lidar"}
    with pytest.raises(ValueError, match="PL-R6"):
        source_timeline(RB.algorithm, RB.config, rows, str(output), "no such source")


def test_pl_r6_plot_command_draws_a_source_of_a_run(
        spark: SparkSession, fleet: Path, batch_output: Any, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """PL-R6, PL-R7: `timealign plot ALGORITHM --run ...` draws one source of the run's
    tables; a folder without the tables or an unknown source exits 2, writing nothing."""
    output = batch_output(RB)
    common = ["plot", "rate_aware_batcher", "--input", str(fleet), "--config",
              json.dumps(REAL_CONFIGS["rate_aware_batcher"]), "--from", "0.5s", "--to", "1s"]
    picture = tmp_path / "rb.svg"
    assert main([*common, "--run", str(output), "--source", "robot-001",
                 "--out", str(picture)]) == 0, capsys.readouterr().err
    svg = picture.read_text(encoding="utf-8")
    assert "source 'robot-001', 0.5–1 s after its first event time" in svg
    assert "slot grid" in svg and "lidar" in svg
    not_a_run = tmp_path / "not-a-run"  # a folder without the tables (not holding --out:
    not_a_run.mkdir()                    # that would be CLI-R4's overlap, checked first)
    for run, source in ((not_a_run, "robot-001"), (output, "nobody")):
        assert main([*common, "--run", str(run), "--source", source,
                     "--out", str(tmp_path / "no.svg")]) == 2
        # PL-R17: an unknown source of a run is refused from its outcomes before Spark
        assert ("PL-R17" if run == output else "PL-R6") in capsys.readouterr().err
    assert not (tmp_path / "no.svg").exists()


def test_pl_r9_report_page(spark: SparkSession, fleet: Path, tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    """PL-R9: `run --report DIR` writes one self-contained page with the summary, the
    shares per reason, both histograms, the sources worst first and the worst source's
    timeline; headless Chromium renders it (skipped with a message without Chromium)."""
    out, report = tmp_path / "out", tmp_path / "report"
    config = json.dumps(REAL_CONFIGS["approximate_time"])
    code = main(["run", "approximate_time", "--input", str(fleet), "--output", str(out),
                 "--config", config, "--report", str(report), "--quiet"])
    assert code == 0, capsys.readouterr().err
    page = (report / "index.html").read_text(encoding="utf-8")
    assert sorted(p.name for p in report.iterdir()) == ["_timealign.json", "index.html",
                                                        "rules.html"]  # CLI-R5, PL-R15
    assert "src=\"http" not in page and "<link" not in page  # self-contained
    # shares, the histograms with several values (one value is a sentence, PL-R14), timeline
    singles = page.count('<p class="single">')
    assert page.count("data:image/svg+xml;base64,") == 4 - singles
    for heading in ("Summary", "Outcomes per reason", "Spread and latency of the groups",
                    "Sources, worst first",
                    "Timeline of the source with the most rows not grouped"):
        assert f"<h2>{heading}" in page
    groups = spark.read.parquet(f"{out}/groups")
    outcomes = spark.read.parquet(f"{out}/outcomes")
    ranked = per_source(groups, outcomes)
    shares = [(r["rows"] - r["grouped"]) / r["rows"] for r in ranked]
    assert shares == sorted(shares, reverse=True) and len(ranked) == 12
    positions = [page.index(f"<td class=\"text\">{r['source']}</td>") for r in ranked]
    assert positions == sorted(positions)
    # PL-R14: an all-normal run (nothing needs a look) is not headed "worst source"
    assert f"Timeline of the source with the most rows not grouped, {ranked[0]['source']}" \
        in page and "worst source" not in page
    for count in outcomes.groupBy("outcome", "reason").count().collect():
        label = count["outcome"] + (f" ({count['reason']})" if count["reason"] else "")
        assert (f"<td class=\"text\">{label}</td><td data-sort=\"{float(count['count'])!r}\">"
                f"{count['count']:,}</td>") in page
        # PL-R14, SP-R31: every ApproximateTime outcome is normal: no row coloured
    assert "needs a look" not in page and '<tr class="bad">' not in page
    # PL-R14: the timeline's window follows the density; its axis counts from the first
    # event time of the source, written on the axis
    timeline = base64.b64decode(page.rsplit("data:image/svg+xml;base64,", 1)[1]
                                .split('"', 1)[0]).decode()
    assert "after its first event time" in timeline
    assert re.search(r"event time \((ns|µs|ms|s) after ([0-9.]+ s|[0-9-]+ [0-9:.]+ UTC)\)",
                     timeline)
    _screenshot(report / "index.html", tmp_path)


def test_pl_r14_report_window_is_where_rows_need_a_look(spark: SparkSession) -> None:
    """PL-R14: the report's timeline window sits on the grid slot (from the first event
    time) holding the most rows whose outcome needs a look, not at the start; with none
    (ApproximateTime's drops are normal), at the start."""
    from timealign.spark.pictures import look_window

    rows = spark.createDataFrame(
        [("s", f"m{k}", 1_000 + 10 * k) for k in range(100)] + [("t", "m0", 5)],
        "source string, id string, stamp long")
    rejected = {f"m{k}" for k in (3, 71, 72, 75, 79)}  # one early, four in [700, 800)
    outcomes = spark.createDataFrame(
        [("s", f"m{k}", "rejected" if f"m{k}" in rejected else "grouped") for k in range(100)]
        + [("t", "m0", "rejected")], "source string, id string, outcome string")
    assert look_window(rows, outcomes, "event_time_batcher", "s", 1_000, 100) == 700
    assert look_window(rows, outcomes, "event_time_batcher", "s", 1_000, 2_000) == 0
    dropped = outcomes.replace("rejected", "dropped", subset=["outcome"])
    assert look_window(rows, dropped, "approximate_time", "s", 1_000, 100) == 0


def _screenshot(page: Path, folder: Path) -> None:
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium); "
                    "the report page was written but not rendered")
    from matplotlib.image import imread

    shot = folder / "report.png"
    subprocess.run([CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={folder / 'chromium'}",
                    "--window-size=1200,2600", f"--screenshot={shot}", page.as_uri()],
                   check=True, capture_output=True, timeout=120)
    pixels = imread(str(shot))
    assert pixels.shape[:2] == (2600, 1200)
    ink = (pixels[:, :, :3].min(axis=2) < 0.5).mean(axis=1)  # share of dark pixels per row
    drawn = ink > 0.002
    # Text and pictures down to the timeline at the bottom of the page, not a blank page.
    assert drawn.sum() > 600 and drawn[1500:].any()
