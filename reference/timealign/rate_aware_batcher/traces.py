"""What the rate-aware batcher knows about the traces it is checked on
(spec/conformance.md).

The explorer's alphabets and instances (``proofs/explore_rate_aware_batcher.py`` walks
them exhaustively, ``timealign conform --explore`` up to a depth), the fuzz strategy
(:mod:`.strategies`), the observability profiles (CF-R13), the output -> rule map
(CF-R14) and the targets (CF-R18): the ESS ``RateAwareMessageBatcher`` at the card
revision and at head. Registered as ``ALGORITHM.checks.traces``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from timealign.errors import InvalidInput
from timealign.rate_aware_batcher import codec
from timealign.rate_aware_batcher.grid import STALL_THRESHOLD_BATCHES
from timealign.rate_aware_batcher.machine import initial, step
from timealign.rate_aware_batcher.model import (
    CARD,
    HEAD,
    Config,
    Input,
    Poll,
    Polled,
    SetBatchLength,
)
from timealign.traces import JSON, Instance, Profile, RuleMap, Target, Trace, Traces

# --- the explorer's alphabets --------------------------------------------------------------

# Time scaled down: L = 1000 ns and a pulse every 250 ns (four slots per window).
RB_BASE = 1_000_000
RB_PULSE = 250
RB_FAR = 1_000_000  # 1000 L ahead: beyond the clamp and the hold-back range
RB_STALL = 10_000  # 10 L of clock: the head profile's backstop threshold (RB-R26)


def rb_at(k: int) -> int:
    """The nominal pulse instant of step ``k``."""
    return RB_BASE + RB_PULSE * k


def rb_one(kind: str, name: str, stamp: int, ident: str) -> Poll:
    return Poll((Polled(kind, name, stamp, ident),))


RB_MOVES: dict[str, Callable[[int], Input]] = {
    "pulse": lambda k: rb_one("detector_events", "det", rb_at(k), f"p{k}"),
    "late": lambda k: rb_one("detector_events", "det", rb_at(k) - 900, f"l{k}"),
    "mon": lambda k: rb_one("monitor_events", "mon", rb_at(k) + 40, f"m{k}"),
    "log": lambda k: rb_one("log", "log", rb_at(k) + 100, f"g{k}"),
    "log_ahead": lambda k: rb_one("log", "log", rb_at(k) + 1500, f"a{k}"),
    "log_far": lambda k: rb_one("log", "log", rb_at(k) + RB_FAR, f"f{k}"),
    "det_far": lambda k: rb_one("detector_events", "det", rb_at(k) + RB_FAR, f"d{k}"),
    "empty": lambda k: Poll(()),
    "length_2L": lambda k: SetBatchLength(2e-6),
    "length_half": lambda k: SetBatchLength(5e-7),
    "stall": lambda k: Poll(()),  # its clock reading is added by ``rb_alphabet``
}


def rb_clock_of(trace: Trace) -> int:
    """The newest clock reading of ``trace`` (0 before any)."""
    return max((i.now for i in trace if isinstance(i, Poll) and i.now is not None), default=0)


def rb_alphabet(*names: str, clocked: bool = False) -> Callable[[Trace], list[Input]]:
    """The moves after ``trace``; with ``clocked`` every poll reads a clock one pulse
    period later than the last reading, a ``stall`` 10 L later (RB-R18)."""
    chosen = [(n, RB_MOVES[n]) for n in names]

    def moves(trace: Trace) -> list[Input]:
        out = [move(len(trace)) for _, move in chosen]
        if not clocked:
            return out
        now = rb_clock_of(trace)
        return [Poll(m.messages, now + (RB_STALL if n == "stall" else RB_PULSE))
                if isinstance(m, Poll) else m for (n, _), m in zip(chosen, out, strict=True)]
    return moves


@attrs.frozen
class Explored:
    """One instance as ``proofs/explore_rate_aware_batcher.py`` walks it: its moves, its
    depth there, its config (L = 1000 ns) and, for the head profile, a clock."""

    name: str
    moves: tuple[str, ...]
    depth: int
    config: Config

    def instance(self) -> Instance:
        return Instance(self.name, self.config,
                        rb_alphabet(*self.moves, clocked=self.config.head), self.named)

    def named(self, config: Config) -> str:
        """CF-R31: its name for a config ``--where`` changed: the profile (``rb-head/``) and
        a timeout factor its name spells (``factor-3.5``, ``no-timeout``) as they now are."""
        shape = self.name.partition("/")[2]
        if shape.startswith("factor-") or shape == "no-timeout":
            factor = config.timeout_factor
            shape = ("no-timeout" if factor == math.inf else
                     f"factor-{factor:g}" if factor is not None else "default-timeout")
        return f"{'rb-head' if config.head else 'rb'}/{shape}"


def _explored(name: str, moves: Sequence[str], depth: int, **config: Any) -> Explored:
    return Explored(name, tuple(moves), depth, Config(batch_length_s=1e-6, **config))


EXPLORED = (
    _explored("rb/one-stream-late-log", ["pulse", "late", "log", "empty"], 8),
    _explored("rb/two-streams-ahead", ["pulse", "mon", "log_ahead", "empty"], 7),
    _explored("rb/length-changes", ["pulse", "empty", "length_2L", "length_half"], 8),
    _explored("rb/far-outliers", ["pulse", "log_far", "det_far", "empty"], 7),
    _explored("rb/factor-3.5", ["pulse", "log", "empty"], 9, timeout_factor=3.5),
    _explored("rb-head/one-stream-late-log", ["pulse", "late", "log", "stall"], 7,
              profile=HEAD),
    _explored("rb-head/two-streams-ahead", ["pulse", "mon", "log_ahead", "stall"], 6,
              profile=HEAD),
    _explored("rb-head/length-changes", ["pulse", "stall", "length_2L", "length_half"], 7,
              profile=HEAD),
    _explored("rb-head/far-outliers", ["pulse", "log_far", "det_far", "stall"], 7,
              profile=HEAD),
    _explored("rb-head/no-timeout", ["pulse", "log", "stall"], 8, timeout_factor=math.inf,
              profile=HEAD),
)

#: Without a target: the card instances the harness has always walked.
INSTANCES = tuple(e.instance() for e in EXPLORED if e.name in (
    "rb/one-stream-late-log", "rb/length-changes", "rb/far-outliers", "rb/factor-3.5"))

# --- the head clock off the stall boundary (RB-D17) ----------------------------------------

#: How far a clock reading stays from the exact stall boundary in a head target trace:
#: upstream compares float seconds there, the reference exact ns (RB-D17).
MARGIN = 1_000


def near_stall(config: Config, inputs: Sequence[Input]) -> int | None:
    """The index of the first poll whose clock reading lies within :data:`MARGIN` of the
    stall boundary (``last_close + 10·L``, RB-R26), or ``None``."""
    state = initial(config)
    for index, item in enumerate(inputs):
        if isinstance(item, Poll) and item.now is not None and state.last_close is not None:
            boundary = state.last_close + STALL_THRESHOLD_BATCHES * state.batch_length
            if abs(item.now - boundary) < MARGIN:
                return index
        try:
            state, _ = step(config, state, item)
        except InvalidInput:
            continue
    return None


def off_stall_boundary(config: Config, inputs: list[Input]) -> list[Input]:
    """``inputs`` with every clock reading near the stall boundary moved :data:`MARGIN`
    past it, and every later reading by as much (the clock still never goes back)."""
    while (index := near_stall(config, inputs)) is not None:
        first = inputs[index]
        assert isinstance(first, Poll) and first.now is not None
        state = initial(config)
        for item in inputs[:index]:
            try:
                state, _ = step(config, state, item)
            except InvalidInput:
                continue
        assert state.last_close is not None
        shift = state.last_close + STALL_THRESHOLD_BATCHES * state.batch_length + MARGIN - \
            first.now
        inputs = [*inputs[:index], *(
            attrs.evolve(i, now=i.now + shift) if isinstance(i, Poll) and i.now is not None
            else i for i in inputs[index:])]
    return inputs


# --- fuzz ----------------------------------------------------------------------------------

def _fuzz(profile: str = CARD, reuse: bool = True, clocked: bool = False) -> Any:
    def draw(size: int) -> Any:
        from timealign.rate_aware_batcher.strategies import rb_runs

        return rb_runs(max_inputs=size, profile=profile, reuse=reuse, clocked=clocked)
    return draw


# --- observability and rules ---------------------------------------------------------------

PROFILES: dict[str, Profile] = {
    "full": None,
    # ESS returns at most one batch per batch() call (CF-R13).
    "upstream": {"batch": (("start", "end", "ids"), ())},
}

RULES: RuleMap = {
    ("batch", None): ("RB-R10", "RB-R14", "RB-D6"),
    ("pending", None): ("RB-R16", "RB-D15"),
}

# --- targets (CF-R18) ----------------------------------------------------------------------

# Every trace the reference refuses lies outside both targets: upstream takes it (or
# crashes on it) where the reference refuses.
REFUSED = {
    "RB-D1": "a batch length upstream takes (0) or crashes on (RB-D1)",
    "RB-D2": "a config upstream reads otherwise (RB-D2)",
    "RB-D3": "a message upstream takes unchecked (RB-D3)",
    "RB-D4": "a repeated or still-held id: upstream takes both (RB-D4)",
    "RB-R16": "an input after the end: upstream has no end (RB-R16)",
    "RB-R17": "an unknown profile (RB-R17)",
    "RB-R18": "a clock going back: not an upstream run (RB-D17)",
    "RB-R19": "a head timeout factor upstream takes unchecked (RB-R19)",
    "RB-R28": "a batch end past int64: upstream emits it on Python integers (RB-R28)",
}


def _profile(config: JSON) -> str:
    return str(config.get("profile") or CARD)


def _outside_card(config: JSON, _inputs: Sequence[JSON]) -> str | None:
    return "the esslivedata-head profile (RB-R17)" if _profile(config) != CARD else None


def _outside_head(config: JSON, inputs: Sequence[JSON]) -> str | None:
    if _profile(config) != HEAD:
        return "the card profile (RB-R17)"
    try:
        decoded = codec.config_from_json(config)
        trace = [codec.input_from_json(i) for i in inputs]
    except InvalidInput:
        return None  # the reference refuses it: outside by ``refused``
    if near_stall(decoded, trace) is not None:
        return "a clock reading at the stall boundary (RB-D17)"
    return None


def _settle_head(config: Any, inputs: list[Any]) -> list[Any]:
    return off_stall_boundary(config, inputs)


TARGETS = {
    "esslivedata-card": Target(
        name="esslivedata-card",
        summary="ESS RateAwareMessageBatcher, card revision (Python): card profile, "
                "one batch per poll",
        observe="upstream",
        instances=tuple(e.instance() for e in EXPLORED if not e.config.head),
        fuzz=_fuzz(CARD, reuse=False),
        outside=_outside_card,
        refused=REFUSED,
    ),
    "esslivedata-head": Target(
        name="esslivedata-head",
        summary="ESS RateAwareMessageBatcher, head revision (Python): head profile with "
                "clock readings off the stall boundary",
        observe="upstream",
        instances=tuple(e.instance() for e in EXPLORED if e.config.head),
        fuzz=_fuzz(HEAD, reuse=False, clocked=True),
        outside=_outside_head,
        refused=REFUSED,
        settle=_settle_head,
    ),
}

TRACES = Traces(instances=INSTANCES, fuzz=_fuzz(), profiles=PROFILES, rules=RULES,
                targets=TARGETS)
