"""The Spark worker's columnar path (issue 26): rows as columns from Arrow to the machine and
back, checked against the row path it replaces.

Each columnar piece is the form of a row-path piece and must agree with it: the machines'
``inputs_from_columns`` with ``inputs_from_records`` (DRV-R2), ``accounts`` with ``account``
(SP-R5, SP-R6), the driver's column checks with its row checks (DRV-R9, DRV-R1),
``SourceRun.feed_columns`` with ``SourceRun.feed`` (SP-R3 to SP-R8) and the Arrow rows with
``Rows.take``. No SparkSession here.
"""

from __future__ import annotations

import collections
import copy
from collections.abc import Iterator, Sequence
from typing import Any

import attrs
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.pairs_toy import PAIRS, PairsConfig
from tests.spark.expected import source_records
from tests.spark.machines import CASES, Case, make_fleet
from timealign import registry
from timealign.algorithm import (
    Accounting,
    Accounts,
    Columns,
    Record,
    Settled,
    accounts_of,
    records_of,
)
from timealign.drive import Driver, columns_pass
from timealign.errors import InvalidInput
from timealign.spark.generate import Plan
from timealign.spark.outcomes import DuplicateIdError, LossError, SourceRun
from timealign.spark.replay import columns_from_batches, replay, rows_batch, to_batch

AT = registry.get("approximate_time")
AT_CONFIG = AT.codec.config_from_json({"topics": ["camera", "lidar", "imu"], "queue_size": 3})
PAIRS_CONFIG = PairsConfig(window=5, timeout=10)


def columns_of(records: list[Record]) -> Columns:
    kinds = [r.kind for r in records]
    polls = [r.poll for r in records]
    return ([r.id for r in records], [r.topic for r in records], [r.stamp for r in records],
            [r.arrival for r in records], None if not any(k is not None for k in kinds)
            else kinds, None if not any(p is not None for p in polls) else polls)


def pieces(records: list[Record], size: int) -> Iterator[Columns]:
    for start in range(0, len(records), size):
        yield columns_of(records[start:start + size])


@pytest.fixture(scope="module")
def fleet_records(tmp_path_factory: pytest.TempPathFactory) -> list[Record]:
    folder = make_fleet(tmp_path_factory.mktemp("columns"), Plan(robots=1, seconds=20.0))
    (records,) = source_records(folder).values()
    return records


topics = st.sampled_from(["camera", "lidar", "imu", "radar"])
values = st.one_of(st.integers(-3, 2**63 + 3), st.booleans(), st.none(), st.text(max_size=2),
                   st.floats(allow_nan=False))


