"""The spec's figures are current and embedded where they belong (spec/plots.md, PL-R8)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cases import figures

SPEC = Path(__file__).resolve().parents[2] / "spec"
IMAGE = re.compile(r"^!\[([^\]]*)\]\(figures/([^)]+)\)$", re.MULTILINE)


def test_pl_r8_every_figure_is_current() -> None:
    """PL-R8, PL-R5: each listed figure, drawn again in memory, equals the committed file
    byte for byte, and no other figure is committed. Run `make figures` when this fails."""
    wanted = {figures.file_name(a, v): (a, v) for _shows, a, v in figures.FIGURES}
    committed = {p.name for p in figures.FOLDER.glob("*.svg")}
    assert committed == set(wanted), "run `make figures`"
    stale = [name for name, (algorithm, vector) in sorted(wanted.items())
             if (figures.FOLDER / name).read_bytes() != figures.draw(algorithm, vector)]
    assert not stale, f"stale figures {stale}: run `make figures`"


@pytest.mark.parametrize("algorithm", sorted(figures.PREFIX))
def test_pl_r8_each_figure_is_embedded_in_its_section(algorithm: str) -> None:
    """PL-R8: the algorithm's spec embeds each of its figures once, inside the section
    (heading) of the hazard, scenario or use case the figure shows."""
    text = (SPEC / f"{algorithm}.md").read_text(encoding="utf-8")
    embedded: dict[str, str] = {}
    for match in IMAGE.finditer(text):
        heading = [line for line in text[: match.start()].splitlines() if line.startswith("#")]
        embedded[match.group(2)] = heading[-1]
    listed = [(shows, figures.file_name(a, v)) for shows, a, v in figures.FIGURES
              if a == algorithm]
    assert sorted(embedded) == sorted(name for _shows, name in listed)
    for shows, name in listed:
        assert shows in embedded[name], (name, embedded[name])
        assert (SPEC / "figures" / name).is_file()
