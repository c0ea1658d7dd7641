"""Step an algorithm's rule text and its fast path together and compare them.

The rule text (``Algorithm.machine.initial``/``step``, the spec's ``machine.py``) is the reference;
a fast path (``Algorithm.machine.fast``) is trusted only as far as it agrees with it: equal
outputs and an equal state (in the spec's form) after every input, and the same refusal
(:class:`timealign.errors.InvalidInput`, same field and rule) of a bad input. The bounded
explorers (``proofs/``) and the stateful and differential tests all check through here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Generic

from timealign.algorithm import Algorithm, C, I, O, S
from timealign.errors import InvalidInput


class Divergence(AssertionError):
    """The fast path and the rule text disagree after some input."""


class Lockstep(Generic[C, S, I, O]):
    """One run of both implementations over the same inputs (mutable, owned by a test)."""

    def __init__(self, algorithm: Algorithm[C, S, I, O], config: C) -> None:
        if algorithm.machine.fast is None:
            raise ValueError(f"{algorithm.name} has no fast path")
        self.algorithm = algorithm
        self.fast = algorithm.machine.fast
        self.config = config
        self.state: S = algorithm.machine.initial(config)
        self.fast_state: Any = self.fast.initial(config)
        self.index = 0
        self._compare_states("initial")

    @classmethod
    def at(cls, algorithm: Algorithm[C, S, I, O], config: C, state: S) -> Lockstep[C, S, I, O]:
        """Both implementations resumed from ``state`` (the spec's form)."""
        run = cls(algorithm, config)
        run.state, run.fast_state = state, run.fast.from_spec(state)
        run._compare_states("from_spec")
        return run

    def _compare_states(self, where: object) -> None:
        fast_spec = self.fast.to_spec(self.fast_state)
        if fast_spec != self.state:
            raise Divergence(f"{self.algorithm.name}: states differ after {where}:\n"
                             f"  rule text: {self.state!r}\n  fast path: {fast_spec!r}")

    def step(self, item: I) -> tuple[O, ...]:
        """Apply ``item`` to both; their outputs (equal) or :class:`Divergence`.

        A refused input must be refused by both, naming the same field and rule; it
        re-raises the rule text's :class:`InvalidInput` and leaves both states as they were.
        """
        refusals: list[InvalidInput | None] = []
        results: list[tuple[Any, tuple[O, ...]] | None] = []
        for state, step in ((self.state, self.algorithm.machine.step),
                            (self.fast_state, self.fast.step)):
            try:
                results.append(step(self.config, state, item))
                refusals.append(None)
            except InvalidInput as error:
                results.append(None)
                refusals.append(error)
        where = f"input {self.index} {item!r}"
        self.index += 1
        mine, theirs = refusals
        if mine is not None or theirs is not None:
            if (mine is None or theirs is None
                    or (mine.field, mine.rule) != (theirs.field, theirs.rule)):
                raise Divergence(f"{self.algorithm.name}: refusals differ at {where}: "
                                 f"rule text {mine!r}, fast path {theirs!r}")
            raise mine
        reference, fast = results
        if reference is None or fast is None:  # pragma: no cover - both set when no refusal
            raise Divergence(f"{self.algorithm.name}: no result at {where}")
        if reference[1] != fast[1]:
            raise Divergence(f"{self.algorithm.name}: outputs differ at {where}:\n"
                             f"  rule text: {reference[1]!r}\n  fast path: {fast[1]!r}")
        self.state, self.fast_state = reference[0], fast[0]
        self._compare_states(where)
        return reference[1]


def run_lockstep(
    algorithm: Algorithm[C, S, I, O], config: C, inputs: Iterable[I]
) -> tuple[S, tuple[tuple[int, O], ...]]:
    """Like :func:`timealign.algorithm.run`, stepping the fast path alongside (no refusals)."""
    run = Lockstep(algorithm, config)
    produced: list[tuple[int, O]] = []
    for index, item in enumerate(inputs):
        produced.extend((index, output) for output in run.step(item))
    return run.state, tuple(produced)
