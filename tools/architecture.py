"""Write the "What lives where" section of ARCHITECTURE.md from the tree.

Every room of the package (the core, each registered algorithm, each adapter, the commands)
is listed with its modules, each by the first sentence of its own docstring, and with what
it may import (the layers and ``ADAPTER_IMPORTS`` of ``tests/test_layers.py``). Every other
top-level folder of the repository is declared in ``FOLDERS`` (what it holds); its Python
modules are listed the same way, with the first-party packages its code really imports
(read from the source), its Markdown pages by their titles, its folders by name. So a new
module, folder or import shows up here, and ``tests/test_architecture.py`` fails until
``make architecture`` has written it; a top-level folder nobody declared fails too.

    python -m tools.architecture        # or: make architecture
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from tests import test_layers as layers
from timealign import registry

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "ARCHITECTURE.md"
PACKAGE = ROOT / "reference" / "timealign"
BEGIN = ("<!-- written by `make architecture` from the tree (module docstrings, "
         "tools/architecture.py's FOLDERS): do not edit -->")
END = "<!-- end of what `make architecture` writes -->"
#: The first-party packages whose imports a folder's code is listed with.
FIRST_PARTY = ("timealign", "pyspark_rosbag", "tests", "cases", "tools", "proofs", "benchmarks")

#: Every top-level folder of the repository besides the package: what it holds.
FOLDERS: dict[str, str] = {
    "reference/pyspark_rosbag": "PySpark's own discovery of the `rosbag` data source "
                                "(BAG-R12): a top-level module PySpark finds by its name",
    "spec": "the source of truth: one file per algorithm and per adapter, numbered rules "
            "(`AT-R3`), invariants, decisions, hazards; `index.md` the cross-reference of "
            "the ids (`make spec-index`); `figures/` drawn by `make figures`",
    "docs": "the user guide, one page per topic, and its pictures; with README.md and "
            "spec/ the documentation site (`mkdocs.yml`, `make docs`)",
    "cases": "the vector cases per algorithm (`CASES`, without outputs), the generator "
             "that writes `vectors/` and the suites from the reference, the spec's figures",
    "vectors": "the conformance vectors (`timealign.vector/1` files, one folder per "
               "algorithm), written by `make vectors`",
    "tests": "the tests, one package per algorithm and adapter, each test citing the rule "
             "ids it checks (`tests/test_rule_ids.py`); `tests/test_layers.py` checks the "
             "layers above and `tests/test_architecture.py` this page",
    "proofs": "the CrossHair pass and the bounded exhaustive explorer "
              "(`explore_<algorithm>.py`), the conformance mutation study (`make proofs`), "
              "the planted bugs in the real upstreams (`make planted`)",
    "benchmarks": "throughput and memory figures, the only place performance is claimed "
                  "(`make bench`); the C++ baselines of the upstream policies",
    "tools": "the writers of generated files: `spec/index.md`, the specs' profile "
             "differences, this section; the documentation site's hook",
    "examples": "conformance adapters of the real upstreams (C++, Rust, Python) and the "
                "adapter templates, for other implementations",
}


def summary(docstring: str | None) -> str:
    """The first sentence of a docstring, as Markdown (reST roles and literals to code)."""
    first = (docstring or "").strip().split("\n\n")[0]
    text = " ".join(first.split())
    match = re.match(r"(.+?[.!?])(?:\s|$)", text)
    text = match.group(1) if match else text
    text = re.sub(r":\w+:`~?\.?([^`]*)`", r"`\1`", text).replace("``", "`")
    return text[:-1] if text.endswith(".") else text


def docstring(path: Path) -> str:
    return summary(ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))))


def _module_lines(folder: Path, paths: list[Path]) -> list[str]:
    """A bullet per module: its path under ``folder`` (a package by its folder) and its
    docstring's first sentence."""
    lines = []
    for path in paths:
        relative = path.relative_to(folder)
        name = (f"{relative.parent.as_posix()}/" if path.name == "__init__.py"
                else relative.as_posix())
        lines.append(f"- `{name}`: {docstring(path)}")
    return lines


def _room_paths(room: str) -> list[Path]:
    """The modules of one room of the package, as files, in path order."""
    return sorted(path for module, path in layers.MODULES.items()
                  if module != "timealign" and layers.layer(module)[1] == room)


def _may_import(room: str) -> str:
    if room == "core":
        late = ", ".join(f"`{m.removeprefix('timealign.')}`" for m in sorted(layers.LATE_BOUND))
        return (f"the core only ({late} name the algorithm packages as data and import "
                "them when asked)")
    if room in registry.names():
        return "the core and itself, never another algorithm"
    if room in layers.ADAPTERS:
        others = "".join(f", `{name}/`" for name in layers.ADAPTER_IMPORTS[room])
        return f"the core, the algorithm packages (through the registry){others}"
    return "anything below it"


