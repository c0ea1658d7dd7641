"""The run report's page and its folder check (spec/plots.md PL-R9), without Spark."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from timealign.cli import main
from timealign.plot.report import SOURCE_ROWS, Histogram, Report, histogram_svg, page, write

SUMMARY = {
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
