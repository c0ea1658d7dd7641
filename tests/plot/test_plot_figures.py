"""The spec's figures are current and embedded where they belong (spec/plots.md, PL-R8)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from matplotlib import rc_context
from matplotlib.figure import Figure

from cases import figures
from timealign import vectors
from timealign.plot.draw import SETTINGS, Scale, figure, stacked
from timealign.plot.timeline import GROUPED, Mark, from_vector

SPEC = Path(__file__).resolve().parents[2] / "spec"
# The figures of the "What changes between profiles" sections (figures/diffs/) are checked
# by tests/test_spec_diffs.py (CF-R26).
IMAGE = re.compile(r"^!\[([^\]]*)\]\(figures/(?!diffs/)([^)]+)\)$", re.MULTILINE)
CAPTION = "*What to look at:*"


@pytest.fixture(scope="module")
def drawn() -> dict[str, bytes]:
    """Every listed figure drawn in memory once, by file name, for the tests below."""
    return {figures.file_name(a, v): figures.draw(a, v) for _shows, a, v in figures.FIGURES}


def test_pl_r8_every_figure_is_current(drawn: dict[str, bytes]) -> None:
    """PL-R8, PL-R5: each listed figure, drawn again in memory, equals the committed file
    byte for byte, and no other figure is committed. Run `make figures` when this fails."""
    committed = {p.name for p in figures.FOLDER.glob("*.svg")}
    assert committed == set(drawn), "run `make figures`"
    stale = [name for name, data in sorted(drawn.items())
             if (figures.FOLDER / name).read_bytes() != data]
    assert not stale, f"stale figures {stale}: run `make figures`"


@pytest.mark.parametrize("algorithm", sorted(figures.PREFIX))
def test_pl_r8_each_figure_is_embedded_in_its_section(algorithm: str) -> None:
    """PL-R8: the algorithm's spec embeds each of its figures once, inside the section
    (heading) of the hazard, scenario, use case or overview the figure shows, followed by a
    caption saying what to look at."""
    text = (SPEC / f"{algorithm}.md").read_text(encoding="utf-8")
    embedded: dict[str, str] = {}
    for match in IMAGE.finditer(text):
        heading = [line for line in text[: match.start()].splitlines() if line.startswith("#")]
        embedded[match.group(2)] = heading[-1]
        after = text[match.end():].lstrip("\n")
        assert after.startswith(CAPTION), f"{match.group(2)} has no caption ({CAPTION!r})"
    listed = [(shows, figures.file_name(a, v)) for shows, a, v in figures.FIGURES
              if a == algorithm]
    assert sorted(embedded) == sorted(name for _shows, name in listed)
    for shows, name in listed:
        assert shows in embedded[name], (name, embedded[name])
        assert (SPEC / "figures" / name).is_file()


def marker_centres(fig: Figure) -> list[tuple[float, float]]:
    """The display coordinates (pixels) of every message mark in the lanes of ``fig``."""
    fig.draw_without_rendering()
    lanes = fig.axes[0]
    centres: list[tuple[float, float]] = []
    for line in lanes.get_lines():
        if line.get_linestyle() != "None" or line.get_marker() in (None, "None", ""):
            continue
        if not line.get_clip_on():  # the off-scale arrows at the axis edge
            continue
        xy = np.column_stack([line.get_xdata(), line.get_ydata()]).astype(float)
        centres.extend(map(tuple, lanes.transData.transform(xy)))
    return centres


@pytest.mark.parametrize(("shows", "algorithm", "vector"), figures.FIGURES,
                         ids=[f"{a}/{v}" for _s, a, v in figures.FIGURES])
def test_pl_d4_no_two_marks_of_a_figure_at_one_point(shows: str, algorithm: str,
                                                     vector: str) -> None:
    """PL-D4: in every spec figure each message stays visible: no two marks of the lanes
    are drawn less than a pixel apart (messages at one stamp are stacked)."""
    del shows
    [found] = vectors.load(figures.ROOT / algorithm / f"{vector}.json")
    with rc_context(SETTINGS):
        centres = marker_centres(figure(from_vector(found), width=8.0))
    assert centres
    points = np.array(centres)
    apart = np.abs(points[:, None, :] - points[None, :, :]).max(axis=2)
    first, second = np.nonzero(np.triu(apart < 1, k=1))
    close = [(centres[i], centres[j]) for i, j in zip(first, second, strict=True)]
    assert not close, f"marks drawn at one point: {close[:5]}"


def test_pl_d4_stacks_marks_at_one_stamp() -> None:
    """PL-D4: two messages of one lane at one stamp are stacked across the lane, the first
    to arrive on top; a message alone stays on its lane's line."""
    marks = [Mark("a0", "a", 0, 0, "dropped", "queue_overflow", None),
             Mark("a1", "a", 0, 1, GROUPED, None, 0),
             Mark("b0", "b", 0, 2, GROUPED, None, 0)]
    places = stacked(marks, Scale([0, 10]), {"a": 1, "b": 0}, 0.01)
    (a0, moved0), (a1, moved1), (b0, moved_b) = places
    assert a0 > a1 and moved0 and moved1
    assert (b0, moved_b) == (0.0, False)


def test_pl_r8_make_figures_says_what_it_did(
        drawn: dict[str, bytes], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """PL-R8: `make figures` prints a line even when every figure is already current (its
    drawings are the ones the test above compared, not drawn a second time)."""
    monkeypatch.setattr(figures, "draw", lambda a, v: drawn[figures.file_name(a, v)])
    assert figures.main([]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == (f"figures: {len(figures.FIGURES)} in spec/figures, 0 written, "
                    f"{len(figures.FIGURES)} already current")
