"""The end-of-run summary (SP-R9): outcome counts, groups, spread and latency percentiles.

Computed by Spark from the written tables, so it describes exactly what a reader gets.
Spread is ``end - start`` of a group; latency is ``at - end``, the time from the newest
member's stamp to the arrival of the input that emitted the group (groups emitted by the
end of input have no ``at`` and are left out of the latency figures).
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from timealign import reasons
from timealign.progress import counted, permille_text

PERCENTILES: tuple[float, ...] = (0.5, 0.9, 0.99, 1.0)


def summarize(groups: DataFrame, outcomes: DataFrame,
              rows: DataFrame | None = None) -> dict[str, Any]:
    """Counts and percentiles as a JSON-ready dict; given the input ``rows`` (an algorithm
    whose groups are windows, :data:`timealign.reasons.ANCHORS`), also what each batch
    actually waited and how much of its window it filled (:func:`member_figures`)."""
    by_kind = outcomes.groupBy("outcome", "reason").count().collect()
    counts = sorted(
        ({"outcome": r["outcome"], "reason": r["reason"], "rows": int(r["count"])}
         for r in by_kind),
        key=lambda c: (-c["rows"], c["outcome"], c["reason"] or ""),
    )
    levels = list(PERCENTILES)
    figures = groups.select(
        F.count(F.lit(1)).alias("groups"),
        F.percentile(F.col("end") - F.col("start"), F.array(*map(F.lit, levels))).alias("s"),
        F.percentile(F.col("at") - F.col("end"), F.array(*map(F.lit, levels))).alias("l"),
        F.percentile(F.size("ids"), F.array(*map(F.lit, levels))).alias("n"),
    ).first()
    sources = outcomes.select(F.countDistinct("source")).first()
    def named(values: list[float] | None) -> dict[str, int | None]:
        values = values or [None] * len(levels)  # type: ignore[list-item]
        return {f"p{round(q * 100)}": None if v is None else int(v)
                for q, v in zip(levels, values, strict=True)}

    members = {} if rows is None else member_figures(groups, outcomes, rows, levels, named)
    return {
        "rows": sum(c["rows"] for c in counts),
        "sources": int(sources[0]) if sources else 0,
        "groups": int(figures["groups"]) if figures else 0,
        "outcomes": counts,
        "spread_ns": named(figures["s"] if figures else None),
        "latency_ns": named(figures["l"] if figures else None),
        "size": named(figures["n"] if figures else None),  # rows per group: what varies
        **members,
    }


def member_figures(groups: DataFrame, outcomes: DataFrame, rows: DataFrame,
                   levels: list[float], named: Any) -> dict[str, Any]:
    """SP-R74: per group, from its members' event times (``stamp``) in the input ``rows``:
    ``waited_ns``, the time from its newest member's event time to its emission (``at``;
    groups settled by the end of input have none), and ``fill_permille``, the share of the
    group's window (``end - start``) its members' event times span, in thousandths (integer
    arithmetic; a window of no width is full); their percentiles as ``summarize`` gives
    them. For the event-time batcher, whose ``start``, ``end`` are the window and whose
    ``at - end`` is the configured delay, these are what vary from batch to batch."""
    members = outcomes.where(F.col("outcome") == "grouped").select("source", "id", "seq")
    spans = members.join(rows.select("source", "id", "stamp"), ["source", "id"]) \
        .groupBy("source", "seq").agg(F.max("stamp").alias("newest"),
                                      F.min("stamp").alias("oldest"))
    width = F.col("end") - F.col("start")
    fill = F.when(width > 0, F.expr("div((newest - oldest) * 1000, `end` - `start`)")) \
        .otherwise(F.lit(1000))
    figures = groups.select("source", "seq", "start", "end", "at").join(
        spans, ["source", "seq"]).select(
        F.percentile(F.col("at") - F.col("newest"), F.array(*map(F.lit, levels))).alias("w"),
        F.percentile(fill, F.array(*map(F.lit, levels))).alias("f")).first()
    return {"waited_ns": named(figures["w"] if figures else None),
            "fill_permille": named(figures["f"] if figures else None)}


def with_held(summary: dict[str, Any], held: int) -> dict[str, Any]:
    """A stream's summary accounting for every row it read (SP-R33, SP-D1): the ``rows``
    its tables settled plus the ``held`` rows a machine still holds (pending: no outcome
    until later rows or ticks settle them) make the rows ``read``."""
    return {**summary, "read": summary["rows"] + held, "held": held}


def verdict(summary: dict[str, Any], algorithm: str) -> dict[str, Any]:
    """SP-R38: whether the run needs a look, and why, as one line: an outcome that is not
    normal for the algorithm (SP-R31), no group at all from rows, a source without rows of
    a configured topic, a configured topic in no bag (BAG-R13), a skipped bag (BAG-R6).
    ``{"needs_a_look": bool, "line": str, "items": [str, ...]}``, the summary's first entry
    (console, ``--summary``, the report), and what ``--fail-on needs-a-look`` reads."""
    items: list[str] = []
    rows = summary.get("read", summary["rows"])
    look = [c for c in summary["outcomes"] if not reasons.normal(algorithm, c["outcome"])]
    if look:
        share = sum(c["rows"] for c in look) / rows if rows else 0.0
        named = ", ".join(f"{c['outcome']}" + (f" ({c['reason']})" if c["reason"] else "")
                          for c in look)
        items.append(f"{named}: {share:.1%} of the rows")
    if rows and not summary["groups"]:
        items.append(f"no group at all from {rows} rows")
    missing = summary.get("missing_topics")
    if missing:
        shown = "; ".join(f"{e['source'] or '(no source)'}: {', '.join(e['topics'])}"
                          for e in missing["examples"][:3])
        more = " …" if missing["sources"] > 3 else ""
        items.append(f"{counted(missing['sources'], 'source')} without rows of a configured "
                     f"topic ({shown}{more})")
    items += [str(w) for w in summary.get("warnings", [])]
    skipped = summary.get("skipped_bags", [])
    if skipped:
        items.append(f"{counted(len(skipped), 'bag')} skipped as unreadable")
    line = (f"verdict: needs a look: {'; '.join(items)}" if items else
            f"verdict: normal: every outcome is normal for {algorithm}, "
            f"{counted(summary['groups'], 'group')}")
    return {"needs_a_look": bool(items), "line": line, "items": items}


def with_late_files(summary: dict[str, Any], late: list[dict[str, Any]]) -> dict[str, Any]:
    """A stream's summary naming the files whose rows it rejected as late (SP-R56): per
    file and source, the rows, the earliest of their arrivals and the arrival of the
    source's last row taken before them (most rows first)."""
    if not late:
        return summary
    ordered = sorted(late, key=lambda f: (-f["rows"], f["file"], f["source"]))
    return {**summary, "late_files": ordered}


