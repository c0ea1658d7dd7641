"""Write the cross-reference of the spec ids: ``spec/index.md``, and only there.

For every id defined in ``spec/`` (spec/README.md, "Identifier convention") it gathers
where the id is defined, the rule functions registered for it (:mod:`timealign.rulebook`:
the functions enacting it and the profiles running them), the code of ``reference/``
whose comments, docstrings or strings cite it (file and enclosing function), the tests
that cite it (by name or docstring, as ``tests/test_rule_ids.py`` counts them) and the
shipped vectors that list it in their ``rules``. It writes the listing to
``spec/index.md``; the spec's own files hold only the spec (a generated line in a section
would be a fifth of the file, and go stale with every change of code), so it removes any
``*Cross-reference:*`` paragraph an older version left at the end of a section.
``tests/test_spec_index.py`` fails when the index is out of date.

    python -m tools.spec_index        # or: make spec-index
"""

from __future__ import annotations

import ast
import io
import json
import re
import sys
import textwrap
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tests.test_rule_ids import functions_under_test, ids_in_name

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"
INDEX = SPEC / "index.md"
CODE = ROOT / "reference" / "timealign"
TESTS = ROOT / "tests"
VECTORS = ROOT / "vectors"
#: The text of the sections a run report can cite (PL-R15), shipped with the package.
RULE_TEXTS = CODE / "plot" / "rule_texts.json"

ID = r"[A-Z]{2,4}-[RIDH]\d+"
CITATION = re.compile(rf"\b({ID})\b")
#: An inline literal of a docstring or comment: quoted text, whose ids cite nothing.
QUOTED = re.compile(r"``.+?``", re.DOTALL)
DEFINITION = re.compile(rf"^\s*(?:\|\s*|\*\*|#+\s+)({ID})\b", re.MULTILINE)
HEADING = re.compile(rf"^(#+)\s+({ID})\b[ \t]*(.*)$")
XREF = "*Cross-reference:*"
MODULE = "(module)"  # a citation outside any function or class
WIDTH = 92

#: Where the code implementing each family's rules lives (paths under reference/timealign/),
#: for the families that are not an algorithm's: an algorithm's family is its package, and
#: VEC takes its codec too (:func:`packages`).
SHARED_PACKAGES: dict[str, tuple[str, ...]] = {
    "VEC": ("vectors.py", "commands/main.py", "algorithm.py", "errors.py"),
    "DRV": ("drive.py",),
    "SP": ("spark", "commands/spark.py", "commands/run_input.py", "commands/spark_ship.py"),
    "BAG": ("rosbag", "spark/rosbag_source.py", "spark/bags.py", "commands/spark.py",
            "commands/run_input.py", "commands/rosbag.py", "commands/rosbag_demo.py",
            "spark/verify.py"),
    "PL": ("plot", "commands/plot.py"),
    "CF": ("conformance", "commands/conformance.py", "commands/conformance_adapter.py"),
    "MQ": ("mqtt",),
    "CLI": ("commands", "command.py", "options.py", "outputs.py", "spark/ship"),
}


def algorithm_families() -> dict[str, str]:
    """The id family of each registered algorithm (``approximate_time``: ``AT``): the family
    of the ids its spec, ``spec/<name>.md``, defines; an algorithm without a spec, or whose
    spec defines ids of several families, fails here."""
    from timealign import registry

    found = {}
    for name in registry.names():
        path = SPEC / f"{name}.md"
        if not path.is_file():
            raise SystemExit(f"the registered algorithm {name} has no spec: {path}")
        families = {rule.split("-")[0] for rule in
                    DEFINITION.findall(path.read_text(encoding="utf-8"))}
        if len(families) != 1:
            raise SystemExit(f"{path} defines the ids of {sorted(families)}, not one family")
        found[name] = families.pop()
    return found


