"""Diagnosis by the catalogued rule variants (CF-R42) and faults kept apart by their
explanation (CF-R43), with variants declared here on the rate-aware batcher's slots (each
removed from its book afterwards, so no other test sees it) and ApproximateTime's catalogued
rounding variant."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from timealign import registry, rulebook, vectors
from timealign.conformance import catalogue, check, observe, shipped
from timealign.conformance.diagnose import Diagnoser, singles_then_pairs
from timealign.rate_aware_batcher import machine as rb
from timealign.rate_aware_batcher.model import BOOK as RB_BOOK
from timealign.rulebook import rule
from timealign.vectors import Vector

JSON = dict[str, Any]
RB = "rate_aware_batcher"


@rule("RB-R14")
def _end_before_window(state: Any, drained: tuple[Any, ...], end: int
                       ) -> tuple[Any, tuple[Any, ...], int]:
    """The batch ends one nanosecond before the window's end."""
    return state, drained, end - 1


@rule("RB-R11")
def _route_late(config: Any, state: Any, message: Any) -> Any:
    """Each message is routed as if stamped one nanosecond later."""
    return rb._route_in_window(config, state,
                               attrs.evolve(message, timestamp=message.timestamp + 1))


@pytest.fixture
def planted() -> Iterator[dict[str, rulebook.Table]]:
    """Two catalogued variants of the rate-aware batcher, for this test only."""
    tables = {
        "late": RB_BOOK.variant("test-route-late", {rb._route_message: _route_late},
                                rule="RB-R11"),
        "end": RB_BOOK.variant("test-end-before", {rb._end_at_window: _end_before_window},
                               rule="RB-R14"),
    }
    try:
        yield tables
    finally:
        for table in tables.values():
            RB_BOOK.tables.pop(table.name, None)
        RB_BOOK.resolved.clear()


def _explained(report: Any) -> list[str]:
    """The best explanation of each differing entry, or ``unexplained``."""
    found = []
    for source in report.sources:
        for d in source.differences:
            if d.status != "differ":
                continue
            assert d.diagnosis is not None, report.text()
            best = d.diagnosis.explanations
            found.append(best[0].label if best else "unexplained")
    return found


def test_singles_then_pairs_within_the_budget_cf_r42() -> None:
    """CF-R42: each variant alone, then pairs (never two the filter keeps apart), at most
    the budget's pairs."""
    assert list(singles_then_pairs("abc", 2)) == [("a",), ("b",), ("c",), ("a", "b"),
                                                   ("a", "c")]
    assert list(singles_then_pairs("abc", 9, lambda a, b: "a" not in (a, b))) == [
        ("a",), ("b",), ("c",), ("b", "c")]


def test_a_planted_variant_is_named_as_the_explanation_on_every_source_cf_r42(
        planted: dict[str, rulebook.Table], tmp_path: Path) -> None:
    """CF-R42: a stand-in port that is the reference with one catalogued variant differs,
    and every difference of the suite, fuzz and explore is explained by that variant,
    confirmed on every differing trace of the run kept; the text, the JSON report and the
    saved vectors (rules) say so."""
    label = planted["end"].label
    port = catalogue.port(RB, planted["end"].name)
    report = check(RB, port, fuzz=100, seed=1, explore=3, save_to=tmp_path)
    assert report.exit_code() == 1, report.text()
    found = _explained(report)
    assert found and set(found) == {label}, report.text()
    differing = sum(s.differ for s in report.sources)
    assert f"explained by {label} (matches {differing} of {differing} differing traces)" \
        in report.text(), report.text()
    assert f"diagnosis: explained by {label}\n" in report.text()
    assert report.to_json()["explained_by"] == [label]
    assert report.to_json()["unexplained"] == 0
    entry = report.to_json()["sources"]["explore"]["differences"][0]["diagnosis"]
    assert entry["explained"][0]["variants"] == [label]
    assert entry["explained"][0]["rules"] == ["RB-R14"]
    assert entry["explained"][0]["matches"] == entry["explained"][0]["of"] == differing
    assert entry["tried"] >= len(catalogue.variants(RB)) and entry["seconds"] >= 0
    saved = [v for p in vectors.files([tmp_path]) for v in vectors.load(p)]
    assert saved and all(v.rules[0] == "RB-R14" for v in saved)


