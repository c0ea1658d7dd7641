"""The rule text's state updates that are built by hand rather than by ``attrs.evolve``."""

from __future__ import annotations

import attrs

from timealign.approximate_time import machine
from timealign.approximate_time.model import Config, Message, State


def test_at_r3_queued_keeps_every_field_but_the_deques_and_warnings() -> None:
    """AT-R3, AT-R4: a queued message changes the deques and the warning flags alone.
    ``_queued`` builds that state field by field (``attrs.evolve`` cost a tenth of a step);
    this pins it to evolve's result on a state whose every field differs from its default,
    and fails when State gains a field that ``_queued`` would silently reset."""
    config = Config(2, 10)
    a, b, c = Message(0, 5, "a"), Message(1, 7, "b"), Message(0, 9, "c")
    full = State(deques=((c,), ()), pasts=((a,), (b,)), candidate=(a, b), candidate_start=5,
                 candidate_end=7, pivot=1, pivot_time=7, dropped=(True, False),
                 warned=(False, True), config=config)
    assert {f.name for f in attrs.fields(State)} == {
        "deques", "pasts", "candidate", "candidate_start", "candidate_end", "pivot",
        "pivot_time", "dropped", "warned", "config"}, "a new State field: set it in `full`"
    assert all(getattr(full, f.name) != f.default for f in attrs.fields(State)
               if f.default is not attrs.NOTHING)
    deques, warned = ((c, Message(0, 11, "d")), ()), (True, True)
    assert machine._queued(full, deques, warned) == attrs.evolve(full, deques=deques,
                                                                 warned=warned)
