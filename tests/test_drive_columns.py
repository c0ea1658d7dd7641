"""DRV-R13: a batch of columns drives a machine exactly as its rows fed as records do.

For each of the three algorithms (each has a columnar mapping: ApproximateTime one row per
input, the event-time batcher clocked, the rate-aware batcher reading a poll's rows as one
input), any rows split into any batches: ``Driver.feed_columns`` yields the steps with
outputs that ``Driver.feed`` yields over the same rows as records, and leaves the same
driver (state, timers, index, arrival, held rows) after every batch and at the end. Batches
are cut inside polls and at rows before which a timer falls due; some are fed as records
in between, so a run held by one path is continued by the other. A batch with a bad row
raises the row path's error (same field and rule) and leaves the driver as it was. Each
columnar mapping is also checked against its row mapping directly.
"""

from __future__ import annotations

import itertools
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from timealign import registry
from timealign.algorithm import Algorithm, Columns, Feeding, Record, records_of
from timealign.drive import Checkpoint, Driver
from timealign.errors import InvalidInput

EB = registry.get("event_time_batcher")
RB = registry.get("rate_aware_batcher")

TOPICS = ["camera", "lidar", "imu"]
#: Small windows against row gaps of up to 40 ms: batches close between rows (EB timers
#: due between rows, RB polls closing batches), ApproximateTime publishes and drops.
CONFIGS: dict[str, dict[str, Any]] = {
    "approximate_time": {"topics": TOPICS, "queue_size": 3,
                         "max_interval_duration": 30_000_000},
    "event_time_batcher": {"batching_window": 30_000_000, "max_message_delay": 20_000_000},
    "rate_aware_batcher": {"batch_length_s": 0.05},
}
KINDS = ["area_detector", "detector_events", "log", None]
ALGORITHMS = [registry.get(name) for name in registry.names()]
FAST = [algorithm.fast_path() for algorithm in ALGORITHMS]


def columns_of(records: list[Record]) -> Columns:
    kinds = [r.kind for r in records]
    polls = [r.poll for r in records]
    return ([r.id for r in records], [r.topic for r in records], [r.stamp for r in records],
            [r.arrival for r in records], kinds if any(k is not None for k in kinds) else None,
            polls if any(p is not None for p in polls) else None)


@st.composite
def fleets(draw: st.DrawFn) -> list[Record]:
    """Rows in arrival order: gaps of 0 to 40 ms, event times up to 60 ms late, runs of
    equal poll numbers (and rows without one) for the rate-aware batcher."""
    count = draw(st.integers(0, 40))
    rows: list[Record] = []
    arrival = draw(st.integers(10**8, 2 * 10**8))
    poll = 0
    for number in range(count):
        arrival += draw(st.sampled_from([0, 1, 5_000_000, 12_000_000, 40_000_000]))
        if draw(st.integers(0, 3)) == 0:
            poll += 1
        rows.append(Record(f"m{number}", draw(st.sampled_from(TOPICS)),
                           arrival - draw(st.integers(0, 60_000_000)), arrival,
                           draw(st.sampled_from(KINDS)),
                           None if draw(st.integers(0, 5)) == 0 else poll))
    return rows


def splits(rows: list[Record], cuts: list[int]) -> list[list[Record]]:
    points = sorted({0, len(rows), *(cut % (len(rows) + 1) for cut in cuts)})
    return [rows[a:b] for a, b in itertools.pairwise(points)]


def driver_of(algorithm: Algorithm[Any, Any, Any, Any]) -> Driver[Any, Any, Any, Any]:
    return Driver(algorithm, algorithm.codec.config_from_json(CONFIGS[algorithm.name]))


def state_of(algorithm: Algorithm[Any, Any, Any, Any], checkpoint: Checkpoint[Any]) -> Any:
    fast = algorithm.machine.fast
    spec = registry.get(algorithm.name).machine.fast
    if fast is None and spec is not None and algorithm.machine.step is spec.step:
        return spec.to_spec(checkpoint.state)
    return checkpoint.state


