"""What the event-time batcher knows about the traces it is checked on
(spec/conformance.md).

The explorer's alphabet (``proofs/explore_event_time_batcher.py`` walks it exhaustively,
``timealign conform --explore`` up to a depth), the fuzz strategy (:mod:`.strategies`),
the observability profiles (CF-R12), the output -> rule map (CF-R14) and the target
(CF-R18) ``thin-edge``: the thin-edge.io batcher, whose config is whole milliseconds.
Registered as ``ALGORITHM.checks.traces``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from timealign.event_time_batcher.model import Config, Input, Message, Tick
from timealign.traces import JSON, Instance, Profile, RuleMap, Target, Trace, Traces

#: One millisecond: thin-edge.io's config unit (EB-D11).
MILLISECOND = 1_000_000


def eb_moves(config: Config, steps: tuple[int, ...], keys: str,
             unit: int = 1) -> Callable[[Trace], list[Input]]:
    """Processing time staying or advancing by a step; event times from one unit below the
    too-old bound to one above the leap limit, per key, every ``unit`` ns; a tick at every
    reachable instant. Steps are in ``unit`` ns."""
    def moves(trace: Trace) -> list[Input]:
        now = max((x.at for x in trace if isinstance(x, Message | Tick)), default=0)
        found: list[Input] = []
        for step in steps:
            at = now + step * unit
            low = max(0, at - config.max_message_delay - unit)
            for t in range(low, at + config.message_leap_limit + 2 * unit, unit):
                found += [Message(key, t, at, f"{key}{len(trace)}") for key in keys]
            found.append(Tick(at))
        return found
    return moves


def _instances(unit: int) -> tuple[Instance, ...]:
    """The explorer's instances with every duration in ``unit`` ns."""
    def one(name: str, window: int, delay: int, leap: int, steps: tuple[int, ...],
            keys: str) -> Instance:
        config = Config(window * unit, delay * unit, leap * unit)
        suffix = "" if unit == 1 else "-ms"

        def named(other: Config) -> str:  # CF-R31: a zero-window name under another window
            width = other.batching_window
            spelled = "zero-window" if width == 0 else f"window-{width // unit}"
            return name.replace("zero-window", spelled) + suffix
        return Instance(name + suffix, config, eb_moves(config, steps, keys, unit), named)
    return (
        one("eb/one-key-conflicts", 4, 2, 1, (0, 2), "a"),
        one("eb/two-keys", 3, 2, 0, (0, 2), "ab"),
        one("eb/zero-window", 0, 1, 0, (0, 1), "ab"),
    )


INSTANCES = _instances(1)


def _fuzz(unit: int = 1, reuse: bool = True) -> Any:
    def draw(size: int) -> Any:
        from timealign.event_time_batcher.strategies import eb_runs

        return eb_runs(max_inputs=size, unit=unit, reuse=reuse)
    return draw


PROFILES: dict[str, Profile] = {
    "full": None,
    # thin-edge.io batches carry no window bounds (CF-R12).
    "upstream": {"batch": (("ids",), ("ids",)), "timer": (("at",), ())},
}

RULES: RuleMap = {
    ("batch", None): ("EB-R13", "EB-R14", "EB-R16"),
    ("timer", None): ("EB-R13",),
    ("rejected", "too_old"): ("EB-R5",),
    ("rejected", "too_far_in_future"): ("EB-R6",),
    ("rejected", "duplicate"): ("EB-R10",),
    ("dropped", "overwritten"): ("EB-R12",),
}


def _outside_thin_edge(config: JSON, _inputs: Sequence[JSON]) -> str | None:
    for field in ("batching_window", "max_message_delay", "message_leap_limit"):
        value = config.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and (
                value % MILLISECOND or value >= 2**32 * MILLISECOND):
            return f"{field} not a whole number of milliseconds (EB-D11)"
    return None


TARGETS = {
    "thin-edge": Target(
        name="thin-edge",
        summary="thin-edge.io batcher (Rust): config in whole milliseconds, batches as "
                "sets and timers",
        observe="upstream",
        instances=_instances(MILLISECOND),
        fuzz=_fuzz(MILLISECOND, reuse=False),
        outside=_outside_thin_edge,
        refused={
            "EB-R1": "a config outside the reference's (EB-R1)",
            "EB-R2": "a malformed input (EB-R2)",
            "EB-R3": "processing time going backwards: upstream requests a timer (EB-D12)",
            "EB-R4": "an id still held: upstream batches both (EB-D13)",
        },
    ),
}

TRACES = Traces(instances=INSTANCES, fuzz=_fuzz(), profiles=PROFILES, rules=RULES,
                targets=TARGETS)
