"""Each catalogued variant of the rate-aware batcher's rules (CF-R41,
``rate_aware_batcher/variants.py``) is observably different from the rule: some shipped
suite vector's outputs differ when it is swapped into the rule text, over the vector's own
profile (``timealign conform`` runs the suite by default; its explore is off unless asked).
A variant killed by nothing would be no variant: a port enacting it passes every check."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from timealign.conformance.catalogue import port, run_variants, variants
from timealign.conformance.suites import shipped
from timealign.rulebook import Table
from timealign.vectors import Vector

ALG = "rate_aware_batcher"
JSON = dict[str, Any]
CATALOGUE = variants(ALG)


@cache
def _suite() -> tuple[Vector, ...]:
    return tuple(shipped(ALG))


def _expected(vector: Vector) -> list[JSON]:
    assert vector.outputs is not None, vector.name  # a shipped vector has its outputs
    return list(vector.outputs)


def _killers(table: Table) -> list[Vector]:
    """The suite's vectors, those citing the variant's rule first."""
    return sorted(_suite(), key=lambda v: table.rule not in v.rules)


@pytest.mark.parametrize("table", CATALOGUE, ids=[t.label for t in CATALOGUE])
def test_every_catalogued_variant_is_killed_by_the_suite_cf_r41(table: Table) -> None:
    for vector in _killers(table):
        if run_variants(ALG, [table], vector.config, vector.inputs) != _expected(vector):
            return
    raise AssertionError(f"{table.label} gives the reference's outputs on every shipped "
                         "vector: add a vector that tells it apart, or drop it")


def test_the_catalogue_covers_the_decisions_of_issue_41_rb_r4() -> None:
    """The decisions the issue names have variants: the ESS card's slot count off by one,
    the pulse rounding, the slot gate, the HWM around the check, gap recovery, the stall
    comparison; and a variant is swapped in only for its run."""
    names = {t.name: t.rule for t in CATALOGUE}
    assert names["slots-minus-one"] == "RB-R4"
    assert {names[n] for n in ("pulse-floor", "pulse-ceil", "pulse-truncated",
                               "pulse-half-up")} == {"RB-R5"}
    assert names["gate-strict"] == names["timeout-exclusive"] == "RB-R10"
    assert names["hwm-after-check"] == "RB-R9"
    assert names["gap-steps-ceil"] == names["gap-without-veto"] == "RB-R13"
    assert names["stall-strict"] == "RB-R26"
    vector = next(v for v in _suite() if v.name == "happy_path_14hz")
    planted = port(ALG, "slots-minus-one")(vector.config, list(vector.inputs))
    assert planted != _expected(vector)
    assert run_variants(ALG, [], vector.config, vector.inputs) == _expected(vector)


@pytest.mark.parametrize("table", CATALOGUE, ids=[t.label for t in CATALOGUE])
def test_a_variant_changes_one_rule_and_says_what_it_does_cf_r41(table: Table) -> None:
    assert table.rule is not None and table.rule.startswith("RB-")
    assert table.about and table.about[0].isupper() and table.about.endswith(".")
