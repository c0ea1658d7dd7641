"""The diagnosis over the whole catalogue (CF-R42, CF-R43): for every catalogued variant of
every algorithm, a stand-in port that is the reference with that variant planted is named
by ``conform`` as its explanation. In ``make test``: on one trace that kills it, short
when it can be. Marked ``catalogue`` (``make test-catalogue``, run by
``.ci/run``): through the suite, fuzz and explore, and two variants planted at once."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from timealign import registry, rulebook
from timealign.conformance import Report, catalogue, check, shipped
from timealign.conformance.harness import InProcess, Judge
from timealign.conformance.instances import traces
from timealign.vectors import Vector
from tools import adequacy

JSON = dict[str, Any]

CATALOGUE = [(name, table.name) for name in registry.names()
             for table in catalogue.variants(name)]
#: the sources of the whole-catalogue run (the suite kills what explore 3 misses, or the
#: adequacy test fails)
FUZZ, SEED, EXPLORE = 200, 1, 3


def _table(algorithm: str, name: str) -> rulebook.Table:
    return catalogue.book(algorithm).tables[name]


def _named(report: Report, label: str) -> None:
    """Every differing entry names ``label`` among its best-confirmed explanations."""
    entries = [d for s in report.sources for d in s.differences if d.status == "differ"]
    assert entries, report.text()
    for d in entries:
        assert d.diagnosis is not None and d.diagnosis.explanations, report.text()
        best = d.diagnosis.explanations[0].matches
        top = [e.label for e in d.diagnosis.explanations if e.matches == best]
        assert label in top, report.text()


#: the reference's outputs of each trace tried, shared by the variants
_EXPECTED: dict[str, list[JSON]] = {}


def _first_killing(algorithm: str, table: rulebook.Table) -> Vector | None:
    reference = registry.get(algorithm)
    every = itertools.chain(  # the explored traces are short, those of depth 3 few
        (v for _, _, v in traces(reference, 3)), shipped(algorithm),
        (v for _, level, v in traces(reference, adequacy.depth(algorithm)) if level > 3))
    return next((v for v in every if catalogue.kills(algorithm, table, [v], _EXPECTED)),
                None)


@pytest.mark.parametrize(("algorithm", "name"), CATALOGUE)
def test_each_catalogued_variant_is_named_on_a_trace_that_kills_it_cf_r42(
        algorithm: str, name: str) -> None:
    """CF-R42: the stand-in port with the variant planted differs on the first explored
    trace of depth 3, else shipped vector, else explored trace, that kills it, and the
    diagnosis of that difference (as conform makes it, without the shrinking) names it."""
    table = _table(algorithm, name)
    vector = _first_killing(algorithm, table)
    assert vector is not None, f"{table.label}: killed by no source (CF-R44)"
    judge = Judge(registry.get(algorithm), InProcess(catalogue.port(algorithm, name)))
    verdict = judge(vector)
    assert verdict.status == "differ", verdict
    entry = judge.difference("vectors", vector, verdict, len(vector.inputs))
    assert entry.diagnosis is not None
    assert table.label in [e.label for e in entry.diagnosis.explanations], (
        entry.diagnosis.text())


@pytest.mark.catalogue
@pytest.mark.parametrize(("algorithm", "name"), CATALOGUE)
def test_conform_names_each_catalogued_variant_on_every_source_cf_r42_cf_r43(
        algorithm: str, name: str) -> None:
    """CF-R42, CF-R43: conform (suite, fuzz, explore) against the stand-in port with the
    variant planted exits 1 and every differing entry of every source names it."""
    table = _table(algorithm, name)
    report = check(algorithm, catalogue.port(algorithm, name), fuzz=FUZZ, seed=SEED,
                   explore=EXPLORE)
    assert report.exit_code() == 1, report.text()
    _named(report, table.label)


def _pairs() -> list[tuple[str, str, str]]:
    """Per algorithm, its first two variants of different slots and rules that the explore
    of the adequacy table (at its depth, :func:`tools.adequacy.depth`) kills."""
    found = []
    for algorithm in registry.names():
        rows = {r[2].strip("`"): r for r in adequacy.committed() if r[0] == algorithm}
        killed = [t for t in catalogue.variants(algorithm)
                  if t.name in rows and rows[t.name][5].startswith("killed")]
        pair = next(((a, b) for a, b in itertools.combinations(killed, 2)
                     if a.rule != b.rule and not set(a.entries) & set(b.entries)), None)
        if pair is not None:
            found.append((algorithm, pair[0].name, pair[1].name))
    return found


@pytest.mark.catalogue
@pytest.mark.parametrize(("algorithm", "first", "second"), _pairs())
def test_two_planted_variants_come_out_as_two_explained_differences_cf_r43(
        algorithm: str, first: str, second: str) -> None:
    """CF-R43: with two variants planted at once, explore reports two entries, one named by
    each (the second possibly beside the first), never a pair of them as one entry."""
    report = check(algorithm, catalogue.port(algorithm, first, second), vectors=[],
                   explore=adequacy.depth(algorithm))  # the depth the pair was chosen at
    [explore] = report.sources
    labels: list[Any] = sorted(d.diagnosis.explanations[0].label for d in explore.differences
                               if d.diagnosis is not None and d.diagnosis.explanations)
    assert labels == sorted((_table(algorithm, first).label,
                             _table(algorithm, second).label)), report.text()
