"""Name -> algorithm lookup shared by the CLI, the vector runner and the Spark jobs.

Entries are import paths so that importing the registry loads no algorithm, and adding an
algorithm is one line here and nothing in any adapter (the whole recipe, and the few lists
that hold knowledge about each algorithm: ARCHITECTURE.md, "Where a change goes").
"""

from __future__ import annotations

import importlib
from typing import Any

from timealign.algorithm import Algorithm
from timealign.errors import InvalidInput

_ENTRIES: dict[str, str] = {
    "approximate_time": "timealign.approximate_time:ALGORITHM",
    "event_time_batcher": "timealign.event_time_batcher:ALGORITHM",
    "rate_aware_batcher": "timealign.rate_aware_batcher:ALGORITHM",
}


def names() -> tuple[str, ...]:
    """The registered algorithm names, sorted."""
    return tuple(sorted(_ENTRIES))


def package(name: str) -> str:
    """The import path of the package of the algorithm registered under ``name`` (without
    importing it); :class:`InvalidInput` when unknown."""
    if name not in _ENTRIES:
        get(name)  # raises, naming the known algorithms
    return _ENTRIES[name].partition(":")[0]


def get(name: str) -> Algorithm[Any, Any, Any, Any]:
    """The algorithm registered under ``name``; :class:`InvalidInput` when unknown."""
    try:
        target = _ENTRIES[name]
    except KeyError:
        raise InvalidInput(
            "algorithm", "VEC-R2", f"unknown algorithm, expected one of {names()}", name
        ) from None
    module_name, _, attribute = target.partition(":")
    algorithm: Algorithm[Any, Any, Any, Any] = getattr(
        importlib.import_module(module_name), attribute
    )
    return algorithm
