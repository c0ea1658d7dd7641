"""The machines the Spark tests run: the test-only pairs algorithms and every real machine
registered so far, each with a config that suits the generated robot fleet."""

from __future__ import annotations

from typing import Any

import attrs

from tests.pairs_toy import PAIRS, TIMED_PAIRS, PairsConfig
from timealign import registry
from timealign.machine import Algorithm


@attrs.frozen
class Case:
    name: str
    algorithm: Algorithm[Any, Any, Any, Any]
    config: Any
    clocked: bool


# JSON configs (the vector format's `config` objects) for the generated fleet.
REAL_CONFIGS: dict[str, dict[str, Any]] = {}


def _real() -> list[Case]:
    found = []
    for name, raw in REAL_CONFIGS.items():
        if name in registry.names():
            algorithm = registry.get(name)
            found.append(Case(name, algorithm, algorithm.config_from_json(raw),
                              algorithm.tick is not None))
    return found


CASES: list[Case] = [
    Case("pairs", PAIRS, PairsConfig(window=3_000_000), False),
    Case("timed_pairs", TIMED_PAIRS, PairsConfig(window=3_000_000, timeout=20_000_000), True),
    *_real(),
]
