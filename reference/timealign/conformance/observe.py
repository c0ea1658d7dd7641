"""Observability profiles: what an implementation reports, and the projection onto it.

Upstream implementations do not emit everything the reference does. A profile names, per
algorithm, the output kinds an implementation reports and the fields of each; the harness
projects both the reference's outputs and the implementation's onto the profile before
comparing (CF-R10). Projection only forgets: an output of a kind the profile does not
list disappears, a field it does not list is removed, and a field marked as a set has its
ids sorted. The ``input`` index of every output is always kept, so a difference is still
pinned to the input that produced it. ``full`` keeps everything (exact VEC-R6 comparison);
``upstream`` is what the upstream implementation of each algorithm can report (each
algorithm lists its profiles in ``<algorithm>/traces.py``):

- ApproximateTime (ROS 2 ``message_filters``, CF-R11): ``published`` sets as ids in topic
  order; no drops, warnings, pending or error outputs.
- Event-time batcher (thin-edge.io, CF-R12): ``batch`` ids as a set (no window bounds) and
  ``timer`` instants; no rejections or drops.
- Rate-aware batcher (ESS live data, CF-R13): ``batch`` start, end and ids in order, one
  per poll; no pending outputs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from timealign import Algorithm, registry
from timealign.errors import InvalidInput
from timealign.traces import Profile

JSON = dict[str, Any]


def profiles(algorithm: str | Algorithm[Any, Any, Any, Any]) -> Mapping[str, Profile]:
    """The profiles of ``algorithm`` by name (its ``traces.profiles``; ``full`` only when
    it has none)."""
    found = registry.get(algorithm) if isinstance(algorithm, str) else algorithm
    return found.checks.traces.profiles if found.checks.traces is not None else {"full": None}


def profile(algorithm: str | Algorithm[Any, Any, Any, Any], name: str) -> Profile:
    """The profile ``name`` of ``algorithm``; :class:`InvalidInput` (CF-R10) when unknown."""
    known = profiles(algorithm)
    if name not in known:
        shown = algorithm if isinstance(algorithm, str) else algorithm.name
        raise InvalidInput("observe", "CF-R10",
                           f"unknown profile for {shown}, expected one of {sorted(known)}",
                           name)
    return known[name]


def project(chosen: Profile, outputs: Iterable[JSON]) -> list[JSON]:
    """The outputs as the profile sees them (CF-R10), in their original order."""
    if chosen is None:
        return list(outputs)
    seen: list[JSON] = []
    for output in outputs:
        spec = chosen.get(output.get("kind"))  # type: ignore[arg-type]
        if spec is None:
            continue
        kept, sets = spec
        shown: JSON = {"input": output.get("input"), "kind": output.get("kind")}
        for field in kept:
            value = output.get(field)
            if field in sets and isinstance(value, list):
                value = sorted(value, key=str)
            shown[field] = value
        seen.append(shown)
    return seen
