"""The adapters' driver (spec/drivers.md) over the test-only pairs algorithm."""

from __future__ import annotations

import itertools
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.pairs_toy import PAIRS, TIMED_PAIRS, End, Msg, PairsConfig, Tick
from timealign import registry
from timealign.algorithm import Grouped, Record, Settled
from timealign.drive import Driver, drive
from timealign.errors import InvalidInput

TIMED = PairsConfig(window=5, timeout=10)


def rec(name: str, topic: str, stamp: int, arrival: int | None = None) -> Record:
    return Record(name, topic, stamp, stamp if arrival is None else arrival)


def items(steps: Any) -> list[Any]:
    return [item for _, item, _ in steps]


def test_drv_r1_rows_in_arrival_order_ties_in_input_order() -> None:
    """DRV-R1: equal arrivals keep input order; an earlier arrival is rejected."""
    rows = [rec("a", "x", 5, 1), rec("b", "y", 9, 1), rec("c", "x", 0, 2)]
    assert [i.id for i in items(drive(PAIRS, TIMED, rows)) if isinstance(i, Msg)] == \
        ["a", "b", "c"]
    driver = Driver(PAIRS, TIMED)
    with pytest.raises(InvalidInput) as caught:
        list(driver.feed([rec("a", "x", 0, 5), rec("b", "y", 0, 4)]))
    assert (caught.value.field, caught.value.rule, caught.value.value) == ("arrival", "DRV-R1", 4)


def test_drv_r2_rows_become_inputs_through_the_machine_mapping() -> None:
    """DRV-R2: the machine's own mapping converts (and validates) rows, nothing else."""
    steps = list(drive(PAIRS, TIMED, [rec("a", "x", 1), rec("b", "y", 2)]))
    assert items(steps) == [Msg("a", "x", 1, 1), Msg("b", "y", 2, 2), End()]
    with pytest.raises(InvalidInput) as caught:
        list(drive(PAIRS, TIMED, [rec("a", "", 1)]))
    assert caught.value.rule == "TOY-R1"


def test_drv_r3_d1_a_due_timer_fires_before_the_input_at_its_instant() -> None:
    """DRV-R3, DRV-D1: a timer due at exactly the next input's clock fires first."""
    rows = [rec("a", "x", 0, 0), rec("b", "x", 100, 10), rec("c", "x", 200, 30)]
    steps = list(drive(TIMED_PAIRS, TIMED, rows))
    assert items(steps) == [
        Msg("a", "x", 0, 0), Tick(10), Msg("b", "x", 100, 10), Tick(20), Msg("c", "x", 200, 30),
        Tick(40), End(),
    ]
    outputs = [o for _, _, out in steps for o in out if not hasattr(o, "at")]
    assert outputs == [Settled("a", "dropped", "TOY-timeout"),
                       Settled("b", "dropped", "TOY-timeout"),
                       Settled("c", "dropped", "TOY-timeout")]


def test_drv_r3_inputs_without_clock_fire_nothing() -> None:
    """DRV-R3: a machine without clocks never gets ticks."""
    rows = [rec("a", "x", 0, 0), rec("b", "x", 100, 50)]
    assert not any(isinstance(i, Tick) for i in items(drive(PAIRS, TIMED, rows)))


def test_drv_r4_an_instant_fires_once() -> None:
    """DRV-R4: two requests for the same instant give one tick; a later request re-arms."""
    driver = Driver(TIMED_PAIRS, TIMED)
    list(driver.feed([rec("a", "x", 0, 0)]))
    assert driver.timers == [10]
    driver._step(Msg("b", "x", 50, 0))  # requests 10 again
    assert driver.timers == [10]
    assert items(driver.fire_until(10)) == [Tick(10)]
    driver._step(Msg("c", "x", 90, 0))
    assert driver.timers == [10]


def test_drv_r5_d2_end_fires_remaining_timers_then_the_end() -> None:
    """DRV-R5, DRV-D2: remaining timers fire in order (closing by timeout), then the end."""
    rows = [rec("a", "x", 0, 0), rec("b", "x", 100, 3)]
    steps = list(drive(TIMED_PAIRS, TIMED, rows))
    assert items(steps)[2:] == [Tick(10), Tick(13), End()]
    assert steps[-2][2] == (Settled("b", "dropped", "TOY-timeout"),)


def test_drv_r7_consecutive_indices() -> None:
    """DRV-R7: rows' inputs, ticks and the end are numbered 0, 1, 2, ..."""
    steps = list(drive(TIMED_PAIRS, TIMED, [rec("a", "x", 0, 0), rec("b", "x", 9, 20)]))
    assert [index for index, _, _ in steps] == list(range(len(steps)))


rows_strategy = st.lists(
    st.tuples(st.sampled_from("xy"), st.integers(0, 40), st.integers(0, 15)), max_size=25,
).map(lambda raw: [
    Record(f"m{n}", topic, stamp, arrival)
    for n, (topic, stamp, arrival) in enumerate(sorted(raw, key=lambda r: r[2]))
])


