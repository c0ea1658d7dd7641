"""The event-time batcher's catalogue of rule variants (CF-R41): each catalogued variant is
observably different from the rule it misreads. The shipped suite, then the traces of the
default ``timealign conform`` explore, are judged by the harness (:class:`Judge`) with the
rule text plus one variant as the implementation; a variant no input tells from the rule
would not be a variant. Under the ``thin-edge`` target (its domain, its profile) the same
holds for every variant that profile can see."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest

from timealign import registry, rulebook
from timealign.algorithm import run_json
from timealign.conformance import find_target
from timealign.conformance.catalogue import port, run_variants, variants
from timealign.conformance.harness import InProcess, Judge
from timealign.conformance.instances import traces
from timealign.conformance.suites import shipped
from timealign.event_time_batcher import model
from timealign.vectors import Vector

JSON = dict[str, Any]
NAME = "event_time_batcher"
#: The depth ``timealign conform`` explores to by default (its ``--explore``).
DEFAULT_EXPLORE = 3
#: Variants a target's profile cannot see, and why.
UNSEEN = {"thin-edge": {"ids-by-event-time": "the profile compares a batch's ids as a set"}}


def _vectors(target: str | None) -> Iterator[tuple[str, Vector]]:
    """The shipped suite, then the default explore's traces (the target's instances),
    shortest first."""
    reference = registry.get(NAME)
    aimed = None if target is None else find_target(reference, target)
    yield from (("suite", v) for v in shipped(NAME))
    yield from (("explore", v) for _, _, v in traces(reference, DEFAULT_EXPLORE, aimed))


@cache
def _killed(target: str | None) -> dict[str, tuple[str, str]]:
    """Each catalogued variant -> the first source and vector the harness finds it differ
    on, with ``target``'s domain and profile (``full`` without one)."""
    reference = registry.get(NAME)
    aimed = None if target is None else find_target(reference, target)
    profile = "full" if aimed is None else aimed.observe
    judges = {t.name: Judge(reference, InProcess(port(NAME, t.name)), profile, aimed)
              for t in variants(NAME)}
    found: dict[str, tuple[str, str]] = {}
    for source, vector in _vectors(target):
        if not judges:
            break
        for name, judge in list(judges.items()):
            if judge(vector).status == "differ":
                found[name] = (source, vector.name)
                del judges[name]
    return found


@pytest.mark.parametrize("target", [None, "thin-edge"])
def test_every_catalogued_variant_is_killed_by_the_suite_or_the_default_explore_cf_r41(
        target: str | None) -> None:
    """Every variant's outputs differ from the reference's, as the harness sees them, on
    some shipped vector or some trace of the default explore; under the ``thin-edge``
    target every variant its profile can see (the ``thin_edge_*`` vectors kill those its
    whole-millisecond explore cannot: split rounding, 1 ns conflicts, closing order), and
    none it cannot."""
    catalogued = [t.name for t in variants(NAME)]
    assert len(catalogued) == len(set(catalogued))
    unseen = UNSEEN.get(target or "", {})
    assert set(unseen) <= set(catalogued)
    assert sorted(set(catalogued) - set(unseen) - set(_killed(target))) == []
    assert set(unseen) & set(_killed(target)) == set(), "a variant said unseen is seen"


def test_the_issue_s_thin_edge_misreadings_are_catalogued_under_their_rules_cf_r41(
        ) -> None:
    """Issue 41: thin-edge's lookup ``event_time <= batch_end`` made ``<`` is EB-R7's
    ``window-end-exclusive``; its too-old test ``<`` made ``<=`` is EB-R5's
    ``too-old-inclusive``. A window end excluded opens a new batch where the rule
    splits."""
    rules = {t.name: t.rule for t in variants(NAME)}
    assert rules["window-end-exclusive"] == "EB-R7"
    assert rules["too-old-inclusive"] == "EB-R5"
    config = {"batching_window": 4, "max_message_delay": 2, "message_leap_limit": 1}
    inputs: list[JSON] = [
        {"op": "message", "key": "a", "event_time": 0, "at": 0, "id": "a0"},
        {"op": "message", "key": "a", "event_time": 4, "at": 4, "id": "a1"},
        {"op": "flush"}]
    assert run_json(registry.get(NAME), config, inputs) == [  # a1 splits [0, 4] at 2
        {"input": 0, "kind": "timer", "at": 6},
        {"input": 1, "kind": "batch", "start": 0, "end": 2, "ids": ["a0"]},
        {"input": 2, "kind": "batch", "start": 2, "end": 4, "ids": ["a1"]}]
    assert port(NAME, "window-end-exclusive")(config, inputs) == [  # a1 opens [4, 8]
        {"input": 0, "kind": "timer", "at": 6}, {"input": 1, "kind": "timer", "at": 10},
        {"input": 2, "kind": "batch", "start": 4, "end": 8, "ids": ["a1"]},
        {"input": 2, "kind": "batch", "start": 0, "end": 4, "ids": ["a0"]}]
    old: list[JSON] = [{"op": "message", "key": "a", "event_time": 2, "at": 4, "id": "a0"}]
    assert run_json(registry.get(NAME), config, old) == [
        {"input": 0, "kind": "timer", "at": 8}]
    assert port(NAME, "too-old-inclusive")(config, old) == [
        {"input": 0, "kind": "rejected", "id": "a0", "reason": "too_old"}]


def test_a_variant_runs_only_inside_its_swap_cf_r41() -> None:
    """The rule text resolves its one profile's empty table again once a variant's run
    ends; the config names no profile (EB-R1 has no profile field), and the variants are
    no part of the registered rule text."""
    assert model.BOOK.key is None and model.BOOK.profiles == (model.PROFILE,)
    assert rulebook.profiles_of("timealign.event_time_batcher") is None  # none to choose
    assert not any(r.module.endswith(".variants")
                   for r in rulebook.registered("timealign.event_time_batcher"))
    config = {"batching_window": 0, "max_message_delay": 1, "message_leap_limit": 0}
    inputs = [{"op": "message", "key": "a", "event_time": 0, "at": 1, "id": "a0"}]
    plain = run_json(registry.get(NAME), config, inputs)
    assert run_variants(NAME, ["timer-when-due"], config, inputs) != plain
    assert run_json(registry.get(NAME), config, inputs) == plain
    resolved = model.BOOK.rules(model.PROFILE)
    assert all(resolved.of(base) is base for base in model.BOOK.slots.values())
