"""Helpers shared by the differential and stateful tests: the literal model for a config
and a comparable form of the reference's outputs."""

from __future__ import annotations

from typing import Any

from tests.approximate_time.literal_model import Literal
from timealign.approximate_time import Config, Dropped, Output, Published, Warned


def as_tuple(output: Output) -> tuple[Any, ...]:
    if isinstance(output, Published):
        return ("published", output.ids)
    if isinstance(output, Dropped):
        return ("dropped", output.id, output.reason)
    if isinstance(output, Warned):
        return ("warning", output.topic, output.reason)
    return ("pending", output.id)


def literal_for(config: Config) -> Literal:
    return Literal(config.topics, config.queue_size, config.age_penalty,
                   config.max_interval_duration, list(config.inter_message_lower_bounds),
                   ros1=config.arithmetic == "ros1")
