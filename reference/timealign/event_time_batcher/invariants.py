"""Executable invariants EB-I1 to EB-I10 over a finished run, usable on any implementation.

Each predicate takes the config, the inputs in order (valid ones only: an input another
implementation refused is left out) and the outputs, each paired with the index of the
input whose step produced it, and returns a list of violations (empty when the property
holds). They look only at inputs and outputs, never at a state, so an implementation's
decoded vector output (``timealign.algorithm.check_json_run``) can be checked as well as
the reference's.

The checks are sound: a reported violation is a real one. Properties about batches that
were open at some moment are checked on what the outputs prove was open (EB-I5, EB-I7).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Sequence

from timealign.event_time_batcher.model import (
    TOO_FAR_IN_FUTURE,
    TOO_OLD,
    Batch,
    Config,
    Flush,
    Input,
    Message,
    Output,
    Rejected,
    Tick,
    Timer,
)

Outputs = Sequence[tuple[int, Output]]
Predicate = Callable[[Config, Sequence[Input], Outputs], list[str]]


def _messages(inputs: Sequence[Input]) -> dict[str, tuple[int, Message]]:
    return {m.id: (k, m) for k, m in enumerate(inputs) if isinstance(m, Message)}


def _batches(outputs: Outputs) -> list[tuple[int, Batch]]:
    return [(k, o) for k, o in outputs if isinstance(o, Batch)]


def settled_once(config: Config, inputs: Sequence[Input], outputs: Outputs) -> list[str]:
    """EB-I1: every message ends in exactly one batch, rejection or drop, at or after its
    arrival; before the last flush every earlier message has its outcome. Ids are unique."""
    problems = [f"id {i!r} is used by {n} messages" for i, n in Counter(
        m.id for m in inputs if isinstance(m, Message)).items() if n > 1]
    messages = _messages(inputs)
    seen: Counter[str] = Counter()
    for k, o in outputs:
        ids = o.ids if isinstance(o, Batch) else () if isinstance(o, Timer) else (o.id,)
        for i in ids:
            seen[i] += 1
            if i not in messages:
                problems.append(f"output at input {k} names unknown message {i!r}")
            elif messages[i][0] > k:
                problems.append(f"{i!r} settled at input {k} before it arrived")
    problems += [f"{i!r} has {n} outcomes" for i, n in seen.items() if n > 1]
    last_flush = max((k for k, x in enumerate(inputs) if isinstance(x, Flush)), default=-1)
    problems += [f"{i!r} has no outcome after the flush at input {last_flush}"
                 for i, (k, _) in messages.items() if k < last_flush and not seen[i]]
    return problems


def one_member_per_key(config: Config, inputs: Sequence[Input], outputs: Outputs) -> list[str]:
    """EB-I2: no two members of a batch share a key."""
    messages = _messages(inputs)
    problems = []
    for k, b in _batches(outputs):
        keys = Counter(messages[i][1].key for i in b.ids if i in messages)
        problems += [f"batch at input {k} holds key {key!r} {n} times"
                     for key, n in keys.items() if n > 1]
    return problems


def members_inside_window(config: Config, inputs: Sequence[Input], outputs: Outputs) -> list[str]:
    """EB-I3: ``start <= end`` and every member's event time lies in ``[start, end]``."""
    messages = _messages(inputs)
    problems = []
    for k, b in _batches(outputs):
        if b.start > b.end:
            problems.append(f"batch at input {k} has start {b.start} > end {b.end}")
        problems += [f"{i!r} (event time {messages[i][1].event_time}) outside batch "
                     f"[{b.start}, {b.end}] at input {k}"
                     for i in b.ids if i in messages
                     and not b.start <= messages[i][1].event_time <= b.end]
    return problems


def window_within_limit(config: Config, inputs: Sequence[Input], outputs: Outputs) -> list[str]:
    """EB-I4: a batch's window never exceeds ``batching_window``."""
    return [f"batch [{b.start}, {b.end}] at input {k} is wider than {config.batching_window}"
            for k, b in _batches(outputs) if b.end - b.start > config.batching_window]


def windows_disjoint(config: Config, inputs: Sequence[Input], outputs: Outputs) -> list[str]:
    """EB-I5: windows of batches open at the same time share at most an endpoint.

    Two batches were open together when they close in the same step, or when the later one
    holds a message that had arrived by the earlier one's close (windows only shrink, so that
    message's batch then covered the later window)."""
    arrival = {i: k for i, (k, _) in _messages(inputs).items()}
    batches = _batches(outputs)
    by_start = sorted(range(len(batches)), key=lambda p: batches[p][1].start)
    problems = []
    for n, p in enumerate(by_start):  # a sweep: only pairs whose windows overlap are compared
        for q in by_start[n + 1:]:
            if batches[q][1].start >= batches[p][1].end:
                break
            (ka, a), (kb, b) = batches[min(p, q)], batches[max(p, q)]
            together = kb == ka or any(arrival.get(i, kb + 1) <= ka for i in b.ids)
            if together and not (a.end <= b.start or b.end <= a.start):
                problems.append(f"open batches [{a.start}, {a.end}] (closed at input {ka}) and "
                                f"[{b.start}, {b.end}] (closed at input {kb}) overlap")
    return problems


