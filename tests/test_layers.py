"""The layers of ARCHITECTURE.md, executable: every import arrow points one way, no cycle.

The package is four layers, each importing only from the layers below it:

    core (errors, algorithm, drive, registry, vectors and the small helpers of
          ``reference/timealign/*.py``)
      <- algorithm packages (one per registered algorithm; never each other)
      <- adapters (spark/, rosbag/, plot/, conformance/, mqtt/; they may use each other)
      <- CLI (``timealign.cli``, ``timealign.__main__``, each adapter's ``cli.py`` and
             ``__main__.py`` entry points such as ``timealign.spark.verify.__main__``)

The walk reads the source (nothing is imported): every ``import`` and ``from ... import``
anywhere in a module (in a function too, since a late import is still an arrow), and every
string that names a module of the package (``"timealign.x.y"`` or ``"timealign.x:NAME"``,
as ``importlib.import_module`` takes it). A cycle is a cycle however late its imports run.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from timealign import registry

PACKAGE = Path(__file__).resolve().parent.parent / "reference" / "timealign"
ADAPTERS = ("spark", "rosbag", "plot", "conformance", "mqtt")
CORE, ALGORITHM, ADAPTER, CLI = range(4)
LAYER_NAMES = ("core", "algorithm package", "adapter", "CLI")
#: The core modules that name modules of a higher layer as data and import them only when
#: asked, so that importing the core loads no algorithm: what each one names, and why.
LATE_BOUND = {
    "timealign.registry": "the algorithm packages, to look one up by name (adding an "
                          "algorithm is one line there, nothing in any adapter)",
    "timealign.native": "the fast paths it may load compiled, to say which build runs",
}
MODULE_STRING = re.compile(r"^(timealign(?:\.\w+)*)(?::\w+)?$")


@dataclass(frozen=True)
class Arrow:
    """``source`` imports ``target`` at ``line``; ``named`` when only a string names it."""

    source: str
    target: str
    line: int
    named: bool = False

    def where(self) -> str:
        how = " (named in a string)" if self.named else ""
        return f"{self.source}:{self.line} -> {self.target}{how}"


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    found: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ("timealign", *path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = modules()


def layer(module: str) -> tuple[int, str]:
    """The layer of a module and the room it is in (the algorithm or adapter package)."""
    parts = module.split(".")
    if module in ("timealign.cli", "timealign.__main__") or parts[1:2] == ["commands"]:
        return CLI, "commands"
    if parts[-1] == "__main__":  # a `python -m` entry point, as timealign.__main__
        return CLI, parts[1]
    if len(parts) == 1 or (len(parts) == 2 and module in MODULES
                           and MODULES[module].name != "__init__.py"):
        return CORE, "core"
    room = parts[1]
    if room in registry.names():
        return ALGORITHM, room
    if room in ADAPTERS:
        return ADAPTER, room
    raise AssertionError(f"{module} is in no layer: add its package to ARCHITECTURE.md "
                         "and to this test")


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the docstring nodes: a docstring names modules without importing them."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _resolve(name: str) -> str | None:
    """The module of the package that ``name`` (a module, or an attribute of one) is."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def arrows(module: str) -> Iterator[Arrow]:
    """The imports of one module, function-level ones and string-named ones included."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_package = path.name == "__init__.py"
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        targets: list[str] = []
        named = False
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + is_package]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" for alias in node.names]
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and id(node) not in docstrings):
            match = MODULE_STRING.match(node.value)
            if match and match.group(1) in MODULES:
                targets, named = [match.group(1)], True
        for target in targets:
            resolved = _resolve(target)
            if resolved is not None and resolved != module:
                yield Arrow(module, resolved, getattr(node, "lineno", 0), named)


ARROWS = sorted({arrow for module in MODULES for arrow in arrows(module)},
                key=lambda arrow: (arrow.source, arrow.line, arrow.target))


def forbidden(arrow: Arrow) -> str | None:
    """Why an arrow breaks the layer order (None when it keeps it)."""
    (source, source_room), (target, target_room) = layer(arrow.source), layer(arrow.target)
    if source == CORE and target > CORE and arrow.named and arrow.source in LATE_BOUND \
            and target == ALGORITHM:
        return None  # named as data, imported when asked (LATE_BOUND)
    if target > source:
        return f"the {LAYER_NAMES[source]} may not import the {LAYER_NAMES[target]}"
    if source == target == ALGORITHM and source_room != target_room:
        return "an algorithm package may not import another"
    return None


def cycles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for arrow in ARROWS:
        graph[arrow.source].add(arrow.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph[node]):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_the_walk_sees_every_kind_of_import() -> None:
    """The walk finds a top-level import, a function-level one and a string-named one (the
    registry's), or the two tests below would pass by seeing nothing."""
    found = {(arrow.source, arrow.target, arrow.named) for arrow in ARROWS}
    assert ("timealign.drive", "timealign.algorithm", False) in found
    assert ("timealign.conformance.harness", "timealign.conformance.strategies",
            False) in found  # imported inside a function
    for name in registry.names():
        assert ("timealign.registry", f"timealign.{name}", True) in found
    assert all(layer(module) for module in MODULES)


def test_no_import_cycle() -> None:
    """No two modules import each other, however indirectly or late (ARCHITECTURE.md)."""
    found = cycles()
    detail = [f"{' <-> '.join(component)}: " + "; ".join(
        arrow.where() for arrow in ARROWS
        if arrow.source in component and arrow.target in component) for component in found]
    assert not found, "import cycles:\n" + "\n".join(detail)


def test_every_import_points_down_the_layers() -> None:
    """Core <- algorithm packages <- adapters <- CLI; the algorithm packages do not import
    each other; the core names algorithm packages only as the data of LATE_BOUND."""
    broken = [f"{arrow.where()}: {why}" for arrow in ARROWS
              if (why := forbidden(arrow)) is not None]
    assert not broken, "imports against the layers:\n" + "\n".join(broken)


@pytest.mark.parametrize("module", sorted(LATE_BOUND))
def test_late_bound_names_point_only_at_algorithm_packages(module: str) -> None:
    """What a LATE_BOUND core module names lies in the algorithm packages and nowhere
    else, and it imports nothing above the core by an ordinary import."""
    for arrow in ARROWS:
        if arrow.source == module and layer(arrow.target)[0] > CORE:
            assert arrow.named and layer(arrow.target)[0] == ALGORITHM, arrow.where()


def test_the_map_names_every_room() -> None:
    """ARCHITECTURE.md names every core module and every package of ``timealign``, so a
    new room is placed on the map (and in a layer here) when it is added."""
    text = (PACKAGE.parent.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
    rooms = {path.parent.name + "/" for path in PACKAGE.glob("*/__init__.py")}
    core = {path.stem for path in PACKAGE.glob("*.py") if not path.stem.startswith("__")}
    missing = sorted(name for name in rooms | core
                     if not re.search(rf"`(?:[\w/]*/)?{re.escape(name)}(?:\.py)?`", text))
    assert not missing, f"not on the map (ARCHITECTURE.md): {missing}"
