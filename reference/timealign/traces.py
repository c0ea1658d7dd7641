"""What an algorithm knows about the traces it is checked on (spec/conformance.md).

Each algorithm package states, in its own ``traces.py``, the small instances the bounded
explorer walks, its fuzz strategy, its observability profiles, which rules each output
exercises, and its *targets*: the domains of real upstream implementations (CF-R18). It
registers them on its descriptor (``Algorithm.checks.traces``), so adding an algorithm or a
target touches one package; the conformance harness (``timealign.conformance``) holds only
the generic machinery that reads them. This module is the core's vocabulary for that
knowledge: plain data and callables, no Hypothesis and no harness.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

JSON = dict[str, Any]
Trace = tuple[Any, ...]
#: The inputs allowed after a trace (decoded inputs).
Moves = Callable[[Trace], Sequence[Any]]
#: A decoded config and decoded inputs: what a fuzz strategy draws.
Run = tuple[Any, list[Any]]
#: What a profile keeps: output kind -> (kept fields, fields compared as sets); ``None``
#: keeps everything (CF-R10).
Profile = Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] | None
#: (output kind, reason or None) -> the rule ids that produce it (CF-R14); the reason-less
#: entry is the kind's fallback.
RuleMap = Mapping[tuple[str, str | None], tuple[str, ...]]
#: ``size -> strategy of Run``; imports Hypothesis only when called (CF-D3).
Fuzz = Callable[[int], Any]


@attrs.frozen
class Instance:
    """One small instance of the bounded explorer: a config and an input alphabet.

    ``named(config)`` is its name for another config (``--where`` changed it, CF-R31),
    when its name spells config values (``at/n2-q1-...``): ``None`` for a name that spells
    none, which then gets the changed values appended.
    """

    name: str
    config: Any
    moves: Moves
    named: Callable[[Any], str] | None = None


def _inside(_config: JSON, _inputs: Sequence[JSON]) -> str | None:
    return None


def _as_drawn(_config: Any, inputs: list[Any]) -> list[Any]:
    return inputs


@attrs.frozen
class Target:
    """The domain of one real upstream implementation (CF-R18).

    ``observe`` is its default observability profile; ``instances`` and ``fuzz`` generate
    only traces inside the domain; ``outside(config, inputs)`` (JSON) says why a given
    trace lies outside it, or ``None``; ``refused`` maps a rule under which the reference
    refuses part of a trace to the decision or hazard that makes such a trace fall outside
    (every trace the reference refuses is outside a target: upstream accepts it, throws or
    aborts instead); ``settle(config, inputs)`` adjusts a generated trace to stay inside
    (for example off a boundary the spec documents as differing).
    """

    name: str
    summary: str
    observe: str
    instances: tuple[Instance, ...]
    fuzz: Fuzz
    outside: Callable[[JSON, Sequence[JSON]], str | None] = _inside
    refused: Mapping[str, str] = attrs.Factory(dict)
    settle: Callable[[Any, list[Any]], list[Any]] = _as_drawn


@attrs.frozen
class Traces:
    """An algorithm's conformance knowledge, as the harness reads it.

    ``instances`` and ``fuzz`` are the whole reference domain (no target); ``profiles``
    the observability profiles by name (``full`` among them); ``rules`` the output -> rule
    map; ``targets`` the real upstreams by name.
    """

    instances: tuple[Instance, ...]
    fuzz: Fuzz
    profiles: Mapping[str, Profile]
    rules: RuleMap
    targets: Mapping[str, Target] = attrs.Factory(dict)
