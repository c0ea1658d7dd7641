"""ARCHITECTURE.md's "What lives where" is the tree's (``make architecture``,
``tools/architecture.py``), as its diagram is the layers' (``tests/test_layers.py``).

The section lists every module of the package under its room by its docstring's first
sentence, with what the room may import (the layers and ``ADAPTER_IMPORTS`` the layers test
checks), and every other top-level folder of the repository as ``FOLDERS`` declares it,
with the first-party packages its code really imports. A module added, moved or
re-described, an import added to a folder's code, or a folder nobody declared makes this
test fail until ``make architecture`` has written the section again.
"""

from __future__ import annotations

from tests import test_layers
from tools import architecture


def test_architecture_md_says_what_lives_where() -> None:
    """The section ARCHITECTURE.md holds is the one written from the tree now."""
    text = architecture.ARCHITECTURE.read_text(encoding="utf-8")
    assert architecture.written(text) == architecture.section(), \
        "ARCHITECTURE.md's What lives where is stale: run make architecture"


def test_every_top_level_folder_is_declared() -> None:
    """Each top-level folder of the repository (and each top-level package beside
    ``timealign`` in ``reference/``, as ``pyspark_rosbag``) has a line in FOLDERS."""
    assert architecture.undeclared() == [], "declare it in tools/architecture.py FOLDERS"


def test_every_module_of_the_package_says_what_it_is() -> None:
    """Every module of the package has a docstring whose first sentence the section can
    show (a module without one would be listed saying nothing)."""
    silent = [module for module, path in test_layers.MODULES.items()
              if not architecture.docstring(path)]
    assert silent == []


def test_the_section_shows_each_adapters_declared_imports() -> None:
    """The section says, for each adapter, exactly the adapters ADAPTER_IMPORTS declares
    it may import (the arrows the layers test holds the code to)."""
    section = architecture.section()
    for name in test_layers.ADAPTERS:
        heading = f"### `reference/timealign/{name}/`: an adapter"
        assert heading in section
        body = section.split(heading, 1)[1].split("\n### ", 1)[0]
        line = next(line for line in body.splitlines() if line.startswith("May import:"))
        named = {part.strip("`/., ") for part in line.split("registry)")[1].split(",")
                 if part.strip("`/., ")}
        assert named == set(test_layers.ADAPTER_IMPORTS[name]), (name, line)


def test_summary_reads_the_first_sentence_as_markdown() -> None:
    """A docstring's first sentence, its reST roles and literals turned to Markdown code."""
    assert architecture.summary("The ``x`` of :func:`timealign.drive.drive`. More.\n\nNo.") \
        == "The `x` of `timealign.drive.drive`"
    assert architecture.summary("One line without a period") == "One line without a period"


def test_no_adapter_names_an_algorithm() -> None:
    """ARCHITECTURE.md: an adapter reaches the algorithms only through the registry and the
    descriptor; none imports an algorithm package or names one in its code (a docstring's
    example aside), so a new algorithm needs no adapter change."""
    import ast

    from timealign import registry

    names = registry.names()
    imported = [arrow.where() for arrow in test_layers.ARROWS
                if test_layers.layer(arrow.source)[0] == test_layers.ADAPTER
                and test_layers.layer(arrow.target)[0] == test_layers.ALGORITHM]
    assert imported == []
    named = []
    for module, path in test_layers.MODULES.items():
        if test_layers.layer(module)[0] != test_layers.ADAPTER:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = test_layers._docstrings(tree)
        named += [f"{module}:{node.lineno}" for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and id(node) not in docstrings and any(n in node.value for n in names)]
    assert named == []