def packages() -> dict[str, tuple[str, ...]]:
    """Where the code implementing each family's rules lives: :data:`SHARED_PACKAGES`, and
    each registered algorithm's package for its own family and its codec for VEC."""
    from timealign import registry

    found = dict(SHARED_PACKAGES)
    for name, family in algorithm_families().items():
        package = registry.package(name).removeprefix("timealign.").replace(".", "/")
        found[family] = (package,)
        found["VEC"] = (*found["VEC"], f"{package}/codec.py")
    return found


PACKAGES = packages()


@dataclass
class Entry:
    """What is known about one id."""

    rule: str
    file: str
    title: str = ""
    anchor: str = ""
    code: dict[str, list[str]] = field(default_factory=dict)  # file -> enclosing names
    tests: list[str] = field(default_factory=list)  # "tests/path.py::name"
    vectors: list[str] = field(default_factory=list)  # "algorithm/name"
    functions: list[str] = field(default_factory=list)  # "file (function)" registered
    profiles: tuple[str, ...] = ()  # the profiles its registered functions run under


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def spec_files() -> list[Path]:
    return [p for p in sorted(SPEC.glob("*.md")) if p != INDEX]


def definitions() -> dict[str, Entry]:
    """Every defined id with its file, and for a section its title and anchor."""
    entries: dict[str, Entry] = {}
    for path in spec_files():
        text = re.sub(r"^```.*?^```[^\n]*$", "", path.read_text(encoding="utf-8"),
                      flags=re.MULTILINE | re.DOTALL)
        for match in DEFINITION.finditer(text):
            start = text.rfind("\n", 0, match.start(1)) + 1
            line = text[start:text.find("\n", start)].strip()
            entry = entries.setdefault(match.group(1), Entry(match.group(1), path.name))
            heading = HEADING.match(line)
            if heading and not entry.anchor:
                entry.title = heading.group(3)
                entry.anchor = slug(f"{heading.group(2)} {heading.group(3)}")
    return entries


