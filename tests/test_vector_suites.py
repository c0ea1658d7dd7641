"""The shipped conformance suites (spec/vectors.md, VEC-R1 to VEC-R6).

For every algorithm of the registry: a family ``vectors/<name>/`` exists, its files are
exactly what ``cases.generate`` writes from the cases (no drift), every file passes
``timealign check``, names are unique, and every rule (``R``) and decision (``D``) id of
``spec/<name>.md`` is exercised by a named vector.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cases import generate
from timealign import registry, vectors
from timealign.cli import main

ROOT = Path(__file__).resolve().parent.parent
FAMILIES = registry.names()


def test_vec_r2_every_registered_algorithm_has_a_vector_family() -> None:
    """VEC-R2: the families under ``vectors/`` are exactly the registered algorithms."""
    assert FAMILIES
    assert generate.families() == list(FAMILIES), "one cases/<name>.py per algorithm"


@pytest.mark.parametrize("family", FAMILIES)
def test_shipped_files_match_the_reference(family: str) -> None:
    """VEC-R6: regenerating from the cases reproduces every shipped file exactly."""
    folder = ROOT / "vectors" / family
    wanted = generate.expected_files(family)
    shipped = {p.name: p.read_text(encoding="utf-8") for p in folder.glob("*.json")}
    assert sorted(shipped) == sorted(wanted), "run `make vectors`"
    for name, text in wanted.items():
        assert shipped[name] == text, f"{name} differs from the reference; run `make vectors`"


@pytest.mark.parametrize("family", FAMILIES)
def test_suite_passes_check(family: str, capsys: pytest.CaptureFixture[str]) -> None:
    """VEC-R1, VEC-R4: every shipped vector decodes and passes `timealign check`."""
    assert main(["check", str(ROOT / "vectors" / family)]) == 0, capsys.readouterr().out
    names = [v.name for p in vectors.files([ROOT / "vectors" / family]) for v in vectors.load(p)]
    assert len(names) == len(set(names)) > 0


@pytest.mark.parametrize("family", FAMILIES)
def test_every_rule_and_decision_has_a_vector(family: str) -> None:
    """Every rule and decision id defined in ``spec/<family>.md`` names a vector."""
    spec = (ROOT / "spec" / f"{family}.md").read_text(encoding="utf-8")
    defined = set(re.findall(r"^\s*(?:\|\s*|\*\*|#+\s+)([A-Z]{2,4}-[RD]\d+)\b", spec, re.M))
    covered = {rule for case in generate.cases(family) for rule in case.rules}
    missing = sorted(defined - covered)
    assert defined and not missing, f"{family}: rules/decisions without a vector: {missing}"


@pytest.mark.parametrize("family", FAMILIES)
def test_installed_suite_is_what_make_vectors_writes(family: str) -> None:
    """CF-R6: ``timealign/suites/<family>.jsonl`` (package data) is exactly what
    ``make vectors`` writes; run it after changing a case."""
    installed = ROOT / "reference" / "timealign" / "suites" / f"{family}.jsonl"
    assert installed.read_text(encoding="utf-8") == generate.bundle_text(family), \
        "run `make vectors`"


def test_every_approximate_time_rule_has_a_vector_without_age_penalty() -> None:
    """Issue 20: a port without an age penalty runs most of the ApproximateTime suite, and
    every ``AT-R…`` rule is exercised by a vector with ``age_penalty`` 0 (the pitfall
    vectors among them)."""
    spec = (ROOT / "spec" / "approximate_time.md").read_text(encoding="utf-8")
    defined = set(re.findall(r"^\s*(?:\|\s*|\*\*|#+\s+)(AT-R\d+)\b", spec, re.M))
    cases = generate.cases("approximate_time")
    at_zero = [c for c in cases if c.config.get("age_penalty") == 0]
    covered = {rule for case in at_zero for rule in case.rules}
    assert defined and not sorted(defined - covered)
    assert len(at_zero) > 3 * len(cases) // 4
    assert {c.name for c in at_zero} >= {"pitfall_stamp_zero_is_a_stamp",
                                         "pitfall_stamp_zero_obeys_max_interval",
                                         "pitfall_equal_stamps_in_a_queue"}
