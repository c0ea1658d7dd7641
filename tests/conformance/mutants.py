"""Seeded faults for the mutation study of the conformance harness (CF-I1).

Each fault is a mistake an implementer makes (a boundary off by one, a reversed tie-break,
rounding instead of truncation, a timer firing after an equal-instant message, a poll
split in two, a float used for time, an overflow dropping the wrong message...), made by
patching one helper of the reference's rule text or by changing how inputs reach it.
``python -m tests.conformance.mutants FAULT`` serves the faulty implementation over the
protocol (the patches live only in that process), so the study checks each fault as an
external command, exactly as ``timealign conform --cmd`` would.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import attrs

from timealign import Algorithm, registry
from timealign.conformance.adapter import Runner, runner, serve
from timealign.errors import InvalidInput

JSON = dict[str, Any]


def _rule_text(name: str) -> Algorithm[Any, Any, Any, Any]:
    """The registered algorithm stepping through its rule text (the module patches apply)."""
    import importlib

    module = importlib.import_module(f"timealign.{name}.machine")
    registered = registry.get(name)
    return attrs.evolve(registered, machine=attrs.evolve(registered.machine, step=module.step))


#: Swaps of rule functions kept for the life of the process (a mutant serves until killed).
_KEPT = ExitStack()


def _patch(module: Any, name: str, value: Any) -> None:
    """Replace a helper the rule text calls; a renamed helper fails loudly here instead of
    leaving a fault that changes nothing."""
    assert hasattr(module, name), f"{module.__name__} has no {name}: update the fault"
    setattr(module, name, value)


def _reordered(algorithm: Algorithm[Any, Any, Any, Any],
               arrange: Callable[[list[tuple[int, Any]]], Iterator[tuple[int, Any]]]) -> Runner:
    """Decode every input, let ``arrange`` reorder or split them (each keeps the index of
    the input it came from), then step them in that order."""
    def run(config_json: JSON, inputs: list[JSON]) -> list[JSON]:
        config = algorithm.codec.config_from_json(config_json)
        state = algorithm.machine.initial(config)
        produced: list[JSON] = []
        decoded: list[tuple[int, Any]] = []
        for index, raw in enumerate(inputs):
            try:
                decoded.append((index, algorithm.codec.input_from_json(raw)))
            except InvalidInput as error:
                produced.append({"input": index, "kind": "error", "field": error.field,
                                 "rule": error.rule})
        for index, item in arrange(decoded):
            try:
                state, outputs = algorithm.machine.step(config, state, item)
            except InvalidInput as error:
                produced.append({"input": index, "kind": "error", "field": error.field,
                                 "rule": error.rule})
                continue
            produced += [{"input": index, **algorithm.codec.output_to_json(o)} for o in outputs]
        return produced
    return run


# --- ApproximateTime ---------------------------------------------------------------------

def _planted(name: str, variant: str) -> Runner:
    """The rule text of ``name`` with its catalogued variant ``variant`` (CF-R41) swapped in
    for the life of the process: the fault is the catalogue's, in one place."""
    from timealign.conformance.catalogue import book

    _KEPT.enter_context(book(name).swapped(variant))
    return runner(_rule_text(name))


def at_tie_start_highest() -> Runner:
    """Reversed tie-break: the start topic is the highest index among the minima (AT-R6)."""
    return _planted("approximate_time", "tie-start-highest")


def at_interval_not_strict() -> Runner:
    """Boundary off by one: a spread equal to max_interval_duration is refused (AT-R8)."""
    return _planted("approximate_time", "interval-not-strict")


def at_round_not_trunc() -> Runner:
    """Rounding instead of truncation in the age-penalty product (AT-D23)."""
    return _planted("approximate_time", "round-not-trunc")


def at_float_stamps() -> Runner:
    """A float used for time: stamps pass through a binary64 (AT-R2)."""
    algorithm = _rule_text("approximate_time")
    decode = algorithm.codec.input_from_json

    def input_from_json(raw: Any) -> Any:
        if raw.get("op") == "message" and isinstance(raw.get("stamp"), int):
            raw = {**raw, "stamp": int(float(raw["stamp"]))}
        return decode(raw)

    return runner(attrs.evolve(algorithm, codec=attrs.evolve(algorithm.codec,
                                                            input_from_json=input_from_json)))


def at_overflow_drops_newest() -> Runner:
    """An overflow dropping the wrong message: the newest of the topic, not the oldest (AT-R5)."""
    return _planted("approximate_time", "overflow-drops-newest")


def at_overflow_at_queue_size() -> Runner:
    """Boundary off by one: overflow when deque + past reaches queue_size (AT-R5, AT-D4)."""
    return _planted("approximate_time", "overflow-at-queue-size")


# --- Event-time batcher ------------------------------------------------------------------

def _catalogued(algorithm: str, variant: str) -> Runner:
    """The rule text with ``variant`` of its catalogue (CF-R41) swapped in: the fault is the
    catalogued misreading itself, one source for the mutant and the diagnosis."""
    from timealign.conformance.catalogue import port, variants

    assert variant in {t.name for t in variants(algorithm)}, f"{variant} is not catalogued"
    return port(algorithm, variant)


