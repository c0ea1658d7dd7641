"""Hypothesis strategies shared by the ApproximateTime tests: small configs and inputs
with ties, out-of-order stamps, overflow and ends."""

from __future__ import annotations

from hypothesis import strategies as st

from timealign.approximate_time import Config, End, Input, Message

PENALTIES = (0.0, 0.1, 0.25, 0.7, 1.5)
STEPS = (0, 0, 1, 2, 3, 5, 10, 17, 40)


@st.composite
def configs(draw: st.DrawFn, max_topics: int = 3) -> Config:
    n = draw(st.integers(1, max_topics))
    return Config(
        topics=n,
        queue_size=draw(st.sampled_from([1, 2, 3, 4, 50])),
        age_penalty=draw(st.sampled_from(PENALTIES)),
        max_interval_duration=draw(st.sampled_from([None, 0, 5, 20])),
        inter_message_lower_bounds=draw(
            st.none() | st.lists(st.sampled_from([0, 1, 5, 20]), min_size=n, max_size=n)),
        arithmetic=draw(st.sampled_from(["ros2", "ros2", "ros1"])),
    )


@st.composite
def runs(draw: st.DrawFn, max_topics: int = 3, max_inputs: int = 25,
         out_of_order: bool = True) -> tuple[Config, list[Input]]:
    """A config and inputs: per-topic stamps mostly increasing, with ties and backsteps."""
    config = draw(configs(max_topics))
    clock = [0] * config.topics
    inputs: list[Input] = []
    for k in range(draw(st.integers(0, max_inputs))):
        if draw(st.integers(0, 19)) == 0:
            inputs.append(End())
            continue
        topic = draw(st.integers(0, config.topics - 1))
        delta = draw(st.sampled_from(STEPS))
        if out_of_order and draw(st.integers(0, 9)) == 0:
            delta = -draw(st.integers(1, 10))
        clock[topic] = max(0, clock[topic] + delta)
        inputs.append(Message(topic, clock[topic], f"m{k}"))
    return config, inputs
