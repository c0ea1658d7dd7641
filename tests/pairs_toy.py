"""A small test-only algorithm for the adapters' tests: pairs of messages from two topics.

It holds at most one message. A message of another topic whose stamp is within ``window``
of the held one publishes the pair; otherwise the held one is dropped and the new one held.
With a ``timeout``, every held message asks for a timer at ``arrival + timeout`` and a tick
at or after it drops the message: enough to exercise groups, settlements, ticks, timers and
the end of input without depending on the real machines.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import attrs

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
from timealign.errors import require, require_ns


@attrs.frozen
class PairsConfig:
    window: int
    timeout: int | None = None


@attrs.frozen
class Msg:
    id: str
    topic: str
    stamp: int
    arrival: int


@attrs.frozen
class Tick:
    now: int


@attrs.frozen
class End:
    pass


@attrs.frozen
class Timer:
    at: int


@attrs.frozen
class PairsState:
    held: Msg | None = None
    published: int = 0


Input = Msg | Tick | End
Output = Grouped | Settled | Timer


def step(config: PairsConfig, state: PairsState, item: Input) -> tuple[PairsState,
                                                                        tuple[Output, ...]]:
    held = state.held
    if isinstance(item, End):
        return state, () if held is None else (Settled(held.id, "pending", "TOY-end"),)
    if isinstance(item, Tick):
        if held is not None and config.timeout is not None \
                and held.arrival + config.timeout <= item.now:
            return attrs.evolve(state, held=None), (Settled(held.id, "dropped", "TOY-timeout"),)
        return state, ()
    if held is not None and held.topic != item.topic \
            and abs(item.stamp - held.stamp) <= config.window:
        first, last = sorted((held.stamp, item.stamp))
        group = Grouped((held.id, item.id), first, last)
        return PairsState(None, state.published + 1), (group,)
    outputs: list[Output] = []
    if held is not None:
        outputs.append(Settled(held.id, "dropped", "TOY-replaced"))
    if config.timeout is not None:
        outputs.append(Timer(item.arrival + config.timeout))
    return attrs.evolve(state, held=item), tuple(outputs)


def records(config: PairsConfig, rows: Iterable[Record]) -> Iterator[Msg]:
    for row in rows:
        require(row.topic != "", "topic", "TOY-R1", "must not be empty", row.topic)
        yield Msg(row.id, row.topic, row.stamp, row.arrival)


def _config(raw: Mapping[str, Any]) -> PairsConfig:
    timeout = raw.get("timeout")
    return PairsConfig(require_ns(raw.get("window", 10), "window", "TOY-R1"),
                       None if timeout is None else require_ns(timeout, "timeout", "TOY-R1"))


def _input(raw: Mapping[str, Any]) -> Input:
    op = raw.get("op")
    if op == "msg":
        return Msg(raw["id"], raw["topic"], raw["stamp"], raw["arrival"])
    if op == "tick":
        return Tick(raw["now"])
    return End()


def _input_json(item: Input) -> dict[str, Any]:
    if isinstance(item, Msg):
        return {"op": "msg", **attrs.asdict(item)}
    if isinstance(item, Tick):
        return {"op": "tick", "now": item.now}
    return {"op": "end"}


def _output_json(output: Output) -> dict[str, Any]:
    if isinstance(output, Grouped):
        return {"kind": "pair", "ids": list(output.ids), "start": output.start,
                "end": output.end}
    if isinstance(output, Settled):
        return {"kind": output.outcome, "id": output.id, "reason": output.reason}
    return {"kind": "timer", "at": output.at}


def _account(output: Output) -> Grouped | Settled | None:
    return None if isinstance(output, Timer) else output


def _clock(item: Input) -> int | None:
    if isinstance(item, Msg):
        return item.arrival
    return item.now if isinstance(item, Tick) else None


MACHINE: Machine[PairsConfig, PairsState, Input, Output] = Machine(
    lambda config: PairsState(), step, end=lambda config: End())
CODEC: Codec[PairsConfig, Input, Output] = Codec(_config, attrs.asdict, _input, _input_json,
                                                 _output_json)
COMMON: dict[str, Any] = {
    "machine": MACHINE,
    "codec": CODEC,
    "feeding": Feeding(records),
    "accounting": Accounting(_account),
}

def _timer(output: Output) -> int | None:
    return output.at if isinstance(output, Timer) else None


TIMED_FEEDING: Feeding[PairsConfig, Input, Output] = Feeding(records, timer_of=_timer,
                                                             clock_of=_clock, tick=Tick)

PAIRS: Algorithm[PairsConfig, PairsState, Input, Output] = Algorithm(name="pairs", **COMMON)
TIMED_PAIRS: Algorithm[PairsConfig, PairsState, Input, Output] = Algorithm(
    name="timed_pairs",
    **{**COMMON, "feeding": TIMED_FEEDING},
)

#: A worker module the executors lack (SP-R34's failure, made on purpose and cheaply).
MISSING_MODULE = "timealign_tests_no_such_module"


def _crash(config: PairsConfig, state: PairsState, item: Input) -> tuple[PairsState,
                                                                       tuple[Output, ...]]:
    """A step that fails in the worker with an error that is not the package's own, as a
    worker whose Python lacks a module does."""
    raise ModuleNotFoundError(f"No module named '{MISSING_MODULE}'", name=MISSING_MODULE)


#: :data:`PAIRS` whose every step fails in the Python worker (SP-R34).
CRASHING_PAIRS: Algorithm[PairsConfig, PairsState, Input, Output] = Algorithm(
    name="crashing_pairs", **{**COMMON, "machine": attrs.evolve(MACHINE, step=_crash)})


def _missing_module() -> None:
    import importlib

    importlib.import_module(MISSING_MODULE)


@attrs.frozen
class UnshippedConfig(PairsConfig):
    """A config that a worker cannot unpickle: unpickling imports a module the worker
    lacks, as a processor built of attrs classes does on executors without attrs."""

    def __reduce__(self) -> tuple[Any, tuple[()]]:
        return _missing_module, ()


#: :data:`PAIRS` whose config cannot be unpickled in the Python workers (SP-R34).
UNSHIPPED_PAIRS: Algorithm[PairsConfig, PairsState, Input, Output] = Algorithm(
    name="unshipped_pairs",
    **{**COMMON, "codec": attrs.evolve(
        CODEC, config_from_json=lambda raw: UnshippedConfig(**attrs.asdict(_config(raw))))})
