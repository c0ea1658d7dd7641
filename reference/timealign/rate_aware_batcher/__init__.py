"""The rate-aware batcher (ESS live-data ``RateAwareMessageBatcher``), in two profiles:
the card revision (default) and ``esslivedata-head`` (``Config(profile=...)``, RB-R17).

A pure machine: ``initial(config)`` and ``step(config, state, input)`` over the inputs
:class:`Poll` (one upstream ``batch()`` call), :class:`SetBatchLength` and :class:`End`,
emitting :class:`Batch` (at most one per poll) and, at the end, :class:`Pending` for every
message still held. Spec: ``spec/rate_aware_batcher.md``; :mod:`.model` holds the config,
inputs, outputs and state, :mod:`.machine` the rules (what ``ALGORITHM`` runs),
:mod:`.fast` the same machine transcribed for throughput (``ALGORITHM.machine.fast``),
:mod:`.grid` and :mod:`.estimator` the contract-checked arithmetic, :mod:`.invariants`
the executable properties, :mod:`.codec` the vector encoding.
"""

from __future__ import annotations

from typing import Any

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
from timealign.rate_aware_batcher import codec, fast, invariants
from timealign.rate_aware_batcher.machine import initial, step
from timealign.rate_aware_batcher.model import (
    GATED_KINDS,
    STREAM_KINDS,
    Batch,
    Config,
    End,
    Input,
    Output,
    Pending,
    Poll,
    Polled,
    SetBatchLength,
    State,
    Stream,
)
from timealign.rate_aware_batcher.traces import TRACES

ALGORITHM: Algorithm[Config, State, Any, Any] = Algorithm(
    name="rate_aware_batcher",
    machine=Machine(initial, step, end=codec.end, config_type=Config,
                    fast=Fast(fast.initial, fast.step, fast.to_spec, fast.from_spec)),
    codec=Codec(codec.config_from_json, codec.config_to_json, codec.input_from_json,
                codec.input_to_json, codec.output_to_json,
                output_from_json=codec.output_from_json),
    feeding=Feeding(codec.inputs_from_records, record_run=codec.poll_of,
                    inputs_from_columns=codec.inputs_from_columns,
                    column_runs=codec.poll_runs),
    accounting=Accounting(codec.account),
    pictures=Pictures(timeline_records=codec.timeline_records, slots_of=codec.slots_of),
    checks=Checks(check=invariants.check, traces=TRACES),
)

__all__ = [
    "ALGORITHM", "GATED_KINDS", "STREAM_KINDS", "Batch", "Config", "End", "Input", "Output",
    "Pending", "Poll", "Polled", "SetBatchLength", "State", "Stream", "initial", "step",
]
