"""The Spark adapter's pure parts: per-source accounting, state codec, order check, timers.

No SparkSession here: these run in milliseconds and pin the rules the jobs build on.
"""

from __future__ import annotations

import gc
import json
import weakref
from typing import Any

import attrs
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.pairs_toy import PAIRS, TIMED_PAIRS, Msg, PairsConfig, PairsState
from tests.spark.expected import source_records, table
from tests.spark.machines import CASES, Case, make_fleet
from timealign.algorithm import Accounting, Grouped, Record, Settled
from timealign.drive import Checkpoint, Driver
from timealign.errors import InvalidInput
from timealign.spark.checkpoint_codec import StateCodec
from timealign.spark.failures import OrderError
from timealign.spark.generate import Plan
from timealign.spark.outcomes import LossError, SourceRun
from timealign.spark.replay import records_from_batches

CONFIG = PairsConfig(window=5, timeout=10)


def rows(*spec: tuple[str, str, int, int]) -> list[Record]:
    return [Record(i, t, s, a) for i, t, s, a in spec]


def run_all(algorithm: Any, records: list[Record]) -> dict[str, list[Any]]:
    run = SourceRun(algorithm, CONFIG, "r1")
    run.feed_all(records)
    run.finish()
    return run.take()


def test_sp_r4_r5_r8_groups_and_outcomes_rows() -> None:
    """SP-R4, SP-R5, SP-R8: group seq per source, one outcome per row, `at` semantics."""
    out = run_all(PAIRS, rows(("a", "x", 0, 3), ("b", "y", 2, 4), ("c", "x", 50, 9),
                              ("d", "x", 60, 12)))
    groups = table(out, "groups")
    assert [(g["seq"], g["ids"], g["start"], g["end"], g["at"], g["input"]) for g in groups] == \
        [(0, ["a", "b"], 0, 2, 4, 1)]
    outcomes = {o["id"]: (o["outcome"], o["seq"], o["reason"], o["at"])
                for o in table(out, "outcomes")}
    assert outcomes == {
        "a": ("grouped", 0, None, 4), "b": ("grouped", 0, None, 4),
        "c": ("dropped", None, "TOY-replaced", 12), "d": ("pending", None, "TOY-end", None),
    }


def test_sp_r7_r8_end_of_source_fires_ticks_then_end() -> None:
    """SP-R7, SP-R8: remaining ticks (at = tick instant) and the end (at = null)."""
    out = table(run_all(TIMED_PAIRS, rows(("a", "x", 0, 3))), "outcomes")
    assert [(o["id"], o["outcome"], o["at"]) for o in out] == [("a", "dropped", 13)]


@attrs.frozen
class Twice:
    """An algorithm wrapper whose accounting is broken on purpose."""

    mode: str

    def account(self, output: Any) -> Any:
        output = PAIRS.accounting.account(output)
        if self.mode == "ghost" and isinstance(output, Settled):
            return Settled("ghost", output.outcome, output.reason)
        if self.mode == "silent" and isinstance(output, Settled) and output.outcome == "pending":
            return None
        return output


@pytest.mark.parametrize("mode", ["ghost", "silent"])
def test_sp_r6_broken_accounting_fails_loudly(mode: str) -> None:
    """SP-R6: an id settled but never fed, or left unsettled at the end, is a LossError."""
    broken = attrs.evolve(PAIRS, accounting=Accounting(Twice(mode).account))
    with pytest.raises(LossError, match="SP-R6"):
        run_all(broken, rows(("a", "x", 0, 0), ("b", "x", 50, 1)))


def test_sp_r6_duplicate_id_while_held_fails_loudly() -> None:
    """SP-R6 (and SP-R1's uniqueness): the same id fed while still held is refused."""
    with pytest.raises(LossError, match="unique"):
        run_all(PAIRS, rows(("a", "x", 0, 0), ("a", "x", 50, 1)))


