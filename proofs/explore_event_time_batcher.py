"""Bounded exhaustive exploration of the event-time batcher (``python -m proofs.explore eb``).

Every input sequence up to the depth is run, over a small alphabet that still reaches every
rule: keys ``a`` and ``b``; processing time staying or moving forward; event times from one
unit below the too-old bound to one unit above the leap limit (rejections, the boundaries
themselves, 1-unit and 2-unit conflicts, so empty parts and overwrites); ticks at and past
the last processing time. Ids are unique (key + position). Every prefix closed by a flush is
checked against all invariants EB-I1 to EB-I10; the open prefix itself is not checked
separately, because a flush only adds outputs and every invariant that holds on the closed
run holds on the open one (``check_open_prefixes=False`` halves the time).
"""

from __future__ import annotations

from proofs.explore import Instance
from timealign.event_time_batcher import ALGORITHM, Config
from timealign.event_time_batcher.invariants import check
from timealign.event_time_batcher.traces import eb_moves


def _instance(name: str, config: Config, steps: tuple[int, ...], keys: str, depth: int) -> Instance:
    return Instance(
        name=name,
        algorithm=ALGORITHM,
        config=config,
        moves=eb_moves(config, steps, keys),
        depth=depth,
        check=check,
        check_open_prefixes=False,
        bounds=(f"W={config.batching_window} D={config.max_message_delay} "
                f"L={config.message_leap_limit}; keys {','.join(keys)}; at advances by "
                f"{'/'.join(map(str, steps))}; all event times in [at-D-1, at+L+1]"),
    )


INSTANCES = [
    _instance("eb-one-key-conflicts", Config(4, 2, 1), (0, 2), "a", 5),
    _instance("eb-two-keys", Config(3, 2, 0), (0, 2), "ab", 4),
    _instance("eb-zero-window", Config(0, 1, 0), (0, 1), "ab", 4),
]
