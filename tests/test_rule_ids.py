"""Every rule id defined in ``spec/`` is cited by at least one test (spec/README.md).

An id is *defined* where a spec line starts a rule with it: its section heading
``### AT-R3 Title`` (the form of spec/README.md), or, for a rule added in the older form, a
table row ``| AT-R3 |`` or a bold ``**AT-R3**``. The generated ``spec/index.md`` defines
nothing. An id is *cited* only by a test: in the
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


HEADING = re.compile(rf"^#+\s+({ID})\b(.*)$", re.MULTILINE)
GENERATED = {"index.md"}  # written by `make spec-index` from the other files
LONGEST_LINE = 200


def spec_files() -> list[Path]:
    """The hand-written spec documents (the generated index is not one)."""
    return [spec for spec in sorted((ROOT / "spec").glob("*.md")) if spec.name not in GENERATED]


def without_code(text: str) -> str:
    """``text`` with its fenced code blocks blanked (an example there defines nothing)."""
    return re.sub(r"^```.*?^```[^\n]*$", "", text, flags=re.MULTILINE | re.DOTALL)


def definitions() -> list[tuple[str, str]]:
    """Every (id, file) definition, in file order, repeats included."""
    return [(match.group(1), spec.name) for spec in spec_files()
            for match in DEFINITION.finditer(without_code(spec.read_text(encoding="utf-8")))]


def defined_ids() -> dict[str, str]:
    ids: dict[str, str] = {}
    for rule, name in definitions():
        ids.setdefault(rule, name)
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


def test_each_id_is_defined_once() -> None:
    """An id names one statement: it is defined in exactly one place (ids are never reused)."""
    seen: dict[str, str] = {}
    repeated = []
    for rule, name in definitions():
        if rule in seen:
            repeated.append(f"{rule} ({seen[rule]}, {name})")
        seen[rule] = name
    assert not repeated, f"ids defined twice: {repeated}"


def test_each_section_heading_has_a_title() -> None:
    """``### AT-R5 Overflow drops the oldest message of the topic``: a reader scanning the
    headings (or a link to one) sees what the statement is about, not only its number."""
    untitled = [f"{spec.name}: {match.group(0)}" for spec in spec_files()
                for match in HEADING.finditer(without_code(spec.read_text(encoding="utf-8")))
                if not match.group(2).strip()]
    assert not untitled, f"headings without a title: {untitled}"


def long_lines(text: str) -> list[int]:
    """Numbers of the lines longer than LONGEST_LINE characters outside fenced code blocks."""
    found = []
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and len(line) > LONGEST_LINE:
            found.append(number)
    return found


def test_spec_lines_are_of_normal_length() -> None:
    """A reviewer reads spec/ without scrolling sideways and a one-word change is a one-line
    diff: no line outside code blocks is longer than 200 characters (tables included, so a
    table keeps short cells; a long statement is a section of prose)."""
    offending = {spec.name: lines for spec in sorted((ROOT / "spec").glob("*.md"))
                 if (lines := long_lines(spec.read_text(encoding="utf-8")))}
    assert not offending, f"lines longer than {LONGEST_LINE} characters: {offending}"


def test_long_lines_and_definitions_skip_code_blocks() -> None:
    """The length check and the definitions read fenced code as code, everything else as
    prose or table."""
    text = "short\n```\n" + "x" * 300 + "\n### AT-R99 Example\n```\n" + "| " + "y" * 300 + " |\n"
    assert long_lines(text) == [6]
    assert "AT-R99" not in without_code(text)
    assert "short" in without_code(text)


def test_spec_stands_on_its_own() -> None:
    """spec/ cites upstream sources directly, never notes outside the repository."""
    for spec in sorted((ROOT / "spec").glob("*.md")):
        text = spec.read_text(encoding="utf-8")
        for outside in ("shared/notes", "shared/seeds", "note §", "notes, "):
            assert outside not in text, f"{spec.name} cites {outside!r}"
