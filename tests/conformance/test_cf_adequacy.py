"""The adequacy table of the catalogued rule variants (CF-R44): it lists the catalogue, its
suite column is current, and the suite plus the default explore kill every variant; the
tool that writes it tells a variant that changes nothing from one a source kills."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from timealign import registry
from timealign.conformance import catalogue
from timealign.rate_aware_batcher import machine as rb
from timealign.rate_aware_batcher.model import BOOK as RB_BOOK
from timealign.rate_aware_batcher.model import HEAD
from timealign.rulebook import Table, rule
from tools import adequacy

RB = "rate_aware_batcher"


def _catalogue() -> set[tuple[str, str, str]]:
    return {(name, t.rule or "", t.name) for name in registry.names()
            for t in catalogue.variants(name)}


def test_the_table_lists_the_catalogue_and_its_suite_column_is_current_cf_r44() -> None:
    """CF-R44: the committed table has one row per catalogued variant (run `make adequacy`
    when this fails), and whether the shipped suite kills it is what the table says."""
    rows = adequacy.committed()
    assert {(r[0], r[1], r[2].strip("`")) for r in rows} == _catalogue(), \
        "the adequacy table is stale: run make adequacy"
    for algorithm, _rule, name, suite, *_ in rows:
        table = catalogue.book(algorithm).tables[name.strip("`")]
        assert (suite == "killed") == adequacy.suite_kills(algorithm, table), (
            f"{algorithm} {name}: the suite column is stale: run make adequacy")


def test_suite_and_default_explore_kill_every_catalogued_variant_cf_r44() -> None:
    """CF-R44: no catalogued variant is missed by both the shipped suite and the default
    explore (add a vector to the algorithm's cases where one is)."""
    missed = [r[:3] for r in adequacy.committed()
              if r[3] != "killed" and not r[5].startswith("killed")]
    assert missed == [], f"missed by the suite and the default explore: {missed}"


@rule("RB-R14")
def _end_before_window(state: object, drained: tuple[object, ...], end: int
                       ) -> tuple[object, tuple[object, ...], int]:
    """The batch ends one nanosecond before the window's end."""
    return state, drained, end - 1


@rule("RB-R10")
def _each_profile_its_own(config: Any, state: Any) -> Any:
    """Each profile's own function, written again: changes nothing (a variant is swapped
    in over every profile's table)."""
    own = rb._backstop if config.profile == HEAD else rb._no_backstop
    return own(config, state)


@pytest.fixture
def declared() -> Iterator[tuple[Table, Table]]:
    tables = (RB_BOOK.variant("test-adequacy-end", {rb._end_at_window: _end_before_window},
                              rule="RB-R14"),
              RB_BOOK.variant("test-adequacy-same", {rb._no_backstop: _each_profile_its_own},
                              rule="RB-R10"))
    try:
        yield tables
    finally:
        for table in tables:
            RB_BOOK.tables.pop(table.name, None)
        RB_BOOK.resolved.clear()


def test_a_source_kills_a_variant_that_changes_an_answer_cf_r44(
        declared: tuple[Table, Table]) -> None:
    """CF-R44: a variant moving each batch's end is killed by the suite, fuzz and explore;
    one that changes nothing is killed by none; the table's text round-trips."""
    moved, same = declared
    assert adequacy.suite_kills(RB, moved) and adequacy.explore_kills(RB, moved, 3)
    assert adequacy.fuzz_kills(RB, moved, 50, 0)
    assert not adequacy.suite_kills(RB, same) and not adequacy.explore_kills(RB, same, 3)
    assert not adequacy.fuzz_kills(RB, same, 50, 0)
    row = adequacy.Row(RB, "RB-R14", moved.name, True, False, True)
    text = adequacy.written(f"a\n{adequacy.BEGIN}\nold\n{adequacy.END}\nb",
                            adequacy.markdown([row]))
    assert adequacy.committed(text) == [[RB, "RB-R14", f"`{moved.name}`", "killed",
                                         "**missed**", f"killed ({adequacy.depth(RB)})"]]
    assert text.startswith("a\n") and text.endswith("\nb")