@pytest.mark.parametrize("recent", [None, ()], ids=["batch", "stream"])
def test_sp_r6_a_finished_source_run_is_freed_without_the_collector(
        recent: tuple[str, ...] | None) -> None:
    """SP-R6's accounting keeps no reference cycle: a finished SourceRun (a batch run's,
    which pops ids, and a stream's, which remembers them) is freed by reference counting
    alone. ``replay`` pauses the cyclic collector on that promise; a bound method kept on
    the run once tied it, its machine and everything verify recorded through it into a
    cycle that only a collector pass walking all of them could free."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        run = SourceRun(PAIRS, CONFIG, "r1", recent=recent)
        run.feed_all(rows(("a", "x", 0, 3), ("b", "y", 2, 4), ("c", "x", 50, 9)))
        run.finish()
        assert table(run.take(), "groups")  # it settled ids through its accounting
        freed = weakref.ref(run)
        del run
        assert freed() is None
    finally:
        if enabled:
            gc.enable()


def batch(**columns: list[Any]) -> pa.RecordBatch:
    base: dict[str, list[Any]] = {"kind": [None] * len(columns["id"]),
                                  "poll": [None] * len(columns["id"])}
    return pa.RecordBatch.from_pydict({**base, **columns})


def test_sp_r10_order_check_fails_loudly() -> None:
    """SP-R10: rows out of (arrival, file, position) order stop the replay."""
    good = batch(id=["a", "b"], topic=["x", "y"], stamp=[1, 2], arrival=[5, 5],
                 order_file=["f1", "f1"], order_row=[0, 1])
    assert [r.id for r in records_from_batches("s", iter([good]))] == ["a", "b"]
    bad = batch(id=["c"], topic=["x"], stamp=[1], arrival=[5], order_file=["f0"],
                order_row=[9])
    with pytest.raises(OrderError, match="SP-R10"):
        list(records_from_batches("s", iter([good, bad])))


keys = st.tuples(st.integers(0, 3), st.sampled_from(["f0", "f1"]), st.integers(0, 3))


@given(st.lists(keys, max_size=12), st.lists(st.integers(1, 5), max_size=6))
def test_sp_r10_vectorized_order_check_matches_row_by_row(
        rows_keys: list[tuple[int, str, int]], cuts: list[int]) -> None:
    """SP-R10: the per-batch Arrow check stops at exactly the first row whose (arrival, file,
    position) is below its predecessor's, within a batch or across a batch boundary."""
    ids = [f"m{k}" for k in range(len(rows_keys))]
    first_bad = next((k for k in range(1, len(rows_keys)) if rows_keys[k] < rows_keys[k - 1]),
                     None)
    batches, start = [], 0
    for size in [*cuts, len(rows_keys)]:
        part = slice(start, min(start + size, len(rows_keys)))
        batches.append(batch(id=ids[part], topic=["x"] * len(ids[part]),
                             stamp=[0] * len(ids[part]),
                             arrival=[a for a, _, _ in rows_keys[part]],
                             order_file=[f for _, f, _ in rows_keys[part]],
                             order_row=[r for _, _, r in rows_keys[part]]))
        start = part.stop
    seen: list[str] = []
    if first_bad is None:
        seen.extend(r.id for r in records_from_batches("s", iter(batches)))
        assert seen == ids
    else:
        with pytest.raises(OrderError, match=f"row 'm{first_bad}' .*SP-R10"):
            seen.extend(r.id for r in records_from_batches("s", iter(batches)))
        assert len(seen) <= first_bad  # nothing at or after the broken row was replayed


def test_sp_r1_null_required_field_is_invalid_input() -> None:
    """SP-R1: a null stamp is rejected naming the field and the rule."""
    bad = batch(id=["a"], topic=["x"], stamp=[None], arrival=[1], order_file=["f"],
                order_row=[0])
    with pytest.raises(InvalidInput) as caught:
        list(records_from_batches("s", iter([bad])))
    assert (caught.value.field, caught.value.rule) == ("stamp", "SP-R1")


CODEC = StateCodec("timed_pairs", PairsState)

states = st.builds(
    PairsState,
    held=st.none() | st.builds(Msg, st.text(max_size=5), st.sampled_from(["x", "y"]),
                               st.integers(0, 2**62), st.integers(0, 2**62)),
    published=st.integers(0, 10**6),
)


@given(states, st.lists(st.integers(0, 2**62), unique=True).map(lambda t: tuple(sorted(t))),
       st.integers(0, 10**9), st.none() | st.integers(0, 2**62),
       st.lists(st.text(max_size=4), unique=True),
       st.lists(st.builds(Record, st.text(max_size=4), st.text(max_size=4),
                          st.integers(0, 2**62), st.integers(0, 2**62),
                          st.none() | st.text(max_size=4), st.none() | st.integers(0, 2**62)),
                max_size=3).map(tuple))
def test_sp_r12_codec_round_trip(state: PairsState, timers: tuple[int, ...], index: int,
                                 arrival: int | None, open_ids: list[str],
                                 held: tuple[Record, ...]) -> None:
    """SP-R12, DRV-R8: decode(encode(x)) == x for every driver checkpoint (held rows
    included) and bookkeeping; a blob without `held` holds no rows."""
    checkpoint = Checkpoint(state, timers, index, arrival, held)
    blob = CODEC.encode(checkpoint, 7, open_ids)
    assert CODEC.decode(blob) == (checkpoint, 7, open_ids, [])
    bare = CODEC.encode(attrs.evolve(checkpoint, held_rows=()), 7, open_ids)
    assert CODEC.decode(bare.replace(b',"held":[]', b""))[0].held_rows == ()


