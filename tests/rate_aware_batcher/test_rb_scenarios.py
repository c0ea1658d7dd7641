"""The card's scenarios, the note's rules and the hazards, checked on the suite's cases.

Each test replays one case of ``cases/rate_aware_batcher.py`` through the
reference and asserts what the spec section says about it (batch sizes, windows, which
poll closes), so the vectors and the spec text are pinned by real assertions.
"""

from __future__ import annotations

from typing import Any

import pytest

from cases.rate_aware_batcher import CASES, T0
from timealign import vectors
from timealign.errors import InvalidInput
from timealign.rate_aware_batcher import ALGORITHM, initial, invariants, step
from timealign.rate_aware_batcher.codec import config_from_json, input_from_json

S = 10**9
BY_NAME = {case.name: case for case in CASES}


def outputs(name: str) -> list[dict[str, Any]]:
    return vectors.reference_outputs(BY_NAME[name])


def batches(name: str) -> list[tuple[int, float, float, list[str]]]:
    """(input index, start s, end s, ids) relative to T0."""
    return [(o["input"], (o["start"] - T0) / S, (o["end"] - T0) / S, o["ids"])
            for o in outputs(name) if o["kind"] == "batch"]


def pending(name: str) -> list[str]:
    return [o["id"] for o in outputs(name) if o["kind"] == "pending"]


def sizes(name: str) -> list[int]:
    return [len(b[3]) for b in batches(name)]


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_every_case_satisfies_the_run_invariants(name: str) -> None:
    """RB-I1, RB-I2, RB-I3, RB-I5, RB-I7 on every shipped case (refused inputs skipped);
    a refused config (RB-D1, RB-D2) gives exactly its one error output."""
    case = BY_NAME[name]
    produced = outputs(name)
    try:
        config = config_from_json(case.config)
    except InvalidInput as error:
        assert produced == [{"input": None, "kind": "error", "field": error.field,
                             "rule": error.rule}]
        assert error.rule in ("RB-D1", "RB-D2", "RB-R19")
        return
    errors = {o["input"] for o in produced if o["kind"] == "error"}
    kept = [k for k in range(len(case.inputs)) if k not in errors]
    inputs = [input_from_json(case.inputs[k]) for k in kept]
    renumber = {k: n for n, k in enumerate(kept)}
    assert ALGORITHM.codec.output_from_json is not None
    decoded = [(renumber[o["input"]], ALGORITHM.codec.output_from_json(o, inputs))
               for o in produced if o["kind"] != "error"]
    assert invariants.check(config, inputs, decoded) == []


def test_happy_path_rb_r8_rb_r10_rb_d14() -> None:
    """RB-R8, RB-R10, RB-D14."""
    got = batches("happy_path_14hz")
    assert got[0][1:3] == (0.0, 0.0) and got[0][3] == ["det0"]  # bootstrap [min, max]
    assert sizes("happy_path_14hz") == [1, 14, 13, 14, 14, 14]
    assert [b[0] for b in got] == [0, 13, 20, 30, 40, 50]  # first close by timeout at 1.2 s
    assert [(b[1], b[2]) for b in got[1:]] == [(k, k + 1) for k in range(5)]


def test_missing_pulse_still_closes_rb_d8() -> None:
    """RB-D8."""
    assert sizes("missing_pulse") == [1, 14, 12, 13, 14]
    assert [b[0] for b in batches("missing_pulse")][2:] == [20, 30, 40]


def test_split_messages_no_premature_close_rb_r2() -> None:
    """RB-R2."""
    assert sizes("split_messages") == [1, 14, 15, 15, 14]
    assert [b[0] for b in batches("split_messages")] == [0, 13, 20, 30, 40]


def test_overflow_is_rerouted_into_the_next_batch_rb_r11() -> None:
    """RB-R11."""
    got = batches("overflow_future_pulse")
    early = next(b for b in got if "early" in b[3])
    assert (early[1], early[2]) == (3.0, 4.0) and early[3][0] == "early"
    assert len(got[3][3]) == 6  # the bump closed [2, 3] early


