"""The ApproximateTime transition function: every rule of spec/approximate_time.md.

This is the rule text ``ALGORITHM`` (the registry, the vectors, the explorer) runs;
``fast.py`` is a faster transcription checked against it.

Theory of operation. ``step`` is upstream's ``add()`` (AT-R3 to AT-R5) plus the end of
input (AT-R17). A message queued behind others (the common case) only appends to its lane,
runs the warning check and the overflow test, all on the immutable state. Whenever the
rules need ``process()`` (AT-R6 to AT-R14) or an overflow must be handled, the state is
loaded into ``_Sync``, a mutable scratch copy that lives only inside one ``step`` and reads
like the upstream code: per topic a list of held messages whose first ``split[k]`` form
the past buffer ``P[k]`` and the rest the deque ``D[k]``. ``freeze`` turns it back into an
immutable :class:`State` (``D[k]`` and ``P[k]`` as tuples). Every message the upstream
code discards silently is reported as a :class:`Dropped` output at the moment it is
discarded (AT-R18, AT-D18).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from operator import lt

from attrs import evolve

from timealign.approximate_time import ros1
from timealign.approximate_time.arithmetic import (
    end_boundary,
    scale_ros1,
    scale_ros2,
    start_boundary,
)
from timealign.approximate_time.model import (
    CLOSER_THAN_BOUND,
    INTERVAL_TOO_WIDE,
    NO_PIVOT,
    OUT_OF_ORDER,
    PIVOT_REFUSED,
    QUEUE_OVERFLOW,
    SUPERSEDED,
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
    check_message,
    initial,
)
from timealign.errors import wrong_object


@functools.lru_cache(maxsize=64)
def scaler(config: Config) -> Callable[[int], int]:
    """``scale(d)`` of the configured arithmetic (AT-R15 ros2, AT-R16 ros1)."""
    if config.arithmetic == "ros1":
        factor = config.scale_numerator / config.scale_denominator
        return lambda d: scale_ros1(d, factor)
    numerator, denominator = config.scale_numerator, config.scale_denominator
    return lambda d: scale_ros2(d, numerator, denominator)


def step(config: Config, state: State, item: Input) -> tuple[State, tuple[Output, ...]]:
    """One input: a message (upstream ``add``) or the end of input."""
    if type(state) is not State or type(config) is not Config:
        raise wrong_object("approximate_time.step", config, state, Config, State)
    if type(item) is End:
        return end(config, state)
    message = check_message(config, item)  # AT-R2, before anything changes
    if config.arithmetic == "ros1":  # AT-R19: ROS 1's 32-bit time, before anything changes
        _check_ros1(config, state, message)
    i = message.topic
    old = state.deques[i]
    deques = (*state.deques[:i], (*old, message), *state.deques[i + 1:])
    outputs: tuple[Output, ...] = ()
    if not old:
        # AT-R3: the deque was empty; process only if every deque is now non-empty.
        state = evolve(state, deques=deques)
        if all(deques):
            sync = _Sync(config, state)
            sync.process()
            state, outputs = sync.freeze()
    else:
        # AT-R4: warnings only, once per topic, against the previous element of D[i].
        warned = state.warned
        warning = None if warned[i] else _bound_warning(config, message, old[-1])
        if warning is not None:
            warned = (*warned[:i], True, *warned[i + 1:])
            outputs = (warning,)
        state = evolve(state, deques=deques, warned=warned)
    if len(state.deques[i]) + len(state.pasts[i]) > config.queue_size:  # AT-R5
        sync = _Sync(config, state)
        sync.outputs.extend(outputs)
        sync.overflow(i)
        state, outputs = sync.freeze()
    return state, outputs


def _check_ros1(config: Config, state: State, message: Message) -> None:
    """AT-R19 over the stamps in play: every held message and the pivot time."""
    in_play = [m.stamp for k in range(config.topics) for m in state.held(k)]
    if state.pivot != NO_PIVOT:
        in_play.append(state.pivot_time)
    bounds = config.inter_message_lower_bounds
    ros1.check_message(message.stamp, bounds[message.topic], max(bounds),
                       config.scale_numerator / config.scale_denominator, in_play)


def _bound_warning(config: Config, message: Message, previous: Message) -> Warned | None:
    """AT-R4: the out-of-order / closer-than-bound check against the previous element."""
    i = message.topic
    if message.stamp < previous.stamp:
        return Warned(i, OUT_OF_ORDER)
    if message.stamp - previous.stamp < config.inter_message_lower_bounds[i]:
        return Warned(i, CLOSER_THAN_BOUND)
    return None


def end(config: Config, state: State) -> tuple[State, tuple[Output, ...]]:
    """AT-R17: every held message as ``Pending``, topic order then arrival order; restart."""
    pending = tuple(Pending(m.id) for k in range(config.topics) for m in state.held(k))
    return initial(config), pending


class _Sync:
    """Mutable scratch copy of the state for the duration of one step (never escapes)."""

    def __init__(self, config: Config, state: State) -> None:
        self.config = config
        self.n = config.topics
        self.scale = scaler(config)
        self.held = [list(state.held(k)) for k in range(self.n)]
        self.split = [len(past) for past in state.pasts]
        self.candidate = state.candidate
        self.candidate_start = state.candidate_start
        self.candidate_end = state.candidate_end
        self.pivot = state.pivot
        self.pivot_time = state.pivot_time
        self.dropped = list(state.dropped)
        self.warned = state.warned
        self.outputs: list[Output] = []

    def freeze(self) -> tuple[State, tuple[Output, ...]]:
        state = State(
            deques=tuple(tuple(h[s:]) for h, s in zip(self.held, self.split, strict=True)),
            pasts=tuple(tuple(h[:s]) for h, s in zip(self.held, self.split, strict=True)),
            candidate=self.candidate,
            candidate_start=self.candidate_start,
            candidate_end=self.candidate_end,
            pivot=self.pivot,
            pivot_time=self.pivot_time,
            dropped=tuple(self.dropped),
            warned=self.warned,
        )
        return state, tuple(self.outputs)

    # --- the deques and past buffers -------------------------------------------------

    def all_deques_non_empty(self) -> bool:
        return all(map(lt, self.split, map(len, self.held)))

    def deque_empty(self, k: int) -> bool:
        return self.split[k] == len(self.held[k])

    def front(self, k: int) -> Message:
        return self.held[k][self.split[k]]

    def move_to_past(self, k: int) -> None:
        self.split[k] += 1

    def delete_front(self, k: int, reason: str) -> None:
        self.outputs.append(Dropped(self.held[k].pop(self.split[k]).id, reason))

    def recover_all(self) -> None:
        """Put every past buffer back in front of its deque (upstream ``recover``)."""
        self.split[:] = [0] * self.n

    # --- process() ----------------------------------------------------------------------

    def process(self) -> None:
        """AT-R6: loop while every deque is non-empty."""
        config, scale = self.config, self.scale
        held, split = self.held, self.split
        while self.all_deques_non_empty():
            fronts = tuple([h[p].stamp for h, p in zip(held, split, strict=True)])
            e, end_time = end_boundary(fronts)
            s, start_time = start_boundary(fronts)
            # AT-R7: clear the drop flag of every topic except the end topic.
            if True in self.dropped:
                self.dropped = [flag and k == e for k, flag in enumerate(self.dropped)]
            if self.pivot == NO_PIVOT:
                if end_time - start_time > config.max_interval_duration:
                    self.delete_front(s, INTERVAL_TOO_WIDE)  # AT-R8
                    continue
                if self.dropped[e]:
                    self.delete_front(s, PIVOT_REFUSED)  # AT-R9
                    continue
                self.make_candidate(start_time, end_time)  # AT-R10
                self.pivot, self.pivot_time = e, end_time
                self.move_to_past(s)
            elif scale(end_time - self.candidate_end) >= start_time - self.candidate_start:
                self.move_to_past(s)  # AT-R11: not better (a tie keeps the older one)
            else:
                self.make_candidate(start_time, end_time)  # AT-R11: better
                self.move_to_past(s)
            # AT-R12: the publish checks, in this order: pivot exhausted (index-based,
            # AT-D9), then provably optimal, then the virtual search if a deque emptied.
            exhausted = s == self.pivot
            if exhausted or (scale(end_time - self.candidate_end)
                             >= self.pivot_time - self.candidate_start):
                self.publish()
            elif not self.all_deques_non_empty():
                self.virtual_search()

    def make_candidate(self, start_time: int, end_time: int) -> None:
        """Candidate = the fronts; every past buffer is destroyed (AT-R10, AT-R11, AT-D1)."""
        for k in range(self.n):
            if self.split[k]:
                past = self.held[k][: self.split[k]]
                self.outputs.extend(Dropped(m.id, SUPERSEDED) for m in past)
                del self.held[k][: self.split[k]]
                self.split[k] = 0
        self.candidate = tuple(self.held[k][0] for k in range(self.n))
        self.candidate_start, self.candidate_end = start_time, end_time

    def publish(self) -> None:
        """AT-R14: emit the candidate, recover the pasts, pop each candidate message."""
        self.outputs.append(Published(self.candidate))
        self.candidate, self.pivot = (), NO_PIVOT
        self.candidate_start = self.candidate_end = self.pivot_time = 0
        self.recover_all()
        for k in range(self.n):
            del self.held[k][0]

    def virtual_search(self) -> None:
        """AT-R13: try to prove the candidate optimal with virtual stamps for empty deques."""
        bounds, pivot_time, scale = self.config.inter_message_lower_bounds, self.pivot_time, \
            self.scale
        moves = [0] * self.n
        while True:
            virtual = []
            for k in range(self.n):
                if not self.deque_empty(k):
                    virtual.append(self.front(k).stamp)
                else:
                    bound = self.held[k][self.split[k] - 1].stamp + bounds[k]
                    virtual.append(bound if bound > pivot_time else pivot_time)
            stamps = tuple(virtual)
            _, vend_time = end_boundary(stamps)
            vstart, vstart_time = start_boundary(stamps)
            age = scale(vend_time - self.candidate_end)
            if age >= pivot_time - self.candidate_start:
                self.publish()  # also undoes the virtual moves: they sit in the past
                return
            if age < vstart_time - self.candidate_start:
                for k in range(self.n):  # cannot prove: undo the virtual moves by count
                    self.split[k] -= moves[k]
                return
            self.move_to_past(vstart)
            moves[vstart] += 1

    # --- overflow ---------------------------------------------------------------------

    def overflow(self, i: int) -> None:
        """AT-R5: recover, drop the oldest message of topic i, flag it, maybe re-process."""
        self.recover_all()
        self.outputs.append(Dropped(self.held[i].pop(0).id, QUEUE_OVERFLOW))
        self.dropped[i] = True
        if self.pivot != NO_PIVOT:
            self.candidate, self.pivot = (), NO_PIVOT
            self.candidate_start = self.candidate_end = self.pivot_time = 0
            self.process()
