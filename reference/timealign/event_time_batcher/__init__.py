"""The event-time batcher (thin-edge.io ``batcher`` semantics) as a pure state machine.

Messages are grouped by *event* time into closed windows of at most ``batching_window``,
one message per key, split at the midpoint on a same-key conflict and closed by a tick at
``end + max_message_delay``. Spec: ``spec/event_time_batcher.md``; :mod:`.machine` holds
the rules (what ``ALGORITHM`` runs), :mod:`.fast` the same machine transcribed for
throughput (``ALGORITHM.machine.fast``, checked against the rules in lockstep).

    >>> from timealign.event_time_batcher import Config, Message, Tick, initial, step
    >>> config = Config(batching_window=50, max_message_delay=20)
    >>> state, out = step(config, initial(config), Message("a", 110, 120, "a1"))
    >>> out
    (Timer(at=180),)
    >>> step(config, state, Tick(180))[1]
    (Batch(start=110, end=160, ids=('a1',)),)
"""

from __future__ import annotations

from timealign.algorithm import (
    Accounting,
    Algorithm,
    Checks,
    Codec,
    Fast,
    Feeding,
    Machine,
    Pictures,
)
from timealign.event_time_batcher import codec, fast, invariants
from timealign.event_time_batcher.machine import initial, step
from timealign.event_time_batcher.model import (
    Batch,
    Config,
    Dropped,
    Flush,
    Input,
    Message,
    Output,
    Rejected,
    State,
    Tick,
    Timer,
)
from timealign.event_time_batcher.traces import TRACES

ALGORITHM: Algorithm[Config, State, Input, Output] = Algorithm(
    name="event_time_batcher",
    machine=Machine(initial, step, end=lambda config: Flush(), config_type=Config,
                    fast=Fast(fast.initial, fast.step, fast.to_spec, fast.from_spec)),
    codec=Codec(codec.config_from_json, codec.config_to_json, codec.input_from_json,
                codec.input_to_json, codec.output_to_json,
                output_from_json=codec.output_from_json),
    feeding=Feeding(codec.inputs_from_records, timer_of=codec.timer_of,
                    clock_of=codec.clock_of, tick=Tick,
                    inputs_from_columns=codec.inputs_from_columns),
    accounting=Accounting(codec.account),
    pictures=Pictures(timeline_records=codec.timeline_records),
    checks=Checks(check=invariants.check, traces=TRACES),
)

__all__ = [
    "ALGORITHM",
    "Batch",
    "Config",
    "Dropped",
    "Flush",
    "Input",
    "Message",
    "Output",
    "Rejected",
    "State",
    "Tick",
    "Timer",
    "initial",
    "step",
]
