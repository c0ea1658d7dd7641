"""Every rule id defined in ``spec/`` is cited by at least one test (spec/README.md).

An id is *defined* where a spec line starts a rule with it: a table row ``| AT-R3 |`` or a
bold/heading marker ``**AT-R3**`` / ``### AT-R3``. An id is *cited* when it appears anywhere
under ``tests/`` other than this file.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ID = r"(?:AT|EB|RB|VEC|DRV|SP|BAG|PL)-[RIDH]\d+"
DEFINITION = re.compile(rf"^\s*(?:\|\s*|\*\*|#+\s+)({ID})\b", re.MULTILINE)
CITATION = re.compile(rf"\b({ID})\b")


def defined_ids() -> dict[str, str]:
    ids: dict[str, str] = {}
    for spec in sorted((ROOT / "spec").glob("*.md")):
        for match in DEFINITION.finditer(spec.read_text(encoding="utf-8")):
            ids.setdefault(match.group(1), spec.name)
    return ids


def cited_ids() -> set[str]:
    cited: set[str] = set()
    for path in (ROOT / "tests").rglob("*.py"):
        if path.name != Path(__file__).name:
            cited.update(CITATION.findall(path.read_text(encoding="utf-8")))
    return cited


def test_spec_defines_rule_ids() -> None:
    assert len(defined_ids()) > 0


def test_every_rule_id_is_cited_by_a_test() -> None:
    missing = sorted(set(defined_ids()) - cited_ids())
    assert not missing, f"rule ids without a test: {missing}"


def test_every_cited_id_exists_in_the_spec() -> None:
    unknown = sorted(cited_ids() - set(defined_ids()))
    assert not unknown, f"tests cite ids the spec does not define: {unknown}"
