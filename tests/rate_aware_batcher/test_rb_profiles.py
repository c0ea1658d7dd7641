"""The two behaviour profiles side by side (RB-R17 to RB-R27, RB-D16 to RB-D19, RB-I8,
RB-I9): the ``*_card``/``*_head`` vector pairs against what the spec says of them, the
clock input, the signed 64-bit time domain and the head's config rules.

Every case of the suite, in both profiles, is also replayed through the literal mutable
model (``literal_model``), written from the upstream text independently of the reference.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cases.rate_aware_batcher import CASES, T0
from tests.rate_aware_batcher.literal_model import anchor_of
from tests.rate_aware_batcher.support import literal_model, literal_step
from timealign import InvalidInput, Record, vectors
from timealign.rate_aware_batcher import (
    ALGORITHM,
    Batch,
    Config,
    End,
    Input,
    Poll,
    Polled,
    SetBatchLength,
    invariants,
)
from timealign.rate_aware_batcher.grid import plausible_anchor

S = 10**9
BY_NAME = {case.name: case for case in CASES}
HEAD = "esslivedata-head"


def batches(name: str) -> list[tuple[int, float, float, list[str]]]:
    """(input index, start s, end s, ids) relative to T0."""
    return [(o["input"], (o["start"] - T0) / S, (o["end"] - T0) / S, o["ids"])
            for o in vectors.reference_outputs(BY_NAME[name]) if o["kind"] == "batch"]


def pending(name: str) -> list[str]:
    return [o["id"] for o in vectors.reference_outputs(BY_NAME[name]) if o["kind"] == "pending"]


def errors(name: str) -> list[tuple[int | None, str, str]]:
    return [(o["input"], o["field"], o["rule"]) for o in vectors.reference_outputs(BY_NAME[name])
            if o["kind"] == "error"]


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_every_case_matches_the_literal_model(name: str) -> None:
    """RB-R17: both profiles of every case agree with the independent literal model."""
    case = BY_NAME[name]
    try:
        config = ALGORITHM.codec.config_from_json(case.config)
    except InvalidInput:
        assert [o["input"] for o in vectors.reference_outputs(case)] == [None]
        return
    state, model = ALGORITHM.machine.initial(config), literal_model(config)
    for raw in case.inputs:
        try:
            item = ALGORITHM.codec.input_from_json(raw)
            state, produced = ALGORITHM.machine.step(config, state, item)
        except InvalidInput:
            continue
        assert list(produced) == literal_step(model, item)


def test_pairs_run_one_trace_in_both_profiles_rb_r17_rb_d16() -> None:
    """RB-R17, RB-D16: each ``*_card``/``*_head`` pair has the same inputs and config but
    the profile; the default profile is the card and is not written back."""
    pairs = [n[: -len("_card")] for n in BY_NAME if n.endswith("_card")]
    assert len(pairs) >= 12
    for stem in pairs:
        card, head = BY_NAME[f"{stem}_card"], BY_NAME[f"{stem}_head"]
        assert card.inputs == head.inputs
        assert {**card.config, "profile": HEAD} == head.config
    assert Config().profile == "card" and not Config().head
    assert ALGORITHM.codec.config_to_json(Config()) == {"batch_length_s": 1.0, "timeout_s": None}
    endless = Config(profile=HEAD, timeout_s=math.inf)
    assert ALGORITHM.codec.config_to_json(endless)["timeout_s"] == "inf"
    assert ALGORITHM.codec.config_from_json(ALGORITHM.codec.config_to_json(endless)) == endless
    with pytest.raises(InvalidInput) as error:
        Config(profile="latest")
    assert (error.value.field, error.value.rule) == ("profile", "RB-R17")


def test_first_call_outlier_rb_r20_rb_r21_rb_r26_rb_i8() -> None:
    """RB-R20, RB-R21, RB-R26: card wedges for ever (RB-H1); head, whose two-stamp first
    poll ties and so anchors at the outlier, is re-placed by the backstop 10 s of clock
    after the bootstrap and then closes normally."""
    card, head = batches("first_call_outlier_card"), batches("first_call_outlier_head")
    assert len(card) == 1 and len(pending("first_call_outlier_card")) == 210
    assert head[0][2] == card[0][2] == 365 * 24 * 3600  # the tie goes to the later cluster
    recovered = head[1]
    assert recovered[0] >= 100  # not before 10 s of clock (100 polls of 100 ms)
    assert recovered[1:3] == pytest.approx((10.0, 11.0), abs=1e-6)  # pulse 140, re-placed
    assert len(recovered[3]) > 100  # one large batch
    assert [len(b[3]) for b in head[2:]] == [13, 14, 14, 14]
    assert pending("first_call_outlier_head") == ["det210"]
    case = BY_NAME["first_call_outlier_head"]  # RB-I8: the HWM fell, at a due backstop
    config = ALGORITHM.codec.config_from_json(case.config)
    inputs = [ALGORITHM.codec.input_from_json(raw) for raw in case.inputs]
    observed, state = [], ALGORITHM.machine.initial(config)
    for item in inputs:
        state, _ = ALGORITHM.machine.step(config, state, item)
        observed.append((state.hwm, state.last_close))
    assert invariants.hwm_monotone([h for h, _ in observed]) != []  # RB-I4 is card-only
    assert invariants.hwm_falls_only_at_backstop(config, inputs, observed) == []
    doctored = [(h, None) for h, _ in observed]  # a fall without a due backstop is caught
    assert invariants.hwm_falls_only_at_backstop(config, inputs, doctored) != []


def test_minority_outlier_never_wedges_head_rb_r20_rb_r21() -> None:
    """RB-R20, RB-R21: a first poll of 8 pulses and one stray a year ahead: head anchors on
    the newest pulse (the batch ends below its newest stamp), grids at bootstrap and closes
    from the next second on, with no clock at all."""
    assert len(batches("first_call_outlier_minority_card")) == 1
    head = batches("first_call_outlier_minority_head")
    assert head[0][1] == 0.0 and head[0][2] == pytest.approx(6 / 14) and "outlier" in head[0][3]
    assert [len(b[3]) for b in head[1:]] == [13, 14, 14]


def test_far_ahead_gridded_pulse_recovers_at_head_rb_r26() -> None:
    """RB-R26: card never closes after the 240 s gap jump (RB-H2); head re-places the
    window 10 s of clock after its last close, and closes resume with one large batch
    holding the buffered data and the stray."""
    card, head = batches("far_ahead_gridded_card"), batches("far_ahead_gridded_head")
    assert card == head[:4] and len(card) == 4
    large = head[4]
    assert large[0] >= 130 and "ahead" in large[3] and len(large[3]) > 140
    assert [len(b[3]) for b in head[5:]] == [14] * 4


def test_timeout_validation_rb_r19() -> None:
    """RB-R19: head refuses a factor the clamp cannot reach (or not positive) and takes
    +inf as "no timeout", which the card refuses (RB-D2)."""
    assert errors("timeout_factor_above_3_head") == [(None, "timeout_factor", "RB-R19")]
    assert len(pending("timeout_factor_above_3_card")) == 7
    assert errors("infinite_timeout_card") == [(None, "timeout_s", "RB-D2")]
    assert [len(b[3]) for b in batches("infinite_timeout_head")] == [8, 13, 14, 14]
    for bad in (3.0001, 0.0, -1.0, -math.inf, math.nan):
        with pytest.raises(InvalidInput) as error:
            Config(profile=HEAD, timeout_factor=bad)
        assert error.value.rule == "RB-R19"
    assert Config(profile=HEAD, timeout_factor=3.0).factor == 3.0
    assert Config(profile=HEAD, timeout_s=math.inf).factor == math.inf
    assert Config(timeout_factor=3.5).factor == 3.5  # the card keeps it (RB-H3)


def test_infinite_timeout_without_a_bootstrap_grid_wedges_head_rb_r26() -> None:
    """RB-R26 finding: with the timeout off and no grid at bootstrap nothing can close; the
    backstop only re-places the window over the buffered pulses."""
    assert len(batches("infinite_timeout_never_gridded_head")) == 1
    assert len(pending("infinite_timeout_never_gridded_head")) == 349


def test_quiet_window_only_rearms_rb_r26() -> None:
    """RB-R26: 30 s of clock after traffic stops: the anchor lies inside the window, the
    backstop re-arms and delivers nothing (RB-H5 holds at head too)."""
    assert batches("no_wall_clock_head") == batches("no_wall_clock_card")
    assert pending("no_wall_clock_head") == pending("no_wall_clock_card") != []


def test_close_without_gating_stream_rb_r25() -> None:
    """RB-R25: log-only traffic in 2.5 s polls: the card trails one L per poll; head ends
    each batch at the plausible anchor of what it holds and delivers everything."""
    card = batches("non_gated_backlog_card")
    assert all(b[2] - b[1] == 1.0 for b in card[1:]) and pending("non_gated_backlog_card")
    head = batches("non_gated_backlog_head")
    assert [(b[1], b[2]) for b in head[1:]] == [(0.0, 2.5), (2.5, 5.0), (5.0, 7.5), (7.5, 9.75)]
    assert pending("non_gated_backlog_head") == []


def test_disjoint_epoch_routing_rb_r22() -> None:
    """RB-R22: a gridded pulse 2000 s ahead (more than 1000 L): the card keeps it in
    overflow and races a batch per poll; head delivers it with the active batch."""
    card, head = batches("disjoint_epoch_routing_card"), batches("disjoint_epoch_routing_head")
    assert len(card) > 40 and all(len(b[3]) <= 2 for b in card[4:])
    assert "epoch" in head[3][3] and len(head) == 7


def test_overflow_bump_limit_rb_r23() -> None:
    """RB-R23: a gridded pulse 240 s ahead: the card's bump closes a batch per poll, head's
    does not (beyond 4 windows of slots); the pulse waits in overflow."""
    card, head = batches("overflow_bump_limit_card"), batches("overflow_bump_limit_head")
    assert len(card) > 40
    assert [(b[1], b[2]) for b in head[3:]] == [(2.0, 3.0), (3.0, 4.0), (4.0, 5.0), (5.0, 6.0)]
    assert "ahead" in pending("overflow_bump_limit_head")


def test_head_stream_kinds_rb_r27() -> None:
    """RB-R27: ``device`` and ``livedata_nicos_data`` ride along at head, are refused
    (RB-D3) by the card."""
    assert errors("head_stream_kinds_card") == [(21, "messages[0].kind", "RB-D3"),
                                                (22, "messages[0].kind", "RB-D3")]
    assert errors("head_stream_kinds_head") == []
    ids = [i for b in batches("head_stream_kinds_head") for i in b[3]]
    assert {"motor", "nicos"} <= set(ids)


def test_clock_readings_rb_r18_rb_d17() -> None:
    """RB-R18, RB-D17: no reading keeps the clock, an equal one is fine, a lower or
    non-integer one is refused and the state is unchanged."""
    for name in ("clock_readings_card", "clock_readings_head"):
        assert errors(name) == [(3, "now", "RB-R18"), (4, "now", "RB-R18")]
    config = Config(profile=HEAD)
    state = ALGORITHM.machine.initial(config)
    state, _ = ALGORITHM.machine.step(config, state, Poll((Polled("log", "l", 0, "a"),), now=7))
    assert (state.clock, state.last_close) == (7, 7)
    state, _ = ALGORITHM.machine.step(config, state, Poll((), None))
    assert state.clock == 7  # frozen
    with pytest.raises(InvalidInput) as error:
        ALGORITHM.machine.step(config, state, Poll((), now=6))
    assert (error.value.field, error.value.rule) == ("now", "RB-R18")
    for bad in (1.5, True, "7", 2**63, -(2**63) - 1):
        with pytest.raises(InvalidInput) as error:
            Poll((), now=bad)
        assert error.value.rule == "RB-R18"


def test_first_reading_arms_the_backstop_rb_d17() -> None:
    """RB-D17: a bootstrap without a reading is armed at the first reading, so the
    backstop needs 10 L of clock after it, not after an unknown earlier instant."""
    config = Config(profile=HEAD)
    state = ALGORITHM.machine.initial(config)
    year = 365 * 24 * 3600 * S
    state, _ = ALGORITHM.machine.step(config, state, Poll((Polled("log", "l", T0 + year, "x"),)))
    assert state.last_close is None
    late = Poll((Polled("log", "l", T0, "a"),), now=100 * S)
    state, out = ALGORITHM.machine.step(config, state, late)
    assert (out, state.last_close) == ((), 100 * S)
    state, out = ALGORITHM.machine.step(config, state, Poll((), now=110 * S - 1))
    assert out == () and state.window == T0 + year
    state, out = ALGORITHM.machine.step(config, state, Poll((), now=110 * S))
    assert state.window == T0 and state.hwm == T0 and state.last_close == 110 * S


def test_spark_clock_is_the_last_rows_arrival_rb_d19() -> None:
    """RB-D19: ``inputs_from_records`` stamps each poll with its last row's arrival."""
    rows = [Record("a", "det", 10, arrival=100, kind="detector_events", poll=1),
            Record("b", "det", 20, arrival=105, kind="detector_events", poll=1),
            Record("c", "log", 30, arrival=111, kind="log", poll=None)]
    polls = list(ALGORITHM.feeding.inputs_from_records(Config(profile=HEAD), rows))
    assert [(len(p.messages), p.now) for p in polls] == [(2, 105), (1, 111)]
    # the recorded form of a clocked trace replays the same (no empty polls were in it)
    assert batches("first_call_outlier_from_rows_head") == batches("first_call_outlier_head")