@given(st.lists(st.tuples(st.text(max_size=3), topics, st.integers(0, 99)), max_size=12))
def test_drv_r2_at_columns_map_as_the_records_do(rows: list[tuple[str, str, int]]) -> None:
    """DRV-R2, AT-D21: ApproximateTime's columnar mapping gives the messages its row mapping
    gives, or refuses the batch as it does (an unknown topic)."""
    columns: Columns = ([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
                        list(range(len(rows))), None, None)
    assert AT.feeding.inputs_from_columns is not None
    try:
        expected = list(AT.feeding.inputs_from_records(AT_CONFIG, records_of(columns)))
    except InvalidInput as error:
        with pytest.raises(InvalidInput) as caught:
            AT.feeding.inputs_from_columns(AT_CONFIG, columns)
        assert (caught.value.field, caught.value.rule) == (error.field, error.rule)
        return
    assert AT.feeding.inputs_from_columns(AT_CONFIG, columns) == expected


def test_sp_r5_r6_at_accounts_equal_account_output_for_output(
        fleet_records: list[Record]) -> None:
    """SP-R5, SP-R6: ApproximateTime's ``accounts`` gives, step by step, the accounts its
    ``account`` gives (settled ones as tuples), over the fleet with every kind of output."""
    assert AT.accounting.accounts is not None
    kinds: set[str] = set()
    for fast in (AT, AT.fast_path()):
        config = AT.codec.config_from_json({"topics": ["camera", "lidar", "imu"], "queue_size": 30,
                                      "max_interval_duration": 40_000_000,
                                      "inter_message_lower_bounds": [10**9, 0, 0]})
        for _, _, outputs in Driver(fast, config).feed(fleet_records):
            kinds.update(type(o).__name__ for o in outputs)
            assert AT.accounting.accounts(outputs) == accounts_of(AT.accounting.account, outputs)
        _, _, outputs = list(Driver(fast, config).finish())[-1]
    assert kinds >= {"Published", "Dropped", "Warned"}
    held = list(Driver(AT, AT_CONFIG).feed(fleet_records[:2]))
    assert not any(outputs for _, _, outputs in held)
    driver = Driver(AT, AT_CONFIG)
    list(driver.feed(fleet_records[:2]))
    (_, _, pending), = list(driver.finish())
    assert {type(o).__name__ for o in pending} == {"Pending"}
    assert AT.accounting.accounts(pending) == accounts_of(AT.accounting.account, pending)


@given(st.lists(st.tuples(values, values, values, values), max_size=6),
       st.none() | st.integers(0, 5), st.booleans())
def test_drv_r9_r1_column_checks_refuse_what_the_row_checks_refuse(
        rows: list[tuple[Any, Any, Any, Any]], previous: int | None, typed: bool) -> None:
    """DRV-R9, DRV-R1: a batch of columns passes the driver's column checks exactly when
    every row passes its row checks, and a failing batch raises the row path's error (the
    first bad row's field and rule) before the machine steps. ``typed`` (types vouched for)
    only applies to columns of exact str and int values."""
    columns: Columns = ([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
                        [r[3] for r in rows], None, None)
    exact = all(type(v) is str for v in [*columns[0], *columns[1]]) and all(
        type(v) is int and v < 2**63 for v in [*columns[2], *columns[3]])
    typed = typed and exact
    row_driver = Driver(AT, AT_CONFIG, arrival=previous)
    try:
        list(row_driver._in_order(records_of(columns)))
        error = None
    except InvalidInput as raised:
        error = raised
    assert columns_pass(columns, previous, typed) == (error is None)
    if error is not None:
        driver = Driver(AT, AT_CONFIG, arrival=previous)
        with pytest.raises(InvalidInput) as caught:
            list(driver.feed_columns(columns, typed))
        assert (caught.value.field, caught.value.rule) == (error.field, error.rule)
        assert driver.index == 0 and driver.state == AT.machine.initial(AT_CONFIG)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("size", [1, 7, 500])
def test_sp_r3_r8_feed_columns_equals_feed(case: Case, size: int,
                                           fleet_records: list[Record]) -> None:
    """SP-R3 to SP-R8, DRV-R7: a source fed as batches of columns (what the worker does)
    gives the rows a source fed row by row gives, `at` and `input` included, for every
    machine, on the rule text and the fast path, in batches of any size."""
    for algorithm in (case.algorithm, case.algorithm.fast_path()):
        rows = SourceRun(algorithm, case.config, "s")
        rows.feed_all(fleet_records)
        rows.finish()
        columnar = SourceRun(algorithm, case.config, "s")
        collections.deque(columnar.feed_columns(pieces(fleet_records, size), typed=True), 0)
        columnar.finish()
        assert columnar.take() == rows.take()
        assert columnar.driver.index == rows.driver.index


def test_sp_r6_feed_columns_chunks_and_arrow_rows(fleet_records: list[Record]) -> None:
    """SP-R6, SP-R4, SP-R5: the worker's chunks are the rows of one take, and the Arrow
    batch built column by column holds each table's rows of ``to_batch(take())``, in order
    (groups first; no table's order spans the two)."""
    fast = AT.fast_path()
    config = AT.codec.config_from_json({"topics": ["camera", "lidar", "imu"], "queue_size": 30})
    whole = SourceRun(fast, config, "s")
    collections.deque(whole.feed_columns(pieces(fleet_records, 300), typed=True), 0)
    whole.finish()
    kept = copy.deepcopy(whole.rows)
    expected = to_batch(whole.take())
    built = rows_batch("s", kept)
    assert built.schema == expected.schema and built.num_rows == expected.num_rows
    for name in ("groups", "outcomes"):
        assert built.filter(pc.equal(built["table"], name)).equals(
            expected.filter(pc.equal(expected["table"], name)))
    chunked = SourceRun(fast, config, "s")
    taken = []
    for _ in chunked.feed_columns(pieces(fleet_records, 300), 100, typed=True):
        assert len(chunked.rows) >= 100
        taken.append(chunked.take())
    chunked.finish()
    taken.append(chunked.take())
    assert {k: [v for t in taken for v in t[k]] for k in taken[0]} == to_batch_columns(expected)
    empty = rows_batch("s", chunked.rows)
    assert empty.num_rows == 0 and empty.schema == expected.schema


def to_batch_columns(batch: pa.RecordBatch) -> dict[str, list[Any]]:
    columns: dict[str, list[Any]] = batch.to_pydict()
    return columns


def outcome_of_rows(parts: list[list[Record]], columnar: bool) -> Any:
    run = SourceRun(PAIRS, PAIRS_CONFIG, "r")
    try:
        for part in parts:
            if columnar:
                collections.deque(run.feed_columns([columns_of(part)]), 0)
            else:
                run.feed_all(part)
        run.finish()
    except LossError as error:
        return type(error), str(error)
    return run.take()


@pytest.mark.parametrize(("rows", "fails"), [
    ([("a", "x", 0, 0), ("a", "x", 50, 1)], True),  # fed again while held
    ([("a", "x", 0, 0), ("b", "x", 50, 1), ("a", "x", 60, 2)], False),  # again once settled
    ([("a", "x", 0, 0), ("b", "y", 1, 1), ("a", "x", 60, 2), ("c", "x", 61, 3)], False),
])
def test_sp_r6_feed_columns_repeated_ids_as_the_row_path(
        rows: list[tuple[str, str, int, int]], fails: bool) -> None:
    """SP-R6, SP-R1: a batch that repeats an id (inside itself, or one still open) fails as
    the row path fails (DuplicateIdError at that row) or, when the row path accepts it (the
    id was settled before it came again: the batch job's census refuses that, SP-D20),
    gives the same rows."""
    records = [Record(*row) for row in rows]
    for split in range(len(records)):
        parts = [records[:split], records[split:]] if split else [records]
        assert outcome_of_rows(parts, True) == outcome_of_rows(parts, False)
    result = outcome_of_rows([records], False)
    assert (isinstance(result, tuple) and result[0] is DuplicateIdError) == fails


@attrs.frozen
class Ghost:
    """An account broken on purpose: one message settled under an id never fed."""

    def account(self, output: Any) -> Any:
        found = PAIRS.accounting.account(output)
        if isinstance(found, Settled):
            return Settled("ghost", found.outcome, found.reason)
        return found


@pytest.mark.parametrize("mode", ["ghost", "twice"])
def test_sp_r6_feed_columns_broken_accounting_fails_loudly(mode: str) -> None:
    """SP-R6: through the columnar path too, an id settled but never fed, or settled twice
    in one step, is a LossError."""
    if mode == "ghost":
        broken = attrs.evolve(PAIRS, accounting=Accounting(Ghost().account))
    else:
        def settled_twice(outputs: Sequence[Any]) -> Accounts:
            settled, grouped = accounts_of(PAIRS.accounting.account, outputs)
            return settled + settled, grouped

        broken = attrs.evolve(PAIRS, accounting=Accounting(
            PAIRS.accounting.account, accounts=settled_twice))
    rows = [Record("a", "x", 0, 0), Record("b", "x", 50, 1), Record("c", "x", 99, 2)]
    run = SourceRun(broken, PAIRS_CONFIG, "r")
    with pytest.raises(LossError, match="SP-R6"):
        collections.deque(run.feed_columns([columns_of(rows)]), 0)
        run.finish()


def test_sp_r1_worker_refuses_a_non_canonical_column_type() -> None:
    """SP-R1: the worker's columns are the canonical types (string ids and topics, int64
    times) that the driver's type checks rely on; any other type is refused by name."""
    good = {"id": ["a"], "topic": ["x"], "stamp": [1], "arrival": [2], "kind": [None],
            "poll": [None], "order_file": ["f"], "order_row": [0]}
    (columns,) = columns_from_batches("s", iter([pa.RecordBatch.from_pydict(good)]))
    assert columns == (["a"], ["x"], [1], [2], None, None)
    for field, column in (("stamp", pa.array([1.5])), ("id", pa.array([7])),
                          ("arrival", pa.array([2], pa.int32()))):
        bad = pa.RecordBatch.from_pydict({**good, field: column})
        with pytest.raises(InvalidInput) as caught:
            list(columns_from_batches("s", iter([bad])))
        assert (caught.value.field, caught.value.rule) == (field, "SP-R1")


def test_sp_r3_replay_of_arrow_batches_equals_the_row_path(fleet_records: list[Record]) -> None:
    """SP-R3, SP-R10: ``replay`` over Arrow batches (the worker) gives the tables of the row
    path, and leaves the cyclic garbage collector as it found it."""
    import gc

    fast = AT.fast_path()
    config = AT.codec.config_from_json({"topics": ["camera", "lidar", "imu"], "queue_size": 30})
    ids, topics_, stamps, arrivals, _, _ = columns_of(fleet_records)
    table = pa.table({"id": ids, "topic": topics_, "stamp": stamps, "arrival": arrivals,
                      "kind": pa.nulls(len(ids), pa.string()),
                      "poll": pa.nulls(len(ids), pa.int64()),
                      "order_file": ["f"] * len(ids), "order_row": list(range(len(ids)))})
    assert gc.isenabled()
    batches = list(replay(fast, config, "s",
                          columns_from_batches("s", iter(table.to_batches(max_chunksize=999)))))
    assert gc.isenabled()
    run = SourceRun(fast, config, "s")
    run.feed_all(fleet_records)
    run.finish()
    expected = to_batch(run.take())
    got = pa.Table.from_batches(batches)
    for name in ("groups", "outcomes"):
        assert got.filter(pc.equal(got["table"], name)).to_pylist() == \
            expected.filter(pc.equal(expected["table"], name)).to_pylist()
