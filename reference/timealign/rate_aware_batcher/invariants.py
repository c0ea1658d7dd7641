"""Executable invariants of the rate-aware batcher (spec RB-I1 to RB-I9).

Each predicate looks at a finished (or open) run of *any* implementation, decoded into
this package's input and output classes: ``inputs`` in arrival order and ``outputs`` as
``(input index, output)`` pairs. It returns a list of violations (empty when the invariant
holds), so a test, the explorer or a conformance harness can report all of them. Which hold in
which profile is the spec's table; :func:`check` picks them by ``config.profile``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence

from timealign.rate_aware_batcher.grid import (
    MAX_AHEAD_BATCHES,
    STALL_THRESHOLD_BATCHES,
    timeout_distance,
)
from timealign.rate_aware_batcher.model import (
    GATED_KINDS,
    Batch,
    Config,
    End,
    Input,
    Output,
    Pending,
    Poll,
    Polled,
    SetBatchLength,
)

Outputs = Sequence[tuple[int, Output]]


def _arrivals(inputs: Sequence[Input]) -> dict[str, tuple[int, Polled]]:
    return {m.id: (k, m) for k, item in enumerate(inputs) if isinstance(item, Poll)
            for m in item.messages}


def _batches(outputs: Outputs) -> list[tuple[int, Batch]]:
    return [(k, o) for k, o in outputs if isinstance(o, Batch)]


def no_loss_no_duplication(config: Config, inputs: Sequence[Input], outputs: Outputs) -> list[str]:
    """RB-I1: every message is emitted at most once, never before it arrived, and, once the
    input has ended, exactly once (in a batch or as pending)."""
    arrived = _arrivals(inputs)
    problems: list[str] = []
    counts: Counter[str] = Counter()
    for k, output in outputs:
        ids = output.ids if isinstance(output, Batch) else (output.id,)
        for i in ids:
            counts[i] += 1
            if i not in arrived or arrived[i][0] > k:
                problems.append(f"RB-I1: input {k} emits {i!r} before it arrived")
    problems += [f"RB-I1: {i!r} emitted {n} times" for i, n in counts.items() if n > 1]
    if inputs and isinstance(inputs[-1], End):
        problems += [f"RB-I1: {i!r} lost" for i in arrived if i not in counts]
    return problems


def one_batch_per_poll(config: Config, inputs: Sequence[Input], outputs: Outputs) -> list[str]:
    """RB-I2: at most one batch per poll; only polls emit batches, only the end pending."""
    problems: list[str] = []
    per_input = Counter(k for k, o in outputs if isinstance(o, Batch))
    for k, n in per_input.items():
        if n > 1:
            problems.append(f"RB-I2: input {k} emitted {n} batches")
        if not isinstance(inputs[k], Poll):
            problems.append(f"RB-I2: input {k} ({type(inputs[k]).__name__}) emitted a batch")
    for k, o in outputs:
        if isinstance(o, Pending) and not isinstance(inputs[k], End):
            problems.append(f"RB-I2: input {k} reported {o.id!r} pending before the end")
    return problems


def windows_ordered(config: Config, inputs: Sequence[Input], outputs: Outputs) -> list[str]:
    """RB-I3: batch windows are ordered and do not overlap; after the bootstrap batch each
    window is one batch length long (a configured one) and follows the previous one
    directly or after a whole number of its own lengths (a gap jump)."""
    lengths = {config.batch_length} | {i.length for i in inputs if isinstance(i, SetBatchLength)}
    problems: list[str] = []
    batches = _batches(outputs)
    for position, (k, batch) in enumerate(batches):
        if batch.end < batch.start:
            problems.append(f"RB-I3: input {k} batch ends before it starts")
        if position == 0:
            continue
        previous = batches[position - 1][1]
        length = batch.end - batch.start
        if length not in lengths:
            problems.append(f"RB-I3: input {k} batch length {length} was never configured")
        elif batch.start < previous.end or (batch.start - previous.end) % length:
            problems.append(f"RB-I3: input {k} window starts at {batch.start}, previous "
                            f"ended at {previous.end}, length {length}")
    return problems


def clocks(inputs: Sequence[Input]) -> list[int | None]:
    """The clock reading in force at each input (RB-R18): a poll's ``now``, else the
    previous reading (frozen); before the first reading, the first reading (RB-D17); none
    when the trace has no reading at all."""
    first = next((i.now for i in inputs if isinstance(i, Poll) and i.now is not None), None)
    reading: int | None = first
    out: list[int | None] = []
    for item in inputs:
        if isinstance(item, Poll) and item.now is not None:
            reading = item.now
        out.append(reading)
    return out


def windows_ordered_head(config: Config, inputs: Sequence[Input],
                         outputs: Outputs) -> list[str]:
    """RB-I9 (head): after the bootstrap batch each batch lasts at least one configured
    length and starts at the previous end or a whole number of configured lengths later,
    unless the clock advanced at least ``10·L`` (L the smallest configured length) between
    the polls of the two batches (the backstop may have re-placed the window)."""
    lengths = {config.batch_length} | {i.length for i in inputs if isinstance(i, SetBatchLength)}
    due = STALL_THRESHOLD_BATCHES * min(lengths)
    clock = clocks(inputs)
    problems: list[str] = []
    batches = _batches(outputs)
    for position, (k, batch) in enumerate(batches):
        if batch.end < batch.start:
            problems.append(f"RB-I9: input {k} batch ends before it starts")
        if position == 0:
            continue
        k_previous, previous = batches[position - 1]
        if batch.end - batch.start < min(lengths):
            problems.append(f"RB-I9: input {k} batch shorter than every configured length")
        gap = batch.start - previous.end
        if gap >= 0 and any(gap % length == 0 for length in lengths):
            continue
        now, then = clock[k], clock[k_previous]
        if now is None or then is None or now - then < due:
            problems.append(f"RB-I9: input {k} window starts at {batch.start}, previous "
                            f"ended at {previous.end}, without {due} ns of clock between")
    return problems


def hwm_falls_only_at_backstop(config: Config, inputs: Sequence[Input],
                               observed: Sequence[tuple[int | None, int | None]]) -> list[str]:
    """RB-I8 (head), over ``(hwm, last_close)`` observed after each input: the HWM never
    exceeds the newest timestamp seen, and it decreases only in a poll whose clock is at
    least ``10·L`` (smallest configured L) past the previous ``last_close`` and which
    re-arms ``last_close`` to that clock."""
    lengths = {config.batch_length} | {i.length for i in inputs if isinstance(i, SetBatchLength)}
    due = STALL_THRESHOLD_BATCHES * min(lengths)
    clock = clocks(inputs)
    problems: list[str] = []
    newest: int | None = None
    before: tuple[int | None, int | None] = (None, None)
    for k, (item, (hwm, armed)) in enumerate(zip(inputs, observed, strict=False)):
        if isinstance(item, Poll) and item.messages:
            top = max(m.timestamp for m in item.messages)
            newest = top if newest is None else max(newest, top)
        if hwm is not None and (newest is None or hwm > newest):
            problems.append(f"RB-I8: high-water mark {hwm} beyond the newest stamp at input {k}")
        previous_hwm, previous_armed = before
        if previous_hwm is not None and (hwm is None or hwm < previous_hwm):
            now = clock[k]
            if (not isinstance(item, Poll) or now is None or previous_armed is None
                    or now - previous_armed < due or armed != now):
                problems.append(f"RB-I8: high-water mark fell from {previous_hwm} to {hwm} at "
                                f"input {k} without a due backstop")
        before = (hwm, armed)
    return problems


def hwm_monotone(hwms: Iterable[int | None]) -> list[str]:
    """RB-I4: the high-water mark, observed after each input, never decreases."""
    problems: list[str] = []
    highest: int | None = None
    for k, hwm in enumerate(hwms):
        if highest is not None and (hwm is None or hwm < highest):
            problems.append(f"RB-I4: high-water mark fell from {highest} to {hwm} at input {k}")
        if hwm is not None:
            highest = hwm if highest is None else max(highest, hwm)
    return problems


def ungated_ride_along(config: Config, inputs: Sequence[Input], outputs: Outputs) -> list[str]:
    """RB-I5: a non-gated message is held back only while it is ahead of the window: every
    batch closed from its arrival on either contains it or ends before its timestamp by at
    most three of its own lengths (``end < ts <= end + 3L``)."""
    arrived = _arrivals(inputs)
    problems: list[str] = []
    batches = _batches(outputs)
    delivered = {i: position for position, (_, b) in enumerate(batches) for i in b.ids}
    for i, (k, message) in arrived.items():
        if message.kind in GATED_KINDS:
            continue
        last = delivered.get(i, len(batches))
        for k_batch, batch in batches[:last]:
            if k_batch < k:
                continue
            length = batch.end - batch.start
            t = message.timestamp
            if not batch.end < t <= batch.end + MAX_AHEAD_BATCHES * length:
                problems.append(f"RB-I5: non-gated {i!r} (ts {t}) held past batch "
                                f"[{batch.start}, {batch.end}] at input {k_batch}")
    return problems


def with_ungated_companions(inputs: Sequence[Input], prefix: str = "companion") -> list[Input]:
    """The inputs of RB-I6: every non-empty poll gets one extra ``log`` message stamped with
    the poll's oldest timestamp, so the poll's newest timestamp (and the HWM) is unchanged."""
    changed: list[Input] = []
    for k, item in enumerate(inputs):
        if isinstance(item, Poll) and item.messages:
            oldest = min(m.timestamp for m in item.messages)
            extra = Polled("log", prefix, oldest, f"{prefix}-{k}")
            changed.append(Poll((*item.messages, extra)))
        else:
            changed.append(item)
    return changed


def ungated_never_holds_back(outputs: Outputs, companion_outputs: Outputs,
                             prefix: str = "companion") -> list[str]:
    """RB-I6: adding non-gated traffic that does not raise the HWM changes no batch window
    and no close instant, and leaves the other members of every batch as they were."""
    mine, theirs = _batches(outputs), _batches(companion_outputs)
    if [(k, b.start, b.end) for k, b in mine] != [(k, b.start, b.end) for k, b in theirs]:
        return [f"RB-I6: batches {[(k, b.start, b.end) for k, b in mine]} became "
                f"{[(k, b.start, b.end) for k, b in theirs]} with non-gated companions"]
    problems: list[str] = []
    for (k, batch), (_, other) in zip(mine, theirs, strict=True):
        kept = tuple(i for i in other.ids if not i.startswith(f"{prefix}-"))
        if kept != batch.ids:
            problems.append(f"RB-I6: input {k} batch members changed: {batch.ids} -> {kept}")
    return problems


def timeout_closes_after_outlier(config: Config) -> int:
    """How many timeout closes one clamped HWM can cause: ``floor((3L - T) / L) + 1``."""
    length = config.batch_length
    timeout = timeout_distance(config.factor, length)
    if timeout is None:  # head's infinite factor: the timeout never fires (RB-R19)
        return 0
    reach = MAX_AHEAD_BATCHES * length - timeout
    return 0 if reach < 0 else reach // length + 1


def outlier_closes_bounded(config: Config, inputs: Sequence[Input], outputs: Outputs,
                           extra: int = 1) -> list[str]:
    """RB-I7: after a poll holding a non-gated timestamp more than 3L ahead of all earlier
    data, the empty polls that follow close at most ``timeout_closes_after_outlier + extra``
    batches (the clamp self-heals). Stated for the card's steady regime: fixed batch length
    and every poll up to the outlier's spanning less than L apart from the outlier itself, so
    buffered data spans at most ``extra`` more windows; runs outside that regime are not
    judged (a poll carrying several L of data is a backlog, RB-H8, drained one batch per
    poll).
    """
    if any(isinstance(i, SetBatchLength) for i in inputs):
        return []
    limit = timeout_closes_after_outlier(config) + extra
    per_input = Counter(k for k, o in outputs if isinstance(o, Batch))
    problems: list[str] = []
    newest, steady = -math.inf, True
    for k, item in enumerate(inputs):
        if not isinstance(item, Poll) or not item.messages:
            continue
        ahead = newest + MAX_AHEAD_BATCHES * config.batch_length
        outliers = [m for m in item.messages
                    if m.kind not in GATED_KINDS and m.timestamp > ahead > -math.inf]
        regular = [m.timestamp for m in item.messages if m not in outliers]
        steady = steady and (not regular or max(regular) - min(regular) < config.batch_length)
        newest = max(newest, *(m.timestamp for m in item.messages))
        if not steady:
            break
        if not outliers:
            continue
        closes, j = 0, k + 1
        while j < len(inputs) and isinstance(inputs[j], Poll) and not inputs[j].messages:  # type: ignore[union-attr]
            closes += per_input[j]
            j += 1
        if closes > limit:
            problems.append(f"RB-I7: {closes} closes by empty polls after the outlier at "
                            f"input {k} (limit {limit})")
    return problems


def check(config: Config, inputs: Sequence[Input], outputs: Outputs) -> list[str]:
    """Every single-run trace invariant of the config's profile: RB-I1, RB-I2, RB-I5, RB-I7
    and RB-I3 (card) or RB-I9 (head)."""
    windows = windows_ordered_head if config.head else windows_ordered
    return [
        *no_loss_no_duplication(config, inputs, outputs),
        *one_batch_per_poll(config, inputs, outputs),
        *windows(config, inputs, outputs),
        *ungated_ride_along(config, inputs, outputs),
        *outlier_closes_bounded(config, inputs, outputs),
    ]
