"""The event-time batcher's catalogue of rule variants (CF-R41): each catalogued variant is
observably different from the rule it misreads. The shipped suite, then the traces of the
default ``timealign conform`` explore, are run under the rule text with one variant
swapped in; a variant no input tells from the rule would not be a variant."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any

from timealign import registry
from timealign.algorithm import run_json
from timealign.conformance.catalogue import port, run_variants, variants
from timealign.conformance.instances import traces
from timealign.conformance.suites import shipped
from timealign.event_time_batcher import model
from timealign.vectors import Vector

JSON = dict[str, Any]
NAME = "event_time_batcher"
#: The depth ``timealign conform`` explores to by default (its ``--explore``).
DEFAULT_EXPLORE = 3


def _vectors() -> Iterator[tuple[str, Vector]]:
    """The shipped suite, then the default explore's traces, shortest first."""
    reference = registry.get(NAME)
    yield from (("suite", v) for v in shipped(NAME))
    yield from (("explore", v) for _, _, v in traces(reference, DEFAULT_EXPLORE))


@cache
def _killed() -> dict[str, tuple[str, str]]:
    """Each catalogued variant -> the first source and vector whose outputs under it
    differ from the reference's."""
    reference = registry.get(NAME)
    alive = [t.name for t in variants(NAME)]
    found: dict[str, tuple[str, str]] = {}
    for source, vector in _vectors():
        if not alive:
            break
        want = run_json(reference, vector.config, vector.inputs)
        for name in list(alive):
            if run_variants(NAME, [name], vector.config, vector.inputs) != want:
                found[name] = (source, vector.name)
                alive.remove(name)
    return found


def test_every_catalogued_variant_is_killed_by_the_suite_or_the_default_explore_cf_r41(
        ) -> None:
    """Every variant's outputs differ from the reference's on some shipped vector or some
    trace of the default explore."""
    catalogued = [t.name for t in variants(NAME)]
    assert len(catalogued) == len(set(catalogued))
    assert sorted(set(catalogued) - set(_killed())) == []


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
    ends, and the config names no profile (EB-R1 has no profile field)."""
    assert model.BOOK.key is None and model.BOOK.profiles == (model.PROFILE,)
    config = {"batching_window": 0, "max_message_delay": 1, "message_leap_limit": 0}
    inputs = [{"op": "message", "key": "a", "event_time": 0, "at": 1, "id": "a0"}]
    plain = run_json(registry.get(NAME), config, inputs)
    assert run_variants(NAME, ["timer-when-due"], config, inputs) != plain
    assert run_json(registry.get(NAME), config, inputs) == plain
    resolved = model.BOOK.rules(model.PROFILE)
    assert all(resolved.of(base) is base for base in model.BOOK.slots.values())
