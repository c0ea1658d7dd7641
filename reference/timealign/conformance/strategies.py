"""Random traces of any algorithm as vectors, for ``timealign conform --fuzz`` (CF-R7, CF-R9).

The strategies themselves are each algorithm's (``<algorithm>/strategies.py``, reached
through ``Algorithm.checks.traces``; a target has its own, CF-R18): the stateful and
differential tests of the reference draw from the same ones. This module only encodes a
drawn run as a vector. It needs Hypothesis (``pip install 'timealign[conform]'``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import strategies as st

from timealign import Algorithm
from timealign.conformance.where import Where
from timealign.traces import Run, Target
from timealign.vectors import Vector


def traces(algorithm: Algorithm[Any, Any, Any, Any], size: int = 30,
           target: Target | None = None, where: Where | None = None
           ) -> st.SearchStrategy[Vector]:
    """Random traces of ``algorithm`` (up to ``size`` inputs) as vectors without outputs;
    with ``target``, only traces inside its domain; with ``where``, every config holds its
    values (CF-R31: set on the drawn config, before the target settles the inputs)."""
    knowledge = algorithm.checks.traces
    if knowledge is None:
        raise KeyError(f"no fuzz strategy for {algorithm.name!r}")
    drawn: st.SearchStrategy[Run] = (target.fuzz if target is not None else
                                      knowledge.fuzz)(size)

    def encode(run: Run) -> Vector:
        config, inputs = run
        if where is not None:
            fitted = where.decoded(algorithm.codec, config)
            if fitted is None:  # refused with the values: sent as such (CF-R31)
                return Vector(algorithm=algorithm.name, name=f"{algorithm.name}_fuzz",
                              config=where.apply(algorithm.codec,
                                                 algorithm.codec.config_to_json(config)),
                              inputs=tuple(algorithm.codec.input_to_json(i) for i in inputs))
            config = fitted
        if target is not None:
            inputs = target.settle(config, inputs)
        return Vector(algorithm=algorithm.name, name=f"{algorithm.name}_fuzz",
                      config=algorithm.codec.config_to_json(config),
                      inputs=tuple(algorithm.codec.input_to_json(i) for i in inputs))

    return drawn.map(encode)


@contextmanager
def reproducible() -> Iterator[None]:
    """Hypothesis mixes into its draws constants it reads from every local module loaded so
    far, so the same seed draws other traces depending on what the process imported before.
    A fuzz run must depend on its seed alone (CF-R7: a run is repeatable; CF-R22, CF-R26:
    regenerating the specs' diff sections changes nothing), so the search runs without that
    pool. The pool lives in a private module: when it is gone, nothing is changed."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - another Hypothesis layout
        yield
        return
    original = getattr(providers, "_get_local_constants", None)
    if original is None or not hasattr(providers, "Constants"):
        yield
        return
    empty = providers.Constants()
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = original
        providers.CONSTANTS_CACHE.cache.clear()
