"""What the pictures read from a run: one source's timeline and the report's figures.

The timeline of a source (PL-R6) takes the messages from the run's input rows, and the
groups and outcomes from the tables the run wrote (``groups/``, ``outcomes/``): it shows
what the run produced, not a recomputation. Only the slot grid, which no table holds, is
read from the machine's state by replaying the source's rows through the driver up to the
last row shown (``Algorithm.pictures.slots_of``). The report's figures (PL-R9) are aggregated by
Spark; only small results reach Python.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from timealign import reasons
from timealign.algorithm import Algorithm, Record, Slots
from timealign.drive import Driver
from timealign.errors import InvalidInput
from timealign.plot.report import Histogram, Report, timeline_window
from timealign.plot.timeline import GROUPED, Span, Timeline, assemble
from timealign.spark import schema
from timealign.spark.replay import records_from_batches

MAX_MARKS = 2000
NS = 1_000_000_000


def _records(frame: DataFrame, source: str) -> list[Record]:
    ordered = frame.orderBy("arrival", schema.FILE, schema.POSITION)
    table: pa.Table = ordered.toArrow()
    return list(records_from_batches(source, iter(table.to_batches())))


def _slots(algorithm: Algorithm[Any, Any, Any, Any], config: Any, rows: DataFrame,
           source: str, last_arrival: int, low: int, high: int) -> list[Slots]:
    """The slot grid of every window the source's replay gated on within [low, high]."""
    if algorithm.pictures.slots_of is None:
        return []
    found: list[Slots] = []
    driver = Driver(algorithm, config)
    prefix = _records(rows.where(F.col("arrival") <= last_arrival), source)
    for _step in driver.feed(prefix):
        found.extend(s for s in algorithm.pictures.slots_of(config, driver.state)
                     if s.end >= low and s.start <= high)
    return found


#: How many source names an unknown ``--source`` lists (PL-R6).
LISTED_SOURCES = 20


def known_sources(rows: DataFrame, listed: int = LISTED_SOURCES) -> str:
    """``"the input has 3 sources: a, b, c"``, or the first ``listed`` and a count."""
    names = [r[0] for r in rows.select("source").distinct().orderBy("source")
             .limit(listed + 1).collect()]
    if len(names) <= listed:
        return f"the input has {len(names)} source(s): {', '.join(map(str, names))}"
    total = rows.select("source").distinct().count()
    return (f"the input has {total} sources, the first {listed}: "
            f"{', '.join(map(str, names[:listed]))}, ...")


def source_timeline(
    algorithm: Algorithm[Any, Any, Any, Any],
    config: Any,
    rows: DataFrame,
    output: str,
    source: str,
    start: int = 0,
    stop: int | None = 2 * NS,
) -> Timeline:
    """The timeline of ``source`` for event times in [first + start, first + stop] (ns
    after the source's first event time), from ``rows`` (canonical input) and the run's
    tables under ``output`` (PL-R6)."""
    mine = rows.where(F.col("source") == source)
    first = mine.agg(F.min("stamp")).first()
    if first is None or first[0] is None:
        raise InvalidInput("--source", "PL-R6", f"no input rows for this source; "
                           f"{known_sources(rows)}", source)
    low = int(first[0]) + start
    high = None if stop is None else int(first[0]) + stop
    shown = mine.where(F.col("stamp") >= low)
    if high is not None:
        shown = shown.where(F.col("stamp") <= high)
    records = _records(shown.orderBy("arrival", schema.FILE, schema.POSITION)
                       .limit(MAX_MARKS + 1), source)
    notes = []
    if len(records) > MAX_MARKS:
        records = records[:MAX_MARKS]
        notes.append(f"first {MAX_MARKS} rows by arrival shown")
    spark = rows.sparkSession
    ids = [r.id for r in records]
    outcomes = (spark.read.parquet(f"{output}/outcomes")
                .where((F.col("source") == source) & F.col("id").isin(ids))
                .select("id", "outcome", "reason", "seq").collect())
    settled = {r["id"]: (r["outcome"], r["reason"]) for r in outcomes
               if r["outcome"] != GROUPED}
    seqs = sorted({int(r["seq"]) for r in outcomes if r["outcome"] == GROUPED})
    groups = (spark.read.parquet(f"{output}/groups")
              .where((F.col("source") == source) & F.col("seq").isin(seqs))
              .orderBy("seq").collect())
    spans = [Span(int(g["seq"]), int(g["start"]), int(g["end"]), tuple(g["ids"]),
                  None if g["at"] is None else int(g["at"])) for g in groups]
    slots: list[Slots] = []
    if records:
        last = max(r.arrival for r in records)
        top = high if high is not None else max(r.stamp for r in records)
        slots = _slots(algorithm, config, mine, source, last, low, top)
    title = f"source {source!r}, {_span_text(start, stop)} after its first event time"
    # PL-R14: the axis counts from the source's first event time, as the title does
    return assemble(title, records, spans, settled, slots, notes=notes, origin=int(first[0]),
                    algorithm=algorithm.name)


def _span_text(start: int, stop: int | None) -> str:
    """``0.5–1 s``, ``0–20 ms``: both ends in the unit of the larger (PL-R14)."""
    top = max(abs(start), abs(stop or 0))
    factor, unit = next(((f, u) for f, u in ((NS, "s"), (1_000_000, "ms"), (1_000, "µs"))
                         if top >= f), (1, "ns"))
    if stop is None:
        return f"from {start / factor:g} {unit}"
    return f"{start / factor:g}–{stop / factor:g} {unit}"


