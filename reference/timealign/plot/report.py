"""The run report (PL-R9, PL-R14): one self-contained HTML page, its pictures embedded as
SVG, its tables sortable by a few lines of inline script.

Pure presentation: the figures come in as data (the summary of SP-R9, per-source rows,
histograms, a timeline, the run's manifest) computed by the Spark adapter; nothing here
reads a table. What is normal for the algorithm comes from :mod:`timealign.reasons`.
"""

from __future__ import annotations

import base64
import datetime
import html
import io
import json
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import attrs
import markdown
from matplotlib import rc_context
from matplotlib.figure import Figure

from timealign import reasons
from timealign.plot.draw import SETTINGS, Scale, render
from timealign.plot.timeline import Timeline
from timealign.progress import permille_text
from timealign.timetext import duration_text

SOURCE_ROWS = 50  # per-source rows listed (worst first)
STYLE = """
body { font-family: 'DejaVu Sans', Verdana, sans-serif; margin: 1.5em 2em; color: #222;
       max-width: 1100px; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th { background: #f0f0f0; } td.text, th.text { text-align: left; }
tr.bad td { background: #fff0f0; }
table.sortable th { cursor: pointer; } table.sortable th::after { content: " ⇅"; color: #aaa; }
img { max-width: 100%; }
p.warning { background: #fff4d6; border-left: 4px solid #e0a000; padding: 0.3em 0.6em; }
.row { display: flex; gap: 1em; flex-wrap: wrap; } .row img { width: 48%; min-width: 420px; }
p.note { color: #555; font-size: 0.85em; }
p.verdict { font-size: 1.05em; font-weight: bold; padding: 0.4em 0.7em; border-radius: 3px; }
p.verdict.ok { background: #eef8ee; border-left: 4px solid #2ca02c; }
p.verdict.look { background: #fff0f0; border-left: 4px solid #d62728; }
code.command { display: block; white-space: pre-wrap; word-break: break-all;
               background: #f6f6f6; padding: 0.4em 0.6em; font-size: 0.85em; }
section.rule { border-top: 1px solid #ddd; margin-top: 1.2em; }
"""
#: The file beside ``index.html`` holding the text of every rule the page cites (PL-R15).
RULES_PAGE = "rules.html"
# Click a header to sort its table by that column (numbers by their data-sort value);
# a second click reverses the order.
SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, column) {
    th.addEventListener("click", function () {
      var rows = Array.prototype.slice.call(table.querySelectorAll("tr")).slice(1);
      var up = th.getAttribute("data-order") !== "up";
      table.querySelectorAll("th").forEach(function (o) { o.removeAttribute("data-order"); });
      th.setAttribute("data-order", up ? "up" : "down");
      function key(row) {
        var cell = row.children[column];
        var number = cell.getAttribute("data-sort");
        return number === null ? cell.textContent : parseFloat(number);
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        var order = (typeof x === "number" && typeof y === "number") ? x - y
          : String(x).localeCompare(String(y));
        return up ? order : -order;
      });
      rows.forEach(function (row) { row.parentNode.appendChild(row); });
    });
  });
});
"""
#: Timeline windows the report chooses from (ns): about WINDOW_GROUPS groups shown.
WINDOWS: tuple[int, ...] = tuple(k * 10**e for e in range(3, 10) for k in (1, 2, 5)
                                 if k * 10**e <= 2 * 10**9)
WINDOW_GROUPS = 30
WINDOW_ROWS = 400


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
    manifest: Mapping[str, Any] | None = None
    warnings: Sequence[str] = ()
    #: The command line that reproduces the run (from its manifest, SP-R32).
    command: str | None = None


def _ms(value: int | None) -> str:
    return "–" if value is None else f"{value / 1e6:,.3f}"


def _count(value: int | None) -> str:
    return "–" if value is None else f"{value:,}"


def _svg(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def _image(data: bytes, alt: str) -> str:
    encoded = base64.b64encode(data).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/svg+xml;base64,{encoded}">'


def single_value(histogram: Histogram) -> str | None:
    """The one value every counted item has, as text, or ``None`` when there are several
    (PL-R14: a histogram of one value is a statement, not a chart)."""
    filled = [k for k, count in enumerate(histogram.counts) if count]
    if len(filled) != 1 or histogram.width != 1:
        return None
    value = histogram.low + filled[0]
    return f"every one of the {histogram.counts[filled[0]]:,} groups: {_ms(value)} ms"


def histogram_svg(histogram: Histogram) -> bytes:
    """A bar chart of the histogram, log count axis, in a unit that suits its range (an
    origin written on the axis when the range is narrow for its values, PL-R14)."""
    with rc_context(SETTINGS):
        fig = Figure(figsize=(5.2, 2.8), layout="constrained")
        ax = fig.add_subplot()
        high = histogram.low + len(histogram.counts) * histogram.width
        scale = Scale([histogram.low, high])
        lefts = [scale(histogram.low + k * histogram.width) for k in range(len(histogram.counts))]
        ax.bar(lefts, histogram.counts, width=histogram.width / scale.factor, align="edge",
               color="#1f77b4", edgecolor="white", linewidth=0.3)
        if any(histogram.counts):
            ax.set_yscale("log")
        ax.ticklabel_format(axis="x", useOffset=False, style="plain")
        ax.set_title(histogram.title, loc="left")
        ax.set_xlabel(scale.label("value"))
        ax.set_ylabel("groups")
        ax.grid(axis="y", color="#eeeeee", linewidth=0.6)
        ax.set_axisbelow(True)
        return _svg(fig)


GROUPED, NORMAL, LOOK = "#2ca02c", "#7f7f7f", "#d62728"  # the share bars' colours (PL-R14)


def share_colour(algorithm: str, outcome: str) -> str:
    """A share bar's colour by the page's one rule (PL-R14, SP-R31): red only for an
    outcome that needs a look; grouped green, any other outcome normal for the algorithm
    grey (ApproximateTime drops as a matter of course)."""
    if not reasons.normal(algorithm, outcome):
        return LOOK
    return GROUPED if outcome == "grouped" else NORMAL


def shares_svg(outcomes: Sequence[Mapping[str, Any]], rows: int, algorithm: str) -> bytes:
    """Horizontal bars: the share of rows per (outcome, reason), red where it needs a look."""
    with rc_context(SETTINGS):
        fig = Figure(figsize=(7.0, 0.9 + 0.32 * max(len(outcomes), 1)), layout="constrained")
        ax = fig.add_subplot()
        labels = [_outcome_label(c) for c in outcomes]
        shares = [100 * c["rows"] / rows if rows else 0.0 for c in outcomes]
        colours = [share_colour(algorithm, c["outcome"]) for c in outcomes]
        positions = list(range(len(labels)))[::-1]
        ax.barh(positions, shares, color=colours)
        ax.set_yticks(positions, labels)
        for y, share in zip(positions, shares, strict=True):
            ax.annotate(f"{share:.2f} %", (share, y), xytext=(3, 0), textcoords="offset points",
                        va="center", fontsize=8)
        ax.set_xlim(0, 115)
        ax.set_xlabel("share of rows (%)" + ("; red: needs a look" if LOOK in colours else ""))
        return _svg(fig)


def _outcome_label(count: Mapping[str, Any]) -> str:
    return f"{count['outcome']} ({count['reason']})" if count["reason"] else count["outcome"]


@attrs.frozen
class Cell:
    """A table cell: its text, a sort key when it is a number, a link, a tooltip."""

    text: str
    sort: float | None = None
    link: str | None = None
    title: str | None = None


def _number(value: int | float | None, text: str | None = None) -> Cell:
    shown = text if text is not None else "–" if value is None else f"{value:,}"
    return Cell(shown, None if value is None else float(value))


def _table(head: Sequence[str], rows: Sequence[Sequence[str | Cell]], text_columns: int = 1,
           bad: Sequence[bool] = (), sortable: bool = True) -> str:
    def cell(tag: str, k: int, value: str | Cell) -> str:
        item = value if isinstance(value, Cell) else Cell(value)
        attributes = ' class="text"' if k < text_columns else ""
        if item.sort is not None:
            attributes += f' data-sort="{item.sort!r}"'
        if item.title is not None:
            attributes += f' title="{html.escape(item.title)}"'
        text = html.escape(item.text)
        if item.link is not None:
            text = f'<a href="{html.escape(item.link)}">{text}</a>'
        return f"<{tag}{attributes}>{text}</{tag}>"

    kind = ' class="sortable"' if sortable else ""
    lines = [f"<table{kind}><tr>" + "".join(cell("th", k, h) for k, h in enumerate(head))
             + "</tr>"]
    for position, row in enumerate(rows):
        marked = ' class="bad"' if position < len(bad) and bad[position] else ""
        lines.append(f"<tr{marked}>" + "".join(cell("td", k, v) for k, v in enumerate(row))
                     + "</tr>")
    return "\n".join(lines) + "</table>"


def rule_texts() -> dict[str, dict[str, str]]:
    """The spec sections a report can cite, shipped with the package (PL-R15; written by
    ``make spec-index`` from ``spec/``): id -> title, spec file, Markdown."""
    text = resources.files("timealign.plot").joinpath("rule_texts.json").read_text("utf-8")
    loaded: dict[str, dict[str, str]] = json.loads(text)
    return loaded


def _rule_cells(algorithm: str, outcome: str, reason: str | None) -> list[Cell]:
    """The rules behind an outcome, each linked to its text in :data:`RULES_PAGE` beside
    the page (PL-R15), so the links work wherever the folder is copied."""
    return [Cell(rule, link=f"{RULES_PAGE}#{rule.lower()}", title=_rule_title(rule))
            for rule in reasons.rules(algorithm, outcome, reason)]


def _rule_title(rule: str) -> str | None:
    entry = rule_texts().get(rule)
    return None if entry is None else entry["title"]


def cited_rules(report: Report) -> tuple[str, ...]:
    """The rule ids the page links to, in first-cited order."""
    found: dict[str, None] = {}
    for c in report.summary["outcomes"]:
        for rule in reasons.rules(report.algorithm, c["outcome"], c["reason"]):
            found.setdefault(rule)
    return tuple(found)


_LINK = re.compile(r'<a href="([^"]*)">(.*?)</a>', re.DOTALL)


def rules_page(algorithm: str, rules: Sequence[str]) -> str:
    """The HTML text of :data:`RULES_PAGE`: each cited rule's spec section rendered from its
    Markdown, anchored by its id in lower case (PL-R15). A link of a section to a rule on
    this page points at its anchor; any other link (spec files that are not shipped) is
    left as its text, so nothing on the page is dead."""
    texts = rule_texts()
    anchors = {rule.lower() for rule in rules}
    parts = [f"<h1>Rules cited by the report ({html.escape(algorithm)})</h1>",
             '<p class="note">Sections of the timealign specification, as shipped with the '
             'package that wrote the report. <a href="index.html">Back to the report</a>.</p>']
    for rule in rules:
        entry = texts.get(rule)
        if entry is None:
            parts.append(f'<section class="rule" id="{rule.lower()}"><h2>{html.escape(rule)}'
                         "</h2><p>(no text shipped for this rule)</p></section>")
            continue
        body = markdown.markdown(entry["markdown"], extensions=["tables"])

        def relink(match: re.Match[str]) -> str:
            target = match.group(1).rsplit("#", 1)[-1]
            cited = next((a for a in anchors if target == a or target.startswith(a + "-")),
                         None)
            return match.group(2) if cited is None else f'<a href="#{cited}">{match.group(2)}</a>'

        parts.append(f'<section class="rule" id="{rule.lower()}"><h2>{html.escape(rule)} '
                     f'{html.escape(entry["title"])}</h2>\n{_LINK.sub(relink, body)}\n'
                     f'<p class="note">{html.escape(entry["file"])}</p></section>')
    return _html_page(f"timealign rules: {algorithm}", "\n".join(parts), script=False)


def _html_page(title: str, body: str, script: bool = True) -> str:
    tail = f"<script>{SCRIPT}</script>\n" if script else ""
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head>\n<body>\n{body}\n{tail}</body></html>\n")


def _outcomes(algorithm: str, outcomes: Sequence[Mapping[str, Any]], rows: int) -> str:
    """The rows per (outcome, reason): share, rule, and whether it is normal (PL-R14)."""
    lines = []
    for c in outcomes:
        normal = reasons.normal(algorithm, c["outcome"])
        rules = _rule_cells(algorithm, c["outcome"], c["reason"])
        why = reasons.NORMAL.get(algorithm, {}).get(c["outcome"])
        lines.append([
            Cell(_outcome_label(c)), _number(c["rows"]),
            _number(100 * c["rows"] / rows if rows else None,
                    f"{100 * c['rows'] / rows:.3f} %" if rows else "–"),
            Cell("normal" if normal else "needs a look", title=why),
            *(rules[:1] or [Cell("–")])])
        lines[-1].extend(rules[1:2] or [Cell("")])
    bad = [not reasons.normal(algorithm, c["outcome"]) for c in outcomes]
    return _table(["outcome", "rows", "share", "for this algorithm", "rule", "see also"],
                  lines, 1, bad)


def _when(text: Any) -> datetime.datetime | None:
    try:
        return datetime.datetime.fromisoformat(text) if isinstance(text, str) else None
    except ValueError:
        return None


def _duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min``."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, rest = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


#: PL-R15: config fields holding durations, by how their names end: in ns, or in seconds.
_NS_FIELDS = ("_duration", "_window", "_delay", "_limit", "_bounds")
_SECONDS_FIELDS = ("_s",)


def _config_value(name: str, value: Any) -> str:
    """A config field's value as the report shows it (PL-R15): durations as durations
    (``100 ms``, ``no limit``), a list of them item by item, anything else as JSON."""
    def one(item: Any) -> str:
        if isinstance(item, bool) or (not isinstance(item, int | float) and item is not None):
            return _value(item)
        if name.endswith(_SECONDS_FIELDS):
            return "no limit" if item is None else f"{item:g} s"
        if isinstance(item, int) and name.endswith(_NS_FIELDS):
            return duration_text(item)
        return _value(item)

    if isinstance(value, list) and name.endswith(_NS_FIELDS):
        return ", ".join(one(item) for item in value)
    return one(value)


def _run(report: Report) -> str:
    """The Run section (PL-R15): what was run, by whom and how long, read as prose and
    tables: the command line, the input, when and how long, the versions, and the config
    as a table of its fields; the manifest's raw JSON stays in the output folder."""
    manifest = report.manifest or {}
    parts = ["<h2>Run</h2>"]
    if report.command is not None:
        parts.append(f'<code class="command">{html.escape(report.command)}</code>')
    facts: list[list[str]] = []
    run = manifest.get("run") if isinstance(manifest.get("run"), Mapping) else {}
    assert isinstance(run, Mapping)
    if run.get("input") is not None:
        facts.append(["input", f"{run['input']} ({run.get('input_format', 'parquet')})"])
    started, ended = _when(manifest.get("started")), _when(manifest.get("ended"))
    if started is not None:
        facts.append(["started", started.strftime("%Y-%m-%d %H:%M:%S UTC")])
    if started is not None and ended is not None:
        facts.append(["duration", _duration((ended - started).total_seconds())])
    version = manifest.get("timealign")
    if isinstance(version, Mapping):
        facts.append(["timealign", f"{version.get('version')} ({version.get('build')})"])
    spark = manifest.get("spark")
    if isinstance(spark, Mapping):
        facts.append(["Spark", f"{spark.get('version')} on {spark.get('master')}"])
    if facts:
        parts.append(_table(["what", "value"], facts, 2, sortable=False))
    config = run.get("config")
    if isinstance(config, Mapping) and config:
        parts.append("<h3>Config</h3>")
        parts.append(_table(["field", "value"], [[str(k), _config_value(str(k), v)]
                                                 for k, v in config.items()], 2,
                            sortable=False))
    return "\n".join(parts)


