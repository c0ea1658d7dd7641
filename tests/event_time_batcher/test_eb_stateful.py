"""Stateful Hypothesis test: the reference, the literal model and the invariants, step by step.

Messages and ticks are interleaved at equal and increasing processing times (tick before
message and message before tick at the same instant both occur); event times are drawn
around the acceptance band and around the event times already seen (duplicates, 1 ns and
2 ns conflicts, split points); re-deliveries reuse a key and event time with a new id. After
every rule the reference's outputs must equal the literal model's (EB-R5 to EB-R16) and
the run so far must satisfy every invariant EB-I1 to EB-I10. Bad inputs (time going back,
a held id) must raise InvalidInput and leave the state as it was (EB-R3, EB-R4). The fast
path (``ALGORITHM.machine.fast``, compiled or pure) steps in lockstep with the rule text: equal
states, outputs and refusals after every input.
"""

from __future__ import annotations

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from tests.event_time_batcher.literal_model import LiteralBatcher
from tests.event_time_batcher.support import plain
from timealign import InvalidInput
from timealign.event_time_batcher import (
    ALGORITHM,
    Config,
    Flush,
    Input,
    Message,
    Output,
    State,
    Tick,
    Timer,
    strategies,
)
from timealign.event_time_batcher.invariants import check
from timealign.lockstep import Lockstep

ADVANCE = st.sampled_from(strategies.ADVANCE)  # shared with `timealign conform --fuzz`


class BatcherMachine(RuleBasedStateMachine):
    config: Config
    run: Lockstep[Config, State, Input, Output]
    model: LiteralBatcher

    @property
    def state(self) -> State:
        return self.run.state

    @initialize(window=st.integers(0, 40), delay=st.integers(0, 25), leap=st.integers(0, 6))
    def start(self, window: int, delay: int, leap: int) -> None:
        self.config = Config(window, delay, leap)
        self.run = Lockstep(ALGORITHM, self.config)  # rule text and fast path
        self.model = LiteralBatcher(window, delay, leap)
        self.inputs: list[Input] = []
        self.outputs: list[tuple[int, Output]] = []
        self.now = 0
        self.times: list[tuple[str, int]] = [("a", 0)]

    def _apply(self, item: Input) -> None:
        out = self.run.step(item)
        if isinstance(item, Message):
            expected = self.model.event(item.at, item.key, item.event_time, item.id)
            self.times.append((item.key, item.event_time))
        elif isinstance(item, Tick):
            expected = self.model.time(item.at)
        else:
            expected = self.model.flush()
        assert [plain(o) for o in out] == expected, f"reference {out} != model {expected}"
        self.outputs += [(len(self.inputs), o) for o in out]
        self.inputs.append(item)
        if not isinstance(item, Flush):
            self.now = item.at

    def _id(self, key: str) -> str:
        return f"{key}{len(self.inputs)}"

    @rule(key=st.sampled_from("abc"), advance=ADVANCE, offset=st.integers(-30, 8))
    def message(self, key: str, advance: int, offset: int) -> None:
        at = self.now + advance
        self._apply(Message(key, max(0, at + offset), at, self._id(key)))

    @rule(advance=ADVANCE, data=st.data())
    def message_near_seen_time(self, advance: int, data: st.DataObject) -> None:
        """Same key near a seen event time: duplicates, 1 ns / 2 ns conflicts, re-delivery."""
        key, t = data.draw(st.sampled_from(self.times))
        shift = data.draw(st.sampled_from([0, 0, -1, 1, -2, 2]))
        key = data.draw(st.sampled_from([key, key, "b"]))
        self._apply(Message(key, max(0, t + shift), self.now + advance, self._id(key)))

    @rule(advance=ADVANCE)
    def tick(self, advance: int) -> None:
        self._apply(Tick(self.now + advance))

    @precondition(lambda self: any(isinstance(o, Timer) and o.at >= self.now
                                   for _, o in self.outputs))
    @rule(data=st.data())
    def tick_at_requested_timer(self, data: st.DataObject) -> None:
        due = sorted({o.at for _, o in self.outputs if isinstance(o, Timer) and o.at >= self.now})
        self._apply(Tick(data.draw(st.sampled_from(due))))

    @rule()
    def flush(self) -> None:
        self._apply(Flush())

    def _refused(self, item: Input, rule: str) -> None:
        """The step raises InvalidInput for ``rule``; the run goes on from the same state."""
        before = self.state
        with pytest.raises(InvalidInput) as caught:
            self.run.step(item)  # both refuse, naming the same field and rule
        assert caught.value.rule == rule and self.state == before

    @precondition(lambda self: self.now > 0)
    @rule(back=st.integers(1, 10), as_tick=st.booleans())
    def time_going_back_is_refused(self, back: int, as_tick: bool) -> None:
        """EB-R3."""
        at = max(0, self.now - back)
        self._refused(Tick(at) if as_tick else Message("a", at, at, self._id("z")), "EB-R3")

    @precondition(lambda self: any(b.members for b in self.state.batches))
    @rule(data=st.data())
    def held_id_is_refused(self, data: st.DataObject) -> None:
        """EB-R4."""
        held = [x.id for b in self.state.batches for x in b.members]
        self._refused(Message("c", self.now, self.now, data.draw(st.sampled_from(held))), "EB-R4")

    @invariant()
    def fast_path_index_of_held_ids_is_exact(self) -> None:
        """EB-R4 in the fast path: its set of held ids is exactly the open members' ids."""
        if hasattr(self, "run"):
            fast = self.run.fast_state
            assert fast.held == {m.id for b in fast.batches for m in b.members}

    @invariant()
    def invariants_hold(self) -> None:
        if hasattr(self, "config"):
            problems = check(self.config, self.inputs, self.outputs)
            assert not problems, problems


TestBatcherMachine = BatcherMachine.TestCase
