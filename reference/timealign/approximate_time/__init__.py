"""ApproximateTime: the ROS 2 ``message_filters`` synchronization policy as a pure machine.

``spec/approximate_time.md`` is the source of truth; :mod:`.machine` holds the rules,
:mod:`.arithmetic` the contract-checked helpers, :mod:`.invariants` the executable
properties, :mod:`.codec` the vector encoding. ``ALGORITHM`` is what adapters drive.
"""

from __future__ import annotations

from timealign.approximate_time.codec import (
    account,
    config_from_json,
    config_to_json,
    input_from_json,
    input_to_json,
    inputs_from_records,
    output_to_json,
    records_of,
)
from timealign.approximate_time.fast import step
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
    initial,
)
from timealign.machine import Algorithm

ALGORITHM: Algorithm[Config, State, Input, Output] = Algorithm(
    name="approximate_time",
    initial=initial,
    step=step,
    end=lambda config: End(),
    account=account,
    config_from_json=config_from_json,
    config_to_json=config_to_json,
    input_from_json=input_from_json,
    input_to_json=input_to_json,
    output_to_json=output_to_json,
    inputs_from_records=inputs_from_records,
    records_of=records_of,
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
