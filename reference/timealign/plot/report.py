"""The run report (PL-R9): one self-contained HTML page, its pictures embedded as SVG.

Pure presentation: the figures come in as data (the summary of SP-R9, per-source rows,
histograms, a timeline) computed by the Spark adapter; nothing here reads a table.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from matplotlib import rc_context
from matplotlib.figure import Figure

from timealign.plot.draw import SETTINGS, render
from timealign.plot.timeline import Timeline

SOURCE_ROWS = 50  # per-source rows listed (worst first)
STYLE = """
body { font-family: 'DejaVu Sans', Verdana, sans-serif; margin: 1.5em 2em; color: #222;
       max-width: 1100px; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th { background: #f0f0f0; } td.text, th.text { text-align: left; }
tr.bad td { background: #fff0f0; }
img { max-width: 100%; }
.row { display: flex; gap: 1em; flex-wrap: wrap; } .row img { width: 48%; min-width: 420px; }
p.note { color: #555; font-size: 0.85em; }
"""


@attrs.frozen
class Histogram:
    """Counts of a quantity (ns) in equal bins ``[low + k·width, low + (k+1)·width)``."""

    title: str
    low: int
    width: int
    counts: tuple[int, ...]


@attrs.frozen
class Report:
    """Everything the page shows."""

    algorithm: str
    summary: Mapping[str, Any]
    sources: Sequence[Mapping[str, Any]]
    histograms: Sequence[Histogram]
    timeline: Timeline | None = None
    worst: str | None = None


def _ms(value: int | None) -> str:
    return "–" if value is None else f"{value / 1e6:,.3f}"


def _svg(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def _image(data: bytes, alt: str) -> str:
    encoded = base64.b64encode(data).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/svg+xml;base64,{encoded}">'


def histogram_svg(histogram: Histogram) -> bytes:
    """A bar chart of the histogram in ms, log count axis."""
    with rc_context(SETTINGS):
        fig = Figure(figsize=(5.2, 2.8), layout="constrained")
        ax = fig.add_subplot()
        lefts = [(histogram.low + k * histogram.width) / 1e6 for k in range(len(histogram.counts))]
        ax.bar(lefts, histogram.counts, width=histogram.width / 1e6, align="edge",
               color="#1f77b4", edgecolor="white", linewidth=0.3)
        if any(histogram.counts):
            ax.set_yscale("log")
        ax.set_title(histogram.title, loc="left")
        ax.set_xlabel("ms")
        ax.set_ylabel("groups")
        ax.grid(axis="y", color="#eeeeee", linewidth=0.6)
        ax.set_axisbelow(True)
        return _svg(fig)


def shares_svg(outcomes: Sequence[Mapping[str, Any]], rows: int) -> bytes:
    """Horizontal bars: the share of rows per (outcome, reason)."""
    with rc_context(SETTINGS):
        fig = Figure(figsize=(7.0, 0.9 + 0.32 * max(len(outcomes), 1)), layout="constrained")
        ax = fig.add_subplot()
        labels = [_outcome_label(c) for c in outcomes]
        shares = [100 * c["rows"] / rows if rows else 0.0 for c in outcomes]
        colours = ["#2ca02c" if c["outcome"] == "grouped" else "#d62728"
                   if c["outcome"] == "dropped" else "#9467bd"
                   if c["outcome"] == "rejected" else "#7f7f7f" for c in outcomes]
        positions = list(range(len(labels)))[::-1]
        ax.barh(positions, shares, color=colours)
        ax.set_yticks(positions, labels)
        for y, share in zip(positions, shares, strict=True):
            ax.annotate(f"{share:.2f} %", (share, y), xytext=(3, 0), textcoords="offset points",
                        va="center", fontsize=8)
        ax.set_xlim(0, 115)
        ax.set_xlabel("share of rows (%)")
        return _svg(fig)


def _outcome_label(count: Mapping[str, Any]) -> str:
    return f"{count['outcome']} ({count['reason']})" if count["reason"] else count["outcome"]


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], text_columns: int = 1,
           bad: Sequence[bool] = ()) -> str:
    def cell(tag: str, k: int, value: str) -> str:
        kind = ' class="text"' if k < text_columns else ""
        return f"<{tag}{kind}>{html.escape(value)}</{tag}>"

    lines = ["<table><tr>" + "".join(cell("th", k, h) for k, h in enumerate(head)) + "</tr>"]
    for position, row in enumerate(rows):
        marked = ' class="bad"' if position < len(bad) and bad[position] else ""
        lines.append(f"<tr{marked}>" + "".join(cell("td", k, v) for k, v in enumerate(row))
                     + "</tr>")
    return "\n".join(lines) + "</table>"


def page(report: Report) -> str:
    """The HTML text of the report."""
    summary = report.summary
    rows = int(summary["rows"])
    parts = [f"<h1>timealign run: {html.escape(report.algorithm)}</h1>", "<h2>Summary</h2>"]
    facts = [("rows", f"{rows:,}"), ("sources", f"{summary['sources']:,}"),
             ("groups", f"{summary['groups']:,}")]
    if summary.get("seconds") is not None:
        facts.append(("seconds", f"{summary['seconds']:,}"))
    if summary.get("rows_per_second") is not None:
        facts.append(("rows per second", f"{summary['rows_per_second']:,}"))
    parts.append(_table(["figure", "value"], facts))
    levels = list(summary["spread_ns"])
    parts.append("<p></p>" + _table(
        ["ms", *levels],
        [["spread (end − start)", *(_ms(summary["spread_ns"][k]) for k in levels)],
         ["latency (at − end)", *(_ms(summary["latency_ns"][k]) for k in levels)]]))
    parts.append("<h2>Outcomes per reason</h2>")
    parts.append(_table(["outcome", "rows", "share"], [
        [_outcome_label(c), f"{c['rows']:,}", f"{100 * c['rows'] / rows:.3f} %" if rows else "–"]
        for c in summary["outcomes"]]))
    parts.append(_image(shares_svg(summary["outcomes"], rows), "outcome shares"))
    parts.append("<h2>Spread and latency of the groups</h2><div class=\"row\">")
    parts.extend(_image(histogram_svg(h), h.title) for h in report.histograms)
    parts.append("</div>")
    parts.append(_sources(report.sources))
    if report.timeline is not None:
        parts.append(f"<h2>Timeline of the worst source, {html.escape(str(report.worst))!s}"
                     "</h2>")
        parts.append(_image(render(report.timeline), "timeline of the worst source"))
    body = "\n".join(parts)
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>timealign run: {html.escape(report.algorithm)}</title>"
            f"<style>{STYLE}</style></head>\n<body>\n{body}\n</body></html>\n")


def _sources(sources: Sequence[Mapping[str, Any]]) -> str:
    shown = sources[:SOURCE_ROWS]
    head = ["source", "rows", "grouped", "dropped", "rejected", "pending", "not grouped",
            "groups", "p99 latency (ms)", "max spread (ms)"]
    rows = [[str(s["source"]), f"{s['rows']:,}", f"{s['grouped']:,}", f"{s['dropped']:,}",
             f"{s['rejected']:,}", f"{s['pending']:,}",
             f"{100 * (s['rows'] - s['grouped']) / s['rows']:.2f} %", f"{s['groups']:,}",
             _ms(s["latency_p99_ns"]), _ms(s["spread_max_ns"])] for s in shown]
    bad = [s["rows"] != s["grouped"] for s in shown]
    text = "<h2>Sources, worst first</h2>" + _table(head, rows, 1, bad)
    if len(sources) > len(shown):
        text += f"<p class=\"note\">{len(sources) - len(shown):,} more sources not listed.</p>"
    return text


def write(report: Report, directory: str | Path) -> Path:
    """Write ``directory/index.html`` (the folder is created if needed); return its path."""
    folder = Path(directory)
    text = page(report)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "index.html"
    target.write_text(text, encoding="utf-8")
    return target