def _verdict(summary: Mapping[str, Any]) -> str:
    """The one-line verdict first on the page (PL-R15): the summary's own (SP-R38), green
    when every outcome is normal, red with what needs a look otherwise."""
    verdict = summary.get("verdict")
    if not isinstance(verdict, Mapping) or not isinstance(verdict.get("line"), str):
        return ""
    kind = "look" if verdict.get("needs_a_look") else "ok"
    return f'<p class="verdict {kind}">{html.escape(verdict["line"])}</p>'


def page(report: Report) -> str:
    """The HTML text of the report."""
    summary = report.summary
    algorithm = report.algorithm
    rows = int(summary["rows"])
    # PL-R15: the command that wrote the run (``run`` or ``stream``), from its manifest
    command = str((report.manifest or {}).get("command", "run"))
    title = f"timealign {command}: {algorithm}"
    parts = [f"<h1>{html.escape(title)}</h1>", _verdict(summary)]
    parts.extend(f'<p class="warning">{html.escape(w)}</p>' for w in report.warnings)
    if report.manifest is not None or report.command is not None:
        parts.append(_run(report))
    parts.append("<h2>Summary</h2>")
    facts = [("rows", f"{rows:,}"), ("sources", f"{summary['sources']:,}"),
             ("groups", f"{summary['groups']:,}")]
    if summary.get("seconds") is not None:  # one format with the Run section's duration
        facts.append(("job time", _duration(float(summary["seconds"]))))
    if summary.get("rows_per_second") is not None:
        facts.append(("rows per second", f"{summary['rows_per_second']:,}"))
    parts.append(_table(["figure", "value"], facts, sortable=False))
    levels = list(summary["spread_ns"])
    figures = [["spread (end − start), ms", *(_ms(summary["spread_ns"][k]) for k in levels)],
               ["latency (at − end), ms", *(_ms(summary["latency_ns"][k]) for k in levels)]]
    if summary.get("size"):  # SP-R9: rows per group, what varies
        figures.append(["rows per group", *(_count(summary["size"].get(k)) for k in levels)])
    if summary.get("waited_ns"):  # SP-R74: what each batch waited and filled
        figures.append(["waited (at − newest event time), ms",
                        *(_ms(summary["waited_ns"].get(k)) for k in levels)])
        figures.append(["fill, % of the window",
                        *(permille_text(summary["fill_permille"].get(k)) for k in levels)])
    parts.append("<p></p>" + _table(["", *levels], figures, sortable=False))
    if algorithm in reasons.ANCHORS:  # SP-R9, PL-R14: where the groups come from
        parts.append(f'<p class="note">{html.escape(reasons.ANCHORS[algorithm])}</p>')
    parts.append("<h2>Outcomes per reason</h2>")
    parts.append(_outcomes(algorithm, summary["outcomes"], rows))
    parts.append(_image(shares_svg(summary["outcomes"], rows, algorithm), "outcome shares"))
    parts.append("<h2>Spread and latency of the groups</h2><div class=\"row\">")
    for h in report.histograms:
        one = single_value(h)
        parts.append(f'<p class="single">{html.escape(h.title)}: {html.escape(one)}</p>'
                     if one is not None else _image(histogram_svg(h), h.title))
    parts.append("</div>")
    parts.append(_sources(algorithm, report.sources))
    if report.timeline is not None:
        # PL-R14: "worst" only where something needs a look (SP-R38)
        looks = isinstance(summary.get("verdict"), Mapping) and summary["verdict"].get(
            "needs_a_look")
        which = "the worst source" if looks else "the source with the most rows not grouped"
        parts.append(f"<h2>Timeline of {which}, {html.escape(str(report.worst))!s}</h2>")
        parts.append(_image(render(report.timeline), f"timeline of {which}"))
    return _html_page(title, "\n".join(p for p in parts if p))


