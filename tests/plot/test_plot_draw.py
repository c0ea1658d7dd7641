"""Drawing a timeline and the ``plot`` command (spec/plots.md, PL-R2, PL-R4 to PL-R7)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from timealign import outputs, vectors
from timealign.cli import main
from timealign.commands.plot import duration
from timealign.errors import InvalidInput
from timealign.plot.draw import render
from timealign.plot.timeline import from_vector

ROOT = Path(__file__).resolve().parents[2]
AT_VECTOR = ROOT / "vectors/approximate_time/end_reports_pending_and_restarts.json"


def _texts(svg: bytes) -> list[str]:
    """The text elements of an SVG (text is kept as text, PL-D3)."""
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg.decode("utf-8"))


def test_pl_r5_svg_is_deterministic_and_undated() -> None:
    """PL-R5: the same timeline renders to the same bytes, with no date and the bundled
    font named; PNG output is a PNG."""
    [vector] = vectors.load(ROOT / "vectors/event_time_batcher/hazard_one_ns_conflict.json")
    timeline = from_vector(vector)
    first, second = render(timeline), render(from_vector(vector))
    assert first == second
    assert b"<dc:date>" not in first and b"DejaVu Sans" in first
    # The layout's metrics come from the font bundled with the pinned matplotlib, also
    # where the system has its own DejaVu Sans (bundled fonts are listed first).
    from matplotlib import get_data_path
    from matplotlib.font_manager import findfont

    assert Path(findfont("DejaVu Sans")).is_relative_to(get_data_path())
    assert render(timeline, "png").startswith(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(InvalidInput, match="PL-R5"):
        render(timeline, "jpg")


def test_pl_r2_r4_lanes_reasons_ids_and_strip_are_drawn() -> None:
    """PL-R2, PL-R4, PL-D1, PL-D3: lane names, one legend entry per (outcome, reason), ids
    beside their marks in a small picture, and the arrival strip's axis label, all read
    back as SVG text (text stays text)."""
    [vector] = vectors.load(ROOT / "vectors/event_time_batcher/uc4_late_duplicate.json")
    texts = _texts(render(from_vector(vector)))
    assert {"a", "b", "c", "d", "e"} <= set(texts)  # lanes (keys)
    assert "rejected: too_old" in texts
    assert {"a1", "d1", "e1"} <= set(texts)
    assert "arrival (ms)" in texts and "event time (ms)" in texts
    assert "arrival (ms)" not in _texts(render(from_vector(vector), strip=False))
    assert "pending at end" in _texts(render(from_vector(vectors.load(AT_VECTOR)[0])))
    [livelock] = vectors.load(
        ROOT / "vectors/approximate_time/note_livelock_after_last_topic_overflow.json")
    texts = _texts(render(from_vector(livelock)))
    assert {"dropped: queue_overflow", "dropped: pivot_refused"} <= set(texts)


def test_pl_r2_d1_hundreds_of_messages_get_no_id_labels() -> None:
    """PL-D1: ids are not written for a large picture; the legend still is."""
    [vector] = vectors.load(ROOT / "vectors/rate_aware_batcher/hazard_slow_gated_stream.json")
    timeline = from_vector(vector)
    assert len(timeline.marks) > 400
    texts = _texts(render(timeline))
    assert not any(m.id in texts for m in timeline.marks)
    assert "slot grid" in texts and "grouped (colour = group)" in texts


def test_pl_r2_far_outlier_drawn_at_the_edge_with_its_distance() -> None:
    """PL-R2: the year-ahead log line of hwm_outlier_clamp is an arrow labelled +365 d."""
    [vector] = vectors.load(ROOT / "vectors/rate_aware_batcher/hwm_outlier_clamp.json")
    assert "+365 d" in _texts(render(from_vector(vector)))


def test_pl_r6_durations_are_exact() -> None:
    """PL-R6: decimal durations with units, converted to integer ns without floats."""
    assert duration("2.5s") == 2_500_000_000
    assert duration("300ms") == 300_000_000
    assert duration("40us") == duration("40µs") == 40_000
    assert duration("7ns") == 7 and duration("1") == 10**9
    assert duration("0.000000001") == 1
    for bad in ("-1s", "1.5ns", "soon", "1 h"):
        with pytest.raises(InvalidInput, match="PL-R6"):
            duration(bad)


def test_pl_r7_plot_command_writes_the_picture(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """PL-R7: `timealign plot VECTOR --out FILE` writes an SVG or PNG; a .jsonl file needs
    --name when it holds several vectors."""
    svg, png = tmp_path / "a.svg", tmp_path / "a.png"
    assert main(["plot", str(AT_VECTOR), "--out", str(svg)]) == 0
    drawn = render(from_vector(vectors.load(AT_VECTOR)[0]))
    assert svg.read_bytes() == outputs.marked("plot", "--out", drawn)  # CLI-R5: its mark
    assert svg.read_bytes().startswith(drawn)
    assert main(["plot", str(AT_VECTOR), "-o", str(png), "--no-arrivals"]) == 0
    assert png.read_bytes().startswith(b"\x89PNG")
    lines = tmp_path / "two.jsonl"
    body = json.loads(AT_VECTOR.read_text())
    lines.write_text("\n".join(json.dumps({**body, "name": n}) for n in ("x", "y")) + "\n")
    assert main(["plot", str(lines), "-o", str(tmp_path / "y.svg"), "--name", "y"]) == 0
    assert main(["plot", str(lines), "-o", str(tmp_path / "z.svg")]) == 2
    assert "--name" in capsys.readouterr().err


@pytest.mark.parametrize("out", ["a.jpg", "missing/a.svg", "folder.svg"])
def test_pl_r7_bad_output_path_is_refused_before_drawing(
        tmp_path: Path, out: str, capsys: pytest.CaptureFixture[str]) -> None:
    """PL-R7: a bad --out exits 2 naming the option, and nothing is written."""
    (tmp_path / "folder.svg").mkdir()
    before = sorted(tmp_path.rglob("*"))
    assert main(["plot", str(AT_VECTOR), "--out", str(tmp_path / out)]) == 2
    assert "--out" in capsys.readouterr().err
    assert sorted(tmp_path.rglob("*")) == before


def test_pl_r1_refused_config_exits_2(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """PL-R1: a vector whose config the machine refuses has nothing to draw: exit 2."""
    bad = ROOT / "vectors/approximate_time/config_rejects_queue_size_zero.json"
    assert main(["plot", str(bad), "--out", str(tmp_path / "x.svg")]) == 2
    assert "queue_size" in capsys.readouterr().err
    assert not (tmp_path / "x.svg").exists()


def test_side_by_side_one_scale_two_titles_same_bytes_pl_r11() -> None:
    """Two variants of one trace: both titles in one SVG, the same bytes twice."""
    import attrs

    from timealign.conformance import shipped
    from timealign.plot.draw import render_side_by_side
    from timealign.plot.timeline import from_vector

    [vector] = [v for v in shipped("approximate_time") if v.name == "note_ros1_rounding_ros2"]
    left = attrs.evolve(from_vector(vector), title="A: ros2")
    right = attrs.evolve(from_vector(attrs.evolve(
        vector, config={**vector.config, "arithmetic": "ros1"})), title="B: ros1")
    first = render_side_by_side(left, right)
    assert first == render_side_by_side(left, right)
    assert b"A: ros2" in first and b"B: ros1" in first


def test_pl_r2_an_empty_window_is_named_in_the_legend() -> None:
    """PL-R2: a group with no member is drawn hatched and named in the legend; a picture
    without one has no such entry."""
    [vector] = vectors.load(ROOT / "vectors/rate_aware_batcher/hwm_outlier_clamp.json")
    timeline = from_vector(vector)
    assert any(not g.ids for g in timeline.groups)
    assert "empty window (no message)" in _texts(render(timeline))
    assert "empty window (no message)" not in _texts(render(from_vector(
        vectors.load(AT_VECTOR)[0])))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 60), st.integers(1, 12)), max_size=30))
def test_pl_r21_labels_never_overlap_and_one_is_left_out_only_for_want_of_room(
        labels: list[tuple[int, int]]) -> None:
    """PL-R21, PL-D1: group and id labels are placed on up to four levels; two labels of
    one level never overlap (the event-time batcher's crowded windows had their numbers
    written over each other), and a label is left out only when it overlaps a label on
    every level."""
    from timealign.plot.draw import _staggered

    xs, widths = [float(x) for x, _ in labels], [float(w) for _, w in labels]
    levels = _staggered(xs, widths)
    spans = [(x - w / 2, x + w / 2) for x, w in zip(xs, widths, strict=True)]

    def clash(a: int, b: int) -> bool:
        return spans[a][0] < spans[b][1] and spans[b][0] < spans[a][1]

    for k, level in enumerate(levels):
        earlier = range(k)
        if level is None:
            assert all(any(levels[j] == other and clash(j, k) for j in earlier)
                       for other in range(4))
        else:
            assert not any(levels[j] == level and clash(j, k) for j in earlier)
