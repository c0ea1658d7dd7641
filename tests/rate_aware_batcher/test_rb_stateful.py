"""Stateful model-based test of the rate-aware batcher (RB-I1 to RB-I9), both profiles.

A ``RuleBasedStateMachine`` plays realistic pulse trains (rates from 0.1 to 14 Hz, jitter,
missing pulses, split messages, log lines, silences, far-ahead and late outliers, batch
length changes, empty polls) into the reference machine and, side by side, into the
literal mutable transcription of the note (``literal_model``). After every rule the outputs
of both must be identical and the run invariants must hold on the trace so far; the
HWM is checked for monotonicity (card, RB-I4) or for falling only at a due backstop
(head, RB-I8) and the ``held`` ids against the buffers. Polls carry a wall clock that
advances with data time, sometimes stalls, sometimes leaps (the head's backstop, RB-R26).
At teardown the end input must settle every message, and (card, RB-I6) adding non-gated
companions must change no batch.
"""

from __future__ import annotations

import random

import attrs
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from tests.rate_aware_batcher.literal_model import LiteralBatcher
from tests.rate_aware_batcher.support import (
    SECOND,
    Clock,
    Source,
    literal_model,
    literal_step,
    reference_outputs,
)
from timealign.lockstep import Lockstep
from timealign.rate_aware_batcher import (
    ALGORITHM,
    Config,
    End,
    Input,
    Output,
    Poll,
    Polled,
    SetBatchLength,
    State,
    invariants,
)

MS = 10**6
RATES = (14.0, 14.0, 7.0, 5.0, 2.0, 1.0, 0.5, 0.1)


class BatcherMachine(RuleBasedStateMachine):
    config: Config
    state: State
    clock: Clock
    run: Lockstep[Config, State, Input, Output]
    model: LiteralBatcher

    def __init__(self) -> None:
        super().__init__()
        self.inputs: list[Input] = []
        self.outputs: list[tuple[int, Output]] = []
        self.hwms: list[int | None] = []
        self.arms: list[tuple[int | None, int | None]] = []
        self.wall = 0

    @initialize(
        length=st.sampled_from([1.0, 1.0, 0.5, 2.0, 0.75]),
        profile=st.sampled_from(["card", "esslivedata-head"]),
        timeout=st.sampled_from([None, None, None, 0.9, 2.9, 3.5]),
        rates=st.lists(st.sampled_from(RATES), min_size=1, max_size=3),
        jitter=st.sampled_from([0, 0, 1_000, 5 * MS, 30 * MS]),
        missing=st.sampled_from([0.0, 0.0, 0.05, 0.3]),
        split=st.sampled_from([0.0, 0.0, 0.05]),
        log_rate=st.sampled_from([0.0, 1.0, 5.0]),
        seed=st.integers(0, 2**32),
    )
    def setup(self, length: float, profile: str, timeout: float | None, rates: list[float],
              jitter: int, missing: float, split: float, log_rate: float, seed: int) -> None:
        if profile != "card" and timeout is not None and timeout / length > 3:
            timeout = float("inf")  # a factor above 3 is refused at head (RB-R19): none
        self.config = Config(length, timeout, profile=profile)
        self.run = Lockstep(ALGORITHM, self.config)
        self.state = self.run.state
        kinds = ("detector_events", "monitor_events", "monitor_counts")
        rnd = random.Random(seed)
        sources = [Source(kinds[i], f"s{i}", rate, rnd.randrange(SECOND // 7))
                   for i, rate in enumerate(rates)]
        self.clock = Clock(sources, rnd, jitter, missing, split, log_rate)
        self.model = literal_model(self.config)

    def feed(self, item: Input) -> None:
        """Step the rule text, its fast path (equal state and outputs) and the literal model;
        their outputs must be identical."""
        index = len(self.inputs)
        self.inputs.append(item)
        produced = self.run.step(item)
        self.state = self.run.state
        self.outputs += [(index, o) for o in produced]
        self.hwms.append(self.state.hwm)
        self.arms.append((self.state.hwm, self.state.last_close))
        assert list(produced) == literal_step(self.model, item)

    def reading(self, advance: int, read: bool) -> int | None:
        """The wall clock (RB-R18): it advances with data time; a poll may carry no reading."""
        self.wall += advance
        return self.wall if read else None

    @rule(interval=st.sampled_from([100 * MS] * 6 + [50 * MS, 250 * MS, 2 * SECOND]),
          read=st.sampled_from([True, True, True, False]))
    def poll(self, interval: int, read: bool) -> None:
        self.feed(attrs.evolve(self.clock.poll(interval), now=self.reading(interval, read)))

    @rule(leap=st.sampled_from([0, 100 * MS, 5 * SECOND, 30 * SECOND]))
    def empty_poll(self, leap: int) -> None:
        self.feed(Poll((), now=self.reading(leap, True)))

    @rule(seconds=st.integers(1, 8))
    def silence(self, seconds: int) -> None:
        self.clock.silence(seconds * SECOND)

    @rule(kind=st.sampled_from(["log", "detector_events", "monitor_counts"]),
          offset=st.sampled_from([-5 * SECOND, 2 * SECOND, 5 * SECOND, 240 * SECOND,
                                  365 * 24 * 3600 * SECOND]))
    def outlier(self, kind: str, offset: int) -> None:
        name = "log" if kind == "log" else "s0"
        stamp = self.clock.now + offset
        self.feed(Poll((Polled(kind, name, stamp, self.clock.fresh("x")),)))

    @precondition(lambda self: len(self.inputs) > 0)
    @rule(seconds=st.sampled_from([0.5, 1.0, 2.0, 0.75]))
    def set_batch_length(self, seconds: float) -> None:
        self.feed(SetBatchLength(seconds))

    @invariant()
    def run_invariants_hold(self) -> None:
        """RB-I1, RB-I2, RB-I3/RB-I9, RB-I5, RB-I7 on the trace so far; RB-I4 (card) or
        RB-I8 (head) on the HWMs."""
        if hasattr(self, "config"):
            assert invariants.check(self.config, self.inputs, self.outputs) == []
            if self.config.head:
                assert invariants.hwm_falls_only_at_backstop(
                    self.config, self.inputs, self.arms) == []
            else:
                assert invariants.hwm_monotone(self.hwms) == []
            assert self.state.held == frozenset(m.id for m in self.state.buffered())

    def teardown(self) -> None:
        if not hasattr(self, "config"):
            return
        self.feed(End())
        assert invariants.no_loss_no_duplication(self.config, self.inputs, self.outputs) == []
        if self.config.head:
            return  # RB-I6 is card-only: companions move head's anchors and backstop
        companions = invariants.with_ungated_companions(self.inputs)
        with_them = reference_outputs(self.config, companions)
        assert invariants.ungated_never_holds_back(self.outputs, with_them) == []  # RB-I6


TestBatcherMachine = BatcherMachine.TestCase