def closed_not_early(config: Config, inputs: Sequence[Input], outputs: Outputs) -> list[str]:
    """EB-I6: a batch closed by a message or tick at ``T`` has ``end + D <= T`` (flush aside)."""
    problems = []
    for k, b in _batches(outputs):
        item = inputs[k]
        if isinstance(item, Message | Tick) and b.end + config.max_message_delay > item.at:
            problems.append(f"batch [{b.start}, {b.end}] closed at input {k} (at {item.at}) "
                            f"before its timeout {b.end + config.max_message_delay}")
    return problems


def timers_honoured(config: Config, inputs: Sequence[Input], outputs: Outputs) -> list[str]:
    """EB-I7: no batch is left open after a tick at or past its timeout.

    A requested timeout stays owned by an open batch until a batch with that timeout closes
    (a split's upper part inherits it), so after ``Timer(x)`` the first tick at ``x`` or
    later must have closed, by then, a batch whose ``end + D`` is ``x``."""
    closes: dict[int, list[int]] = {}
    for k, b in _batches(outputs):
        closes.setdefault(b.end + config.max_message_delay, []).append(k)
    tick_index = [j for j, x in enumerate(inputs) if isinstance(x, Tick)]
    tick_at = [x.at for x in inputs if isinstance(x, Tick)]  # non-decreasing (EB-R3)
    problems = []
    for i, o in outputs:
        if not isinstance(o, Timer):
            continue
        first = bisect_left(tick_at, o.at, lo=bisect_right(tick_index, i))
        if first == len(tick_at):
            continue
        tick = tick_index[first]
        at_x = closes.get(o.at, [])
        after = bisect_right(at_x, i)
        if after == len(at_x) or at_x[after] > tick:
            problems.append(f"timer {o.at} (input {i}) passed by the tick at input {tick} "
                            f"but no batch with that timeout closed")
    return problems


def timers_requested(config: Config, inputs: Sequence[Input], outputs: Outputs) -> list[str]:
    """EB-I8: timers come from message steps and lie strictly after their ``at``; a batch
    closed by a tick or flush had its timer ``end + D`` requested earlier."""
    problems = []
    requested: dict[int, int] = {}
    for k, o in outputs:
        item = inputs[k]
        if isinstance(o, Timer):
            if not isinstance(item, Message) or o.at <= item.at:
                problems.append(f"timer {o.at} at input {k} ({item}) is not in the future")
            requested.setdefault(o.at, k)
        elif isinstance(o, Batch) and not isinstance(item, Message):
            timeout = o.end + config.max_message_delay
            if requested.get(timeout, k) >= k:
                problems.append(f"batch [{o.start}, {o.end}] closed at input {k} without a "
                                f"timer {timeout} requested before")
    return problems


def acceptance_band(config: Config, inputs: Sequence[Input], outputs: Outputs) -> list[str]:
    """EB-I9: a message is rejected ``too_old`` exactly when ``t < T - D`` and
    ``too_far_in_future`` exactly when ``t > T + L``, in its own step."""
    rejected = {o.id: (k, o.reason) for k, o in outputs if isinstance(o, Rejected)}
    problems = []
    for k, m in enumerate(inputs):
        if not isinstance(m, Message):
            continue
        expected = (TOO_OLD if m.event_time < m.at - config.max_message_delay
                    else TOO_FAR_IN_FUTURE if m.event_time > m.at + config.message_leap_limit
                    else None)
        got = rejected.get(m.id)
        got_band = got if got is not None and got[1] in (TOO_OLD, TOO_FAR_IN_FUTURE) else None
        if (expected is None) != (got_band is None) or (
                got_band is not None and got_band != (k, expected)):
            problems.append(f"{m.id!r} (t={m.event_time}, at={m.at}) expected "
                            f"{expected or 'accepted'} at input {k}, got {got}")
    return problems


def arrival_order(config: Config, inputs: Sequence[Input], outputs: Outputs) -> list[str]:
    """EB-I10: a batch lists its members in arrival order."""
    arrival = {i: k for i, (k, _) in _messages(inputs).items()}
    problems = []
    for k, b in _batches(outputs):
        order = [arrival.get(i, -1) for i in b.ids]
        if order != sorted(order):
            problems.append(f"batch at input {k} lists {list(b.ids)} out of arrival order")
    return problems


PREDICATES: tuple[Predicate, ...] = (
    settled_once, one_member_per_key, members_inside_window, window_within_limit,
    windows_disjoint, closed_not_early, timers_honoured, timers_requested, acceptance_band,
    arrival_order,
)


def check(config: Config, inputs: Sequence[Input], outputs: Outputs) -> list[str]:
    """Every invariant's violations, each prefixed by its predicate's name."""
    return [f"{predicate.__name__}: {problem}" for predicate in PREDICATES
            for problem in predicate(config, inputs, outputs)]
