"""Stand-ins for the real upstreams (CF-I3): the reference behind the protocol, refusing
every trace its target's upstream is known to treat otherwise.

Written from the upstream facts the spec records, independently of the targets of
``<algorithm>/traces.py``: a target that generated a trace outside its upstream's domain
would show up here as a refusal. ``python -m tests.conformance.standin TARGET`` serves one.

- ``ros2``: refuses the ros1 arithmetic (AT-R16) and every trace the reference refuses in
  part (ROS 2 throws on a negative stamp, takes a negative age penalty: AT-D17).
- ``ros2-humble``, ``ros2-jazzy``: as ``ros2``, and also fewer than two or more than nine
  topics (the nine-slot ``approximate_time.h`` of Humble and Jazzy, AT-D22).
- ``ros1``: refuses the ros2 arithmetic, a single topic (the ROS 1 policy needs two message
  types) and every partly refused trace.
- ``thin-edge``: refuses a config not in whole milliseconds (EB-D11) and every partly
  refused trace (upstream takes time going back, EB-D12, and a re-used id, EB-D13).
- ``esslivedata-card``: refuses the head profile and every partly refused trace (upstream
  takes a repeated id, RB-D4, a zero length, RB-D1, ...).
- ``esslivedata-head``: refuses the card profile, every partly refused trace, and a trace
  on which upstream's float-seconds stall test (RB-D17) disagrees with the integer one.
"""

from __future__ import annotations

import sys
from typing import Any

from timealign import registry
from timealign.algorithm import run_json
from timealign.conformance.adapter import Runner, protocol_channel, serve

JSON = dict[str, Any]
ALGORITHMS = {"ros2": "approximate_time", "ros2-humble": "approximate_time",
              "ros2-jazzy": "approximate_time", "ros1": "approximate_time",
              "thin-edge": "event_time_batcher", "esslivedata-card": "rate_aware_batcher",
              "esslivedata-head": "rate_aware_batcher"}
MS = 1_000_000


def _config_refusal(target: str, config: JSON) -> str | None:
    if ALGORITHMS.get(target) == "approximate_time":
        arithmetic = config.get("arithmetic") or "ros2"
        if arithmetic != target.split("-")[0]:
            return f"{target} cannot compute in {arithmetic} arithmetic"
        topics = config.get("topics")
        count = len(topics) if isinstance(topics, list) else topics
        if target == "ros1" and isinstance(count, int) and count < 2:
            return "the ROS 1 policy takes at least two message types"
        if target in ("ros2-humble", "ros2-jazzy") and isinstance(count, int) and \
                not 2 <= count <= 9:
            return "the nine-slot policy takes 2 to 9 message types"
    if target == "thin-edge":
        for field in ("batching_window", "max_message_delay", "message_leap_limit"):
            value = config.get(field)
            if isinstance(value, int) and value % MS:
                return f"{field}: thin-edge.io takes whole milliseconds"
    if target.startswith("esslivedata"):
        profile = config.get("profile") or "card"
        if (profile == "esslivedata-head") != (target == "esslivedata-head"):
            return f"the {target} revision does not run the {profile} profile"
    return None


def _float_stall_disagrees(config: JSON, inputs: list[JSON]) -> bool:
    """Whether upstream's stall test in float seconds (``clock() - last < 10 * L_s``)
    disagrees with the integer one at some clock reading (RB-D17)."""
    from timealign.rate_aware_batcher import ALGORITHM, Poll

    decoded = ALGORITHM.codec.config_from_json(config)
    state = ALGORITHM.machine.initial(decoded)
    for raw in inputs:
        item = ALGORITHM.codec.input_from_json(raw)
        if isinstance(item, Poll) and item.now is not None and state.last_close is not None:
            length = state.batch_length
            exact = item.now - state.last_close >= 10 * length
            floated = not (item.now / 1e9 - state.last_close / 1e9 < 10 * (length / 1e9))
            if exact != floated:
                return True
            # Near the boundary within a microsecond, upstream's clock reading itself is
            # a float of another clock: a real upstream may go either way there.
            if abs(item.now - state.last_close - 10 * length) < 1_000:
                return True
        state, _ = ALGORITHM.machine.step(decoded, state, item)
    return False


def stand_in(target: str) -> Runner:
    reference = registry.get(ALGORITHMS[target])

    def run(config: JSON, inputs: list[JSON]) -> list[JSON]:
        refusal = _config_refusal(target, config)
        if refusal is not None:
            raise ValueError(refusal)
        outputs = run_json(reference, config, inputs)
        errors = [o for o in outputs if o["kind"] == "error"]
        if errors:
            raise ValueError(f"upstream treats this otherwise ({errors[0]['rule']})")
        if target == "esslivedata-head" and _float_stall_disagrees(config, inputs):
            raise ValueError("a clock reading at the stall boundary (float seconds)")
        return outputs
    return run


def command(target: str) -> str:
    return f"{sys.executable} -m tests.conformance.standin {target}"


if __name__ == "__main__":
    serve(stand_in(sys.argv[1]), sys.stdin, protocol_channel())