def test_multi_stream_waits_for_both_rb_r10() -> None:
    """RB-R10."""
    assert sizes("multi_stream") == [1, 19, 18, 19, 19]


def test_phase_offset_rb_r5() -> None:
    """RB-R5."""
    got = batches("phase_offset")
    assert sizes("phase_offset")[2:] == [13, 14, 14]
    assert got[1][1] == pytest.approx(0.04)


def test_gap_recovery_jumps_without_placeholders_rb_r13() -> None:
    """RB-R13."""
    got = batches("gap_recovery")
    assert [(b[1], b[2]) for b in got[3:5]] == [(2.0, 3.0), (8.0, 9.0)]
    assert all(b[3] for b in got)


def test_gap_recovery_on_the_boundary_grid_rb_d11() -> None:
    """RB-D11."""
    got = batches("gap_recovery_boundary_empty_batch")
    assert (got[4][1], got[4][2], got[4][3]) == (7.0, 8.0, [])
    assert got[5][3][0] == "det112"


def test_gap_recovery_veto_rb_d11() -> None:
    """RB-D11."""
    got = batches("gap_recovery_veto")
    assert got[4][3] == ["late"] and (got[4][1], got[4][2]) == (3.0, 4.0)
    assert (got[5][1], got[5][3][0]) == (8.0, "resume")


def test_timeout_is_inclusive_rb_r10() -> None:
    """RB-R10."""
    got = batches("timeout_fallback")
    case = BY_NAME["timeout_fallback"]
    at = next(k for k, i in enumerate(case.inputs)
              if i.get("messages") and i["messages"][0]["id"] == "log-at")
    assert got[-1][0] == at and (got[-1][1], got[-1][2]) == (3.0, 4.0)
    assert pending("timeout_fallback") == ["log-before", "log-at"]  # held ahead (future)


def test_non_gated_ride_along_rb_r12() -> None:
    """RB-R12."""
    got = batches("non_gated_ride_along")
    for _, _start, end, ids in got[1:]:
        logs = [i for i in ids if i.startswith("log")]
        assert ids[: len(logs)] == logs  # drained first
        assert all(T0 + int(i[3:]) * 330 * 10**6 <= T0 + end * S for i in logs)
    assert sizes("non_gated_ride_along")[1:] == [17, 16, 17, 16]


def test_sub_hz_monitor_never_gates_rb_r3() -> None:
    """RB-R3."""
    got = batches("sub_hz_stream")
    assert [len([i for i in b[3] if i.startswith("mon")]) for b in got[1:]] == [1, 0] * 6
    assert [b[0] for b in got[1:]] == [13, *range(20, 130, 10)]
    assert all(len([i for i in b[3] if i.startswith("det")]) in (13, 14) for b in got[1:])


def test_future_message_held_for_the_next_window_rb_r12() -> None:
    """RB-R12."""
    got = batches("future_ungridded_held")
    assert got[4][3][0] == "ahead" and (got[4][1], got[4][2]) == (3.0, 4.0)


def test_fall_through_beyond_three_lengths_rb_d12() -> None:
    """RB-D12."""
    got = batches("future_beyond_cap_falls_through")
    assert got[3][3] == ["far", "far-mon"] and (got[3][1], got[3][2]) == (2.0, 3.0)


def test_broken_epoch_stream_never_gates_rb_r7() -> None:
    """RB-R7."""
    got = batches("broken_stream_epoch")
    assert [b[0] for b in got] == [0, 13, 20, 30, 40]
    assert all(any(i.startswith("mon") for i in b[3]) for b in got[1:])


def test_hwm_outlier_self_heals_rb_r9_rb_d10_rb_i7() -> None:
    """RB-R9, RB-D10, RB-I7."""
    got = batches("hwm_outlier_clamp")
    assert [(b[0], b[1], len(b[3])) for b in got[3:6]] == [
        (30, 2.0, 14), (31, 3.0, 1), (32, 4.0, 0)]
    assert got[4][3] == ["outlier"]
    assert got[6][0] == 66  # five empty polls close nothing more