def _scopes(tree: ast.AST) -> list[tuple[int, int, str]]:
    """(first line, last line, qualified name) of every function and class."""
    found: list[tuple[int, int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                found.append((child.lineno, child.end_lineno or child.lineno, name))
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def code_citations(root: Path = CODE) -> dict[str, dict[str, list[str]]]:
    """id -> {file under reference/timealign: names of the enclosing functions or classes}.

    A citation is an id in a comment, a docstring or another string literal (an error's
    rule, ``InvalidInput(field, "AT-R1", ...)``); outside any function it is the module's.
    An id inside an inline literal of a docstring or comment (two backticks each side, as
    ``RB-R21 (only B)``) is quoted text, an example of what the code prints, not a
    citation."""
    cited: dict[str, dict[str, list[str]]] = {}
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        scopes = _scopes(ast.parse(source))
        relative = path.relative_to(root).as_posix()
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type not in (tokenize.COMMENT, tokenize.STRING):
                continue
            for rule in CITATION.findall(QUOTED.sub("", token.string)):
                line = token.start[0]
                inside = [name for first, last, name in scopes if first <= line <= last]
                where = inside[-1] if inside else MODULE
                names = cited.setdefault(rule, {}).setdefault(relative, [])
                if where not in names:
                    names.append(where)
    return cited


def test_citations(known: set[str], root: Path = TESTS) -> dict[str, list[str]]:
    """id -> tests citing it by name or docstring (``tests/path.py::name``), counted as
    ``tests/test_rule_ids.py`` counts them."""
    cited: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        if path.name == "test_rule_ids.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in functions_under_test(tree):
            rules = ids_in_name(node.name, known) | set(
                CITATION.findall(ast.get_docstring(node) or ""))
            label = f"{path.relative_to(ROOT).as_posix()}::{node.name}"
            for rule in rules:
                cited.setdefault(rule, []).append(label)
    return cited


def vector_citations(root: Path = VECTORS) -> dict[str, list[str]]:
    """id -> shipped vectors listing it in ``rules`` (``algorithm/name``)."""
    cited: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.json")):
        vector = json.loads(path.read_text(encoding="utf-8"))
        for rule in vector.get("rules") or []:
            cited.setdefault(rule, []).append(f"{vector['algorithm']}/{vector['name']}")
    return cited


def registered_functions() -> tuple[dict[str, list[str]], dict[str, tuple[str, ...]]]:
    """id -> the registered rule functions enacting it (``file`` (``function``)), and
    id -> the profiles they run under, for every algorithm whose rule text registers
    them (:mod:`timealign.rulebook`)."""
    from timealign import registry, rulebook

    functions: dict[str, list[str]] = {}
    profiles: dict[str, tuple[str, ...]] = {}
    for name in registry.names():
        package = f"timealign.{name}"
        for entry in rulebook.registered(package):
            if entry.profiles == ():  # a variant's replacement (CF-R41), run only swapped in:
                continue  # the spec lists it under its rule; whether it is loaded varies
            file = entry.module.removeprefix("timealign.").replace(".", "/") + ".py"
            functions.setdefault(entry.id, []).append(f"`{file}` (`{entry.name}`)")
        if rulebook.profiles_of(package) is not None:
            profiles.update(rulebook.by_profile(package))
    return functions, profiles


def gather() -> dict[str, Entry]:
    entries = definitions()
    known = {rule.split("-")[0].lower() for rule in entries}
    code, tests, vectors = code_citations(), test_citations(known), vector_citations()
    functions, profiles = registered_functions()
    for rule, entry in entries.items():
        entry.code = code.get(rule, {})
        entry.tests = sorted(tests.get(rule, []))
        entry.vectors = sorted(vectors.get(rule, []))
        entry.functions = functions.get(rule, [])
        entry.profiles = profiles.get(rule, ())
    return entries


def own_code(rule: str, entry: Entry) -> list[str]:
    """The files of the id's own package that cite it."""
    own = PACKAGES.get(rule.split("-")[0], ())
    return [f for f in entry.code if any(f == p or f.startswith(f"{p}/") for p in own)]


def uncited_rules(entries: dict[str, Entry]) -> list[str]:
    """Rule (``-R``) ids that no code of their own package cites."""
    return [rule for rule, entry in entries.items() if rule.split("-")[1].startswith("R")
            and not own_code(rule, entry) and not entry.functions]


def _wrap(text: str, first: str = "", rest: str = "") -> list[str]:
    protected = re.sub(r"`[^`]*`", lambda m: m.group(0).replace(" ", "\x00"), text)
    lines = textwrap.wrap(protected, width=WIDTH, initial_indent=first, subsequent_indent=rest,
                          break_long_words=False, break_on_hyphens=False)
    return [line.replace("\x00", " ") for line in lines]


def _code_list(code: dict[str, list[str]]) -> list[str]:
    """``file`` (``function``, ...) per citing file; a module-level citation names the file."""
    listed = []
    for name, names in code.items():
        inside = [f"`{n}`" for n in names if n != MODULE]
        listed.append(f"`{name}` ({', '.join(inside)})" if inside else f"`{name}`")
    return listed


def index(entries: dict[str, Entry]) -> str:
    """The text of spec/index.md."""
    lines = [
        "# Index of the spec ids",
        "",
        "Written by `make spec-index` (`tools/spec_index.py`); do not edit. For each id defined in",
        "`spec/`: where it is defined, the rule functions registered for it and the profiles",
        "running them (`timealign.rulebook`), the code of `reference/timealign/` that cites it",
        "in a comment, docstring or string (file and enclosing function), the tests that cite",
        "it in their name or docstring, and the shipped vectors that list it in their `rules`.",
    ]
    families: dict[str, list[Entry]] = {}
    for entry in entries.values():
        families.setdefault(entry.rule.split("-")[0], []).append(entry)
    order = {"R": 0, "I": 1, "D": 2, "H": 3}
    for family, members in families.items():
        lines += ["", f"## {family} ([{members[0].file}]({members[0].file}))"]
        members.sort(key=lambda e: (order[e.rule.split("-")[1][0]], int(e.rule.split("-")[1][1:])))
        for entry in members:
            target = f"{entry.file}#{entry.anchor}" if entry.anchor else entry.file
            title = [f"{entry.title}."] if entry.title else []
            defined = f"Defined in [{entry.file}]({target})."
            lines += ["", f"### {entry.rule}", "", *title, defined, ""]
            if entry.functions:
                lines += _listing("Rule functions", entry.functions)
                if entry.profiles:
                    lines += _listing("Profiles", [f"`{p}`" for p in entry.profiles])
            lines += _listing("Code", _code_list(entry.code))
            lines += _listing("Tests", [f"`{t}`" for t in entry.tests])
            by_algorithm: dict[str, list[str]] = {}
            for vector in entry.vectors:
                algorithm, name = vector.split("/", 1)
                by_algorithm.setdefault(algorithm, []).append(f"`{name}`")
            if not by_algorithm:
                lines += _listing("Vectors", [])
            for algorithm, names in by_algorithm.items():
                lines += _listing(f"Vectors ({algorithm})", names)
    return "\n".join(lines) + "\n"


def _listing(label: str, items: list[str]) -> list[str]:
    if not items:
        return [f"- {label}: none"]
    return _wrap(f"{label}: {', '.join(items)}", first="- ", rest="  ")


def without_xrefs(text: str) -> str:
    """``text`` (a spec file) without the ``*Cross-reference:*`` paragraphs an older
    ``make spec-index`` wrote at the end of each id's section (they live in the index)."""
    out: list[str] = []
    skipping = False
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if skipping:  # the paragraph, and the blank line ending it
            skipping = line != ""
            continue
        if not fenced and line.startswith(XREF):
            skipping = True
            while out and out[-1] == "":
                out.pop()
            out.append("")
            continue
        out.append(line)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def sections(texts: dict[Path, str], wanted: Iterable[str]) -> dict[str, dict[str, str]]:
    """The Markdown of each wanted id's section: its heading line to the next heading of
    the same or a higher level, without the cross-reference paragraph (PL-R15)."""
    wanted = set(wanted)
    found: dict[str, dict[str, str]] = {}
    for path, text in texts.items():
        lines = text.splitlines()
        for start, line in enumerate(lines):
            heading = HEADING.match(line)
            if heading is None or heading.group(2) not in wanted:
                continue
            level = len(heading.group(1))
            end = start + 1
            while end < len(lines) and not (
                    (m := re.match(r"^(#+)\s", lines[end])) and len(m.group(1)) <= level):
                end += 1
            body = "\n".join(lines[start + 1:end]).split(XREF)[0].strip()
            found[heading.group(2)] = {"title": heading.group(3), "file": f"spec/{path.name}",
                                       "markdown": body}
    return dict(sorted(found.items()))


def rule_texts(texts: dict[Path, str]) -> str:
    """``reference/timealign/plot/rule_texts.json``: the sections of every id a report
    cites (``timealign.reasons.cited``), so its rule links resolve in any install."""
    from timealign import reasons

    wanted = reasons.cited()
    found = sections({p: t for p, t in texts.items() if p != INDEX}, wanted)
    missing = sorted(set(wanted) - set(found))
    if missing:
        raise SystemExit(f"no spec section for {', '.join(missing)}")
    return json.dumps(found, indent=1, ensure_ascii=False) + "\n"


def rendered() -> dict[Path, str]:
    """Every file this script writes, with the text it should hold."""
    entries = gather()
    files = {path: without_xrefs(path.read_text(encoding="utf-8")) for path in spec_files()}
    files[INDEX] = index(entries)
    files[RULE_TEXTS] = rule_texts(files)
    return files


def main(argv: Iterable[str] | None = None) -> int:
    del argv
    for path, text in rendered().items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
