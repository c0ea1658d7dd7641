"""Bounded exploration of the adapters' driver (spec/drivers.md) over every short row list.

The explored "machine" is a driven machine: its state is a driver checkpoint (DRV-R6), its
inputs are rows, and each step resumes a driver from the checkpoint, feeds one row (or ends
the input) and checkpoints again. So every node also exercises resumption. At every
closed prefix the checker asks: are the steps exactly those of one uninterrupted
``drive`` (DRV-R6), did every requested timer fire once and in order with the end input
last (DRV-I1, DRV-R3 to DRV-R5), and was every row accounted for exactly once (SP-R6)?

The clocked machine is the test-only timed pairs algorithm, plus the event-time batcher
once it is registered.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import attrs

from proofs.explore import Instance, Outputs, Trace
from tests.pairs_toy import TIMED_PAIRS, PairsConfig
from timealign import registry
from timealign.algorithm import (
    Accounting,
    Algorithm,
    Codec,
    Feeding,
    Grouped,
    Machine,
    Record,
    Settled,
)
from timealign.drive import Checkpoint, Driver, drive


@attrs.frozen
class EndOfInput:
    """The driven machine's end input."""


def driven(algorithm: Algorithm[Any, Any, Any, Any]) -> Algorithm[Any, Any, Any, Any]:
    """``algorithm`` behind a driver: state = checkpoint, inputs = rows."""

    def step(config: Any, checkpoint: Checkpoint[Any], row: Any) -> tuple[Any, tuple[Any, ...]]:
        driver = Driver.resume(algorithm, config, checkpoint)
        steps = driver.finish() if isinstance(row, EndOfInput) else driver.feed([row])
        produced = tuple(steps)
        return driver.checkpoint(), produced

    def unused(*_: Any) -> Any:
        raise NotImplementedError

    return Algorithm(
        name=f"driven_{algorithm.name}",
        machine=Machine(lambda config: Checkpoint(algorithm.machine.initial(config)), step,
                        end=lambda config: EndOfInput()),
        codec=Codec(unused, unused, unused, unused, unused),
        feeding=Feeding(unused), accounting=Accounting(lambda step: None),
    )


def checker(algorithm: Algorithm[Any, Any, Any, Any]) -> Any:
    def check(config: Any, trace: Trace, outputs: Outputs) -> list[str]:
        steps = [s for _, s in outputs]
        rows = [r for r in trace if isinstance(r, Record)]
        closed = bool(trace) and isinstance(trace[-1], EndOfInput)
        problems: list[str] = []
        settled: Counter[str] = Counter()
        for _, _, produced in steps:
            for output in produced:
                account = algorithm.accounting.account(output)
                if isinstance(account, Grouped):
                    settled.update(account.ids)
                elif isinstance(account, Settled):
                    settled[account.id] += 1
        fed = {r.id for r in rows}
        if any(n > 1 for n in settled.values()) or not set(settled) <= fed:
            problems.append(f"SP-R6: settled {dict(settled)} for fed {sorted(fed)}")
        if not closed:
            return problems
        if steps != list(drive(algorithm, config, rows)):
            problems.append("DRV-R6: resumed steps differ from one uninterrupted drive")
        if set(settled) != fed:
            problems.append(f"SP-R6: unsettled {sorted(fed - set(settled))}")
        feeding = algorithm.feeding
        requested = {t for _, _, out in steps for o in out
                     if (t := feeding.timer_of(o)) is not None}
        tick_type = type(feeding.tick(0)) if feeding.tick is not None else None
        clocks = [feeding.clock_of(item) for _, item, _ in steps if type(item) is tick_type]
        ticks = [clock for clock in clocks if clock is not None]  # a tick without a clock: wrong
        if ticks != clocks or ticks != sorted(set(ticks)) or set(ticks) != requested:
            problems.append(f"DRV-I1: ticks {clocks} for requested {sorted(requested)}")
        if [index for index, _, _ in steps] != list(range(len(steps))):
            problems.append("DRV-R7: indices are not consecutive")
        if steps and steps[-1][1] != algorithm.machine.end(config):
            problems.append("DRV-R5: the end input is not last")
        return problems

    return check


def moves(trace: Trace) -> list[Record]:
    last = max((r.arrival for r in trace if isinstance(r, Record)), default=10)
    name = f"m{len(trace)}"
    return [Record(name, topic, last + delta - lag, last + delta)
            for topic in ("x", "y") for delta in (0, 6, 15) for lag in (0, 4)]


def instance(algorithm: Algorithm[Any, Any, Any, Any], config: Any, depth: int) -> Instance:
    return Instance(
        name=f"drive/{algorithm.name}", algorithm=driven(algorithm), config=config,
        moves=moves, depth=depth, check=checker(algorithm),
        bounds=f"rows of 2 topics, arrival steps 0/6/15 ns, stamp lag 0/4, {depth} rows",
    )


INSTANCES: list[Instance] = [
    instance(TIMED_PAIRS, PairsConfig(window=5, timeout=10), 4),
]
if "event_time_batcher" in registry.names():
    try:
        _eb = registry.get("event_time_batcher")
        INSTANCES.append(instance(_eb, _eb.codec.config_from_json(
            {"batching_window": 10, "max_message_delay": 5}), 4))
    except ImportError:
        pass
