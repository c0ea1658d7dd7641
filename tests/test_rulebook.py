"""The rule registry (:mod:`timealign.rulebook`) agrees with the spec and with what runs
(CF-R23, CF-R24, RB-R17)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from timealign import registry, rulebook
from timealign.algorithm import run_json
from timealign.conformance.fired import package_of
from timealign.conformance.suites import shipped

ROOT = Path(__file__).resolve().parent.parent
#: The algorithms whose rule text is registered rule functions: every registered one (a
#: new algorithm's rule text is registered rule functions too, or these tests fail).
CONVERTED = registry.names()


def _ran(name: str, profile: str | None) -> set[rulebook.Rule]:
    """The rule functions that run over the shipped vectors of ``name`` under
    ``profile`` (``None``: an algorithm without profiles, its vectors as they are)."""
    reference = registry.get(name)
    known = rulebook.profiles_of(package_of(reference))
    assert (known is None) == (profile is None)
    calls: list[rulebook.Call] = []
    with rulebook.calls(calls, details=False):
        for vector in shipped(name):
            config = vector.config if known is None else {**vector.config, known[0]: profile}
            run_json(reference, config, vector.inputs)
    return {c.rule for c in calls}


@pytest.mark.parametrize("name", CONVERTED)
def test_every_rule_function_runs_under_each_profile_it_claims_and_no_other_cf_r24(
        name: str) -> None:
    """Over the shipped vectors, each registered rule function runs under every profile
    it claims, and never under one it does not (RB-R17)."""
    package = package_of(registry.get(name))
    known = rulebook.profiles_of(package)
    profiles: tuple[str | None, ...] = (None,) if known is None else known[1]
    for profile in profiles:
        ran = _ran(name, profile)
        claimed = {r for r in rulebook.registered(package)
                   if profile is None or r.runs_under(profile)}
        assert not {r.name for r in claimed - ran}, f"never ran under {profile}"
        assert not {r.name for r in ran - claimed}, f"ran under {profile}, not claimed"


@pytest.mark.parametrize("name", CONVERTED)
def test_every_rule_of_the_spec_has_a_rule_function_and_back_cf_r23(name: str) -> None:
    """Every ``-R`` id its spec defines has a registered rule function, and every
    registered function names an id its spec defines."""
    text = (ROOT / "spec" / f"{name}.md").read_text("utf-8")
    defined = set(re.findall(r"^### ([A-Z]{2,4}-[RDIH]\d+) ", text, re.MULTILINE))
    package = package_of(registry.get(name))
    ids = {r.id for r in rulebook.registered(package)}
    family = next(iter(ids)).partition("-")[0]
    rules = {d for d in defined if d.startswith(f"{family}-R")}
    assert not sorted(rules - ids), "spec rules without a rule function"
    assert not sorted(ids - defined), "rule functions naming no spec id"


def test_head_only_rules_are_head_only_rb_r17() -> None:
    """The registry says which profile runs RB-R21, RB-R23 and RB-R27 (the issue's
    misread ones), and that the shared rules run in both."""
    found = rulebook.by_profile("timealign.rate_aware_batcher")
    for rule in ("RB-R19", "RB-R20", "RB-R21", "RB-R22", "RB-R23", "RB-R24", "RB-R25",
                 "RB-R26", "RB-R27"):
        assert found[rule] == ("esslivedata-head",), rule
    assert found["RB-D2"] == ("card",)
    for rule in ("RB-R8", "RB-R11", "RB-R14", "RB-R18"):
        assert found[rule] == ("card", "esslivedata-head"), rule


def test_recording_restores_the_previous_profiler_and_costs_nothing_unrecorded() -> None:
    """A rule function is the function itself (no wrapper), and recording restores the
    profiler it found."""
    import sys

    from timealign.rate_aware_batcher import machine

    assert rulebook.rule_of(machine._arm_clock.__code__) is not None
    assert not hasattr(machine._arm_clock, "__wrapped__")
    previous = sys.getprofile()
    with rulebook.calls([]):
        pass
    assert sys.getprofile() is previous