def test_negative_and_extreme_time_rb_d18_rb_d3() -> None:
    """RB-D18, RB-D3: the happy path before the epoch, the int64 extremes accepted and
    2^63 refused, in both profiles."""
    for profile in ("card", "head"):
        got = batches(f"negative_time_{profile}")
        assert [len(b[3]) for b in got] == [1, 14, 13, 14, 14]
        assert all(b[1] < -3e9 for b in got)
        assert errors(f"extreme_time_{profile}") == [(32, "messages[0].timestamp", "RB-D3")]
        assert set(batches(f"extreme_time_{profile}")[-1][3]) == {"lowest", "highest"}


# ---- the signed time domain: every rule works on differences --------------------------

@st.composite
def traces(draw: st.DrawFn) -> list[Input]:
    """Pulses and logs on a nanosecond scale (L = 1000 ns) with a clock: regular pulses,
    late and far-ahead stamps, silences, length changes, readings missing or advancing."""
    stamp, now, serial = 10**6, 0, 0
    inputs: list[Input] = []
    for _ in range(draw(st.integers(1, 30))):
        if draw(st.integers(0, 12)) == 0:
            inputs.append(SetBatchLength(draw(st.sampled_from([1e-6, 2e-6]))))
            continue
        messages = []
        for _ in range(draw(st.integers(0, 3))):
            serial += 1
            stamp += draw(st.sampled_from([0, 250, 250, 250, 260, 900, 3_000]))
            offset = draw(st.sampled_from([0, 0, 0, -700, 5_000, 2_000_000]))
            kind = draw(st.sampled_from(["detector_events", "detector_events", "log"]))
            messages.append(Polled(kind, kind[:3], stamp + offset, f"m{serial}"))
        now += draw(st.sampled_from([0, 100, 5_000, 20_000]))
        inputs.append(Poll(tuple(messages), now=draw(st.sampled_from([now, None]))))
    return [*inputs, End()]