def rooms() -> list[str]:
    """The package's rooms, bottom up: the core, the algorithms, the adapters, the commands."""
    lines: list[str] = []
    sections = [("core", "the core", "`reference/timealign/*.py`"),
                *((name, "an algorithm", f"`reference/timealign/{name}/`")
                  for name in registry.names()),
                *((name, "an adapter", f"`reference/timealign/{name}/`")
                  for name in layers.ADAPTERS),
                (layers.COMMANDS, "the commands",
                 "`reference/timealign/commands/` and every `__main__.py`")]
    for room, kind, where in sections:
        paths = _room_paths(room)
        init = PACKAGE / room / "__init__.py"
        lines += ["", f"### {where}: {kind}", ""]
        if room not in ("core", layers.COMMANDS) and init.exists():
            lines += [f"{docstring(init)}.", ""]
            paths = [p for p in paths if p != init]
        lines += [f"May import: {_may_import(room)}.", ""]
        lines += _module_lines(PACKAGE if room in ("core", layers.COMMANDS) else PACKAGE / room,
                               paths)
    data = sorted(p.relative_to(PACKAGE).as_posix() + "/" for p in PACKAGE.iterdir()
                  if p.is_dir() and not (p / "__init__.py").exists()
                  and p.name != "__pycache__")
    if data:
        lines += ["", "Data of the package, no code: " + ", ".join(f"`{d}`" for d in data) + "."]
    return lines


def tracked(folder: str) -> list[Path]:
    """The files of ``folder`` that git tracks or would track (not ignored: no build
    output, no cache), every file when git cannot say."""
    done = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                           "--exclude-standard", "--", folder], cwd=ROOT,
                          capture_output=True, check=False)
    if done.returncode != 0:
        return sorted(p for p in (ROOT / folder).rglob("*") if p.is_file())
    return sorted(ROOT / name for name in set(done.stdout.decode().split("\0"))
                  if name and (ROOT / name).is_file())


def _imported(node: ast.AST) -> list[str]:
    """The dotted names an import statement imports (``from a import b``: ``a.b``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and not node.level and node.module:
        return [f"{node.module}.{alias.name}" for alias in node.names]
    return []


def imports(paths: list[Path], own: str = "") -> str:
    """The first-party packages the code of ``paths`` imports, ``timealign`` with the
    modules of its own (a room: ``spark``, or a core module: ``registry``) it names; the
    folder's ``own`` package left out."""
    packages: set[str] = set()
    rooms: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for name in _imported(node):
                parts = name.split(".")
                if parts[0] not in FIRST_PARTY or parts[0] == own:
                    continue
                packages.add(parts[0])
                if parts[0] == "timealign" and len(parts) > 1 and (
                        (PACKAGE / parts[1]).is_dir() or (PACKAGE / f"{parts[1]}.py").exists()):
                    rooms.add(parts[1])
    shown = [f"`{name}`" + (f" ({', '.join(f'`{r}`' for r in sorted(rooms))})"
                            if name == "timealign" and rooms else "")
             for name in sorted(packages)]
    return ", ".join(shown)


def folders() -> list[str]:
    """Every declared top-level folder: what it holds, its modules, pages and folders."""
    lines: list[str] = []
    for folder, what in FOLDERS.items():
        files = tracked(folder)
        python = [p for p in files if p.suffix == ".py"]
        lines += ["", f"### `{folder}/`", "", f"{what[0].upper()}{what[1:]}.", ""]
        top = ROOT / folder
        own = [p for p in python if p.is_relative_to(top)]
        used = imports(own, own=folder.split("/")[-1])
        if python and folder != "tests":  # the tests import what they test: anything
            lines += [f"Its code imports, of this repository: {used or 'nothing'}.", ""]
        shown = [p for p in python if folder != "tests" and p.parent == top
                 and p.name != "__init__.py"]
        lines += _module_lines(top, shown)
        pages = [p for p in files if p.suffix == ".md" and p.parent == top]
        lines += [f"- `{p.name}`: {_title(p)}" for p in pages]
        subfolders = sorted({p.relative_to(top).parts[0] for p in files
                             if len(p.relative_to(top).parts) > 1})
        if subfolders:
            lines += ["- folders: " + ", ".join(f"`{name}/`" for name in subfolders)]
    return lines


def _title(page: Path) -> str:
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return "(no title)"


def undeclared() -> list[str]:
    """Top-level folders of the repository that FOLDERS does not declare (the package's
    own folder is the rooms above)."""
    tops = {Path(name).parts[0] for name in
            (p.relative_to(ROOT).as_posix() for p in tracked("."))
            if "/" in name and not name.startswith(".")}
    tops.discard("reference")
    tops |= {f"reference/{p.name}" for p in (ROOT / "reference").iterdir()
             if p.is_dir() and (p / "__init__.py").exists() and p.name != "timealign"}
    return sorted(tops - set(FOLDERS))


def section() -> str:
    """The text between BEGIN and END."""
    lines = ["", "The package's rooms, bottom up, then the repository's other folders. Each "
             "module is described by the first sentence of its docstring: to change a line "
             "here, change the docstring and run `make architecture`.", *rooms(), *folders(),
             ""]
    return "\n".join(lines)


def _span(text: str) -> tuple[int, int]:
    start = text.index(BEGIN) + len(BEGIN)
    return start, text.index(END, start)


def written(text: str) -> str:
    """The section ARCHITECTURE.md holds."""
    start, end = _span(text)
    return text[start:end]


def main() -> int:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    start, end = _span(text)
    new = text[:start] + section() + text[end:]
    if new != text:
        ARCHITECTURE.write_text(new, encoding="utf-8")
        print(f"wrote {ARCHITECTURE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
