"""The data a picture shows (spec/plots.md, PL-R1 to PL-R3), without matplotlib."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from timealign import vectors
from timealign.errors import InvalidInput
from timealign.plot.draw import Scale, distance, view
from timealign.plot.timeline import ARRIVAL_INDEX, ARRIVAL_NS, GROUPED, OPEN, from_vector
from timealign.rate_aware_batcher.grid import Grid, slot_instants
from timealign.vectors import Vector

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((ROOT / "vectors").glob("*/*.json"))


def _message_ids(vector: Vector, refused: set[int]) -> list[str]:
    """Message ids of the vector's inputs, read from the JSON (not through the machine)."""
    ids: list[str] = []
    for index, raw in enumerate(vector.inputs):
        if index in refused:
            continue
        if raw.get("op") == "message":
            ids.append(raw["id"])
        elif raw.get("op") == "poll":
            ids.extend(m["id"] for m in raw["messages"])
    return ids


def _expected(vector: Vector) -> tuple[dict[str, tuple[str, Any]], int, set[int]]:
    """Outcome per id, group count and refused inputs, from the vector's expected outputs."""
    outcome: dict[str, tuple[str, Any]] = {}
    groups = 0
    refused = set()
    assert vector.outputs is not None
    for output in vector.outputs:
        if output["kind"] == "error":
            refused.add(output["input"])
        elif "ids" in output:
            groups += 1
            outcome.update({i: (GROUPED, None) for i in output["ids"]})
        elif output["kind"] in ("dropped", "rejected", "pending"):
            outcome[output["id"]] = (output["kind"], output.get("reason"))
    return outcome, groups, refused


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_pl_r1_every_message_is_one_mark_with_its_vector_outcome(path: Path) -> None:
    """PL-R1, PL-R2, PL-D2: one mark per message of the accepted inputs, whose outcome is
    the one the vector's expected outputs give it; groups are the vector's groups; lanes
    are sorted by name."""
    [vector] = vectors.load(path)
    outcome, groups, refused = _expected(vector)
    if None in refused:  # a refused config: nothing to draw
        with pytest.raises(InvalidInput):
            from_vector(vector)
        return
    timeline = from_vector(vector)
    ids = _message_ids(vector, refused)
    assert [m.id for m in timeline.marks] == ids
    assert len(timeline.groups) == groups
    assert set(timeline.lanes) == {m.lane for m in timeline.marks} | {
        s.lane for s in timeline.slots}
    assert list(timeline.lanes) == sorted(timeline.lanes)  # PL-D2
    repeated = {i for i, n in Counter(ids).items() if n > 1}
    for mark in timeline.marks:
        if mark.id in repeated:
            continue
        want, reason = outcome.get(mark.id, (OPEN, None))
        assert mark.outcome == want, mark
        if reason is not None:
            assert mark.reason == reason
        if want == GROUPED:
            assert mark.group is not None and mark.id in timeline.groups[mark.group].ids
    if refused:
        assert timeline.notes == (f"{len(refused)} input(s) refused (VEC-R5), not drawn",)


def test_pl_r4_arrival_is_the_clock_or_the_input_index() -> None:
    """PL-R4: the event-time batcher's marks arrive at their ``at``; the unclocked
    machines' at their input index, and groups are emitted at the emitting input."""
    [eb] = vectors.load(ROOT / "vectors/event_time_batcher/uc3_conflicts.json")
    timeline = from_vector(eb)
    assert timeline.arrival == ARRIVAL_NS
    by_id = {raw["id"]: raw["at"] for raw in eb.inputs if raw["op"] == "message"}
    assert all(m.arrival == by_id[m.id] for m in timeline.marks)
    assert eb.outputs is not None
    emitted = [eb.inputs[o["input"]].get("at") for o in eb.outputs if o["kind"] == "batch"]
    assert [g.at for g in timeline.groups] == emitted
    [at] = vectors.load(ROOT / "vectors/approximate_time/several_sets_in_one_input.json")
    timeline = from_vector(at)
    assert timeline.arrival == ARRIVAL_INDEX
    positions = {raw["id"]: k for k, raw in enumerate(at.inputs) if raw["op"] == "message"}
    assert all(m.arrival == positions[m.id] for m in timeline.marks)


def test_pl_r3_slot_grid_of_the_rate_aware_batcher_lines_up_with_its_pulses() -> None:
    """PL-R3: the slots come from the machine's state; at 14 Hz every pulse grouped in a
    slot-gated window lies on one of that window's slots (within the RB-R5 tolerance)."""
    [vector] = vectors.load(ROOT / "vectors/rate_aware_batcher/happy_path_14hz.json")
    timeline = from_vector(vector)
    assert timeline.slots and {s.lane for s in timeline.slots} == {"det"}
    period = round(1e9 / 14)
    for slots in timeline.slots:
        assert len(slots.instants) == 14 and slots.end - slots.start == 10**9
        assert all(b - a == period for a, b in zip(slots.instants, slots.instants[1:],
                                                   strict=False))
    windows = {s.start: s for s in timeline.slots}
    checked = 0
    for mark in timeline.marks:
        group = timeline.groups[mark.group] if mark.group is not None else None
        if group is None or group.start not in windows:
            continue
        assert min(abs(mark.stamp - t) for t in windows[group.start].instants) <= period // 2
        checked += 1
    assert checked >= 40
    assert slot_instants(0, Grid(5, 100, 3)) == (5, 105, 205)  # first pulse after start
    assert slot_instants(0, Grid(5, 10, 2)) == (-5, 5)  # start within the drift tolerance


def test_pl_r2_view_leaves_far_clusters_out_and_scale_picks_a_unit() -> None:
    """PL-R2: a stamp a year ahead is left out of the view; units and origin."""
    year = 365 * 86_400 * 10**9
    assert view([0, 5, 10, year]) == (0, 10)
    assert view([-year, 0, 5, 10]) == (0, 10)
    assert view([0, 5, 10, 60]) == (0, 60)
    assert view([100, 101], [100, 150]) == (100, 150)  # a window end is never cut off
    assert view([100, 150]) == (100, 150)  # two instants: neither is an outlier
    assert view([0, 1, 2, year], [0, year]) == (0, 2)
    assert distance(year) == "+365 d" and distance(-243 * 10**9) == "-243 s"
    small = Scale([100, 220])
    assert (small.unit, small.origin, small(150)) == ("ns", 0, 150.0)
    recorded = Scale([1_700_000_000_250_000_000, 1_700_000_003_000_000_000])
    # PL-R19: rounded down to 10 s, the power of ten at least the 2.75 s span
    assert recorded.unit == "ms" and recorded.origin == 1_700_000_000_000_000_000
    assert recorded(1_700_000_000_260_000_000) == 260.0
    assert recorded.label("event time") == "event time (ms after 2023-11-14 22:13:20 UTC)"