def _shift(inputs: list[Input], by: int) -> list[Input]:
    return [Poll(tuple(Polled(m.kind, m.name, m.timestamp + by, m.id) for m in i.messages),
                 i.now) if isinstance(i, Poll) else i for i in inputs]


def _run(config: Config, inputs: list[Input]) -> list[Any]:
    state, out = ALGORITHM.machine.initial(config), []
    for k, item in enumerate(inputs):
        state, produced = ALGORITHM.machine.step(config, state, item)
        out += [(k, o) for o in produced]
    return out


@given(traces(), st.sampled_from(["card", HEAD]), st.sampled_from([2**62, -(2**62)]))
def test_time_shift_invariance_at_the_extremes_rb_d18(inputs: list[Input], profile: str,
                                                      by: int) -> None:
    """RB-D18: shifting every timestamp of a trace to around +-2^62 shifts every batch
    window by the same amount and changes nothing else, in both profiles."""
    config = Config(batch_length_s=1e-6, profile=profile)
    plain, moved = _run(config, inputs), _run(config, _shift(inputs, by))
    assert [(k, Batch(b.start + by, b.end + by, b.ids)) if isinstance(b, Batch) else (k, b)
            for k, b in plain] == moved
    assert invariants.check(config, inputs, plain) == []


@given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=12)
       | st.lists(st.integers(-10, 10), min_size=1, max_size=12),
       st.integers(1, 5))