def with_verdict(summary: dict[str, Any], algorithm: str) -> dict[str, Any]:
    """``summary`` with its :func:`verdict` as the first entry (SP-R38)."""
    rest = {key: value for key, value in summary.items() if key != "verdict"}
    return {"verdict": verdict(rest, algorithm), **rest}


def format_summary(summary: dict[str, Any], algorithm: str | None = None) -> str:
    """The human-readable form printed at the end of a run; given the algorithm, each
    outcome says whether it is normal for it and a last line names what needs a look
    (SP-R31). A stream's summary (:func:`with_held`) says how the rows read divide into
    settled and held, and shows the held rows as pending (SP-R33)."""
    counts = list(summary["outcomes"])
    total = summary["rows"]
    first = [] if algorithm is None else [verdict(summary, algorithm)["line"]]  # SP-R38
    if "held" in summary:
        total = summary["read"]
        counts.append({"outcome": "pending", "reason": "held", "rows": summary["held"]})
        lines = [f"rows {total} read = {summary['rows']} settled + {summary['held']} held "
                 "(pending: still held by the machines, by their rules; no outcome yet)  "
                 f"sources {summary['sources']}  groups {summary['groups']}"]
    else:
        lines = [f"rows {summary['rows']}  sources {summary['sources']}  "
                 f"groups {summary['groups']}"]
    look: list[str] = []
    for count in counts:
        share = count["rows"] / total if total else 0.0
        reason = f" ({count['reason']})" if count["reason"] else ""
        note = ""
        if algorithm is not None:
            normal = reasons.normal(algorithm, count["outcome"])
            note = "  normal" if normal else "  needs a look"
            if not normal:
                look.append(f"{count['outcome']}{reason}")
        lines.append(f"  {count['outcome']}{reason}: {count['rows']}  {share:.1%}{note}")
    for key, title in (("spread_ns", "spread"), ("latency_ns", "latency")):
        lines.append(f"{title} (ms): {_figures(summary[key], _ms)}")
    if summary.get("size"):
        lines.append(f"rows per group: {_figures(summary['size'], str)}")
    if summary.get("waited_ns"):  # SP-R74: what each batch actually waited and filled
        lines.append(f"waited (ms, newest member's event time to emission): "
                     f"{_figures(summary['waited_ns'], _ms)}")
        lines.append(f"fill (% of its window the batch's event times span): "
                     f"{_figures(summary['fill_permille'], permille_text)}")
    if algorithm in reasons.ANCHORS:  # SP-R9: where the figures come from, if surprising
        lines.append(reasons.ANCHORS[algorithm])
    late = summary.get("late_files", [])
    for file in late[:LATE_SHOWN]:  # SP-R56
        lines.append(f"  late file {file['file']}: {file['rows']} rows of source "
                     f"{file['source']!r} arrive from {file['first_arrival']} ns, before the "
                     f"source's last row already taken ({file['after']} ns): the file was "
                     f"taken after a file of later rows (SP-R14, SP-R46)")
    if len(late) > LATE_SHOWN:
        lines.append(f"  … and {len(late) - LATE_SHOWN} more late files (--summary lists "
                     "them all)")
    if late:
        lines.append("  to take a copy of files at once, copy it into the watched folder "
                     "under a name starting with '.', then rename it (SP-R56)")
    for other in summary.get("not_configured", []):  # BAG-R7
        lines.append(f"  not configured: topic {other['topic']}: {other['rows']} rows")
    for skipped in summary.get("skipped_bags", []):  # BAG-R6
        lines.append(f"  skipped bag {skipped['bag']}: {skipped['error']}")
    for warning in summary.get("warnings", []):  # BAG-R13
        lines.append(f"warning: {warning}")
    missing = summary.get("missing_topics")
    for example in (missing or {}).get("examples", []):  # SP-R38
        lines.append(f"  source {example['source']!r} has no rows of configured topic(s) "
                     f"{', '.join(example['topics'])}")
    if missing and missing["sources"] > len(missing["examples"]):
        lines.append(f"  … and {missing['sources'] - len(missing['examples'])} more sources "
                     "without rows of a configured topic")
    if algorithm is not None:
        lines.append(f"needs a look: {', '.join(look)}" if look else
                     f"every outcome is normal for {algorithm}")
    return "\n".join(first + lines)


def _figures(levels: dict[str, int | None], said: Any) -> str:
    """Percentiles as ``p50 x  p90 y ...``, or ``x in every group`` when all are one value
    (SP-R9: a figure that does not vary is said once)."""
    values = set(levels.values())
    if len(values) == 1 and None not in values:
        return f"{said(values.pop())} in every group"
    return "  ".join(f"{name} {said(value)}" for name, value in levels.items())


#: SP-R56: the late files the printed summary names (the JSON summary has them all).
LATE_SHOWN = 10


def _ms(value: int | None) -> str:
    return "-" if value is None else f"{value / 1e6:.3f}"