def test_two_planted_variants_are_two_explained_differences_cf_r43(
        planted: dict[str, rulebook.Table]) -> None:
    """CF-R43: two variants planted at once come out of fuzz as two explained differences,
    each once with its own trace, the second read as its own variant beside the first (a
    trace showing both is no third entry); explore (which reaches only the first at depth
    3) counts every differing trace in that one entry; each explanation is confirmed on
    the traces it is needed for."""
    port = catalogue.port(RB, planted["end"].name, planted["late"].name)
    report = check(RB, port, vectors=[], fuzz=100, seed=1, explore=3)
    fuzz, explore = report.sources
    best = [d.diagnosis.explanations[0] for d in fuzz.differences
            if d.diagnosis is not None and d.diagnosis.explanations]
    assert len(fuzz.differences) == 2, report.text()
    assert sorted(e.label for e in best) == sorted(
        (planted["end"].label, planted["late"].label)), report.text()
    assert [e.along for e in best] == [(), (planted["end"].label,)], report.text()
    assert all(e.matches is not None and 0 < e.matches <= (e.of or 0) for e in best)
    [entry] = explore.differences
    assert entry.diagnosis is not None
    assert entry.diagnosis.explanations[0].label == planted["end"].label
    for source in report.sources:
        assert sum(d.alike for d in source.differences) == source.differ, report.text()
    assert " + " not in report.text()


def test_a_difference_no_variant_explains_names_its_symptoms_cf_r42() -> None:
    """CF-R42: a port dropping every superseded message is explained by no catalogued
    variant of ApproximateTime: the entry says so, with the rules of its diverging outputs
    and how many variant sets were tried."""
    at = registry.get("approximate_time")

    def port(config: JSON, inputs: list[JSON]) -> list[JSON]:
        return [o for o in catalogue.run_variants(at, (), config, inputs)
                if o.get("reason") != "superseded"]

    report = check("approximate_time", port, vectors=[], explore=3)
    [explore] = report.sources
    assert explore.differences, report.text()
    for d in explore.differences:
        assert d.diagnosis is not None and not d.diagnosis.explanations
        text = d.diagnosis.text()
        assert text.startswith("not explained"), text
        if d.diagnosis.catalogued:
            assert f"symptoms {', '.join(d.rules)}" in text
    count = len(explore.differences)
    assert f"diagnosis: {count} difference{'s' if count > 1 else ''} not explained by any " \
        "catalogued variant" in report.text(), report.text()
    assert report.to_json()["unexplained"] == count


def test_the_rounding_variant_is_named_on_the_suite_cf_r42() -> None:
    """CF-R42: ApproximateTime's catalogued rounding variant of the age-penalty product
    (AT-D23 ~ round-not-trunc, which the mutation study plants too) is named, among the
    best confirmed, on every differing vector of the suite against the port that runs it."""
    label = "AT-D23 ~ round-not-trunc"
    report = check("approximate_time", catalogue.port("approximate_time", "round-not-trunc"))
    entries = [d for s in report.sources for d in s.differences if d.status == "differ"]
    assert entries and report.exit_code() == 1, report.text()
    for d in entries:
        assert d.diagnosis is not None and d.diagnosis.explanations, report.text()
        best = d.diagnosis.explanations[0].matches
        assert label in [e.label for e in d.diagnosis.explanations if e.matches == best]


def test_the_diagnosis_compares_as_the_profile_does_cf_r42(
        planted: dict[str, rulebook.Table]) -> None:
    """CF-R42: a variant reproduces an answer when the profile's projections are equal:
    an answer with the variant's batches only (what ``upstream`` shows) matches under
    ``upstream``, not under ``full``, which sees the missing outputs."""
    table = planted["end"]
    reference = registry.get(RB)
    profiles = observe.profiles(RB)

    def run(vector: Vector, *chosen: rulebook.Table) -> list[JSON]:
        return catalogue.run_variants(RB, chosen, dict(vector.config), list(vector.inputs))

    vector = next(v for v in shipped(RB) if run(v, table) != run(v)
                  and any(o["kind"] != "batch" for o in run(v, table)))
    answer = [o for o in run(vector, table) if o["kind"] == "batch"]
    upstream = Diagnoser(reference, profiles["upstream"], variants=(table,))
    assert [e.label for e in upstream.diagnose(vector, answer).explanations] == [table.label]
    full = Diagnoser(reference, profiles["full"], variants=(table,))
    assert not full.diagnose(vector, answer).explanations
    assert full.diagnose(vector, run(vector, table)).explanations
