"""What a user installing timealign relies on: one version, a licence file matching the
metadata, the ``spark`` extra covering every import of the Spark adapter, and test helpers
whose assertions survive ``python -O``."""

from __future__ import annotations

import ast
import importlib
import re
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import timealign

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
#: Import name -> distribution name, where they differ.
DISTRIBUTION = {"google": "protobuf", "paho": "paho-mqtt", "ruamel": "ruamel.yaml"}


def test_version_is_written_once() -> None:
    """pyproject.toml holds the version; the package reads it from the installed metadata."""
    assert timealign.__version__ == version("timealign") == PYPROJECT["project"]["version"]
    hits = [p for p in (ROOT / "reference").rglob("*.py")
            if PYPROJECT["project"]["version"] in p.read_text(encoding="utf-8")]
    assert hits == []


def test_licence_file_matches_the_metadata() -> None:
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    assert "LICENSE" in PYPROJECT["project"]["license-files"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text


def _third_party_imports(folder: Path, skip: tuple[Path, ...] = (),
                         only: str = "*.py", fuzz: bool = False) -> set[str]:
    """Third-party modules imported by the files under ``folder`` (``fuzz``: the fuzz
    strategies, every ``strategies.py``, are included; otherwise they are left out)."""
    found: set[str] = set()
    for path in folder.rglob(only):
        if any(s in path.parents for s in skip) or (path.name == "strategies.py") != fuzz:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        guarded = _optional_imports(tree)
        for node in ast.walk(tree):
            if id(node) in guarded:
                continue
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return {name for name in found
            if name not in sys.stdlib_module_names and name not in ("timealign", "attrs")}


#: Imports a module may make optional: inside ``try`` with an ``except ImportError`` that
#: provides a fallback, so the package runs without them. Only mypyc's class marker is one
#: (read by mypyc when compiling the fast paths; a no-op at run time without it).
OPTIONAL = {"mypy_extensions"}


def _optional_imports(tree: ast.AST) -> set[int]:
    """The import nodes of ``tree`` guarded by ``try``/``except ImportError``; each must
    import a module of :data:`OPTIONAL` (an unlisted one is still reported as needed)."""
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
                isinstance(h.type, ast.Name) and h.type.id == "ImportError"
                for h in node.handlers):
            for inner in node.body:
                if isinstance(inner, ast.ImportFrom) and inner.module \
                        and inner.module.split(".")[0] in OPTIONAL:
                    guarded.add(id(inner))
    return guarded


PACKAGE = ROOT / "reference" / "timealign"
#: Adapter subpackage -> the extra that provides its third-party imports (``a+b``: both;
#: the live MQTT stream runs on Spark: ``pip install 'timealign[spark,mqtt]'``).
#: The commands layer: ``commands/<adapter>.py`` imports what its adapter's extra installs.
COMMANDS = PACKAGE / "commands"
ADAPTERS = {"spark": "spark", "rosbag": "spark", "plot": "plot", "conformance": "conform",
            "mqtt": "spark+mqtt"}


def _extra(name: str) -> set[str]:
    return {re.split(r"[<>=\[ ]", requirement)[0].lower()
            for part in name.split("+")
            for requirement in PYPROJECT["project"]["optional-dependencies"][part]}


def test_extras_cover_every_import_of_the_adapters() -> None:
    """Every third-party module an adapter imports (the Spark jobs, the ROS bag reader,
    the pictures, the conformance harness's fuzzing) is in the extra that installs it."""
    for adapter, extra in ADAPTERS.items():
        imported = {DISTRIBUTION.get(name, name).lower()
                    for name in _third_party_imports(PACKAGE / adapter)
                    | _third_party_imports(COMMANDS, only=f"{adapter}*.py")}  # its commands
        assert imported <= _extra(extra), f"{adapter}: missing from [{extra}]: " \
            f"{imported - _extra(extra)}"
    assert {"pyspark", "pyarrow", "numpy"} <= _extra("spark")


def test_core_imports_only_attrs() -> None:
    """Outside the adapters the package needs nothing but attrs (its one dependency); the
    fuzz strategies (``strategies.py``, loaded only by ``conform --fuzz``) need only what
    the ``conform`` extra installs."""
    assert _third_party_imports(
        PACKAGE, skip=(*(PACKAGE / a for a in ADAPTERS), COMMANDS)) == set()
    for shared in ("__init__.py", "main.py", "run_input.py"):  # the commands of no adapter
        assert _third_party_imports(COMMANDS, only=shared) == set(), shared
    fuzz = _third_party_imports(PACKAGE, only="strategies.py", fuzz=True)
    assert fuzz == {"hypothesis"} and fuzz <= _extra("conform")


def test_helper_assertions_are_rewritten() -> None:
    """The tests' helper modules are loaded through pytest's assertion rewriting, so their
    ``assert`` statements are real checks under ``python -O`` as well."""
    for name in ("tests.rate_aware_batcher.literal_model", "tests.approximate_time.literal_model",
                 "tests.event_time_batcher.support"):
        module = importlib.import_module(name)
        assert type(module.__loader__).__name__ == "AssertionRewritingHook", name
