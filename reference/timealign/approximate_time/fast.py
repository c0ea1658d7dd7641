"""A faster transcription of :func:`timealign.approximate_time.machine.step` (same states,
same outputs), kept outside the rule text.

``machine.py`` is the readable rule text; this module is what ``ALGORITHM.step`` runs. It
differs only in mechanics: exact-type checks and inlined lane arithmetic on the common
path (a message queued behind others), and a ``process()`` loop that computes the fronts
once per iteration, uses the exact integer product for non-negative ages in ROS 2
arithmetic, and tests only the start topic's deque for emptiness after a move (every deque
was non-empty at the top of the iteration, and only that one lost a message). The
differential tests (tests/approximate_time/test_at_differential.py) compare this step with
the rule text, state for state and output for output, and with the literal §17 model.
"""

from __future__ import annotations

from timealign.approximate_time.machine import _Sync, end, scaler
from timealign.approximate_time.model import (
    CLOSER_THAN_BOUND,
    INT64_MAX,
    INTERVAL_TOO_WIDE,
    NO_PIVOT,
    OUT_OF_ORDER,
    PIVOT_REFUSED,
    SUPERSEDED,
    Config,
    Dropped,
    End,
    Input,
    Lane,
    Message,
    Output,
    State,
    Warned,
    check_message,
)

_new = tuple.__new__  # builds a named tuple without its Python-level __new__


def step(config: Config, state: State, item: Input) -> tuple[State, tuple[Output, ...]]:
    """Equivalent to ``machine.step``; see the module docstring."""
    if type(item) is not Message:
        if type(item) is End:
            return end(config, state)
        check_message(config, item)  # raises AT-R2
    assert isinstance(item, Message)
    i, stamp = item.topic, item.stamp
    if not (type(i) is int and 0 <= i < config.topics and type(stamp) is int
            and 0 <= stamp <= INT64_MAX and type(item.id) is str and item.id):
        check_message(config, item)  # raises AT-R2
    lanes = state.lanes
    old = lanes[i]
    held = len(old.front) - old.start + old.rear_len
    pushed = _new(Lane, (old.front, old.start, (item, old.rear), old.rear_len + 1, old.split))
    replaced = list(lanes)  # cheaper than slicing and splatting for a few topics
    replaced[i] = pushed
    lanes = tuple(replaced)
    warned = state.warned
    outputs: tuple[Output, ...] = ()
    if held == old.split:  # the deque was empty (AT-R3)
        state = _new(State, (lanes, *state[1:]))
        for lane in lanes:
            if len(lane.front) - lane.start + lane.rear_len == lane.split:
                break
        else:
            sync = _FastSync(config, state)
            sync.process()
            state, outputs = sync.freeze()
            lane = state.lanes[i]
            held = len(lane.front) - lane.start + lane.rear_len - 1
    else:
        if not warned[i]:  # AT-R4
            previous = old.rear[0].stamp if old.rear is not None else old.front[-1].stamp
            reason = (OUT_OF_ORDER if stamp < previous else CLOSER_THAN_BOUND
                      if stamp - previous < config.inter_message_lower_bounds[i] else None)
            if reason is not None:
                warned = (*warned[:i], True, *warned[i + 1:])
                outputs = (Warned(i, reason),)
        state = _new(State, (lanes, *state[1:7], warned))
    if held + 1 > config.queue_size:  # AT-R5
        sync = _FastSync(config, state)
        sync.outputs.extend(outputs)
        sync.overflow(i)
        state, outputs = sync.freeze()
    return state, outputs