def test_stream_lifecycle_evicts_and_rejoins_rb_r14_rb_d9() -> None:
    """RB-R14, RB-D9."""
    got = batches("stream_lifecycle")
    mons = [len([i for i in b[3] if i.startswith("mon")]) for b in got[1:]]
    assert mons[:4] == [0, 5, 5, 5] and mons[-3:] == [5, 5, 5]
    # while the silent monitor still gates, windows close by timeout (1.2 s after start)
    # while the silent monitor still gates, windows close by timeout (HWM >= start + 1.2 s,
    # seen by the poll at +1.3 s); after 5 absent closes it is evicted and the slot gate
    # of the detector alone closes [9, 10]
    assert [b[0] for b in got if 5.0 <= b[1] < 10.0] == [63, 73, 83, 93, 101]


def test_batch_length_change_rb_r15() -> None:
    """RB-R15."""
    got = batches("batch_length_change")
    assert [(b[1], b[2]) for b in got[1:]] == [(0, 1), (1, 2), (2, 3), (3, 5), (5, 7)]
    assert [len(b[3]) for b in got[4:]] == [28, 28]


def test_jitter_tolerance_rb_r6() -> None:
    """RB-R6."""
    assert sizes("jitter_tolerance")[2:4] == [12, 15]  # one pulse short, then caught up
    assert all(13 <= n <= 15 for n in sizes("jitter_tolerance")[3:])


def test_half_even_slots_rb_r4() -> None:
    """RB-R4."""
    assert sizes("slots_half_even_0p75s")[1:] == [10, 10, 10, 11, 10]


def test_timeout_from_seconds_and_factor_rb_r1_rb_d2() -> None:
    """RB-R1, RB-D2."""
    assert [b[0] for b in batches("timeout_s_config")] == [0, 10, 20, 30]
    assert [b[0] for b in batches("timeout_factor_config")] == [0, 20, 30]


def test_stale_grid_is_kept_rb_d7_rb_h7() -> None:
    """RB-D7, RB-H7."""
    got = batches("stale_grid_kept")
    assert [len(b[3]) for b in got[-7:]] == [1] * 7  # timeout closes, one pulse each


def test_one_slot_stray_closes_an_empty_batch_rb_d8() -> None:
    """RB-D8."""
    got = batches("spb_one_stray_empty_batch")
    empty = next(b for b in got if not b[3])
    after = got[got.index(empty) + 1]
    assert (empty[1], after[3], after[0] - empty[0]) == (8.0, ["stray"], 1)


def test_end_reports_pending_in_order_rb_r16_rb_d15() -> None:
    """RB-R16, RB-D15."""
    out = outputs("end_reports_pending")
    assert pending("end_reports_pending") == ["ahead", "overflowing"]
    assert out[-1] == {"input": 27, "kind": "error", "field": "op", "rule": "RB-R16"}


def test_no_output_before_data_and_length_waits_rb_d6() -> None:
    """RB-D6."""
    got = batches("empty_polls_and_length_before_start")
    assert got[0][0] == 3 and [b[2] - b[1] for b in got[1:]] == [1.0, 0.5, 0.5, 0.5, 0.5]


def test_backlog_needs_one_poll_per_batch_rb_d6_rb_h8() -> None:
    """RB-D6, RB-H8."""
    got = batches("backlog_one_batch_per_poll")
    assert [b[0] for b in got] == [0, 13, 20, 21, 22, 23, 24]


