"""The layers of ARCHITECTURE.md, executable: every import arrow points one way, no cycle.

The package is four layers, each importing only from the layers below it:

    core (errors, algorithm, drive, registry, vectors and the small helpers of
          ``reference/timealign/*.py``)
      <- algorithm packages (one per registered algorithm; never each other)
      <- adapters (rosbag/, plot/, conformance/, spark/, mqtt/: libraries, each importing
                   only the adapters ADAPTER_IMPORTS declares for it, in their order)
      <- commands (``timealign.commands``, ``timealign.cli``, ``timealign.__main__`` and the
                   ``__main__.py`` entry points such as ``timealign.spark.verify.__main__``)

Modules are checked one by one (no module cycle, every arrow down the layers) and as rooms
(a package of the layers: the core, one algorithm, one adapter, the commands): no cycle
between rooms, adapter to adapter only along ADAPTER_IMPORTS. The diagram of
ARCHITECTURE.md is drawn from these declarations (``make architecture``) and a test fails
when it is stale.

The walk reads the source (nothing is imported): every ``import`` and ``from ... import``
anywhere in a module (in a function too, since a late import is still an arrow), and every
string that names a module of the package (``"timealign.x.y"`` or ``"timealign.x:NAME"``,
as ``importlib.import_module`` takes it). A cycle is a cycle however late its imports run.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from timealign import registry

PACKAGE = Path(__file__).resolve().parent.parent / "reference" / "timealign"
#: The adapters, bottom first, each with the adapters it imports: an adapter may import
#: only adapters declared before it, so no cycle between them can be declared, and each
#: declared arrow must be a real one (the map draws no arrow the code does not have).
ADAPTER_IMPORTS: dict[str, tuple[str, ...]] = {
    "rosbag": (),  # ROS bags without Spark
    "plot": (),  # pictures and the run report
    "conformance": ("plot",),  # `diff --pictures` draws the two runs
    "spark": ("rosbag", "plot"),  # reads bags, draws the report's pictures
    "mqtt": ("spark",),  # the live stream is a Spark stream, re-run through SourceRun
}
ADAPTERS = tuple(ADAPTER_IMPORTS)
CORE, ALGORITHM, ADAPTER, CLI = range(4)
LAYER_NAMES = ("core", "algorithm package", "adapter", "commands layer")
COMMANDS = "commands"  # the room of the commands layer
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
    if module in ("timealign.cli", "timealign.__main__") or parts[1:2] == [COMMANDS]:
        return CLI, COMMANDS
    if parts[-1] == "__main__":  # a `python -m` entry point, as timealign.__main__
        return CLI, COMMANDS
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


def room_graph(arrows: list[Arrow]) -> dict[str, set[str]]:
    """The arrows between rooms (the core, each algorithm, each adapter, the commands): a
    room imports another when one of its modules imports one of the other's."""
    graph: dict[str, set[str]] = {layer(module)[1]: set() for module in MODULES}
    for arrow in arrows:
        source, target = layer(arrow.source)[1], layer(arrow.target)[1]
        if source != target and not (arrow.named and arrow.source in LATE_BOUND):
            graph[source].add(target)  # LATE_BOUND names are data, imported when asked
    return graph


def module_graph(arrows: list[Arrow]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for arrow in arrows:
        graph[arrow.source].add(arrow.target)
    return graph


def cycles(graph: dict[str, set[str]] | None = None) -> list[list[str]]:
    """The strongly connected components of more than one node of ``graph`` (by default
    the modules' import graph), by Tarjan's algorithm."""
    graph = module_graph(ARROWS) if graph is None else graph
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph.get(node, ())):
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


ARCHITECTURE = PACKAGE.parent.parent / "ARCHITECTURE.md"
#: The line before the diagram of ARCHITECTURE.md that ``make architecture`` draws.
DRAWN = "<!-- drawn by `make architecture` from tests/test_layers.py: do not edit -->"
_INSIDE = 76  # characters inside a box of the diagram


def _box(title: str, lines: list[str]) -> list[str]:
    """A layer of the diagram: its title, then its lines wrapped to the box."""
    edge = " +" + "-" * (_INSIDE + 2) + "+"
    body: list[str] = []
    for text in lines:
        body += textwrap.wrap(text, _INSIDE - 11, break_on_hyphens=False) or [""]
    rows = [(title if i == 0 else "").ljust(11) + line for i, line in enumerate(body)]
    return [edge, *(f" | {row.ljust(_INSIDE)} |" for row in rows), edge]


def _commands() -> list[str]:
    """The modules of the commands layer, as paths under reference/timealign/."""
    return [str(MODULES[module].relative_to(PACKAGE)) for module in sorted(MODULES)
            if layer(module) == (CLI, COMMANDS) and module != "timealign.commands"]


