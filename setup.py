"""Build hook of the optional compiled build (everything else is in ``pyproject.toml``).

``pip install`` compiles the fast paths listed in ``timealign.native.COMPILED`` with mypyc
when it can: mypyc generates C from the type-annotated modules and the C compiler builds
one extension module per fast path. The build falls back to pure Python, and says so, when
``TIMEALIGN_PURE=1`` is set, when mypyc cannot translate the modules, or when no C compiler
is present (the extensions are optional). The rule text (each ``machine.py``) is never
compiled. The build writes ``reference/timealign/_native.json``, the record of what was
compiled and a digest of each source, which ``timealign.native`` reads to refuse a stale
extension (one built from a source that has changed since).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
PACKAGE = ROOT / "reference" / "timealign"
RECORD = PACKAGE / "_native.json"

def _native() -> ModuleType:
    """``timealign/native.py`` alone (stdlib only), without importing the package."""
    spec = importlib.util.spec_from_file_location("_timealign_native", PACKAGE / "native.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


native = _native()
COMPILED: tuple[str, ...] = native.COMPILED
GROUP: str = native.GROUP
pure_requested = native.pure_requested
source_digest = native.source_digest


def _sources() -> list[str]:
    return [f"reference/{name.replace('.', '/')}.py" for name in COMPILED]


def _record(modules: dict[str, str], reason: str) -> str:
    return json.dumps({"compiled": modules, "reason": reason}, indent=1) + "\n"


#: The digests of the sources mypyc translated, taken when it read them.
DIGESTS = {name: source_digest(ROOT / source) for name, source in zip(COMPILED, _sources(),
                                                                     strict=True)}


def _extensions() -> list[object]:
    """mypyc's extensions, or none (and a record in the source tree saying why): an
    editable install reads that record, a wheel gets a copy as package data."""
    if pure_requested():
        RECORD.write_text(_record({}, "built with TIMEALIGN_PURE=1"))
        return []
    try:
        from mypyc.build import mypycify

        # The build environment holds mypy and attrs only: imports that mypy follows out of
        # the fast paths into modules of the extras (the fuzz strategies import Hypothesis)
        # are read silently, so they cannot refuse the build; the fast paths are checked.
        extensions = mypycify(["--follow-imports=silent", *_sources()], group_name=GROUP,
                              opt_level="3")
    except (Exception, SystemExit) as error:  # mypyc missing or refusing (it exits on a
        # type error): the pure build
        why = "mypyc refused the sources (see the build log)" \
            if isinstance(error, SystemExit) else f"mypyc failed: {error}"
        print(f"timealign: {why}; installing the pure-Python build", file=sys.stderr)
        RECORD.write_text(_record({}, why))
        return []
    for extension in extensions:
        extension.optional = True  # no C compiler: build_ext warns and skips, we fall back
    return extensions


class BuildExt(build_ext):
    """build_ext that records what it compiled: the digests when every extension built,
    nothing when an optional one failed (then the pure fast paths run)."""

    def run(self) -> None:
        self._built: set[str] = set()
        super().run()
        if not self.extensions:  # a pure build: _extensions() wrote the record saying why
            return
        if all(e.name in self._built for e in self.extensions):
            text = _record(DIGESTS, "compiled with mypyc")
        else:
            text = _record({}, "the C compiler failed (see the build log)")
        # In place (an editable install): the record next to the extensions. For a wheel,
        # only in the build tree: the source tree's extensions were not rebuilt.
        target = RECORD if self.inplace else Path(self.build_lib) / "timealign" / RECORD.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)

    def build_extension(self, ext: Any) -> None:
        super().build_extension(ext)  # raises (and build_ext skips it) when it fails
        self._built.add(ext.name)


os.chdir(ROOT)  # mypyc derives module names from paths relative to the project
setup(ext_modules=_extensions(), cmdclass={"build_ext": BuildExt})
