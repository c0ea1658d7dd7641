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


def _write_record(modules: dict[str, str], reason: str) -> None:
    RECORD.write_text(json.dumps({"compiled": modules, "reason": reason}, indent=1) + "\n")


def _extensions() -> list[object]:
    if pure_requested():
        _write_record({}, "built with TIMEALIGN_PURE=1")
        return []
    try:
        from mypyc.build import mypycify

        extensions = mypycify(_sources(), group_name=GROUP, opt_level="3")
    except Exception as error:  # mypyc missing or refusing the sources: pure build
        print(f"timealign: mypyc failed ({error}); installing the pure-Python build",
              file=sys.stderr)
        _write_record({}, f"mypyc failed: {error}")
        return []
    for extension in extensions:
        extension.optional = True  # no C compiler: build_ext warns and skips, we fall back
    _write_record({}, "the C compiler has not finished")  # replaced once build_ext succeeds
    return extensions


class BuildExt(build_ext):
    """build_ext that records what it compiled (nothing when an optional extension failed)."""

    def run(self) -> None:
        super().run()
        built = all(Path(self.get_ext_fullpath(e.name)).exists() for e in self.extensions)
        if not self.extensions:
            return
        if built:
            _write_record({name: source_digest(PACKAGE.parent / f"{name.replace('.', '/')}.py")
                           for name in COMPILED}, "compiled with mypyc")
        else:
            _write_record({}, "the C compiler failed (see the build log)")
        if not self.inplace:  # a wheel: copy the record into the build tree as well
            target = Path(self.build_lib) / "timealign" / RECORD.name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(RECORD.read_text())


os.chdir(ROOT)  # mypyc derives module names from paths relative to the project
setup(ext_modules=_extensions(), cmdclass={"build_ext": BuildExt})
