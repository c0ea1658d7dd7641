"""The batcher under the generic batch driver (``timealign.drive``, spec/drivers.md).

The driver ticks at every requested timer instant before any input at or past it, and at
the end fires the remaining timers then flushes (EB-D10). Under it every batch closes by
the tick at exactly its timeout ``end + D``, or, born already expired (a split's lower part
or a zero window at the delay boundary), in the step that creates it (EB-R13); no batch is
ever open past its timeout, timers are never in the past (EB-R3 never fires) and the final
flush finds nothing left (EB-I7, EB-I8).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cases import generate
from timealign.algorithm import Record
from timealign.drive import Driver, drive
from timealign.event_time_batcher import (
    ALGORITHM,
    Batch,
    Config,
    Flush,
    Input,
    Message,
    Output,
    Tick,
)
from timealign.event_time_batcher.codec import config_from_json, input_from_json
from timealign.event_time_batcher.invariants import check


@st.composite
def streams(draw: st.DrawFn) -> tuple[Config, list[Record]]:
    config = Config(draw(st.integers(0, 40)), draw(st.integers(0, 25)), draw(st.integers(0, 5)))
    arrival, records = 0, []
    rows = draw(st.lists(st.tuples(st.sampled_from("abcd"), st.integers(0, 15),
                                   st.integers(-30, 6)), max_size=40))
    for n, (key, advance, offset) in enumerate(rows):
        arrival += advance
        records.append(Record(f"{key}{n}", key, max(0, arrival + offset), arrival))
    return config, records


@given(streams())
def test_eb_r13_every_batch_closes_at_its_timeout_under_the_driver(
        case: tuple[Config, list[Record]]) -> None:
    config, records = case
    delay = config.max_message_delay
    run: list[tuple[int, Input, tuple[Output, ...]]] = []
    for index, item, out in drive(ALGORITHM, config, records):
        run.append((index, item, out))
        closed = [o for o in out if isinstance(o, Batch)]
        if isinstance(item, Tick):
            assert all(b.end + delay == item.at for b in closed), "closed late or early"
        elif isinstance(item, Flush):
            assert closed == [], "the final flush found a batch the ticks had not closed"
        else:
            assert isinstance(item, Message)
            assert all(b.end + delay <= item.at for b in closed)
    assert isinstance(run[-1][1], Flush)
    inputs = [item for _, item, _ in run]
    produced = [(k, o) for k, _, out in run for o in out]
    assert check(config, inputs, produced) == []


@given(streams())
def test_eb_r14_no_batch_is_open_past_its_timeout_under_the_driver(
        case: tuple[Config, list[Record]]) -> None:
    """EB-R14: before every input at T, every open batch's timeout is after T."""
    config, records = case
    driver = Driver(ALGORITHM, config)
    for _, item, _ in (*driver.feed(records), *driver.finish()):
        if isinstance(item, Message | Tick):
            assert all(b.end + config.max_message_delay > item.at for b in driver.state.batches)


def test_eb_d10_drive_closes_use_case_batches_by_their_ticks() -> None:
    """EB-D10: drive.drive on UC1's records delivers the ticks at T180 and T240 itself."""
    ms = 1_000_000
    config = Config(50 * ms, 20 * ms, 0)
    rows = [("a1", 110, 120), ("b1", 122, 132), ("c1", 142, 150), ("d1", 152, 160),
            ("e1", 170, 190)]
    records = [Record(i, i[0], t * ms, at * ms) for i, t, at in rows]
    closes = [(item, o) for _, item, out in drive(ALGORITHM, config, records)
              for o in out if isinstance(o, Batch)]
    assert closes == [
        (Tick(180 * ms), Batch(110 * ms, 160 * ms, ("a1", "b1", "c1", "d1"))),
        (Tick(240 * ms), Batch(170 * ms, 220 * ms, ("e1",))),
    ]


def test_eb_d10_use_case_vectors_carry_the_driver_ticks() -> None:
    """EB-D10: the UC vectors' inputs are exactly what the driver delivers for their rows."""
    for vector in generate.cases("event_time_batcher"):
        if not vector.name.startswith("uc"):
            continue
        config = config_from_json(vector.config)
        inputs = [input_from_json(raw) for raw in vector.inputs]
        rows = [Record(x.id, x.key, x.event_time, x.at) for x in inputs
                if isinstance(x, Message)]
        assert [item for _, item, _ in drive(ALGORITHM, config, rows)] == inputs, vector.name