def same_driver(algorithm: Algorithm[Any, Any, Any, Any], columnar: Driver[Any, Any, Any, Any],
                rows: Driver[Any, Any, Any, Any]) -> None:
    got, expected = columnar.checkpoint(), rows.checkpoint()
    assert state_of(algorithm, got) == state_of(algorithm, expected)
    assert attrs.evolve(got, state=None) == attrs.evolve(expected, state=None)


@pytest.mark.parametrize("algorithm", ALGORITHMS + FAST,
                         ids=[a.name for a in ALGORITHMS] + [f"{a.name}-fast" for a in FAST])
@settings(max_examples=60, deadline=None)
@given(fleets(), st.lists(st.integers(0, 60), max_size=6), st.lists(st.booleans(), max_size=8))
def test_drv_r13_feed_columns_equals_feed(algorithm: Algorithm[Any, Any, Any, Any],
                                          rows: list[Record], cuts: list[int],
                                          as_records: list[bool]) -> None:
    """DRV-R13, DRV-R3, DRV-R4, DRV-R8, DRV-R6: every batch yields the steps with outputs
    the row path yields for it (indices, inputs, outputs) and leaves the same driver; the
    held rows of either path are continued by the other; the finish is the same."""
    columnar, by_rows = driver_of(algorithm), driver_of(algorithm)
    ticks = 0
    for number, piece in enumerate(splits(rows, cuts)):
        expected = list(by_rows.feed(piece))
        ticks += sum(1 for _, item, _ in expected if item.__class__.__name__ == "Tick")
        if number < len(as_records) and as_records[number]:
            got = list(columnar.feed(piece))
        else:
            got = list(columnar.feed_columns(columns_of(piece), typed=True))
            expected = [step for step in expected if step[2]]
        assert got == expected
        same_driver(algorithm, columnar, by_rows)
        # a resumed driver continues as the one checkpointed (DRV-R6)
        columnar = Driver.resume(algorithm, columnar.config, columnar.checkpoint())
    assert list(columnar.finish()) == list(by_rows.finish())
    same_driver(algorithm, columnar, by_rows)


def test_drv_r13_timers_fire_between_the_rows_of_one_batch() -> None:
    """DRV-R3, DRV-R13: the event-time batcher's timers fall due between two rows of one
    batch, and their ticks are stepped between the messages (indices and outputs as the row
    path's); a poll cut by two batches is one input."""
    rows = [Record("a", "k", 100_000_000, 100_000_000),
            Record("b", "k", 105_000_000, 105_000_000),
            Record("c", "k", 200_000_000, 200_000_000)]
    driver = driver_of(EB)
    steps = list(driver.feed_columns(columns_of(rows), typed=True))
    kinds = [(index, type(item).__name__) for index, item, _ in steps]
    assert kinds == [(0, "Message"), (1, "Message"), (2, "Tick"), (3, "Tick"), (4, "Message")]
    assert steps == [s for s in driver_of(EB).feed(rows) if s[2]]
    polled = [Record(f"r{n}", "camera", 10**8 + n, 10**8 + n, "log", 1) for n in range(4)]
    driver = driver_of(RB)
    assert list(driver.feed_columns(columns_of(polled[:3]))) == []
    assert len(driver.held_rows) == 3 and driver.index == 0
    next_poll = attrs.evolve(polled[0], id="s", poll=2)
    list(driver.feed_columns(columns_of([*polled[3:], next_poll])))
    assert driver.index == 1 and [r.id for r in driver.held_rows] == ["s"]


# Bad values: each refused by the row path at one row (DRV-R9, DRV-R1, EB-R2, RB-D3,
# AT-D21), placed at any row of a batch.
BAD = [("id", ""), ("topic", "radar"), ("topic", ""), ("stamp", -1), ("stamp", True),
       ("arrival", 0), ("arrival", 2**63), ("kind", "camera"), ("poll", -1), ("id", 7)]


