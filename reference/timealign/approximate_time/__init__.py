"""ApproximateTime: the ROS 2 ``message_filters`` synchronization policy as a pure machine.

``spec/approximate_time.md`` is the source of truth; :mod:`.model` holds the config,
inputs, outputs and state, :mod:`.machine` the rules (``initial``, the input check and
``step``: what ``ALGORITHM`` runs), :mod:`.fast` a faster transcription checked against
them (``ALGORITHM.machine.fast``), :mod:`.arithmetic` the contract-checked helpers,
:mod:`.invariants` the executable properties, :mod:`.codec` the vector encoding.
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
from timealign.approximate_time import fast, invariants
from timealign.approximate_time.codec import (
    account,
    accounts,
    config_from_json,
    config_to_json,
    flags_of,
    input_from_json,
    input_to_json,
    inputs_from_columns,
    inputs_from_records,
    output_from_json,
    output_to_json,
    timeline_records,
)
from timealign.approximate_time.machine import initial, step
from timealign.approximate_time.model import (
    Config,
    Dropped,
    End,
    Input,
    Message,
    Output,
    Pending,
    Published,
    State,
    Warned,
)
from timealign.approximate_time.traces import TRACES

ALGORITHM: Algorithm[Config, State, Input, Output] = Algorithm(
    name="approximate_time",
    machine=Machine(initial, step, end=lambda config: End(), config_type=Config,
                    fast=Fast(fast.initial, fast.step, fast.to_spec, fast.from_spec)),
    codec=Codec(config_from_json, config_to_json, input_from_json, input_to_json,
                output_to_json, output_from_json=output_from_json),
    feeding=Feeding(inputs_from_records, inputs_from_columns=inputs_from_columns),
    accounting=Accounting(account, accounts=accounts),
    pictures=Pictures(timeline_records=timeline_records, flags_of=flags_of),
    checks=Checks(check=invariants.check, traces=TRACES),
)

__all__ = [
    "ALGORITHM",
    "Config",
    "Dropped",
    "End",
    "Input",
    "Message",
    "Output",
    "Pending",
    "Published",
    "State",
    "Warned",
    "initial",
    "step",
]