def histogram(values: DataFrame, title: str, bins: int = 40) -> Histogram:
    """Bin the single long column of ``values`` (nulls ignored) in Spark."""
    name = values.columns[0]
    present = values.where(F.col(name).isNotNull())
    bounds = present.agg(F.min(name), F.max(name)).first()
    if bounds is None or bounds[0] is None:
        return Histogram(title, 0, 1, ())
    low, high = int(bounds[0]), int(bounds[1])
    width = max(-(-(high - low + 1) // bins), 1)
    slot = F.expr(f"div(`{name}` - {low}, {width})")  # integer division, no float
    found: dict[int, int] = {int(r[0]): int(r[1]) for r in
                             present.groupBy(slot.alias("bin")).count().collect()}
    return Histogram(title, low, width,
                     tuple(int(found.get(k, 0)) for k in range(bins)))


PER_SOURCE = ("source", "rows", "grouped", "dropped", "rejected", "pending", "groups",
              "latency_p99_ns", "spread_max_ns")


def per_source(groups: DataFrame, outcomes: DataFrame) -> list[dict[str, Any]]:
    """One row per source, worst first: most rows not grouped (share), then the highest
    p99 latency (PL-R9)."""
    counts = outcomes.groupBy("source").agg(
        F.count(F.lit(1)).alias("rows"),
        *(F.sum((F.col("outcome") == kind).cast("long")).alias(kind)
          for kind in ("grouped", "dropped", "rejected", "pending")))
    figures = groups.groupBy("source").agg(
        F.count(F.lit(1)).alias("groups"),
        F.percentile(F.col("at") - F.col("end"), F.lit(0.99)).alias("latency_p99_ns"),
        F.max(F.col("end") - F.col("start")).alias("spread_max_ns"))
    joined = counts.join(figures, "source", "left").collect()
    table = [{name: row[name] for name in PER_SOURCE} for row in joined]
    for entry in table:
        for name in PER_SOURCE[1:]:
            value = entry[name]
            entry[name] = None if value is None else int(value)
        entry["groups"] = entry["groups"] or 0
    table.sort(key=lambda e: (-(e["rows"] - e["grouped"]) / e["rows"],
                              -(e["latency_p99_ns"] or 0), e["source"]))
    return table


def look_window(rows: DataFrame, outcomes: DataFrame, algorithm: str, source: str,
                first: int, window: int) -> int:
    """Where the report's timeline starts (ns after the source's first event time,
    PL-R14): the window of ``window`` ns, on a grid from the first event time, that holds
    the most of the source's rows whose outcome needs a look; 0 when none does."""
    kinds = [r[0] for r in outcomes.where(F.col("source") == source)
             .select("outcome").distinct().collect()]
    looks = [kind for kind in kinds if not reasons.normal(algorithm, kind)]
    if not looks:
        return 0
    flagged = outcomes.where((F.col("source") == source) & F.col("outcome").isin(looks)) \
        .select("id")
    stamps = rows.where(F.col("source") == source).join(flagged, "id").select("stamp")
    slot = F.expr(f"div(stamp - {first}, {window})")  # integer division, no float
    busiest = stamps.groupBy(slot.alias("slot")).count() \
        .orderBy(F.desc("count"), "slot").first()
    return 0 if busiest is None else max(int(busiest["slot"]), 0) * window


def build_report(algorithm: Algorithm[Any, Any, Any, Any], config: Any, rows: DataFrame,
                 output: str, summary: Mapping[str, Any], seconds: int | None = None,
                 manifest: Mapping[str, Any] | None = None, warnings: Sequence[str] = ()
                 ) -> Report:
    """The report of a finished run (PL-R9): figures from the written tables, and the
    timeline of the first ``seconds`` (ns) of the worst source; by default a window whose
    width is chosen from the source's density, placed where most of its rows that need a
    look are (PL-R14)."""
    spark = rows.sparkSession
    groups = spark.read.parquet(f"{output}/groups")
    outcomes = spark.read.parquet(f"{output}/outcomes")
    sources = per_source(groups, outcomes)
    histograms = (
        histogram(groups.select((F.col("end") - F.col("start")).alias("v")),
                  "spread (end − start) per group"),
        histogram(groups.select((F.col("at") - F.col("end")).alias("v")),
                  "latency (at − end) per group"),
    )
    worst = sources[0]["source"] if sources else None
    timeline = None
    if worst is not None:
        start = 0
        if seconds is None:
            bounds = rows.where(F.col("source") == worst).agg(
                F.min("stamp"), F.max("stamp")).first()
            span = 0 if bounds is None or bounds[0] is None else int(bounds[1]) - int(bounds[0])
            seconds = timeline_window(span, sources[0]["rows"], sources[0]["groups"])
            if bounds is not None and bounds[0] is not None:
                start = look_window(rows, outcomes, algorithm.name, worst, int(bounds[0]),
                                    seconds)
        timeline = source_timeline(algorithm, config, rows, output, worst, start,
                                   start + seconds)
    return Report(algorithm.name, summary, sources, histograms, timeline, worst, manifest,
                  tuple(warnings))