def test_rejections_rb_d1_rb_d2_rb_d3_rb_d4() -> None:
    """RB-D1, RB-D2, RB-D3, RB-D4."""
    assert outputs("rejected_config_zero_length")[0]["rule"] == "RB-D1"
    assert outputs("rejected_infinite_timeout")[0]["rule"] == "RB-D2"
    assert outputs("rejected_both_timeouts")[0]["rule"] == "RB-D2"
    bad = [o for o in outputs("rejected_bad_messages") if o["kind"] == "error"]
    assert [o["field"] for o in bad] == ["messages[0].kind", "messages[0].timestamp",
                                         "messages[0].timestamp", "messages[0].id",
                                         "messages[0].timestamp"]
    reused = [o for o in outputs("rejected_reused_id") if o["kind"] == "error"]
    assert [(o["field"], o["rule"]) for o in reused] == [("messages[0].id", "RB-D4"),
                                                        ("messages[1].id", "RB-D4")]
    zero = [o for o in outputs("rejected_set_batch_length_zero") if o["kind"] == "error"]
    assert [o["rule"] for o in zero] == ["RB-D1", "RB-D1"]


def test_hazard_outlier_in_first_call_wedges_rb_h1() -> None:
    """RB-H1."""
    assert len(batches("hazard_outlier_in_first_call")) == 1
    assert len(pending("hazard_outlier_in_first_call")) == 42


def test_hazard_far_ahead_gridded_stalls_rb_h2() -> None:
    """RB-H2."""
    got = batches("hazard_far_ahead_gridded")
    case = BY_NAME["hazard_far_ahead_gridded"]
    outlier = next(k for k, i in enumerate(case.inputs)
                   if i.get("messages") and i["messages"][0]["id"] == "ahead")
    assert all(b[0] < outlier for b in got)
    assert "ahead" in pending("hazard_far_ahead_gridded")


def test_hazard_timeout_factor_above_three_rb_h3() -> None:
    """RB-H3: no close without a grid; and a gated stream only gets a grid at a close or at
    bootstrap, so a clean 14 Hz detector never closes a window unless the bootstrap poll
    already held 4 diffs (explorer finding)."""
    assert len(batches("hazard_timeout_factor_above_3")) == 1
    assert len(batches("hazard_timeout_factor_above_3_gated")) == 1
    assert len(pending("hazard_timeout_factor_above_3_gated")) == 55
    assert sizes("hazard_timeout_factor_above_3_converged_at_bootstrap") == [8, 13, 14, 14]


def test_hazard_infinite_timeout_and_zero_length_refused_rb_h4_rb_h9() -> None:
    """RB-H4, RB-H9."""
    assert outputs("rejected_infinite_timeout") == [
        {"input": None, "kind": "error", "field": "timeout_s", "rule": "RB-D2"}]
    assert any(o.get("field") == "seconds" for o in outputs("rejected_set_batch_length_zero"))


def test_hazard_no_wall_clock_rb_h5() -> None:
    """RB-H5; RB-D13: the card revision has no stall backstop, empty polls change nothing."""
    assert len(pending("hazard_no_wall_clock")) == 7


def test_hazard_silent_gridded_stream_rb_h6() -> None:
    """RB-H6."""
    got = batches("hazard_silent_gridded_stream")
    # held until the timeout while the monitor gates, slot-gate closes once it is evicted
    assert [b[0] for b in got if b[1] >= 3.0] == [43, 53, 63, 73, 83, 90, 100]


def test_hazard_slow_gated_stream_rb_h10() -> None:
    """RB-H10."""
    got = batches("hazard_slow_gated_stream")
    assert all(b[0] % 10 == 0 for b in got[2:])  # the 0.1 Hz monitor never holds a close
    case = BY_NAME["hazard_slow_gated_stream"]
    config = config_from_json(case.config)
    state = initial(config)
    seen_diffs = []
    for raw in case.inputs[:-1]:
        state, _ = step(config, state, input_from_json(raw))
        seen_diffs += [len(s.diffs) for s in state.streams if s.name == "mon"]
    assert max(seen_diffs) == 0  # evicted before a second pulse: never a single diff


def test_hazard_persistent_far_future_stream_rb_h11() -> None:
    """RB-H11."""
    got = batches("hazard_persistent_far_future_stream")
    assert got[-1][2] >= 14.0  # after 4 s of data the window is 10 L ahead
