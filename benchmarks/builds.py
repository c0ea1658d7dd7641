"""Both builds of a fast path in one process, for benchmarks that print them side by side.

The machine is shared, so a compiled figure is only comparable with a pure one measured in
the same run. :func:`fast_paths` gives the installed fast path (compiled or pure, as
``timealign.native`` chose) and, when that one is compiled, the same module loaded again
from its ``.py`` source under a private name: the pure build, without reinstalling.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import attrs

from timealign import native
from timealign.algorithm import Algorithm, Fast

AnyAlgorithm = Algorithm[Any, Any, Any, Any]


def _source_module(name: str) -> Any:
    """Module ``name`` executed from its ``.py`` file, not registered in ``sys.modules``."""
    package = importlib.import_module(name.rpartition(".")[0])
    path = Path(package.__file__ or "").with_name(name.rpartition(".")[2] + ".py")
    spec = importlib.util.spec_from_file_location(f"{name}__pure_benchmark", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pure_fast_path(algorithm: AnyAlgorithm) -> AnyAlgorithm:
    """``algorithm.fast_path()`` run from the Python source of its fast path."""
    assert algorithm.machine.fast is not None
    module = _source_module(algorithm.machine.fast.step.__module__)
    fast = Fast(module.initial, module.step, module.to_spec, module.from_spec)
    return attrs.evolve(algorithm, machine=attrs.evolve(algorithm.machine, fast=fast)).fast_path()


def build_of(algorithm: AnyAlgorithm) -> str:
    """``"compiled"`` or ``"pure"``: how ``algorithm.fast_path()`` runs here."""
    assert algorithm.machine.fast is not None
    module = importlib.import_module(algorithm.machine.fast.step.__module__)
    return "compiled" if native.is_compiled(module) else "pure"


def fast_paths(algorithm: AnyAlgorithm) -> list[tuple[str, AnyAlgorithm]]:
    """``[(build, fast path)]``: the installed one and, when it is compiled, the pure one."""
    installed = build_of(algorithm)
    found = [(installed, algorithm.fast_path())]
    if installed == "compiled":
        found.append(("pure", pure_fast_path(algorithm)))
    return found