@given(rows_strategy, st.integers(0, 25), st.sampled_from([PAIRS, TIMED_PAIRS]))
def test_drv_r6_resume_from_checkpoint_equals_one_go(
    rows: list[Record], cut: int, algorithm: Any
) -> None:
    """DRV-R6: snapshot after any prefix, resume, feed the rest: the same steps."""
    whole = list(drive(algorithm, TIMED, rows))
    first = Driver(algorithm, TIMED)
    steps = list(first.feed(rows[:cut]))
    second = Driver.resume(algorithm, TIMED, first.checkpoint())
    steps += list(second.feed(rows[cut:])) + list(second.finish())
    assert steps == whole


@given(rows_strategy)
def test_drv_i1_every_timer_once_in_order_end_last(rows: list[Record]) -> None:
    """DRV-I1: each requested instant -> one tick, ascending; the end input is last."""
    steps = list(drive(TIMED_PAIRS, TIMED, rows))
    requested = {o.at for _, _, out in steps for o in out if hasattr(o, "at")}
    ticks = [i.now for i in items(steps) if isinstance(i, Tick)]
    assert sorted(set(ticks)) == ticks and set(ticks) == requested
    assert items(steps)[-1] == End() and items(steps).count(End()) == 1
    groups = [o for _, _, out in steps for o in out if isinstance(o, Grouped)]
    settled = [o for _, _, out in steps for o in out if isinstance(o, Settled)]
    assert sorted([i for g in groups for i in g.ids] + [s.id for s in settled]) == \
        sorted(r.id for r in rows)


@given(st.lists(st.tuples(st.sampled_from(["x", "y"]), st.integers(0, 30)), max_size=25))
def test_drv_d3_unclocked_fast_loop_equals_the_general_loop(spec: list[tuple[str, int]]) -> None:
    """DRV-D3: for a machine without ticks, Driver.feed (direct steps) gives the same steps,
    indices and final state as the general clock-aware loop."""
    rows = [rec(f"m{k}", topic, stamp, k) for k, (topic, stamp) in enumerate(spec)]
    fast, general = Driver(PAIRS, TIMED), Driver(PAIRS, TIMED)
    assert not PAIRS.feeding.clocked and TIMED_PAIRS.feeding.clocked
    got = list(fast.feed(rows))
    want = list(general.feed_inputs(PAIRS.feeding.inputs_from_records(TIMED, iter(rows))))
    assert got == want
    assert (fast.state, fast.index, fast.checkpoint().timers) == \
        (general.state, general.index, ())


def test_drv_d3_descriptor_refuses_timers_without_ticks() -> None:
    """DRV-D3: timer_of or clock_of without a tick input is a descriptor error."""
    with pytest.raises(TypeError, match="need a tick"):
        attrs.evolve(TIMED_PAIRS.feeding, tick=None)


RB = registry.get("rate_aware_batcher")
RB_CONFIG = RB.codec.config_from_json({"batch_length_s": 0.5})
RB_KINDS = {"camera": "area_detector", "lidar": "detector_events", "imu": "log"}
polled_rows = st.lists(st.tuples(st.sampled_from(sorted(RB_KINDS)), st.booleans(),
                                 st.booleans(), st.integers(0, 90_000_000)), max_size=30)


def poll_records(spec: list[tuple[str, bool, bool, int]]) -> list[Record]:
    """Rows of consecutive polls (some rows without a poll number), in arrival order."""
    records, poll = [], 0
    for k, (topic, next_poll, alone, offset) in enumerate(spec):
        poll += next_poll
        records.append(Record(f"m{k}", topic, poll * 100_000_000 + offset, k,
                              RB_KINDS[topic], None if alone else poll))
    return records


def chunked(algorithm: Any, records: list[Record], cuts: list[int]) -> list[Any]:
    """Feed ``records`` in chunks, resuming each chunk from the last one's checkpoint."""
    steps: list[Any] = []
    driver = Driver(algorithm, RB_CONFIG)
    for start, stop in itertools.pairwise([0, *sorted(cuts), len(records)]):
        steps += driver.feed(records[start:stop])
        driver = Driver.resume(algorithm, RB_CONFIG, driver.checkpoint())
    return steps + list(driver.finish())


@given(polled_rows, st.lists(st.integers(0, 30), max_size=4))
def test_drv_r8_r6_chunks_never_split_a_poll(spec: list[tuple[str, bool, bool, int]],
                                             cuts: list[int]) -> None:
    """DRV-R8, DRV-R6: fed in chunks with a checkpoint between them, the rate-aware
    batcher's polls stay whole: the steps equal one go."""
    records = poll_records(spec)
    assert chunked(RB, records, [min(c, len(records)) for c in cuts]) == \
        list(drive(RB, RB_CONFIG, records))


def test_drv_r8_without_runs_a_cut_would_split_a_poll() -> None:
    """DRV-R8: the rule matters: without `record_run`, a cut inside a poll makes two polls."""
    records = poll_records([("camera", False, False, 1), ("lidar", False, False, 2)])
    whole = list(drive(RB, RB_CONFIG, records))
    assert chunked(RB, records, [1]) == whole
    unruned = attrs.evolve(RB, feeding=attrs.evolve(RB.feeding, record_run=None,
                                                    column_runs=None))
    assert chunked(unruned, records, [1]) != whole
    driver = Driver(RB, RB_CONFIG)
    assert list(driver.feed(records)) == [] and driver.checkpoint().held_rows == tuple(records)
    assert driver.last_arrival == 1 and driver.arrival is None