class _FastSync(_Sync):
    """``_Sync`` with a faster ``process()`` loop and ``freeze`` (same transitions)."""

    def __init__(self, config: Config, state: State) -> None:
        self.config = config
        self.n = config.topics
        self.scale = scaler(config)
        held = []
        for lane in state.lanes:
            messages = list(lane.front[lane.start:]) if lane.start else list(lane.front)
            if lane.rear is not None:
                newest = []
                cell = lane.rear
                while cell is not None:
                    newest.append(cell[0])
                    cell = cell[1]
                newest.reverse()
                messages += newest
            held.append(messages)
        self.held = held
        self.split = [lane.split for lane in state.lanes]
        (_, self.candidate, self.candidate_start, self.candidate_end, self.pivot,
         self.pivot_time, dropped, self.warned) = state
        self.dropped = list(dropped)
        self.outputs = []

    def freeze(self) -> tuple[State, tuple[Output, ...]]:
        lanes = tuple([_new(Lane, (tuple(messages), 0, None, 0, position))
                       for messages, position in zip(self.held, self.split, strict=True)])
        state = _new(State, (lanes, self.candidate, self.candidate_start, self.candidate_end,
                             self.pivot, self.pivot_time, tuple(self.dropped), self.warned))
        return state, tuple(self.outputs)

    def process(self) -> None:
        held, split, n, config = self.held, self.split, self.n, self.config
        topics = range(n)
        last = n - 1
        max_interval = config.max_interval_duration
        exact = config.arithmetic == "ros2"
        numerator, denominator = config.scale_numerator, config.scale_denominator
        scale = self.scale
        outputs = self.outputs
        fronts: list[int] = []  # the front stamps, refreshed where a front changed
        stale = True
        while True:
            if stale:
                fronts = []
                for k in topics:
                    position, messages = split[k], held[k]
                    if position == len(messages):
                        return
                    fronts.append(messages[position].stamp)
                stale = False
            end_time = max(fronts)
            e = last
            while fronts[e] != end_time:
                e -= 1
            start_time = min(fronts)
            s = fronts.index(start_time)
            dropped = self.dropped
            if True in dropped:  # AT-R7
                self.dropped = dropped = [flag and k == e for k, flag in enumerate(dropped)]
            if self.pivot == NO_PIVOT:
                if end_time - start_time > max_interval or dropped[e]:  # AT-R8, AT-R9
                    reason = INTERVAL_TOO_WIDE if end_time - start_time > max_interval \
                        else PIVOT_REFUSED
                    outputs.append(Dropped(held[s].pop(split[s]).id, reason))
                    if split[s] == len(held[s]):
                        return
                    fronts[s] = held[s][split[s]].stamp
                    continue
                self._make(start_time, end_time)  # AT-R10
                self.pivot, self.pivot_time = e, end_time
                scaled, candidate_start = 0, start_time  # scale(0) == 0 in both arithmetics
            else:
                candidate_start = self.candidate_start
                age = end_time - self.candidate_end
                scaled = age * numerator // denominator if exact and age >= 0 else scale(age)
                if scaled < start_time - candidate_start:  # AT-R11: better
                    self._make(start_time, end_time)
                    scaled, candidate_start = 0, start_time
            split[s] += 1
            # AT-R12, with scale(end_time - candidate_end) already in ``scaled``.
            if s == self.pivot or scaled >= self.pivot_time - candidate_start:
                self.publish()
                stale = True  # every front changed (or a deque is empty)
            elif split[s] == len(held[s]):
                self.virtual_search()
                stale = True  # published, or moves undone and D[s] still empty
            else:
                fronts[s] = held[s][split[s]].stamp

    def _make(self, start_time: int, end_time: int) -> None:
        """``make_candidate`` without touching topics whose past is empty."""
        held, split, outputs = self.held, self.split, self.outputs
        for k, position in enumerate(split):
            if position:
                messages = held[k]
                if position == 1:
                    outputs.append(Dropped(messages.pop(0).id, SUPERSEDED))
                else:
                    outputs.extend([Dropped(m.id, SUPERSEDED) for m in messages[:position]])
                    del messages[:position]
                split[k] = 0
        self.candidate = tuple([messages[0] for messages in held])
        self.candidate_start, self.candidate_end = start_time, end_time