def drawn_map() -> str:
    """The diagram of ARCHITECTURE.md, from the layers this test checks."""
    down = [" " * 39 + "|", " " * 39 + "v"]
    core = sorted(module.split(".")[1] for module in MODULES
                  if layer(module)[0] == CORE and module != "timealign")
    adapters = [f"{name}/ --> {', '.join(f'{t}/' for t in ADAPTER_IMPORTS[name])}"
                if ADAPTER_IMPORTS[name] else f"{name}/" for name in reversed(ADAPTERS)]
    lines = [
        *_box("commands", [", ".join(_commands()),
                                 "parse options, call a library, map errors to exit codes"]),
        *down,
        *_box("adapters", [*adapters, "(libraries: each imports only the adapters its arrow "
                           "names, all below it in this list)"]),
        *down,
        *_box("algorithm", [", ".join(f"{name}/" for name in registry.names()),
                            "(each imports only itself and the core; never each other)"]),
        *down,
        *_box("core", [" ".join(core), "(reference/timealign/*.py)"]),
    ]
    return "\n".join(lines) + "\n"


def _drawn_span(text: str) -> tuple[int, int]:
    """Where the diagram of ARCHITECTURE.md is: inside the fenced block after DRAWN."""
    start = text.index("```\n", text.index(DRAWN)) + 4
    return start, text.index("```", start)


def map_in_architecture(text: str) -> str:
    """The diagram ARCHITECTURE.md holds."""
    start, end = _drawn_span(text)
    return text[start:end]


def write_map() -> None:
    """``make architecture``: draw the diagram of ARCHITECTURE.md again."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    start, end = _drawn_span(text)
    ARCHITECTURE.write_text(text[:start] + drawn_map() + text[end:], encoding="utf-8")


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
    text = ARCHITECTURE.read_text(encoding="utf-8")
    rooms = {path.parent.name + "/" for path in PACKAGE.glob("*/__init__.py")}
    core = {path.stem for path in PACKAGE.glob("*.py") if not path.stem.startswith("__")}
    missing = sorted(name for name in rooms | core
                     if not re.search(rf"`(?:[\w/]*/)?{re.escape(name)}(?:\.py)?`", text))
    assert not missing, f"not on the map (ARCHITECTURE.md): {missing}"


def test_no_cycle_between_rooms() -> None:
    """No two rooms (the core, an algorithm, an adapter, the commands) import each other,
    however indirectly: plot <-> rosbag <-> spark was such a cycle while each adapter kept
    its command module."""
    found = cycles(room_graph(ARROWS))
    detail = [f"{' <-> '.join(component)}: " + "; ".join(
        arrow.where() for arrow in ARROWS
        if layer(arrow.source)[1] in component and layer(arrow.target)[1] in component
        and layer(arrow.source)[1] != layer(arrow.target)[1]) for component in found]
    assert not found, "cycles between rooms:\n" + "\n".join(detail)


def test_the_room_check_fails_on_a_cycle() -> None:
    """The room check is not blind: a synthetic graph with a cycle is found, and one arrow
    from rosbag/ up to spark/ added to the real arrows makes a room cycle (spark/ reads
    bags with rosbag/), though it makes no module cycle."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    upward = Arrow("timealign.rosbag.demo", "timealign.spark.paths", 1)
    assert cycles(module_graph([*ARROWS, upward])) == []
    assert ["rosbag", "spark"] in [sorted(set(c) & {"rosbag", "spark"})
                                   for c in cycles(room_graph([*ARROWS, upward]))]
    assert any("adapter rosbag may not import spark" in why
               for why in adapter_refusals([*ARROWS, upward]))


def adapter_refusals(arrows: list[Arrow]) -> list[str]:
    """The arrows between adapters that ADAPTER_IMPORTS does not declare."""
    graph = room_graph(arrows)
    return [f"adapter {source} may not import {target} (ADAPTER_IMPORTS)"
            for source in ADAPTERS for target in sorted(graph[source])
            if target in ADAPTERS and target not in ADAPTER_IMPORTS[source]]


def test_adapters_import_each_other_only_as_declared() -> None:
    """An adapter imports only the adapters ADAPTER_IMPORTS names for it, all declared
    before it (so the declared order has no cycle), and each declared arrow is real (the
    map of ARCHITECTURE.md draws no arrow the code lacks)."""
    for position, (name, imports) in enumerate(ADAPTER_IMPORTS.items()):
        assert set(imports) <= set(ADAPTERS[:position]), f"{name}: {imports} not below it"
    assert adapter_refusals(ARROWS) == []
    graph = room_graph(ARROWS)
    unused = [(name, target) for name, imports in ADAPTER_IMPORTS.items()
              for target in imports if target not in graph[name]]
    assert not unused, f"declared but not imported: {unused}"


def test_nothing_imports_the_commands() -> None:
    """The commands are on top: no library room imports them (their ``__main__.py`` entry
    points are commands too)."""
    graph = room_graph(ARROWS)
    assert [room for room, targets in graph.items()
            if COMMANDS in targets and room != COMMANDS] == []
    assert {"commands/main.py", "spark/verify/__main__.py", "cli.py"} <= set(_commands())


def test_architecture_md_draws_these_layers() -> None:
    """ARCHITECTURE.md's diagram is the one drawn from this test's declarations: run
    ``make architecture`` after changing a room or an arrow."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert map_in_architecture(text) == drawn_map(), \
        "ARCHITECTURE.md's diagram is stale: run make architecture"


if __name__ == "__main__":
    write_map()
