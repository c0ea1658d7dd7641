"""The executable invariants EB-I1 to EB-I10: silent on reference runs, and each one catches
a run that breaks it (outputs edited by hand, as a faulty implementation would emit them)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from tests.event_time_batcher.support import FLUSH, m
from timealign.algorithm import run
from timealign.event_time_batcher import (
    ALGORITHM,
    Batch,
    Config,
    Dropped,
    Input,
    Output,
    Rejected,
    Tick,
    Timer,
)
from timealign.event_time_batcher import invariants as inv

C = Config(50, 20, 0)
INPUTS: list[Input] = [m("a1", 100, 100), m("b1", 120, 120), m("a2", 130, 130), Tick(145),
                       Tick(170), FLUSH]


def reference(inputs: Sequence[Input]) -> list[tuple[int, Output]]:
    return list(run(ALGORITHM, C, inputs)[1])


def test_reference_run_is_clean() -> None:
    produced = reference(INPUTS)
    assert produced == [(0, Timer(170)), (2, Timer(135)), (3, Batch(100, 115, ("a1",))),
                        (4, Batch(115, 150, ("b1", "a2")))]
    assert inv.check(C, INPUTS, produced) == []


BROKEN: list[tuple[str, inv.Predicate, list[tuple[int, Output]]]] = [
    ("EB-I1 lost", inv.settled_once, [(0, Timer(170)), (2, Timer(135)),
                                      (4, Batch(115, 150, ("b1", "a2")))]),
    ("EB-I1 twice", inv.settled_once, [(3, Batch(100, 115, ("a1",))),
                                       (4, Batch(115, 150, ("a1", "b1", "a2")))]),
    ("EB-I1 early", inv.settled_once, [(0, Batch(100, 150, ("a1", "b1")))]),
    ("EB-I2", inv.one_member_per_key, [(5, Batch(100, 150, ("a1", "a2")))]),
    ("EB-I3", inv.members_inside_window, [(5, Batch(100, 125, ("a1", "a2")))]),
    ("EB-I3 inverted", inv.members_inside_window, [(5, Batch(120, 110, ()))]),
    ("EB-I4", inv.window_within_limit, [(5, Batch(100, 151, ("a1",)))]),
    ("EB-I5 same step", inv.windows_disjoint, [(5, Batch(100, 130, ())),
                                               (5, Batch(120, 150, ()))]),
    ("EB-I5 held member", inv.windows_disjoint, [(3, Batch(100, 130, ("a1",))),
                                                 (4, Batch(120, 150, ("b1",)))]),
    ("EB-I6", inv.closed_not_early, [(3, Batch(100, 150, ("a1",)))]),
    ("EB-I7", inv.timers_honoured, [(0, Timer(170)), (5, Batch(100, 150, ("a1",)))]),
    ("EB-I8 past timer", inv.timers_requested, [(1, Timer(110))]),
    ("EB-I8 timer on tick", inv.timers_requested, [(3, Timer(200))]),
    ("EB-I8 no timer", inv.timers_requested, [(4, Batch(100, 150, ("a1",)))]),
    ("EB-I9 accepted too old", inv.acceptance_band, [(5, Batch(100, 150, ("a1", "b1")))]),
    ("EB-I9 wrong reason", inv.acceptance_band, [(0, Rejected("a1", "too_old"))]),
    ("EB-I10", inv.arrival_order, [(5, Batch(100, 150, ("b1", "a1")))]),
]


@pytest.mark.parametrize(("name", "predicate", "produced"), BROKEN, ids=[b[0] for b in BROKEN])
def test_each_invariant_catches_its_violation(
        name: str, predicate: inv.Predicate, produced: list[tuple[int, Output]]) -> None:
    """EB-I1, EB-I2, EB-I3, EB-I4, EB-I5, EB-I6, EB-I7, EB-I8, EB-I9, EB-I10: each
    predicate reports the broken outputs made for it, and ``check`` reports them too."""
    inputs = [*INPUTS]
    if name.startswith("EB-I9 accepted"):
        inputs[1] = m("b1", 80, 120)
    problems = predicate(C, inputs, produced)
    assert problems, name
    reported = inv.check(C, inputs, produced)
    assert {f"{predicate.__name__}: {p}" for p in problems} <= set(reported)


def test_eb_i1_reused_id_and_unknown_id() -> None:
    inputs: list[Input] = [m("a1", 100, 100), m("a1", 101, 101), FLUSH]
    assert any("used by 2" in p for p in inv.settled_once(C, inputs, []))
    assert any("unknown" in p for p in inv.settled_once(C, [], [(0, Dropped("x", "o"))]))


def test_eb_i7_split_upper_part_inherits_the_timer() -> None:
    """EB-I7, EB-I8: the upper part of a split closes on the timer requested for the whole."""
    inputs: list[Input] = [m("a1", 100, 100), m("a2", 140, 140), Tick(170), FLUSH]
    produced = reference(inputs)
    assert produced == [(0, Timer(170)), (1, Batch(100, 120, ("a1",))),
                        (2, Batch(120, 150, ("a2",)))]
    assert inv.check(C, inputs, produced) == []
