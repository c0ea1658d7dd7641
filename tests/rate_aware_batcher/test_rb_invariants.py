"""The executable invariants catch broken outputs (RB-I1 to RB-I7).

Each predicate is run on the reference's output for a steady trace (it must pass) and on a
deliberately broken copy (it must name the violation), so they are usable as conformance
checks on other implementations' decoded outputs.
"""

from __future__ import annotations

import random

import attrs

from tests.rate_aware_batcher.support import SECOND, T0, Clock, Source, reference_outputs
from timealign.rate_aware_batcher import Batch, Config, End, Input, Output, Pending, Poll, Polled
from timealign.rate_aware_batcher import invariants as inv

CONFIG = Config()


def steady(polls: int = 40, log_rate: float = 3.0) -> list[Input]:
    clock = Clock([Source("detector_events", "det", 14.0, 5_000_000)], random.Random(3),
                  log_rate=log_rate)
    return [clock.poll(SECOND // 10) for _ in range(polls)]


def run(inputs: list[Input]) -> list[tuple[int, Output]]:
    return reference_outputs(CONFIG, inputs)


def batch_positions(outputs: list[tuple[int, Output]]) -> list[int]:
    return [p for p, (_, o) in enumerate(outputs) if isinstance(o, Batch)]


def test_no_loss_no_duplication_rb_i1() -> None:
    """RB-I1."""
    inputs = [*steady(), End()]
    good = run(inputs)
    assert inv.no_loss_no_duplication(CONFIG, inputs, good) == []
    first = batch_positions(good)[1]
    k, batch = good[first]
    assert isinstance(batch, Batch)
    lost = [*good[:first], (k, attrs.evolve(batch, ids=batch.ids[1:])), *good[first + 1:]]
    assert any("lost" in p for p in inv.no_loss_no_duplication(CONFIG, inputs, lost))
    doubled = [*good, (len(inputs) - 1, Pending(batch.ids[0]))]
    assert any("2 times" in p for p in inv.no_loss_no_duplication(CONFIG, inputs, doubled))
    early = [(0, o) for _, o in good]
    assert any("before it arrived" in p for p in inv.no_loss_no_duplication(CONFIG, inputs, early))


def test_one_batch_per_poll_rb_i2() -> None:
    """RB-I2."""
    inputs = [*steady(), End()]
    good = run(inputs)
    assert inv.one_batch_per_poll(CONFIG, inputs, good) == []
    k = good[batch_positions(good)[2]][0]
    assert inv.one_batch_per_poll(CONFIG, inputs, [*good, (k, Batch(0, 0, ()))])


def test_windows_ordered_rb_i3() -> None:
    """RB-I3."""
    inputs = steady()
    good = run(inputs)
    assert inv.windows_ordered(CONFIG, inputs, good) == []
    position = batch_positions(good)[3]
    k, batch = good[position]
    assert isinstance(batch, Batch)
    shifted = attrs.evolve(batch, start=batch.start - 1, end=batch.end - 1)
    assert inv.windows_ordered(CONFIG, inputs, [*good[:position], (k, shifted)])
    stretched = attrs.evolve(batch, end=batch.end + 5)
    assert inv.windows_ordered(CONFIG, inputs, [*good[:position], (k, stretched)])


def test_hwm_monotone_rb_i4() -> None:
    """RB-I4."""
    assert inv.hwm_monotone([None, 5, 5, 7]) == []
    assert inv.hwm_monotone([None, 5, 4])
    assert inv.hwm_monotone([3, None])


def test_ungated_ride_along_rb_i5() -> None:
    """RB-I5."""
    inputs = steady()
    good = run(inputs)
    assert inv.ungated_ride_along(CONFIG, inputs, good) == []
    logs = [(p, m) for p, (_, o) in enumerate(good) if isinstance(o, Batch)
            for m in o.ids if m.startswith("l")]
    position, held = logs[1]
    k, batch = good[position]
    assert isinstance(batch, Batch)
    later = next(p for p in batch_positions(good) if p > position)
    k2, nxt = good[later]
    assert isinstance(nxt, Batch)
    moved = list(good)
    moved[position] = (k, attrs.evolve(batch, ids=tuple(i for i in batch.ids if i != held)))
    moved[later] = (k2, attrs.evolve(nxt, ids=(held, *nxt.ids)))
    assert any("RB-I5" in p for p in inv.ungated_ride_along(CONFIG, inputs, moved))


def test_ungated_never_holds_back_rb_i6() -> None:
    """RB-I6."""
    inputs = steady(log_rate=0.0)
    good = run(inputs)
    companions = inv.with_ungated_companions(inputs)
    assert sum(len(p.messages) for p in companions if isinstance(p, Poll)) > sum(
        len(p.messages) for p in inputs if isinstance(p, Poll))
    assert inv.ungated_never_holds_back(good, run(companions)) == []
    assert inv.ungated_never_holds_back(good, good[:-1])


def test_outlier_closes_bounded_rb_i7() -> None:
    """RB-I7."""
    outlier = Poll((Polled("log", "log", T0 + 4 * SECOND + 365 * 24 * 3600 * SECOND, "out"),))
    inputs: list[Input] = [*steady(), outlier, *[Poll(()) for _ in range(100)]]
    good = run(inputs)
    assert inv.timeout_closes_after_outlier(CONFIG) == 2
    assert inv.outlier_closes_bounded(CONFIG, inputs, good) == []
    empties = range(len(inputs) - 100, len(inputs))
    flood = [*good, *[(k, Batch(0, 0, ())) for k in empties]]
    assert inv.outlier_closes_bounded(CONFIG, inputs, flood)
    assert inv.check(CONFIG, inputs, good) == []


def test_outlier_bound_does_not_judge_backlogs_rb_i7() -> None:
    """RB-I7 regression (found by a long stateful run): after a silence, a 2 s poll at
    L = 0.5 s holds a log "ahead" of all earlier data and a backlog of four windows, which
    empty polls drain one batch each (RB-H8); that is not the outlier regime."""
    config = Config(0.5)
    rnd = random.Random(1)
    source = Source("detector_events", "s0", 14.0, rnd.randrange(SECOND // 7))
    clock = Clock([source], rnd, log_rate=1.0)
    inputs: list[Input] = [clock.poll(SECOND // 10), Poll(())]
    inputs += [clock.poll(SECOND // 10) for _ in range(6)]
    clock.silence(SECOND)
    inputs += [clock.poll(2 * SECOND), *[Poll(()) for _ in range(4)]]
    outputs = reference_outputs(config, inputs)
    assert sum(1 for k, o in outputs if isinstance(o, Batch) and k > 8) > 3
    assert inv.outlier_closes_bounded(config, inputs, outputs) == []
