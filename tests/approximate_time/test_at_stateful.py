"""Stateful Hypothesis test: arbitrary arrivals, ties, out-of-order stamps, overflow and
ends, with every invariant checked after every step (AT-I1 to AT-I6, AT-I9, AT-I10), the
state cross-checked against the literal model, and no message ever unaccounted for."""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from tests.approximate_time.support import as_tuple, literal_for
from timealign.approximate_time import (
    ALGORITHM,
    Config,
    Dropped,
    End,
    Input,
    Message,
    Output,
    Pending,
    Published,
    State,
)
from timealign.approximate_time import invariants as inv
from timealign.approximate_time.strategies import at_configs as configs
from timealign.lockstep import Lockstep


class ApproximateTimeMachine(RuleBasedStateMachine):
    config: Config
    state: State
    run: Lockstep[Config, State, Input, Output]

    @initialize(config=configs())
    def start(self, config: Config) -> None:
        self.config = config
        self.run = Lockstep(ALGORITHM, config)
        self.state = self.run.state
        self.model = literal_for(config)
        self.inputs: list[Input] = []
        self.outputs: list[tuple[int, Output]] = []
        self.clock = [0] * config.topics
        self.settled: set[str] = set()

    def _feed(self, item: Input) -> None:
        produced = self.run.step(item)  # rule text and fast path: equal states and outputs
        self.state = self.run.state
        if isinstance(item, End):
            expected = self.model.end()
        else:
            assert isinstance(item, Message)
            expected = self.model.add(item.topic, item.stamp, item.id)
        assert [as_tuple(o) for o in produced] == expected
        index = len(self.inputs)
        self.inputs.append(item)
        self.outputs.extend((index, o) for o in produced)
        for output in produced:
            if isinstance(output, Published):
                self.settled.update(output.ids)
            elif isinstance(output, Dropped | Pending):
                self.settled.add(output.id)

    @rule(topic=st.integers(0, 3), step=st.sampled_from([0, 0, 1, 2, 3, 5, 17, -1, -4]))
    def message(self, topic: int, step: int) -> None:
        topic %= self.config.topics
        self.clock[topic] = max(0, self.clock[topic] + step)
        self._feed(Message(topic, self.clock[topic], f"m{len(self.inputs)}"))

    @rule(topic=st.integers(0, 3))
    def burst_on_one_topic(self, topic: int) -> None:
        """Several messages on one topic in a row: overflow."""
        topic %= self.config.topics
        for _ in range(self.config.queue_size + 1 if self.config.queue_size < 5 else 2):
            self.clock[topic] += 1
            self._feed(Message(topic, self.clock[topic], f"m{len(self.inputs)}"))

    @precondition(lambda self: len(self.inputs) > 0)
    @rule()
    def end(self) -> None:
        self._feed(End())

    @invariant()
    def every_invariant_holds(self) -> None:
        """AT-I1 to AT-I6, AT-I9, AT-I10 on the run so far and on the run closed now."""
        assert inv.check(self.config, self.inputs, self.outputs) == []
        _, closing = ALGORITHM.machine.step(self.config, self.state, End())
        closed = self.outputs + [(len(self.inputs), o) for o in closing]
        assert inv.check(self.config, [*self.inputs, End()], closed) == []

    @invariant()
    def held_plus_settled_is_everything(self) -> None:
        """AT-I2 on the state: every arrived message is held by the state or settled."""
        held = [m.id for k in range(self.config.topics) for m in self.state.held(k)]
        arrived = {m.id for m in self.inputs if isinstance(m, Message)}
        assert len(held) == len(set(held))
        assert set(held).isdisjoint(self.settled)
        assert set(held) | self.settled == arrived

    @invariant()
    def state_shape(self) -> None:
        """No pivot means no candidate and empty past buffers (spec, State)."""
        if self.state.pivot < 0:
            assert self.state.candidate == ()
            assert self.state.pasts == ((),) * self.config.topics
        else:
            assert len(self.state.candidate) == self.config.topics
        assert all(len(self.state.held(k)) <= self.config.queue_size
                   for k in range(self.config.topics))


TestApproximateTimeStateful = ApproximateTimeMachine.TestCase
