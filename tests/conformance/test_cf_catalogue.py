"""The catalogue of rule variants (CF-R41): each catalogued variant is described under its
rule in the spec, each described one is catalogued, and every registered rule of an
algorithm with a catalogue has a variant or a stated reason for having none."""

from __future__ import annotations

import importlib
import importlib.util
import re
from functools import cache
from types import ModuleType

import pytest

from timealign import registry, rulebook
from tools import spec_index

ITEM = re.compile(r"^- `([\w.-]+)`: \S")
INTRO = "Variants (CF-R41):"


@cache
def _described() -> dict[str, set[str]]:
    """Rule id -> the variant names its spec section describes."""
    texts = {p: p.read_text(encoding="utf-8") for p in spec_index.spec_files()}
    ids = set(spec_index.definitions())
    found: dict[str, set[str]] = {}
    for rule_id, section in spec_index.sections(texts, ids).items():
        lines = section["markdown"].splitlines()
        if INTRO not in lines:
            continue
        after = lines[lines.index(INTRO) + 1:]
        while after and not after[0].strip():  # a blank line lets Markdown see a list
            after = after[1:]
        for line in after:
            match = ITEM.match(line)
            if match is None:
                if line.startswith(("- ", "  ")):
                    raise AssertionError(f"{rule_id}: a variant item reads '- `name`: what "
                                         f"it does', not {line!r}")
                break
            found.setdefault(rule_id, set()).add(match.group(1))
    return found


def _variants_module(name: str) -> ModuleType | None:
    module = f"{registry.package(name)}.variants"
    return importlib.import_module(module) if importlib.util.find_spec(module) else None


@pytest.mark.parametrize("name", registry.names())
def test_each_catalogued_variant_is_described_under_its_rule_cf_r41(name: str) -> None:
    catalogued = {(t.rule, t.name) for t in rulebook.catalogue(registry.package(name))}
    family = {r.family for r in rulebook.registered(registry.package(name))}
    described = {(rule_id, v) for rule_id, names in _described().items()
                 if rule_id.partition("-")[0] in family for v in names}
    assert catalogued - described == set(), "catalogued, not described in spec/"
    assert described - catalogued == set(), "described in spec/, not catalogued"


@pytest.mark.parametrize("name", registry.names())
def test_every_rule_has_a_variant_or_a_reason_cf_r41(name: str) -> None:
    module = _variants_module(name)
    if module is None:
        pytest.skip(f"{name} has no catalogue yet")
    ids = {r.id for r in rulebook.registered(registry.package(name))}
    with_variant = {t.rule for t in rulebook.catalogue(registry.package(name))}
    without: dict[str, str] = module.WITHOUT_VARIANTS
    assert all(reason.strip() for reason in without.values())
    assert with_variant & set(without) == set(), "a rule both with variants and without"
    assert ids - with_variant - set(without) == set(), "rules with neither a variant nor " \
        "a reason in WITHOUT_VARIANTS"
    assert set(without) - ids == set(), "WITHOUT_VARIANTS names rules not registered"