def _sources(algorithm: str, sources: Sequence[Mapping[str, Any]]) -> str:
    shown = sources[:SOURCE_ROWS]
    head = ["source", "rows", "grouped", "dropped", "rejected", "pending", "not grouped",
            "groups", "p99 latency (ms)", "max spread (ms)"]
    rows = [[Cell(str(s["source"])), _number(s["rows"]), _number(s["grouped"]),
             _number(s["dropped"]), _number(s["rejected"]), _number(s["pending"]),
             _number(100 * (s["rows"] - s["grouped"]) / s["rows"],
                     f"{100 * (s['rows'] - s['grouped']) / s['rows']:.2f} %"),
             _number(s["groups"]), _number(s["latency_p99_ns"], _ms(s["latency_p99_ns"])),
             _number(s["spread_max_ns"], _ms(s["spread_max_ns"]))] for s in shown]
    # PL-R14: only outcomes that are not normal for the algorithm mark a row
    bad = [any(s[kind] and not reasons.normal(algorithm, kind)
               for kind in ("dropped", "rejected", "pending")) for s in shown]
    text = "<h2>Sources, worst first</h2>" + _table(head, rows, 1, bad)
    if len(sources) > len(shown):
        text += f"<p class=\"note\">{len(sources) - len(shown):,} more sources not listed.</p>"
    return text


def timeline_window(span: int, rows: int, groups: int) -> int:
    """The event-time window of the report's timeline (PL-R14): the largest of
    :data:`WINDOWS` that holds about :data:`WINDOW_GROUPS` groups and at most
    :data:`WINDOW_ROWS` rows at the source's mean density; 2 s at most."""
    if span <= 0:
        return WINDOWS[-1]
    fits = [w for w in WINDOWS
            if w * groups <= WINDOW_GROUPS * span and w * rows <= WINDOW_ROWS * span]
    return fits[-1] if fits else WINDOWS[0]


def write(report: Report, directory: str | Path) -> Path:
    """Write ``directory/index.html`` and the cited rules beside it, ``rules.html`` (the
    folder is created if needed); return the page's path."""
    folder = Path(directory)
    text = page(report)
    rules = rules_page(report.algorithm, cited_rules(report))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RULES_PAGE).write_text(rules, encoding="utf-8")
    target = folder / "index.html"
    target.write_text(text, encoding="utf-8")
    return target
