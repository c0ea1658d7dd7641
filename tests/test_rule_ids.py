"""Every rule id defined in ``spec/`` is cited by at least one test (spec/README.md).

An id is *defined* where a spec line starts a rule with it: a table row ``| AT-R3 |`` or a
bold/heading marker ``**AT-R3**`` / ``### AT-R3``. An id is *cited* only by a test: in the
name of a test function (``test_at_r3_...``; ``test_sp_i3_d1_...`` cites SP-I3 and SP-D1)
or in its docstring, where a test is a ``test_*`` function or method, or a rule, invariant
or initialize step of a Hypothesis state machine. A mention anywhere else (a comment, a
helper, a module docstring) does not count.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ID = r"[A-Z]{2,4}-[RIDH]\d+"
DEFINITION = re.compile(rf"^\s*(?:\|\s*|\*\*|#+\s+)({ID})\b", re.MULTILINE)
CITATION = re.compile(rf"\b({ID})\b")
NAME_PART = re.compile(r"[ridh]\d+")
STATEFUL = {"rule", "invariant", "initialize"}


def defined_ids() -> dict[str, str]:
    ids: dict[str, str] = {}
    for spec in sorted((ROOT / "spec").glob("*.md")):
        for match in DEFINITION.finditer(spec.read_text(encoding="utf-8")):
            ids.setdefault(match.group(1), spec.name)
    return ids


def prefixes() -> set[str]:
    """The id prefixes the spec uses (``AT``, ``SP``...), lower case as in test names."""
    return {rule.split("-")[0].lower() for rule in defined_ids()}


def ids_in_name(name: str, known: set[str]) -> set[str]:
    """``test_sp_i3_d1_r15_stream`` -> SP-I3, SP-D1, SP-R15: a prefix applies to the
    ``r``/``i``/``d``/``h`` parts that follow it, up to the first other word."""
    found: set[str] = set()
    prefix: str | None = None
    for part in name.split("_"):
        if part in known:
            prefix = part
        elif prefix is not None and NAME_PART.fullmatch(part):
            found.add(f"{prefix}-{part}".upper())
        else:
            prefix = None
    return found


def _decorator_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names: set[str] = set()
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Name):
            names.add(target.id)
        elif isinstance(target, ast.Attribute):
            names.add(target.attr)
    return names


def functions_under_test(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The test functions of a module: ``test_*`` and state-machine steps."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (
                node.name.startswith("test_") or _decorator_names(node) & STATEFUL):
            yield node


def cited_ids(root: Path = ROOT / "tests") -> set[str]:
    known = prefixes()
    cited: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        if path.name == Path(__file__).name:
            continue
        for test in functions_under_test(ast.parse(path.read_text(encoding="utf-8"))):
            cited |= ids_in_name(test.name, known)
            cited.update(CITATION.findall(ast.get_docstring(test) or ""))
    return cited


def test_spec_defines_rule_ids() -> None:
    assert len(defined_ids()) > 0


def test_every_rule_id_is_cited_by_a_test() -> None:
    missing = sorted(set(defined_ids()) - cited_ids())
    assert not missing, f"rule ids without a test: {missing}"


def test_every_cited_id_exists_in_the_spec() -> None:
    unknown = sorted(cited_ids() - set(defined_ids()))
    assert not unknown, f"tests cite ids the spec does not define: {unknown}"


def test_only_test_names_and_docstrings_count(tmp_path: Path) -> None:
    """A comment, a helper's docstring or a module docstring cites nothing; a test's name,
    its docstring and a state machine's rule docstring do."""
    (tmp_path / "test_sample.py").write_text('''"""Module docstring: AT-R1."""
# a comment: AT-R2
def helper() -> None:
    """AT-R3"""
def test_at_r4_i1_named() -> None:
    """Cites AT-R5."""
class Machine:
    @rule()
    def step(self) -> None:
        """Cites AT-I2."""
''', encoding="utf-8")
    assert cited_ids(tmp_path) == {"AT-R4", "AT-I1", "AT-R5", "AT-I2"}


def test_spec_stands_on_its_own() -> None:
    """spec/ cites upstream sources directly, never notes outside the repository."""
    for spec in sorted((ROOT / "spec").glob("*.md")):
        text = spec.read_text(encoding="utf-8")
        for outside in ("shared/notes", "shared/seeds", "note §", "notes, "):
            assert outside not in text, f"{spec.name} cites {outside!r}"
