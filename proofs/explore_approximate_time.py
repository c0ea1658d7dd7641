"""Bounded exhaustive exploration of ApproximateTime (see proofs/explore.py).

Every instance walks ALL input sequences up to its depth over a small alphabet (topic x
stamp; ids are fresh per position so they stay unique) and checks, at every node, the
single-run invariants (AT-I1 to AT-I6, AT-I9, AT-I10) on the open prefix and on the prefix
closed by ``End``. Some instances also check the relational invariants against a second
run computed by the reference: AT-I7 (the same inputs without lower bounds) and AT-I8 (a
canonical interleaving of the same per-topic streams). Results: proofs/README.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from proofs.explore import Instance
from timealign import run
from timealign.approximate_time import ALGORITHM, Config, End, Input, Message
from timealign.approximate_time import invariants as inv
from timealign.approximate_time.traces import any_order, in_order

Trace = tuple[Any, ...]
Outputs = tuple[tuple[int, Any], ...]


def single_run(config: Config, inputs: Trace, outputs: Outputs) -> list[str]:
    return inv.check(config, inputs, outputs)


def with_bounds_and_interleaving(config: Config, inputs: Trace, outputs: Outputs) -> list[str]:
    """Single-run invariants, AT-I7 against the run without bounds, AT-I8 against the
    topic-by-topic interleaving of the same streams (closed runs only)."""
    problems = inv.check(config, inputs, outputs)
    if not inputs or not isinstance(inputs[-1], End):
        return problems
    unbounded = Config(config.topic_names, config.queue_size, config.age_penalty,
                       config.max_interval_duration, None, config.arithmetic)
    _, slow = run(ALGORITHM, unbounded, inputs)
    problems += inv.bounds_change_only_latency(config, inputs, outputs, slow)
    messages = [m for m in inputs if isinstance(m, Message)]
    canonical: list[Input] = [*sorted(messages, key=lambda m: m.topic), End()]
    _, other = run(ALGORITHM, unbounded, canonical)
    problems += inv.interleavings_agree(slow, other)
    return problems


def instance(name: str, config: Config, moves: Callable[[Trace], list[Input]], depth: int,
             bounds: str, check: Callable[[Config, Trace, Outputs], list[str]] = single_run
             ) -> Instance:
    # Closed prefixes only: every violation of an open prefix is still one once it is
    # closed by End (its outputs are a prefix of the closed run's), so this halves the work.
    return Instance(name=name, algorithm=ALGORITHM, config=config, moves=moves, depth=depth,
                    check=check, bounds=bounds, check_open_prefixes=False)


INSTANCES = [
    instance("at/n2-q1-any-order", Config(2, 1), any_order(2, (0, 1, 2)), 7,
             "N=2, queue 1, stamps {0,1,2} in any order, age 0.1"),
    instance("at/n2-q2-any-order", Config(2, 2), any_order(2, (0, 1, 2)), 6,
             "N=2, queue 2, stamps {0,1,2} in any order, age 0.1"),
    instance("at/n3-q2-any-order", Config(3, 2), any_order(3, (0, 1)), 6,
             "N=3, queue 2, stamps {0,1} in any order (ties, livelock), age 0.1"),
    instance("at/n2-q1-interval", Config(2, 1, max_interval_duration=1),
             any_order(2, (0, 1, 3)), 6,
             "N=2, queue 1, max interval 1, stamps {0,1,3} in any order"),
    instance("at/n2-ros1-penalty", Config(2, 2, age_penalty=0.7, arithmetic="ros1"),
             any_order(2, (0, 10, 17, 27)), 5,
             "N=2, queue 2, ros1, age 0.7, stamps {0,10,17,27} in any order"),
    instance("at/n2-optimality", Config(2, 9, age_penalty=0.0), in_order(2, (0, 1, 3)), 6,
             "N=2, queue 9 (no overflow), age 0, in-order steps {0,1,3}: AT-I6 applies",
             ),
    instance("at/n3-optimality", Config(3, 9, age_penalty=0.0), in_order(3, (0, 2)), 6,
             "N=3, queue 9, age 0, in-order steps {0,2}: AT-I6 applies"),
    instance("at/n2-bounds", Config(2, 9, age_penalty=0.1, inter_message_lower_bounds=[2, 1]),
             in_order(2, (2, 3)), 7,
             "N=2, queue 9, bounds [2,1], in-order steps {2,3} (valid for the bounds): "
             "AT-I7 vs no bounds, AT-I8 vs topic-by-topic interleaving",
             check=with_bounds_and_interleaving),
    instance("at/n3-bounds", Config(3, 9, age_penalty=0.1, inter_message_lower_bounds=[1, 2, 1]),
             in_order(3, (2, 5)), 5,
             "N=3, queue 9, bounds [1,2,1], in-order steps {2,5}: AT-I7, AT-I8",
             check=with_bounds_and_interleaving),
]
