"""The event-time batcher's fast path (``fast.py``) keeps its EB-R4 index exact.

Its state holds, besides the spec's, the set of ids of every open member, so that the
EB-R4 check is one lookup. Equal states through ``to_spec`` (the lockstep of the stateful
test and of the explorer) cannot see that set, so this checks it after every input of
every shipped vector (splits that drop an overwritten member included), and that an id
leaves the set when its member settles: it may then come again.
"""

from __future__ import annotations

from pathlib import Path

from timealign import vectors
from timealign.event_time_batcher import ALGORITHM, Config, Dropped, Flush, Message, Rejected, Tick
from timealign.event_time_batcher.fast import FastState
from timealign.lockstep import Lockstep

ROOT = Path(__file__).resolve().parents[2]


def _exact(state: FastState) -> bool:
    return state.held == {m.id for b in state.batches for m in b.members}


def test_eb_r4_index_is_exact_after_every_input_of_every_vector() -> None:
    """EB-R4 on the fast path, over every shipped vector (rule text stepped alongside)."""
    stepped = 0
    for path in vectors.files([ROOT / "vectors" / "event_time_batcher"]):
        for vector in vectors.load(path):
            try:
                config = ALGORITHM.codec.config_from_json(vector.config)
            except ValueError:
                continue  # a vector of a rejected config
            run = Lockstep(ALGORITHM, config)
            for raw in vector.inputs:
                try:
                    run.step(ALGORITHM.codec.input_from_json(raw))
                except ValueError:
                    continue  # refused by both (Lockstep checked it): the state is unchanged
                assert _exact(run.fast_state), vector.name
                stepped += 1
    assert stepped > 100


def test_eb_r4_an_overwritten_or_closed_id_may_come_again() -> None:
    """EB-R4 refuses only ids held by an open batch: after a split drops a member
    (EB-R12) or a batch closes, the same id is accepted again, by both paths alike."""
    run = Lockstep(ALGORITHM, Config(batching_window=50, max_message_delay=20))
    run.step(Message("b", 100, 100, "x"))
    run.step(Message("a", 101, 101, "y"))
    outputs = run.step(Message("a", 100, 102, "z"))  # split at 100: z overwrites y above it
    assert [(o.id, o.reason) for o in outputs if isinstance(o, Rejected | Dropped)] == \
        [("y", "overwritten")]
    assert _exact(run.fast_state) and "y" not in run.fast_state.held
    run.step(Message("c", 110, 110, "y"))  # accepted again
    assert _exact(run.fast_state) and "y" in run.fast_state.held
    run.step(Tick(1_000))
    assert run.fast_state.held == frozenset()
    run.step(Message("c", 1_000, 1_000, "x"))  # x closed at the tick
    run.step(Flush())
    assert run.fast_state.held == frozenset()


def test_eb_r4_r9_a_state_stepped_twice_keeps_its_own_batches_and_ids() -> None:
    """The fast state shares its members' lists and its EB-R4 ledger with the state a step
    makes from it; stepping the older state again (as the explorer does) must see only its
    own members and ids: here each branch joins the same batch (EB-R9) with the other's
    key and id, and both equal the rule text's states and outputs."""
    config = Config(batching_window=50, max_message_delay=20)
    fast = ALGORITHM.machine.fast
    assert fast is not None
    base_fast = fast.initial(config)
    base_rule = ALGORITHM.machine.initial(config)
    for item in (Message("a", 100, 100, "a1"), Message("b", 101, 101, "b1")):
        base_fast, _ = fast.step(config, base_fast, item)
        base_rule, _ = ALGORITHM.machine.step(config, base_rule, item)
    branches = [Message("c", 102, 102, "x"), Message("d", 102, 102, "y"),
                Message("c", 103, 103, "y"), Message("a", 110, 110, "x")]
    for item in branches:  # every branch from the same older state
        fast_state, fast_out = fast.step(config, base_fast, item)
        rule_state, rule_out = ALGORITHM.machine.step(config, base_rule, item)
        assert fast.to_spec(fast_state) == rule_state and fast_out == rule_out, item
        assert _exact(fast_state) and _exact(base_fast)
        again = Message(item.key, item.event_time, item.at, "z")  # and one more from each
        assert (fast.to_spec(fast.step(config, fast_state, again)[0])
                == ALGORITHM.machine.step(config, rule_state, again)[0])
    assert fast.to_spec(base_fast) == base_rule