def test_plausible_anchor_rb_r20(stamps: list[int], length: int) -> None:
    """RB-R20: the anchor equals a literal clustering of the sorted stamps (biggest cluster,
    ties to the later, its newest stamp) over the whole signed range."""
    assert plausible_anchor(stamps, length) == anchor_of(stamps, length)
    assert plausible_anchor([5, 5 + 3 * length, 100], length) == 5 + 3 * length
    assert plausible_anchor([5, 6 + 3 * length], length) == 6 + 3 * length  # tie: later


def test_windows_invariant_at_head_rb_i9() -> None:
    """RB-I9: a re-placed window needs 10 L of clock between the two batches' polls."""
    config = Config(batch_length_s=1e-6, profile=HEAD)
    polls: list[Input] = [Poll((), now=0), Poll((), now=5_000), Poll((), now=15_000)]
    ok = [(0, Batch(0, 1000, ())), (1, Batch(1000, 2000, ())), (2, Batch(500, 1500, ()))]
    assert invariants.windows_ordered_head(config, polls, ok) == []
    early = [(0, Batch(0, 1000, ())), (1, Batch(500, 1500, ()))]
    assert invariants.windows_ordered_head(config, polls, early) != []
    short = [(0, Batch(0, 1000, ())), (1, Batch(1000, 1500, ()))]
    assert invariants.windows_ordered_head(config, polls, short) != []
    assert invariants.windows_ordered(config, polls, ok) != []  # RB-I3 would refuse it


def test_a_close_arms_the_backstop_rb_r24() -> None:
    """RB-R24: at head every close sets ``last_close`` to the clock; the card's closes
    leave it where the first reading put it (no backstop there)."""
    for profile, armed in (("card", 0), (HEAD, 5_000)):
        config = Config(batch_length_s=1e-6, profile=profile)
        state = ALGORITHM.machine.initial(config)
        state, _ = ALGORITHM.machine.step(config, state, Poll((Polled("log", "l", 0, "a"),), now=0))
        state, out = ALGORITHM.machine.step(config, state, Poll((Polled("log", "l", 1_200, "b"),),
                                                        now=5_000))
        assert [type(o) for o in out] == [Batch] and state.last_close == armed
