"""Which build of the fast paths runs: compiled with mypyc, or pure Python.

The fast paths named in :data:`COMPILED` (never a ``machine.py``: the rule text always runs
as the Python it is written in) may be installed twice: as their ``.py`` source and as a C
extension that mypyc built from that same source (``setup.py``). Python would import the
extension whenever it is present; the finder installed by :func:`install` (from the
package's ``__init__``) decides instead, per module, and takes the source when

- ``TIMEALIGN_PURE=1`` is set in the environment (any value but empty or ``0``);
- the build record (``_native.json``, written by ``setup.py``) does not vouch for the
  extension: it was not compiled by the last build, or its source has changed since (an
  editable install whose ``fast.py`` was edited and not rebuilt: a stale extension would
  silently run the old code);
- the package is imported from a zip (Spark ships it to executors that way): Python cannot
  load an extension module from a zip, so the zip's ``.py`` files run.

:func:`describe` says which build runs and why (``timealign info``). This module imports
only the standard library: ``setup.py`` loads it on its own.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

#: The modules the compiled build compiles (measured: see ``benchmarks/``).
COMPILED = (
    "timealign.approximate_time.fast",
    "timealign.event_time_batcher.fast",
    "timealign.rate_aware_batcher.fast",
)
#: mypyc's group: its shared library is the extension module ``timealign._native__mypyc``.
GROUP = "timealign._native"
RECORD = Path(__file__).with_name("_native.json")
PURE_VARIABLE = "TIMEALIGN_PURE"

_why_pure: dict[str, str] = {}


def pure_requested() -> bool:
    """Whether ``TIMEALIGN_PURE`` asks for the pure-Python fast paths."""
    return os.environ.get(PURE_VARIABLE, "") not in ("", "0")


def source_digest(path: Path) -> str:
    """The digest the build record keeps of a compiled module's source."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _record() -> dict[str, object]:
    try:
        loaded = json.loads(RECORD.read_text())
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _refusal(name: str, source: Path) -> str | None:
    """Why the extension of module ``name`` must not run (None when it may)."""
    if pure_requested():
        return f"{PURE_VARIABLE}=1"
    record = _record()
    compiled = record.get("compiled")
    digest = compiled.get(name) if isinstance(compiled, dict) else None
    if digest is None:
        if compiled:  # the last build compiled other modules: this one is newer than it
            return "the last build did not compile it (reinstall to rebuild)"
        return f"the last build did not compile it ({record.get('reason', 'no build record')})"
    try:
        current = source_digest(source)
    except OSError:
        return f"its source {source} is missing"
    if current != digest:
        return f"stale: {source.name} changed since it was compiled (reinstall to rebuild)"
    return None


class _Chooser(importlib.abc.MetaPathFinder):
    """Finds each compiled module as its extension or as its source (module docstring)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname not in COMPILED:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.origin is None:
            return None
        if not spec.origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            if ".zip" in spec.origin or not spec.origin.endswith(".py"):
                _why_pure[fullname] = "imported from a zip (extensions cannot load from one)"
            else:
                _why_pure[fullname] = _refusal(fullname, Path(spec.origin)) or "no extension"
            return spec  # the source (no extension installed next to it, or a zip)
        source = Path(spec.origin).with_name(fullname.rpartition(".")[2] + ".py")
        why = _refusal(fullname, source)
        if why is None:
            return spec
        _why_pure[fullname] = why
        return importlib.util.spec_from_file_location(fullname, source)


def install() -> None:
    """Put the chooser in front of Python's own finders (once)."""
    if not any(isinstance(finder, _Chooser) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Chooser())


def is_compiled(module: ModuleType) -> bool:
    """Whether ``module`` was loaded from a C extension."""
    origin = getattr(module, "__file__", None) or ""
    return origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def describe() -> dict[str, str]:
    """For each compiled module: ``"compiled"`` or ``"pure: <why>"``, as imported now."""
    states: dict[str, str] = {}
    for name in COMPILED:
        module = importlib.import_module(name)
        states[name] = "compiled" if is_compiled(module) else \
            f"pure: {_why_pure.get(name, 'no extension')}"
    return states


def build() -> str:
    """``"compiled"`` when every fast path runs compiled, ``"pure"`` when none does,
    ``"mixed"`` otherwise."""
    compiled = [state == "compiled" for state in describe().values()]
    return "compiled" if all(compiled) else "pure" if not any(compiled) else "mixed"
