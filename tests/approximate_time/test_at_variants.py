"""The catalogue of ApproximateTime's rule variants (CF-R41, ``approximate_time/variants.py``):
every catalogued variant is told apart from the rule by the shipped suite (or, failing that,
by the explorer's traces), and the misreadings the issue names do what it says."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from timealign import registry, rulebook
from timealign.algorithm import run_json
from timealign.conformance import catalogue, suites
from timealign.conformance.instances import traces
from timealign.vectors import Vector

JSON = dict[str, Any]
ALGORITHM = "approximate_time"
#: The explorer's depth tried when the suite does not tell a variant apart (``timealign
#: diff``'s default).
DEPTH = 3
NAMES = [t.name for t in catalogue.variants(ALGORITHM)]


def _message(ident: str, topic: int, stamp: int) -> JSON:
    return {"op": "message", "topic": topic, "stamp": stamp, "id": ident}


@cache
def _sources() -> tuple[tuple[str, tuple[tuple[Vector, list[JSON]], ...]], ...]:
    """The suite, then the explorer's traces, each with the reference's outputs."""
    reference = registry.get(ALGORITHM)
    found = []
    for source, vectors in (("suite", suites.shipped(ALGORITHM)),
                            ("explore", [v for _, _, v in traces(reference, DEPTH)])):
        found.append((source, tuple((v, run_json(reference, v.config, list(v.inputs)))
                                    for v in vectors)))
    return tuple(found)


def _killer(name: str) -> tuple[str, str] | None:
    """(source, vector name) of the first trace whose outputs differ under ``name``."""
    for source, runs in _sources():
        for vector, expected in runs:
            if catalogue.run_variants(ALGORITHM, [name], vector.config,
                                      list(vector.inputs)) != expected:
                return source, vector.name
    return None


def test_the_catalogue_covers_the_misreadings_the_issue_names_cf_r41() -> None:
    labels = {t.label for t in catalogue.variants(ALGORITHM)}
    assert {"AT-R6 ~ tie-end-lowest", "AT-R6 ~ tie-start-highest",
            "AT-R8 ~ interval-not-strict", "AT-D23 ~ round-not-trunc",
            "AT-R5 ~ overflow-drops-newest", "AT-R10 ~ zero-stamp-never-pivot",
            "AT-R12 ~ equal-stamps-end-search", "AT-R13 ~ per-topic-look-ahead",
            "AT-R5 ~ overflow-holds-one-more"} <= labels


@pytest.mark.parametrize("name", NAMES)
def test_every_variant_is_killed_by_the_suite_or_the_explorer_cf_r41(name: str) -> None:
    """A variant no input can tell from the rule is not a variant (CF-R41): the shipped
    suite kills each one (the explorer's traces are the fallback)."""
    killed = _killer(name)
    assert killed is not None, f"{name}: no suite vector nor explorer trace tells it apart"
    assert killed[0] == "suite", f"{name} is killed only by {killed}: add a suite vector"


def test_a_variant_runs_only_while_swapped_in_and_over_either_arithmetic_cf_r41() -> None:
    """The swap lasts one call; a variant replaces its slot under ros1 as under ros2, and its
    replacement runs under no profile of its own (CF-R24)."""
    book = catalogue.book(ALGORITHM)
    vector = next(v for v in suites.shipped(ALGORITHM)
                  if v.name == "pitfall_equal_stamps_in_a_queue_ros1")
    reference = registry.get(ALGORITHM)
    plain = run_json(reference, vector.config, list(vector.inputs))
    assert catalogue.run_variants(ALGORITHM, ["equal-stamps-end-search"], vector.config,
                                  list(vector.inputs)) != plain
    assert run_json(reference, vector.config, list(vector.inputs)) == plain
    for table in book.catalogue():
        for replacement in table.entries.values():
            found = rulebook.rule_of(replacement.__code__)
            assert found is not None and found.profiles == (), table.name


def test_fkie_misreadings_do_what_the_issue_says_at_r10_at_r12_at_r5() -> None:
    """The behaviours of fkie/message_filters, each as the variant of the rule it misreads:
    a stamp 0 never a pivot (nothing is ever published), equal stamps ending the search
    ({a0, b0}, not {a3, b0}), a queue holding one more message."""
    config: JSON = {"topics": 2, "queue_size": 10, "age_penalty": 0}
    second = 1_000_000_000
    zeros = [_message(f"{side}{k}", topic, k * second) for k in range(3)
             for topic, side in ((0, "a"), (1, "b"))]
    plain = run_json(registry.get(ALGORITHM), config, zeros)
    assert [o["ids"] for o in plain if o["kind"] == "published"] == [
        ["a0", "b0"], ["a1", "b1"], ["a2", "b2"]]
    assert not [o for o in catalogue.run_variants(
        ALGORITHM, ["zero-stamp-never-pivot"], config, zeros) if o["kind"] == "published"]

    equal = [_message("a0", 0, 100), _message("a1", 0, 100), _message("b0", 1, 105),
             _message("a2", 0, 103), _message("a3", 0, 106)]
    published = [o["ids"] for o in catalogue.run_variants(
        ALGORITHM, ["equal-stamps-end-search"], config, equal) if o["kind"] == "published"]
    assert published == [["a0", "b0"]]

    burst = [_message(f"a{k}", 0, k) for k in range(4)]
    small: JSON = {**config, "queue_size": 2}
    overflowed = [o["id"] for o in catalogue.run_variants(
        ALGORITHM, ["overflow-holds-one-more"], small, burst) if o["kind"] == "dropped"]
    assert overflowed == ["a0"]  # the reference drops a0 and a1
