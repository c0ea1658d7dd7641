"""One test per rule, decision and hazard of spec/event_time_batcher.md (W=50, D=20, L=0)."""

from __future__ import annotations

import pytest

from tests.event_time_batcher.support import FLUSH, batches, literal, m, outputs
from timealign import InvalidInput
from timealign.event_time_batcher import (
    Config,
    Flush,
    Message,
    State,
    Tick,
    Timer,
    initial,
    step,
)
from timealign.event_time_batcher.arithmetic import (
    first_containing,
    new_window_end,
    split_point,
)

C = Config(50, 20, 0)


@pytest.mark.parametrize("field", ["batching_window", "max_message_delay", "message_leap_limit"])
@pytest.mark.parametrize("value", [-1, 1.5, True, None, "5"])
def test_eb_r1_config_must_be_ns(field: str, value: object) -> None:
    values: dict[str, object] = {"batching_window": 50, "max_message_delay": 20,
                                 "message_leap_limit": 0, field: value}
    with pytest.raises(InvalidInput) as caught:
        Config(**values)  # type: ignore[arg-type]
    assert (caught.value.field, caught.value.rule) == (field, "EB-R1")


def test_eb_r1_zero_config_is_valid() -> None:
    """EB-R1: zero is a valid value for every field."""
    assert Config(0, 0, 0).batching_window == 0


