"""The bounded explorer's small instances, as trace sources for the harness (CF-R8).

An instance (``timealign.traces.Instance``) is a config and an input alphabet
(``moves(trace)``: the inputs allowed after ``trace``); each algorithm lists its own in
``<algorithm>/traces.py`` (the alphabets ``proofs/explore_*.py`` walk exhaustively), and a
target (CF-R18) its own. The harness walks them up to a depth and sends every trace,
closed by the end input, to the implementation under test, shortest traces first.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from timealign import Algorithm
from timealign.traces import Instance, Moves, Target, Trace
from timealign.vectors import Vector


def walk(moves: Moves, depth: int) -> Iterator[Trace]:
    """Every input sequence of 1 to ``depth`` moves, shortest first."""
    layer: list[Trace] = [()]
    for _ in range(depth):
        layer = [(*trace, move) for trace in layer for move in moves(trace)]
        yield from layer


def instances(algorithm: Algorithm[Any, Any, Any, Any],
              target: Target | None = None) -> tuple[Instance, ...]:
    """The instances of ``target``, or of the algorithm's whole domain without one."""
    if target is not None:
        return target.instances
    return algorithm.traces.instances if algorithm.traces is not None else ()


def traces(algorithm: Algorithm[Any, Any, Any, Any], depth: int,
           target: Target | None = None) -> Iterator[tuple[str, Vector]]:
    """(instance name, trace closed by the end input) for every instance."""
    for item in instances(algorithm, target):
        encoded = algorithm.config_to_json(item.config)
        closing = algorithm.end(item.config)
        for number, trace in enumerate(walk(item.moves, depth)):
            inputs = [*trace, closing]
            if target is not None:
                inputs = target.settle(item.config, inputs)
            yield item.name, Vector(
                algorithm=algorithm.name, name=f"{item.name.replace('/', '_')}_{number}",
                config=encoded, inputs=tuple(algorithm.input_to_json(i) for i in inputs))