def test_sp_r12_codec_is_independent_of_import_paths_and_versioned() -> None:
    """SP-R12: no module path in the blob; other versions/algorithms/classes rejected."""
    blob = CODEC.encode(Checkpoint(PairsState(Msg("a", "x", 1, 2))), 0, ["a"])
    assert b"tests" not in blob and b"pairs_toy" not in blob and b'"c":"Msg"' in blob
    for old, new, field in ((b'"v":2', b'"v":9', "state.v"),
                            (b'"timed_pairs"', b'"pairs"', "state.algorithm"),
                            (b'"c":"Msg"', b'"c":"Gone"', "state")):
        with pytest.raises(InvalidInput) as caught:
            CODEC.decode(blob.replace(old, new))
        assert (caught.value.field, caught.value.rule) == (field, "SP-R12")
    for damaged, field in ((b"\x00garbage", "state"), (b"[1]", "state"),
                           (blob.replace(b'"timers":[]', b'"timers":5'), "state.timers"),
                           (blob.replace(b',"seq":0', b""), "state.seq")):
        with pytest.raises(InvalidInput, match="damaged state value") as caught:
            CODEC.decode(damaged)  # SP-R12: a damaged state store is bad input, named
        assert caught.value.field == field  # the damaged field itself (VEC-R12)
    with pytest.raises(InvalidInput, match="not reachable"):
        CODEC.encode(Checkpoint(PairsState(Grouped((), 0, 0))), 0, [])  # type: ignore[arg-type]


def test_sp_r11_resumed_source_run_continues_seq_and_open_ids() -> None:
    """SP-R11: a source resumed from its blob continues numbering and accounting."""
    first = SourceRun(PAIRS, CONFIG, "r")
    first.feed_all(rows(("a", "x", 0, 0), ("b", "y", 1, 1), ("c", "x", 9, 2)))
    blob = CODEC.encode(first.driver.checkpoint(), first.seq, list(first.open))
    checkpoint, seq, open_ids, _ = CODEC.decode(blob)
    second = SourceRun(PAIRS, CONFIG, "r", Driver.resume(PAIRS, CONFIG, checkpoint), seq,
                       open_ids)
    second.feed_all(rows(("d", "y", 10, 3)))
    second.finish()
    assert table(second.take(), "groups")[0]["seq"] == 1


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_sp_r12_codec_resumes_every_machine(case: Case, tmp_path_factory: Any) -> None:
    """SP-R12, SP-R11, DRV-R6, DRV-R8: every machine's checkpoint (rows held for a poll
    too) survives the codec every 500 rows, the fast path running as in the streaming job:
    the blob holds the spec's state (the rule text's, equal to the fast state converted),
    and resuming from the decoded blob gives the uninterrupted result."""
    folder = make_fleet(tmp_path_factory.mktemp("codec"), Plan(robots=1, seconds=12.0))
    (records,) = source_records(folder).values()
    codec = StateCodec.for_algorithm(case.algorithm, case.config)
    running = case.algorithm.fast_path()
    spec_type = type(case.algorithm.machine.initial(case.config))
    whole = SourceRun(running, case.config, "s")
    whole.feed_all(records)
    whole.finish()
    run = SourceRun(running, case.config, "s")
    pieces: list[dict[str, list[Any]]] = []
    for start in range(0, len(records), 500):
        run.feed_all(records[start:start + 500])
        pieces.append(run.take())
        blob = codec.encode(run.driver.checkpoint(), run.seq, list(run.open))
        stored = json.loads(blob)["state"]
        assert stored["c"] == spec_type.__name__  # the spec's state, not a private form
        checkpoint, seq, open_ids, _ = codec.decode(blob)
        spec = codec.to_spec(run.driver.checkpoint().state)
        assert type(spec) is spec_type and codec.to_spec(checkpoint.state) == spec
        assert (attrs.evolve(checkpoint, state=None), seq, open_ids) == (
            attrs.evolve(run.driver.checkpoint(), state=None), run.seq, list(run.open))
        driver = Driver.resume(running, case.config, checkpoint)
        run = SourceRun(running, case.config, "s", driver, seq, open_ids)
    run.finish()
    pieces.append(run.take())
    joined = {k: [v for p in pieces for v in p[k]] for k in pieces[0]}
    assert joined == whole.take()


@pytest.mark.parametrize("name", ["approximate_time", "rate_aware_batcher", "event_time_batcher"])
def test_sp_r12_version_rule(name: str) -> None:
    """SP-R12: version 2 stores the spec's state. A version-1 blob of an algorithm with a
    fast path (its private state) is refused with InvalidInput naming the version; one of an
    algorithm without a fast path (same form) still decodes; garbage is InvalidInput too."""
    case = next(c for c in CASES if c.name == name)
    codec = StateCodec.for_algorithm(case.algorithm, case.config)
    blob = codec.encode(Checkpoint(case.algorithm.fast_path().machine.initial(case.config)), 0, [])
    old = json.dumps({**json.loads(blob), "v": 1}).encode()
    if case.algorithm.machine.fast is None:
        assert codec.decode(old) == codec.decode(blob)
    else:
        with pytest.raises(InvalidInput) as caught:
            codec.decode(old)
        assert (caught.value.field, caught.value.rule) == ("state.v", "SP-R12")
        assert "fresh checkpoint" in str(caught.value)
    for garbage in (b"\xff", b"[1]", json.dumps({**json.loads(blob), "v": 3}).encode()):
        with pytest.raises(InvalidInput) as caught:
            codec.decode(garbage)
        assert caught.value.rule == "SP-R12"