@pytest.mark.parametrize("algorithm", ALGORITHMS, ids=[a.name for a in ALGORITHMS])
@settings(max_examples=40, deadline=None)
@given(fleets(), st.integers(0, 60), st.integers(0, 60), st.sampled_from(BAD))
def test_drv_r13_a_bad_row_raises_the_row_paths_error(
        algorithm: Algorithm[Any, Any, Any, Any], rows: list[Record], cut: int, at: int,
        bad: tuple[str, Any]) -> None:
    """DRV-R13, DRV-D11, DRV-R9, DRV-R1: a batch with a row the row path refuses raises the
    row path's error (same field, rule and text) and leaves the driver as it was before the
    batch, held rows included, when the checks or the mapping refuse the row; when the
    machine's step refuses its input, the driver is where the row path leaves it (the
    steps before it taken). A batch the row path accepts is fed as it is."""
    first, rest = rows[:cut % (len(rows) + 1)], rows[cut % (len(rows) + 1):]
    if not rest:
        return
    field, value = bad
    at %= len(rest)
    rest = [*rest[:at], attrs.evolve(rest[at], **{field: value}), *rest[at + 1:]]
    columnar, by_rows = driver_of(algorithm), driver_of(algorithm)
    list(columnar.feed_columns(columns_of(first)))
    list(by_rows.feed(first))
    before = columnar.checkpoint()
    try:
        expected = [step for step in by_rows.feed(rest) if step[2]]
    except InvalidInput as error:
        with pytest.raises(InvalidInput) as caught:
            list(columnar.feed_columns(columns_of(rest)))
        assert (caught.value.field, caught.value.rule) == (error.field, error.rule)
        assert str(caught.value) == str(error)
        after = columnar.checkpoint()
        if after != before:  # the machine's step refused the row's input, as row by row
            assert caught.value.rule not in ("DRV-R9", "DRV-R1")
            assert after == by_rows.checkpoint()
        return
    assert list(columnar.feed_columns(columns_of(rest))) == expected
    same_driver(algorithm, columnar, by_rows)


#: The algorithms whose feeding maps a batch of columns at once (DRV-R13).
COLUMNAR = [a for a in ALGORITHMS if a.feeding.inputs_from_columns is not None]


@pytest.mark.parametrize("algorithm", COLUMNAR, ids=[a.name for a in COLUMNAR])
@settings(max_examples=60, deadline=None)
@given(fleets())
def test_drv_r13_columnar_mapping_maps_as_the_records_do(
        algorithm: Algorithm[Any, Any, Any, Any], rows: list[Record]) -> None:
    """DRV-R2, DRV-R13: each columnar mapping gives its row mapping's inputs over a batch
    of whole runs (rows that passed DRV-R9), or the same error."""
    feeding = algorithm.feeding
    assert feeding.inputs_from_columns is not None
    config = algorithm.codec.config_from_json(CONFIGS[algorithm.name])
    columns = columns_of(rows)
    expected = list(feeding.inputs_from_records(config, records_of(columns)))
    assert feeding.inputs_from_columns(config, columns) == expected
    if feeding.column_runs is not None and feeding.record_run is not None:
        keys = feeding.column_runs(columns)
        assert list(keys if keys is not None else [None] * len(rows)) == \
            [feeding.record_run(r) for r in rows]


def test_drv_r13_column_runs_goes_with_a_columnar_mapping_of_runs() -> None:
    """DRV-R13: a mapping of runs given a columnar form needs the runs of a batch
    (``column_runs``), and only it has them."""
    with pytest.raises(TypeError, match="column_runs"):
        attrs.evolve(RB.feeding, column_runs=None)
    with pytest.raises(TypeError, match="column_runs"):
        attrs.evolve(EB.feeding, column_runs=lambda columns: columns[5])
    assert isinstance(attrs.evolve(RB.feeding, inputs_from_columns=None, column_runs=None),
                      Feeding)