def eb_split_toward_existing() -> Runner:
    """Rounding the split point toward the existing member, not the new one (EB-R11)."""
    return _catalogued("event_time_batcher", "split-toward-existing")


def eb_tick_closes_strictly() -> Runner:
    """Boundary off by one: a tick closes only batches with ``end + D < at`` (EB-R14)."""
    return _catalogued("event_time_batcher", "tick-closes-strictly")


def eb_timer_after_message() -> Runner:
    """A timer firing after, not before, a message at the same instant (EB-R13, DRV-R3)."""
    from timealign.event_time_batcher import Message, Tick

    def arrange(items: list[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
        held: tuple[int, Any] | None = None
        for index, item in items:
            if held is not None and isinstance(item, Message) and item.at == held[1].at:
                yield index, item
                continue
            if held is not None:
                yield held
                held = None
            if isinstance(item, Tick):
                held = (index, item)
            else:
                yield index, item
        if held is not None:
            yield held

    return _reordered(_rule_text("event_time_batcher"), arrange)


def eb_flush_in_creation_order() -> Runner:
    """A flush emitting batches oldest first instead of in reverse (EB-R15)."""
    return _catalogued("event_time_batcher", "flush-in-creation-order")


def eb_lookup_last_batch() -> Runner:
    """The last created batch containing the event time wins a shared endpoint (EB-R7)."""
    return _catalogued("event_time_batcher", "last-batch-wins")


# --- Rate-aware batcher ------------------------------------------------------------------

def rb_poll_split() -> Runner:
    """A poll split in two: its messages delivered as two upstream calls (RB-D5, RB-D6)."""
    from timealign.rate_aware_batcher import Poll

    def arrange(items: list[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
        for index, item in items:
            if isinstance(item, Poll) and len(item.messages) > 1:
                half = len(item.messages) // 2
                yield index, Poll(item.messages[:half])
                yield index, Poll(item.messages[half:])
            else:
                yield index, item

    return _reordered(_rule_text("rate_aware_batcher"), arrange)


def rb_hwm_clamp_2l() -> Runner:
    """The high-water mark clamped at start + 2L instead of 3L (RB-R9).

    The catalogued variant ``RB-R9 ~ clamp-2l``."""
    return _catalogued("rate_aware_batcher", "clamp-2l")


def rb_timeout_exclusive() -> Runner:
    """Boundary off by one: the timeout fires only past ``start + timeout`` (RB-R10).

    The catalogued variant ``RB-R10 ~ timeout-exclusive``."""
    return _catalogued("rate_aware_batcher", "timeout-exclusive")


def rb_float_timestamps() -> Runner:
    """A float used for time: timestamps pass through a binary64 (RB-D3)."""
    algorithm = _rule_text("rate_aware_batcher")
    decode = algorithm.codec.input_from_json

    def input_from_json(raw: Any) -> Any:
        if raw.get("op") == "poll" and isinstance(raw.get("messages"), list):
            raw = {**raw, "messages": [
                {**m, "timestamp": int(float(m["timestamp"]))}
                if isinstance(m, dict) and isinstance(m.get("timestamp"), int) else m
                for m in raw["messages"]]}
        return decode(raw)

    return runner(attrs.evolve(algorithm, codec=attrs.evolve(algorithm.codec,
                                                            input_from_json=input_from_json)))


def rb_evict_after_4() -> Runner:
    """A stream evicted after 4 absent batches instead of 5 (RB-D9).

    The catalogued variant ``RB-R14 ~ evict-after-4`` (the close's eviction count)."""
    return _catalogued("rate_aware_batcher", "evict-after-4")


FAULTS: dict[str, tuple[str, Callable[[], Runner]]] = {
    "at-tie-start-highest": ("approximate_time", at_tie_start_highest),
    "at-interval-not-strict": ("approximate_time", at_interval_not_strict),
    "at-round-not-trunc": ("approximate_time", at_round_not_trunc),
    "at-float-stamps": ("approximate_time", at_float_stamps),
    "at-overflow-drops-newest": ("approximate_time", at_overflow_drops_newest),
    "at-overflow-at-queue-size": ("approximate_time", at_overflow_at_queue_size),
    "eb-split-toward-existing": ("event_time_batcher", eb_split_toward_existing),
    "eb-tick-closes-strictly": ("event_time_batcher", eb_tick_closes_strictly),
    "eb-timer-after-message": ("event_time_batcher", eb_timer_after_message),
    "eb-flush-in-creation-order": ("event_time_batcher", eb_flush_in_creation_order),
    "eb-lookup-last-batch": ("event_time_batcher", eb_lookup_last_batch),
    "rb-poll-split": ("rate_aware_batcher", rb_poll_split),
    "rb-hwm-clamp-2l": ("rate_aware_batcher", rb_hwm_clamp_2l),
    "rb-timeout-exclusive": ("rate_aware_batcher", rb_timeout_exclusive),
    "rb-float-timestamps": ("rate_aware_batcher", rb_float_timestamps),
    "rb-evict-after-4": ("rate_aware_batcher", rb_evict_after_4),
}


def command(fault: str) -> str:
    """The shell command serving ``fault`` over the protocol."""
    return f"{sys.executable} -m tests.conformance.mutants {fault}"


if __name__ == "__main__":
    serve(FAULTS[sys.argv[1]][1](), sys.stdin, sys.stdout)