@pytest.mark.parametrize(("args", "field"), [
    (("", 1, 1, "x"), "key"), (("k", -1, 1, "x"), "event_time"), (("k", 1, 1.0, "x"), "at"),
    (("k", 1, 1, ""), "id"), (("k", False, 1, "x"), "event_time"), ((3, 1, 1, "x"), "key"),
])
def test_eb_r2_message_fields_are_checked(args: tuple[object, ...], field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        Message(*args)  # type: ignore[arg-type]
    assert (caught.value.field, caught.value.rule) == (field, "EB-R2")
    with pytest.raises(InvalidInput, match="EB-R2"):
        Tick(-5)


def test_eb_r2_step_refuses_other_input_types() -> None:
    """EB-R2: only Message, Tick and Flush are inputs."""
    with pytest.raises(InvalidInput, match="EB-R2"):
        step(C, initial(C), "flush")  # type: ignore[arg-type]


def test_eb_r3_processing_time_never_goes_backwards() -> None:
    """EB-R3, EB-D12: a decreasing at is refused, state untouched; equal at is fine."""
    state, _ = step(C, initial(C), m("a1", 100, 100))
    for bad in (Tick(99), m("b1", 99, 99)):
        with pytest.raises(InvalidInput) as caught:
            step(C, state, bad)
        assert (caught.value.field, caught.value.rule) == ("at", "EB-R3")
    assert state == State(state.batches, 100, config=C)
    same, out = step(C, state, m("b1", 100, 100))
    assert out == () and same.now == 100
    rejected, out = step(C, same, m("c1", 10, 150))
    assert rejected.now == 150, "a rejected message still advances processing time"
    flushed, _ = step(C, rejected, Flush())
    assert flushed.now == 150


def test_eb_r4_id_held_by_an_open_batch_is_refused() -> None:
    """EB-R4, EB-D13: refused while held; the machine has no memory of settled ids."""
    state, _ = step(C, initial(C), m("a1", 100, 100))
    with pytest.raises(InvalidInput) as caught:
        step(C, state, Message("b", 101, 101, "a1"))
    assert (caught.value.field, caught.value.rule) == ("id", "EB-R4")
    closed, _ = step(C, state, Tick(170))
    again, out = step(C, closed, Message("b", 160, 171, "a1"))
    assert again.batches and out, "after it settled, the id is not the machine's to check"


def test_eb_r5_too_old_is_strict() -> None:
    """EB-R5, EB-D4, EB-D8: a delay of exactly D is accepted, D + 1 is rejected visibly."""
    assert outputs(C, [m("a1", 80, 100), m("b1", 79, 100)]) == [
        (0, ("timer", 150)), (1, ("rejected", "b1", "too_old"))]


def test_eb_r6_too_far_in_future_is_strict() -> None:
    """EB-R6, EB-D5: t = T + L is accepted, T + L + 1 is rejected."""
    config = Config(50, 20, 5)
    assert outputs(config, [m("a1", 105, 100), m("b1", 106, 100)]) == [
        (0, ("timer", 175)), (1, ("rejected", "b1", "too_far_in_future"))]
    assert outputs(C, [m("a1", 101, 100)]) == [(0, ("rejected", "a1", "too_far_in_future"))]


def test_eb_r7_lookup_picks_the_earliest_created_batch() -> None:
    """EB-R7, EB-D4: [100, 150] created before [90, 100]; t = 100 goes to [100, 150]."""
    got = outputs(C, [m("a1", 100, 100), m("b1", 90, 100), m("c1", 100, 101), FLUSH])
    assert batches(got) == [(3, 90, 100, ("b1",)), (3, 100, 150, ("a1", "c1"))]
    assert first_containing(((90, 100), (100, 150)), 100) == 0
    assert first_containing(((100, 150), (90, 100)), 100) == 0
    assert first_containing(((100, 150),), 151) is None


def test_eb_r8_new_batch_anchored_and_clipped() -> None:
    """EB-R8, EB-D2, EB-H3: a late earlier message gets its own batch clipped at the next
    start; it never joins or stretches the later batch."""
    got = outputs(C, [m("a1", 100, 100), m("b1", 90, 105), Tick(120), Tick(170)])
    assert got == [(0, ("timer", 170)), (1, ("timer", 120)),
                   (2, ("batch", 90, 100, ("b1",))), (3, ("batch", 100, 150, ("a1",)))]
    assert new_window_end((100, 300), 90, 50) == 100
    assert new_window_end((100, 80), 0, 50) == 50


def test_eb_r9_join_when_key_is_free() -> None:
    """EB-R9: a free key joins the target batch; no output."""
    state, out = step(C, step(C, initial(C), m("a1", 100, 100))[0], m("b1", 150, 150))
    assert out == () and [x.id for x in state.batches[0].members] == ["a1", "b1"]


def test_eb_r10_duplicate_keeps_first_copy() -> None:
    """EB-R10, EB-D7: same key, same event time in the target batch."""
    got = outputs(C, [m("a1", 100, 100), m("a1'", 100, 101), Tick(170)])
    assert got == [(0, ("timer", 170)), (1, ("rejected", "a1'", "duplicate")),
                   (2, ("batch", 100, 150, ("a1",)))]


@pytest.mark.parametrize(("new", "existing", "cut"), [
    (140, 110, 125), (103, 100, 102), (105, 110, 107), (100, 101, 100), (101, 100, 101),
    (155_000_000, 140_000_000, 147_500_000), (-3, 4, 0), (4, -3, 1),
])
def test_eb_r11_split_point_rounds_toward_new_event(new: int, existing: int, cut: int) -> None:
    """EB-R11, EB-D6, EB-D11: midpoint, trunc toward zero from the new event, integer ns."""
    assert split_point(new, existing) == cut


def test_eb_r12_split_rehomes_every_member() -> None:
    """EB-R12: members < s stay, >= s move up (new part appended), timer for the lower part."""
    state, out = step(C, initial(C), m("b1", 100, 100))
    for item in (m("c1", 108, 108), m("a1", 110, 110)):
        state, out = step(C, state, item)
    state, out = step(C, state, m("a2", 105, 111))
    assert out == (Timer(127),)
    assert [(b.start, b.end, [x.id for x in b.members]) for b in state.batches] == [
        (100, 107, ["b1", "a2"]), (107, 150, ["c1", "a1"])]


def test_eb_r12_one_ns_overwrite_is_dropped_and_leaves_empty_part() -> None:
    """EB-R12, EB-R16, EB-H2: the replaced member is Dropped; the empty lower part closes."""
    got = outputs(C, [m("b1", 100, 100), m("a1", 101, 101), m("a2", 100, 102), Tick(120),
                      Tick(170)])
    assert got == [(0, ("timer", 170)), (2, ("dropped", "a1", "overwritten")),
                   (2, ("timer", 120)), (3, ("batch", 100, 100, ())),
                   (4, ("batch", 100, 150, ("b1", "a2")))]


def test_eb_r13_expired_parts_close_inside_the_message_step() -> None:
    """EB-R13, EB-H5: the split's lower part has expired, so the step closes every expired
    batch, including one whose tick never came; no timer then."""
    got = outputs(C, [m("a1", 100, 100), m("b1", 160, 175), m("b2", 180, 195)])
    assert got == [(0, ("timer", 170)), (1, ("timer", 230)),
                   (2, ("batch", 100, 150, ("a1",))), (2, ("batch", 160, 170, ("b1",)))]


def test_eb_r14_tick_closes_at_equality_in_creation_order() -> None:
    """EB-R14, EB-D3, EB-D10: timeout is end + D in event time; closes at equality."""
    got = outputs(C, [m("a1", 100, 115), m("b1", 95, 115), Tick(119), Tick(170)])
    assert got == [(0, ("timer", 170)), (1, ("timer", 120)),
                   (3, ("batch", 100, 150, ("a1",))), (3, ("batch", 95, 100, ("b1",)))]
    assert outputs(C, [Tick(5)]) == []


def test_eb_r15_flush_reverse_creation_order() -> None:
    """EB-R15: flush emits newest first and empties the state."""
    got = outputs(C, [m("a1", 100, 100), m("b1", 90, 100), m("c1", 200, 200), FLUSH])
    assert batches(got) == [(3, 200, 250, ("c1",)), (3, 90, 100, ("b1",)),
                            (3, 100, 150, ("a1",))]
    state, _ = step(C, initial(C), m("a1", 100, 100))
    assert step(C, state, Flush())[0].batches == ()


def test_eb_r16_members_in_arrival_order() -> None:
    """EB-R16, EB-D9, EB-D14: any number of keys, ids by arrival, not by event time."""
    inputs = [m("z1", 100, 110)] + [m(f"{k}1", 111 - n, 111) for n, k in enumerate("abcdefghijkl")]
    got = outputs(C, [*inputs, FLUSH])
    assert batches(got) == [(13, 100, 150, tuple(x.id for x in inputs))]


def test_eb_d1_use_case_three_follows_the_implementation() -> None:
    """EB-D1, EB-D6: UC3 splits at 125 ms and 147.5 ms, not at the new messages."""
    ms = 1_000_000
    config = Config(50 * ms, 20 * ms, 0)
    inputs = [m(i, t * ms, at * ms) for i, t, at in
              [("a1", 110, 120), ("b1", 120, 130), ("c1", 130, 140), ("a2", 140, 150),
               ("a3", 155, 170)]] + [Tick(180 * ms)]
    assert batches(outputs(config, inputs)) == [
        (3, 110 * ms, 125 * ms, ("a1", "b1")), (4, 125 * ms, 147_500_000, ("c1", "a2")),
        (5, 147_500_000, 160 * ms, ("a3",))]


def test_eb_h1_redelivery_on_split_point_lands_in_two_batches() -> None:
    """EB-H1, EB-D7: c1' is no duplicate in the lower part although c1 has the same time."""
    got = outputs(C, [m("a1", 100, 100), m("c1", 105, 105), m("a2", 110, 110),
                      m("c1'", 105, 115), Tick(125), Tick(170)])
    assert batches(got) == [(4, 100, 105, ("a1", "c1'")), (5, 105, 150, ("c1", "a2"))]


def test_eb_h4_tick_and_message_at_the_same_instant() -> None:
    """EB-H4: tick first closes a1 alone; message first lets b1 join."""
    first = outputs(C, [m("a1", 100, 100), Tick(170), m("b1", 150, 170), Tick(220)])
    second = outputs(C, [m("a1", 100, 100), m("b1", 150, 170), Tick(170)])
    assert batches(first) == [(1, 100, 150, ("a1",)), (3, 150, 200, ("b1",))]
    assert batches(second) == [(2, 100, 150, ("a1", "b1"))]


def test_eb_h6_grouping_depends_on_arrival_order() -> None:
    """EB-H6: the same two messages group differently in the other arrival order."""
    config = Config(50, 50, 0)
    ab = outputs(config, [m("a1", 100, 140), m("b1", 140, 140), FLUSH])
    ba = outputs(config, [m("b1", 140, 140), m("a1", 100, 140), FLUSH])
    assert [b[1:] for b in batches(ab)] == [(100, 150, ("a1", "b1"))]
    assert [b[1:] for b in batches(ba)] == [(100, 140, ("a1",)), (140, 190, ("b1",))]


def test_eb_h7_zero_window_and_born_expired_batch() -> None:
    """EB-H7: W = 0 batches are instants; c1 at t = T - D closes in its own step."""
    config = Config(0, 20, 0)
    got = outputs(config, [m("a1", 100, 100), m("b1", 100, 110), Tick(120), m("c1", 101, 121)])
    assert batches(got) == [(2, 100, 100, ("a1", "b1")), (3, 101, 101, ("c1",))]
    assert got == literal(config, [m("a1", 100, 100), m("b1", 100, 110), Tick(120),
                                   m("c1", 101, 121)])
