"""What a run's outcome means for its algorithm: the spec rules behind it and whether it is
normal (SP-R31, PL-R14).

A share of dropped rows says nothing by itself: ApproximateTime drops every message that
no published set takes (that is how the ROS policy works), while a rejected row of the
event-time batcher is late or duplicated data. The summary and the report colour and
comment only what is not normal for the algorithm. Pure data, no I/O; the rule ids are
those of each algorithm's ``traces.rules``, so one table says which rule makes an output.
"""

from __future__ import annotations

import re

from timealign import registry

#: Outcome kinds (the Spark outcome table's ``outcome``) that are normal operation, per
#: algorithm, with the reason for each (SP-R31). Anything else needs a look.
NORMAL: dict[str, dict[str, str]] = {
    "approximate_time": {
        "grouped": "published in a set",
        "dropped": "every message no set takes is dropped (AT-R5, AT-R8, AT-R9, AT-R11): "
                   "normal for ApproximateTime, unless one topic never arrives",
        "pending": "still queued when the input ended (AT-R17)",
    },
    "rate_aware_batcher": {
        "grouped": "closed in a batch",
        "pending": "in the window still open when the input ended (RB-R16)",
    },
    "event_time_batcher": {
        "grouped": "closed in a batch",
    },
}

#: SP-R9, PL-R14: per algorithm, how its groups are placed, where a reader would expect
#: otherwise (the summary and the report say it).
ANCHORS: dict[str, str] = {
    "event_time_batcher": "windows: each batch's window opens at the first message to arrive "
                          "and spans batching_window (EB-D2, EB-H6), so batches follow each "
                          "key's arrivals, not a fixed grid: expect more batches than span / "
                          "window; a batch closes once max_message_delay has passed its "
                          "window's end, so spread and latency show those two values; "
                          "waited (from a batch's newest event time to its emission) and "
                          "fill (the share of its window its event times span) show what "
                          "each batch did",
}

#: The Spark outcome kind of each vector output kind that groups messages.
_GROUPING = {"approximate_time": "published", "rate_aware_batcher": "batch",
             "event_time_batcher": "batch"}


def normal(algorithm: str, outcome: str) -> bool:
    """Whether rows with this outcome are normal operation of ``algorithm`` (SP-R31)."""
    return outcome in NORMAL.get(algorithm, {"grouped": ""})


def rules(algorithm: str, outcome: str, reason: str | None) -> tuple[str, ...]:
    """The spec rules that produce rows of this (outcome, reason); ``()`` when unknown."""
    found = registry.get(algorithm) if algorithm in registry.names() else None
    table: dict[tuple[str, str | None], tuple[str, ...]] = (
        dict(found.checks.traces.rules)
        if found is not None and found.checks.traces is not None else {})
    kind = _GROUPING.get(algorithm, outcome) if outcome == "grouped" else outcome
    return table.get((kind, reason), table.get((kind, None), ()))


def written(algorithm: str) -> tuple[str, ...]:
    """The reasons ``algorithm``'s rules give the rows they settle (its ``traces.rules``,
    warnings aside), sorted: what ``--fail-on REASON>N`` may name (SP-R38)."""
    traces = registry.get(algorithm).checks.traces
    table = dict(traces.rules) if traces is not None else {}
    return tuple(sorted({reason for (kind, reason) in table
                         if reason is not None and kind != "warning"}))


#: A rule id as the spec writes it (spec/README.md, "Identifier convention").
_RULE_ID = re.compile(r"\b[A-Z]{2,4}-[RIDH]\d+\b")


def cited() -> tuple[str, ...]:
    """Every rule id a run's summary or report can cite: the rules behind each outcome of
    every algorithm and the ids named in :data:`NORMAL` (PL-R15: the report ships these
    sections' text, so its rule links work without a source checkout)."""
    found: set[str] = set()
    for name in registry.names():
        traces = registry.get(name).checks.traces
        if traces is not None:
            found.update(rule for rules in dict(traces.rules).values() for rule in rules)
    for table in NORMAL.values():
        for why in table.values():
            found.update(_RULE_ID.findall(why))
    return tuple(sorted(found))
