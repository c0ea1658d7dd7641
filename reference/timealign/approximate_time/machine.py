"""The ApproximateTime transition function: every rule of spec/approximate_time.md.

This is the rule text ``ALGORITHM`` (the registry, the vectors, the explorer) runs:
``initial``, the input check (AT-R2) and ``step``; ``fast.py`` is a faster transcription
checked against it.

Theory of operation. ``step`` is upstream's ``add()`` (AT-R3 to AT-R5) plus the end of
input (AT-R17). A message queued behind others (the common case) only appends to its lane,
runs the warning check and the overflow test, all on the immutable state. Whenever the
rules need ``process()`` (AT-R6 to AT-R14) or an overflow must be handled, the state is
unfolded into a :class:`_Sync` record that lives only inside one ``step``: per topic a list
of held messages whose first ``split[k]`` form the past buffer ``P[k]`` and the rest the
deque ``D[k]``, as upstream keeps them. The private functions below change that record in
place, one per upstream operation, so they read like the upstream code; ``_freeze`` folds it
back into an immutable :class:`State` (``D[k]`` and ``P[k]`` as tuples). Every message the
upstream code discards silently is reported as a :class:`Dropped` output at the moment it
is discarded (AT-R18, AT-D18).

The arithmetics (AT-R1) are forks of one rule text: ``ros2`` is the base and ``ros1`` a
table of replaced functions (:data:`ROS1_TABLE`, at the end of this module; the slots are
the functions marked ``@BOOK.slot``): its scaling (AT-R16), its 32-bit time check of each
message and of the config (AT-R19). The rule text calls a slot through its config's table
and reads no arithmetic flag. The other slots are the decision points a catalogued variant
replaces (CF-R41, ``variants.py``): a comparison, a tie, a count, which message a rule drops.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import lt

from timealign.approximate_time import ros1
from timealign.approximate_time.arithmetic import (
    BOOK,
    end_boundary,
    scale_ros1_ratio,
    scale_ros2,
    start_boundary,
)
from timealign.approximate_time.model import (
    CLOSER_THAN_BOUND,
    INT64_MAX,
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
    _durations_fit,
)
from timealign.errors import InvalidInput, foreign_state, require, require_ns, wrong_object
from timealign.rulebook import rule

Step = tuple[State, tuple[Output, ...]]


def initial(config: Config) -> State:
    """The empty synchronizer, bound to ``config`` (DRV-R10)."""
    n = config.topics
    return State(deques=((),) * n, pasts=((),) * n, dropped=(False,) * n, warned=(False,) * n,
                 config=config)


@rule("AT-R2")
def check_message(config: Config, message: object) -> Message:
    """AT-R2: a message input with a topic in range, an int64 ns stamp and a string id;
    AT-R20: its virtual time (stamp + its topic's lower bound) within int64."""
    if (type(message) is Message and type(message.topic) is int
            and 0 <= message.topic < config.topics and type(message.stamp) is int
            and 0 <= message.stamp <= INT64_MAX - config.inter_message_lower_bounds[
                message.topic] and type(message.id) is str and message.id):
        return message  # the common, valid case, decided with exact type tests
    if not isinstance(message, Message):
        raise InvalidInput("input", "AT-R2", "must be a Message or End", message)
    topic = message.topic
    require(isinstance(topic, int) and not isinstance(topic, bool)
            and 0 <= topic < config.topics, "topic", "AT-R2",
            f"must be a topic index in [0, {config.topics})", topic)
    require_ns(message.stamp, "stamp", "AT-R2")
    require(message.stamp <= INT64_MAX, "stamp", "AT-R2", "must fit in int64 ns", message.stamp)
    require(isinstance(message.id, str) and message.id != "", "id", "AT-R2",
            "must be a non-empty string", message.id)
    _require_virtual_time_fits(config, message)
    return message


@rule("AT-R20")
def _require_virtual_time_fits(config: Config, message: Message) -> None:
    """AT-R20: the virtual search may compute this message's stamp + its topic's lower
    bound (upstream's ``Time + Duration``, which throws past int64); refused up front,
    before anything changes."""
    bound = config.inter_message_lower_bounds[message.topic]
    require(message.stamp <= INT64_MAX - bound, "stamp", "AT-R20",
            f"stamp + inter_message_lower_bounds[{message.topic}] ({bound}), its virtual "
            "time, must fit in int64 ns (at most 2**63 - 1)", message.stamp)


def _scaler(config: Config) -> Callable[[int], int]:
    """``scale(d)`` of the configured arithmetic's table (AT-D23 ros2, AT-R16 ros1)."""
    scale = BOOK.rules(config.arithmetic).of(scale_ros2)
    numerator, denominator = config.scale_numerator, config.scale_denominator
    return lambda d: scale(d, numerator, denominator)


def step(config: Config, state: State, item: Input) -> Step:
    """One input: a message (upstream ``add``) or the end of input."""
    if type(state) is not State or type(config) is not Config:
        raise wrong_object("approximate_time.step", config, state, Config, State)
    if state.config is not config and state.config != config:
        raise foreign_state(state.config)  # DRV-R10, before anything changes
    if type(item) is End:
        return BOOK.rules(config.arithmetic).of(_end)(config, state)
    message = check_message(config, item)  # AT-R2, before anything changes
    rules = BOOK.rules(config.arithmetic)
    # ros1: ROS 1's 32-bit time (AT-R19), before anything changes
    rules.of(_time_fits)(config, state, message)
    i = message.topic
    old = state.deques[i]
    deques = (*state.deques[:i], (*old, message), *state.deques[i + 1:])
    outputs: tuple[Output, ...] = ()
    if not old:
        state = _queued(state, deques, state.warned)
        if _fills_the_last_empty_deque(deques):
            sync = _Sync(config, state)
            _process(sync)
            state, outputs = _freeze(sync)
    else:
        # AT-R4: warnings only, once per topic, against the previous element of D[i].
        warned = state.warned
        warning = rules.of(_bound_warning)(config, message, old[-1], warned[i])
        if warning is not None:
            warned = (*warned[:i], True, *warned[i + 1:])
            outputs = (warning,)
        state = _queued(state, deques, warned)
    if rules.of(_overflows)(config, state.deques[i], state.pasts[i]):  # AT-R5
        sync = _Sync(config, state)
        sync.outputs.extend(outputs)
        rules.of(_overflow)(sync, i)
        state, outputs = _freeze(sync)
    return state, outputs


def _queued(state: State, deques: tuple[tuple[Message, ...], ...], warned: tuple[bool, ...]
            ) -> State:
    """``state`` with a message queued: these deques and warning flags, every other field
    as it was. What ``attrs.evolve`` builds, built field by field as :func:`_freeze` does:
    evolve's generic walk over the fields took about a tenth of a step (``benchmarks/README.md``,
    "verify next to the run it checks")."""
    return State(deques=deques, pasts=state.pasts, candidate=state.candidate,
                 candidate_start=state.candidate_start, candidate_end=state.candidate_end,
                 pivot=state.pivot, pivot_time=state.pivot_time, dropped=state.dropped,
                 warned=warned, config=state.config)


@rule("AT-R3")
def _fills_the_last_empty_deque(deques: tuple[tuple[Message, ...], ...]) -> bool:
    """The message filled an empty deque: process only if every deque is now non-empty."""
    return all(deques)


@BOOK.slot
@rule("AT-R20")
def _time_fits(config: Config, state: State, message: Message) -> None:
    """ROS 2's time is int64 ns: AT-R2 and AT-R20 already hold every time and duration the
    policy computes (ros1 replaces this with its 32-bit check, AT-R19)."""
    del config, state, message


@rule("AT-R19")
def _check_ros1(config: Config, state: State, message: Message) -> None:
    """AT-R19 over the stamps in play: every held message and the pivot time."""
    in_play = [m.stamp for k in range(config.topics) for m in state.held(k)]
    if state.pivot != NO_PIVOT:
        in_play.append(state.pivot_time)
    bounds = config.inter_message_lower_bounds
    ros1.check_message(message.stamp, bounds[message.topic], max(bounds),
                       config.scale_numerator / config.scale_denominator, in_play)


@BOOK.slot
@rule("AT-R4")
def _bound_warning(config: Config, message: Message, previous: Message, warned: bool
                   ) -> Warned | None:
    """AT-R4: the out-of-order / closer-than-bound check against the previous element, for
    a topic that has not ``warned`` yet."""
    i = message.topic
    if warned:
        return None
    if message.stamp < previous.stamp:
        return Warned(i, OUT_OF_ORDER)
    if message.stamp - previous.stamp < config.inter_message_lower_bounds[i]:
        return Warned(i, CLOSER_THAN_BOUND)
    return None


@BOOK.slot
@rule("AT-R17")
def _end(config: Config, state: State) -> Step:
    """AT-R17: every held message as ``Pending``, topic order then arrival order; restart."""
    pending = tuple(Pending(m.id) for k in range(config.topics) for m in state.held(k))
    return initial(config), pending


class _Sync:
    """The state unfolded for one step (never escapes it): per topic the held messages
    (``P[k]`` then ``D[k]``) and the split between them, the pivot fields, the drop flags
    and the outputs so far. Only a record: the functions below are the rules."""

    def __init__(self, config: Config, state: State) -> None:
        self.n = config.topics
        self.config = state.config
        self.scale = _scaler(config)
        self.rules = BOOK.rules(config.arithmetic)
        self.bounds = config.inter_message_lower_bounds
        self.max_interval = config.max_interval_duration
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


def _freeze(sync: _Sync) -> Step:
    """The immutable state and the outputs of the step."""
    state = State(
        deques=tuple(tuple(h[s:]) for h, s in zip(sync.held, sync.split, strict=True)),
        pasts=tuple(tuple(h[:s]) for h, s in zip(sync.held, sync.split, strict=True)),
        candidate=sync.candidate,
        candidate_start=sync.candidate_start,
        candidate_end=sync.candidate_end,
        pivot=sync.pivot,
        pivot_time=sync.pivot_time,
        dropped=tuple(sync.dropped),
        warned=sync.warned,
        config=sync.config,
    )
    return state, tuple(sync.outputs)


# --- the deques and past buffers -----------------------------------------------------------

def _all_deques_non_empty(sync: _Sync) -> bool:
    return all(map(lt, sync.split, map(len, sync.held)))


def _move_to_past(sync: _Sync, k: int) -> None:
    sync.split[k] += 1


@rule("AT-R18")
def _delete_front(sync: _Sync, k: int, reason: str) -> None:
    """Discard the front of ``D[k]``, reported as ``Dropped`` (AT-R18)."""
    sync.outputs.append(Dropped(sync.held[k].pop(sync.split[k]).id, reason))


def _recover_all(sync: _Sync) -> None:
    """Put every past buffer back in front of its deque (upstream ``recover``)."""
    sync.split[:] = [0] * sync.n


def _clear_pivot(sync: _Sync) -> None:
    sync.candidate, sync.pivot = (), NO_PIVOT
    sync.candidate_start = sync.candidate_end = sync.pivot_time = 0


# --- process() --------------------------------------------------------------------------

@rule("AT-R6")
def _process(sync: _Sync) -> None:
    """Loop while every deque is non-empty, over the fronts' start and end."""
    held, split, rules = sync.held, sync.split, sync.rules
    while _all_deques_non_empty(sync):
        fronts = tuple([h[p].stamp for h, p in zip(held, split, strict=True)])
        e, end_time = rules.of(end_boundary)(fronts)
        s, start_time = rules.of(start_boundary)(fronts)
        if True in sync.dropped:
            rules.of(_clear_drop_flags)(sync, e)
        if sync.pivot == NO_PIVOT:
            if rules.of(_too_wide)(end_time - start_time, sync.max_interval):
                rules.of(_refuse_too_wide)(sync, s, e)
                continue
            if sync.dropped[e]:
                rules.of(_refuse_pivot)(sync, s, e)
                continue
            if not rules.of(_may_be_pivot)(end_time):
                return
            _first_candidate(sync, s, e, start_time, end_time)
        else:
            rules.of(_improve)(sync, s, start_time, end_time)
        _publish_checks(sync, s, end_time)


@BOOK.slot
@rule("AT-R7")
def _clear_drop_flags(sync: _Sync, e: int) -> None:
    """Clear the drop flag of every topic except the end topic ``e``."""
    sync.dropped = [flag and k == e for k, flag in enumerate(sync.dropped)]


@BOOK.slot
@rule("AT-R8")
def _too_wide(spread: int, max_interval: int) -> bool:
    """The fronts span strictly more than the maximum interval (AT-D10)."""
    return spread > max_interval


@BOOK.slot
@rule("AT-R8")
def _refuse_too_wide(sync: _Sync, s: int, e: int) -> None:
    """No pivot and the fronts span more than the maximum interval: drop the start."""
    del e
    _delete_front(sync, s, INTERVAL_TOO_WIDE)


@BOOK.slot
@rule("AT-R9")
def _refuse_pivot(sync: _Sync, s: int, e: int) -> None:
    """No pivot and the end topic has dropped: drop the start (not the end's front)."""
    del e
    _delete_front(sync, s, PIVOT_REFUSED)


@BOOK.slot
@rule("AT-R10")
def _may_be_pivot(end_time: int) -> bool:
    """Any end may become the pivot, whatever its stamp (0 included)."""
    del end_time
    return True


@rule("AT-R10")
def _first_candidate(sync: _Sync, s: int, e: int, start_time: int, end_time: int) -> None:
    """The fronts become the candidate, ``e`` the pivot; the start moves to the past."""
    sync.rules.of(_make_candidate)(sync, start_time, end_time)
    sync.pivot, sync.pivot_time = e, end_time
    _move_to_past(sync, s)


@BOOK.slot
@rule("AT-R11")
def _improve(sync: _Sync, s: int, start_time: int, end_time: int) -> None:
    """With a pivot: better fronts (a tie keeps the older candidate) become the candidate;
    either way the start moves to the past."""
    if sync.scale(end_time - sync.candidate_end) < start_time - sync.candidate_start:
        sync.rules.of(_make_candidate)(sync, start_time, end_time)
    _move_to_past(sync, s)


@rule("AT-R12")
def _publish_checks(sync: _Sync, s: int, end_time: int) -> None:
    """In this order: pivot exhausted (index-based, AT-D9), then provably optimal, then the
    virtual search if a deque emptied."""
    rules = sync.rules
    if s == sync.pivot or rules.of(_proved_optimal)(sync, s, end_time):
        rules.of(_publish)(sync)
    elif not _all_deques_non_empty(sync):
        _virtual_search(sync)


@BOOK.slot
@rule("AT-R12")
def _proved_optimal(sync: _Sync, s: int, end_time: int) -> bool:
    """No later fronts can beat the candidate: the penalised age reaches the pivot's lead."""
    del s
    return sync.scale(end_time - sync.candidate_end) >= sync.pivot_time - sync.candidate_start


@BOOK.slot
@rule("AT-D1")
def _make_candidate(sync: _Sync, start_time: int, end_time: int) -> None:
    """Candidate = the fronts; every past buffer is destroyed (AT-R10, AT-R11, AT-D1)."""
    for k in range(sync.n):
        if sync.split[k]:
            past = sync.held[k][: sync.split[k]]
            sync.outputs.extend(Dropped(m.id, SUPERSEDED) for m in past)
            del sync.held[k][: sync.split[k]]
            sync.split[k] = 0
    sync.candidate = tuple(sync.held[k][0] for k in range(sync.n))
    sync.candidate_start, sync.candidate_end = start_time, end_time


@BOOK.slot
@rule("AT-R14")
def _publish(sync: _Sync) -> None:
    """Emit the candidate, recover the pasts, pop each candidate message."""
    sync.outputs.append(Published(sync.candidate))
    _clear_pivot(sync)
    _recover_all(sync)
    for k in range(sync.n):
        del sync.held[k][0]


@rule("AT-R13")
def _virtual_search(sync: _Sync) -> None:
    """Try to prove the candidate optimal with virtual stamps for empty deques."""
    pivot_time, scale, rules = sync.pivot_time, sync.scale, sync.rules
    moves = [0] * sync.n
    while True:
        virtual = []
        for k in range(sync.n):
            if sync.split[k] != len(sync.held[k]):  # D[k] not empty: its front
                virtual.append(sync.held[k][sync.split[k]].stamp)
            else:
                virtual.append(rules.of(_virtual_time)(sync, k))
        stamps = tuple(virtual)
        _, vend_time = rules.of(end_boundary)(stamps)
        vstart, vstart_time = rules.of(start_boundary)(stamps)
        age = scale(vend_time - sync.candidate_end)
        if age >= pivot_time - sync.candidate_start:
            rules.of(_publish)(sync)  # also undoes the virtual moves: they sit in the past
            return
        if age < vstart_time - sync.candidate_start or not rules.of(_looks_further)(moves):
            rules.of(_undo_virtual_moves)(sync, moves)
            return
        _move_to_past(sync, vstart)
        moves[vstart] += 1


@BOOK.slot
@rule("AT-R13")
def _virtual_time(sync: _Sync, k: int) -> int:
    """The virtual time of an emptied deque: the back of ``P[k]`` plus its lower bound,
    floored at the pivot time."""
    bound = sync.held[k][sync.split[k] - 1].stamp + sync.bounds[k]
    return bound if bound > sync.pivot_time else sync.pivot_time


@BOOK.slot
@rule("AT-R13")
def _undo_virtual_moves(sync: _Sync, moves: list[int]) -> None:
    """Cannot prove: the virtual moves are undone by count (candidate, pivot and the real
    past stay)."""
    for k in range(sync.n):
        sync.split[k] -= moves[k]


@BOOK.slot
@rule("AT-R13")
def _looks_further(moves: list[int]) -> bool:
    """The search goes on jointly over every topic: the virtual start moves to the past
    and the next virtual set is tried."""
    del moves
    return True


# --- overflow ------------------------------------------------------------------------------

@BOOK.slot
@rule("AT-R5")
def _overflows(config: Config, deque: tuple[Message, ...], past: tuple[Message, ...]
               ) -> bool:
    """Topic i holds more than ``queue_size`` messages, its deque and its past counted."""
    return len(deque) + len(past) > config.queue_size


@BOOK.slot
@rule("AT-R5")
def _overflow(sync: _Sync, i: int) -> None:
    """Recover, drop the oldest message of topic i, flag it, maybe re-process."""
    _recover_all(sync)
    sync.outputs.append(Dropped(sync.held[i].pop(0).id, QUEUE_OVERFLOW))
    sync.dropped[i] = True
    if sync.pivot != NO_PIVOT:
        _clear_pivot(sync)
        _process(sync)


#: ROS 2's arithmetic (AT-D23): the base, nothing replaced.
ROS2_TABLE = BOOK.profile("ros2", {})
#: ROS 1's arithmetic: the base with these functions replaced.
ROS1_TABLE = BOOK.profile("ros1", {
    scale_ros2: scale_ros1_ratio,  # AT-D23 -> AT-R16: through seconds in double
    _time_fits: _check_ros1,  # AT-R20 -> AT-R19: a message within 32-bit time
    _durations_fit: ros1.refuse_config,  # AT-R1 -> AT-R19: a config within it
})
