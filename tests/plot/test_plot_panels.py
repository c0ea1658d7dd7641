"""Panels below a picture and its axis origin: the zoom window (PL-R18), round origins
(PL-R19) and the strip of the state's flags (PL-R20)."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
from matplotlib import rc_context

from cases import figures
from timealign import registry, vectors
from timealign.plot.draw import SETTINGS, Scale, figure, instant, render
from timealign.plot.timeline import ARRIVAL_INDEX, GROUPED, Mark, Span, Timeline, from_vector

ROOT = Path(__file__).resolve().parents[2]
LIVELOCK = ROOT / "vectors/approximate_time/note_livelock_after_last_topic_overflow.json"
EB_TYPICAL = ROOT / "vectors/event_time_batcher/typical_run.json"


def _timeline(path: Path) -> Timeline:
    [vector] = vectors.load(path)
    return from_vector(vector)


def test_pl_r18_zoom_window_is_drawn_enlarged_below_the_lanes() -> None:
    """PL-R18: a zoom window adds a panel whose axis spans exactly that window, holding
    only the marks inside it, and a dashed box on the lanes; without one, no panel."""
    plain = _timeline(EB_TYPICAL)
    window = figures.ZOOMS[("event_time_batcher", "typical_run")]
    zoomed = attrs.evolve(plain, zoom=window)
    with rc_context(SETTINGS):
        before, after = figure(plain, width=8.0), figure(zoomed, width=8.0)
    assert len(before.subfigs) == 0 and len(after.subfigs) == 2
    [panel] = after.subfigs[1].axes
    assert panel.get_xlim() == (2995.0, 3055.0) and "ms" in panel.get_xlabel()
    inside = {m.id for m in plain.marks if window[0] <= m.stamp <= window[1]}
    assert inside == {"temp3", "press3", "hum3", "temp4"}
    labels = {t.get_text() for t in panel.texts}
    assert inside <= labels and not labels & {"temp1", "hum2"}
    main = after.subfigs[0].axes[0]
    dashed = [p for p in main.patches if p.get_linestyle() == "--"]
    assert len(dashed) == 1
    # The spec's figure is the one with the panel (cases/figures.py asks for it).
    svg = figures.draw("event_time_batcher", "typical_run").decode()
    assert "enlarged: event time 2995 to 3055 ms" in svg


def test_pl_r19_far_origin_is_round_and_written_in_its_own_unit() -> None:
    """PL-R19: a trace around 1 ms counts from 999 µs, not from 0.0009991 s; the offsets
    stay below twice the rounding step; the origin reads in the unit that writes it."""
    scale = Scale([999_100, 1_000_100])
    assert (scale.unit, scale.origin) == ("ns", 999_000)
    assert scale(999_100) == 100.0 and scale(1_000_100) == 1100.0
    assert scale.label("event time") == "event time (ns after 999 µs)"
    seconds = Scale([5_001_000_000, 5_031_000_000])
    assert (seconds.unit, seconds.origin) == ("ms", 5_000_000_000)
    assert seconds.label("t") == "t (ms after 5 s)"
    assert [instant(n) for n in (999_000, 1_500_000_000, -20_000_000, 7, 1_000_000_001)] == [
        "999 µs", "1.5 s", "-20 ms", "7 ns", "1000000.001 µs"]
    near = Scale([100, 220])  # near zero: no origin at all
    assert near.origin == 0 and near.label("t") == "t (ns)"
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", render(Timeline(
        "t", ("a",), (), (), origin=999_000)).decode())
    assert not any("0.000999" in t for t in texts)


def test_pl_r19_one_input_index_axis_reads_whole_inputs() -> None:
    """PL-R19: an arrival strip whose messages all come from input 0 shows the tick 0
    alone, not fractions of an input around it."""
    marks = (Mark("m1", "a", 10, 0, GROUPED, None, 0), Mark("m2", "a", 30, 0, GROUPED, None, 0))
    timeline = Timeline("t", ("a",), marks, (Span(0, 10, 30, ("m1", "m2"), 0),),
                        arrival=ARRIVAL_INDEX)
    with rc_context(SETTINGS):
        strip = figure(timeline, width=8.0).axes[1]
    assert strip.get_ylim() == (-0.5, 0.5)
    ticks = [t for t in strip.get_yticks() if -0.5 <= t <= 0.5]
    assert ticks == [0.0]


def test_pl_r20_flags_come_from_the_machine_state_after_each_input() -> None:
    """PL-R20: the timeline holds, after each applied input, the drop flags the machine's
    state holds (read through ``flags_of``); topic 1's stays set from its overflow on."""
    timeline = _timeline(LIVELOCK)
    [vector] = vectors.load(LIVELOCK)
    algorithm = registry.get("approximate_time")
    config = algorithm.codec.config_from_json(vector.config)
    state = algorithm.machine.initial(config)
    expected = []
    for index, raw in enumerate(vector.inputs):
        state, _ = algorithm.machine.step(config, state, algorithm.codec.input_from_json(raw))
        expected.append((index, tuple(state.dropped)))
    assert [(row.at, tuple(f.on for f in row.flags)) for row in timeline.flags] == expected
    assert [row.flags[1].on for row in timeline.flags[1:6]] == [True] * 5
    assert {(f.lane, f.name) for row in timeline.flags for f in row.flags} == {
        ("0", "drop"), ("1", "drop")}


def test_pl_r20_strip_only_when_a_flag_is_set_and_asked_for_in_the_spec() -> None:
    """PL-R20: the strip is drawn when a flag is set at some input, with a row per lane
    and flag; a timeline without flags, or with none set, has no strip; the spec's
    livelock figure has it, a figure not asking for it does not."""
    timeline = _timeline(LIVELOCK)
    with rc_context(SETTINGS):
        drawn = figure(timeline, width=8.0)
        cleared = figure(attrs.evolve(timeline, flags=tuple(
            attrs.evolve(row, flags=tuple(attrs.evolve(f, on=False) for f in row.flags))
            for row in timeline.flags)), width=8.0)
    [strip] = drawn.subfigs[1].axes
    assert [t.get_text() for t in strip.get_yticklabels()] == ["1: drop", "0: drop"]
    assert strip.get_xlabel() == "after input #"
    assert len(cleared.subfigs) == 0
    livelock = figures.draw("approximate_time", "note_livelock_after_last_topic_overflow")
    assert b"flag set" in livelock
    assert b"flag set" not in figures.draw("approximate_time", "typical_run")
