"""The bounded explorer's small instances, as trace sources for the harness (CF-R8).

An instance (``timealign.traces.Instance``) is a config and an input alphabet
(``moves(trace)``: the inputs allowed after ``trace``); each algorithm lists its own in
``<algorithm>/traces.py`` (the alphabets ``proofs/explore_*.py`` walk exhaustively), and a
target (CF-R18) its own. The harness walks them up to a depth and sends every trace,
closed by the end input, to the implementation under test, shortest traces first.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import islice
from typing import Any

import attrs

from timealign import Algorithm
from timealign.conformance.where import Where
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
    return algorithm.checks.traces.instances if algorithm.checks.traces is not None else ()


#: Traces of one instance sent before the next instance's turn at the same depth (CF-R35).
CHUNK = 200


def traces(algorithm: Algorithm[Any, Any, Any, Any], depth: int,
           target: Target | None = None, where: Where | None = None,
           chunk: int = CHUNK) -> Iterator[tuple[str, int, Vector]]:
    """(instance name, moves, trace closed by the end input) for every instance, interleaved
    (CF-R35): depth by depth, and within a depth ``chunk`` traces of each instance in
    turn, so a run cut short has walked every instance as deep as the others. With
    ``where`` each instance's config holds its values (CF-R31; an instance the reference
    then refuses is left out), and its name follows them (:func:`renamed`)."""
    chosen = []
    for item in instances(algorithm, target):
        config = item.config if where is None else where.decoded(algorithm.codec, item.config)
        if config is not None:
            chosen.append((renamed(algorithm, item, config, where), config))
    numbers = [0] * len(chosen)
    previous: list[list[Trace]] = [[()] for _ in chosen]
    for level in range(1, depth + 1):
        keep = level < depth  # the last layer is streamed, never held
        kept: list[list[Trace]] = [[] for _ in chosen]
        layers = [_layer(item.moves, previous[k], kept[k] if keep else None)
                  for k, (item, _) in enumerate(chosen)]
        live = list(range(len(chosen)))
        while live:
            for k in list(live):
                item, config = chosen[k]
                batch = list(islice(layers[k], chunk))
                if len(batch) < chunk:
                    live.remove(k)
                for trace in batch:
                    yield item.name, level, _vector(algorithm, item.name, config, trace, numbers[k],
                                             target)
                    numbers[k] += 1
        previous = kept


def renamed(algorithm: Algorithm[Any, Any, Any, Any], item: Instance, config: Any,
            where: Where | None) -> Instance:
    """``item`` named for ``config``, the config ``where`` made of it (CF-R31): unchanged when
    the values were already its own; else its ``named(config)``, or, when that spells none
    of the values changed (or it has none), its name with the values appended: no name
    keeps a value the trace does not carry (``at/n2-q1-...`` after ``--where
    queue_size=9``), and none hides the values it runs with."""
    codec = algorithm.codec
    if where is None or codec.config_to_json(config) == codec.config_to_json(item.config):
        return item
    name = item.named(config) if item.named is not None else item.name
    if item.named is None or name == item.named(item.config):  # it spells none of them
        name += "-" + "-".join(f"{key}{_shown(value)}" for key, value in where.changes.items())
    return attrs.evolve(item, name=name)


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def _layer(moves: Moves, previous: list[Trace], kept: list[Trace] | None
           ) -> Iterator[Trace]:
    for trace in previous:
        for move in moves(trace):
            longer = (*trace, move)
            if kept is not None:
                kept.append(longer)
            yield longer


def _vector(algorithm: Algorithm[Any, Any, Any, Any], name: str, config: Any, trace: Trace,
            number: int, target: Target | None) -> Vector:
    inputs = [*trace, algorithm.machine.end(config)]
    if target is not None:
        inputs = target.settle(config, inputs)
    return Vector(algorithm=algorithm.name, name=f"{name.replace('/', '_')}_{number}",
                  config=algorithm.codec.config_to_json(config),
                  inputs=tuple(algorithm.codec.input_to_json(i) for i in inputs))
