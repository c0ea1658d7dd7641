"""``timealign diff``: what changes between two variants of an algorithm's config
(spec/conformance.md, CF-R21 to CF-R25).

Two variants (``--a profile=card --b profile=esslivedata-head``, ``--a arithmetic=ros2 --b
arithmetic=ros1``) are the same reference run under two config changes. The conformance
machinery finds where they differ: the shipped vectors, every trace of the explorer's
instances (the algorithm's and its targets') up to a depth, and seeded random traces from
the algorithm's strategies (its own and its targets'), all in process. A difference is
named by the rules at its *first diverging input* (the first input after which the two
states or outputs differ, :mod:`.fired`).

Its *cause* is named counterfactually where the two variants are two profiles of the
algorithm's :class:`~timealign.rulebook.Book` (CF-R40) and nothing else differs: the trace
is run under A with one of B's overrides swapped in (:meth:`~timealign.rulebook.Book.swapped`),
each slot where the two tables differ in turn, then pairs of them within
:data:`PAIR_BUDGET`; the override(s) whose swap makes A's outputs B's are the cause (the
rule of B's function, in place of A's). Otherwise (other config changes, or no swap
within the budget) the cause is the first rule that ran at the first diverging input in one
variant only (per variant, in call order). A difference is shrunk while it keeps its cause
and reported once per cause with its minimal trace, the values the cause's calls took
under each variant, the first input whose outputs differ, and whether only their order
differs.
"""

from __future__ import annotations

import itertools
import json
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from random import Random
from typing import Any

import attrs

from timealign import Algorithm, registry, rulebook
from timealign.algorithm import run_json
from timealign.conformance import fired, rules
from timealign.conformance.diagnose import PAIR_BUDGET, singles_then_pairs
from timealign.conformance.harness import file_name, shrink
from timealign.conformance.instances import walk
from timealign.conformance.strategies import reproducible
from timealign.conformance.suites import shipped
from timealign.conformance.where import value as value_of
from timealign.errors import InvalidInput
from timealign.outputs import filled, resolved
from timealign.progress import counted
from timealign.traces import Instance
from timealign.vectors import Vector

JSON = dict[str, Any]
FORMAT = "timealign.diff/1"
#: Rounds of the random search per strategy: each looks for a difference not seen yet.
ROUNDS = 8


@attrs.frozen
class Variant:
    """One side of a diff: config changes applied over every trace's config (CF-R21)."""

    label: str
    changes: Mapping[str, Any]

    def config(self, config: Mapping[str, Any]) -> JSON:
        return {**config, **self.changes}


def variant(algorithm: str | Algorithm[Any, Any, Any, Any], texts: Sequence[str],
            option: str = "--a") -> Variant:
    """Parse ``KEY=VALUE`` changes (VALUE as JSON, else as a string); :class:`InvalidInput`
    (CF-R21) on a malformed change or a key the algorithm's config does not have."""
    reference = registry.get(algorithm) if isinstance(algorithm, str) else algorithm
    changes: dict[str, Any] = {}
    for text in texts:
        for part in (p for p in text.split(",") if p.strip()):
            key, sign, value = part.partition("=")
            if not sign or not key.strip():
                raise InvalidInput(option, "CF-R21", "must be KEY=VALUE changes of the config",
                                   text)
            changes[key.strip()] = value_of(value.strip())
    if not changes:
        raise InvalidInput(option, "CF-R21", "needs at least one KEY=VALUE change", texts)
    probe = _probe_config(reference)
    try:
        reference.codec.config_from_json({**probe, **changes})
    except InvalidInput as error:
        if "unknown" in error.message:
            raise InvalidInput(option, "CF-R21", f"not a config field of {reference.name}: "
                               f"{error.message}", texts) from None
    for key, value in changes.items():
        _refuse_impossible(reference, option, key, value)
    label = " ".join(f"{k}={json.dumps(v) if not isinstance(v, str) else v}"
                     for k, v in changes.items())
    return Variant(label, changes)


def _refuse_impossible(reference: Algorithm[Any, Any, Any, Any], option: str, key: str,
                       value: Any) -> None:
    """CF-R21: a change whose value every config tried refuses for that very field
    (``queue_size=abc``) is a usage error, exit 2; a value refused only under some configs
    (a bound list of one length) stays a difference at the config."""
    refusals = []
    for config in _probe_configs(reference):
        try:
            reference.codec.config_from_json({**config, key: value})
        except InvalidInput as error:
            if error.field.split("[")[0].split(".")[0] != key:
                return
            refusals.append(error)
        else:
            return
    if refusals:
        raise InvalidInput(option, "CF-R21", f"{key}={json.dumps(value)}: no config takes "
                           f"this value ({refusals[0].message}, rule {refusals[0].rule})",
                           None)


def _probe_configs(reference: Algorithm[Any, Any, Any, Any]) -> list[JSON]:
    knowledge = reference.checks.traces
    if knowledge is None:
        return []
    return [reference.codec.config_to_json(instance.config) for instance in knowledge.instances]


def _probe_config(reference: Algorithm[Any, Any, Any, Any]) -> JSON:
    configs = _probe_configs(reference)
    return configs[0] if configs else {}


@attrs.frozen
class Divergence:
    """One way the variants differ: a minimal trace (each side runs it with its changes),
    its first diverging input, the rules only one side runs there and its cause (the first
    of them per side), the values of the cause's calls, the first input whose outputs
    differ and whether only their order does (CF-R22, CF-R23)."""

    source: str
    vector: Vector
    at: int | None
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    outputs_a: tuple[JSON, ...]
    outputs_b: tuple[JSON, ...]
    original_size: int
    cause: tuple[str | None, str | None] = (None, None)
    values: tuple[str, ...] = ()
    observable: int | None = None
    order_only: bool = False
    refused: str = ""  # "A" or "B" when one side refuses there
    swapped: tuple[str, ...] = ()  # the slots whose swap to B's function is the cause

    @property
    def key(self) -> tuple[object, ...]:
        """The cause: the slots whose swap makes A's outputs B's, when found (one entry
        per cause); else the first rule per side, which side refuses, and whether at the
        config (a config refusal is not a message's, though one rule may name both)."""
        if self.swapped:
            return ("swap", *self.swapped)
        return (*self.cause, self.refused, self.at is None)

    @property
    def input(self) -> JSON | None:
        return self.vector.inputs[self.at] if self.at is not None and \
            0 <= self.at < len(self.vector.inputs) else None

    def to_json(self) -> JSON:
        return {"source": self.source, "name": self.vector.name, "config": self.vector.config,
                "inputs": list(self.vector.inputs), "at": self.at,
                "cause_a": self.cause[0], "cause_b": self.cause[1],
                "values": list(self.values), "observable_at": self.observable,
                "order_only": self.order_only, "refused": self.refused,
                "swapped": list(self.swapped),
                "only_a": list(self.only_a), "only_b": list(self.only_b),
                "outputs_a": list(self.outputs_a), "outputs_b": list(self.outputs_b),
                "original_size": self.original_size}


@attrs.define
class Tried:
    """How many traces one source ran and how many of them differed."""

    source: str
    run: int = 0
    differ: int = 0
    note: str = ""


@attrs.define
class DiffReport:
    """The outcome of a diff (CF-R24): every distinct difference with its minimal trace,
    and per rule whether both variants run it or only one, over the traces shown; the
    specs' "What changes between profiles" sections are written from it (CF-R26)."""

    algorithm: str
    a: Variant
    b: Variant
    tried: list[Tried] = attrs.Factory(list)
    divergences: list[Divergence] = attrs.Factory(list)
    census: dict[str, str] = attrs.Factory(dict)  # rule -> "both", "a" or "b"

    @property
    def ok(self) -> bool:
        return not self.divergences

    def rules(self) -> tuple[str, ...]:
        found = {r for d in self.divergences
                 for r in ([i for c in d.cause if c is not None for i in c.split(", ")]
                           or [*d.only_a, *d.only_b])}
        return tuple(sorted(found, key=rules.order))

    def text(self) -> str:
        lines = [f"timealign diff {self.algorithm}: A {self.a.label}, B {self.b.label}"]
        for t in self.tried:
            lines.append(f"  {t.source:8} run {t.run:6}  differ {t.differ:5}"
                         + (f"  ({t.note})" if t.note else ""))
        for number, d in enumerate(self.divergences, 1):
            where = "config" if d.at is None else f"input {d.at}"
            lines.append(f"- {number}. {cause_text(d)}: "
                         f"{counted(len(d.vector.inputs), 'input')} "
                         f"(from {d.original_size}, {d.source}), first at {where}"
                         + (f": {json.dumps(d.input)}" if d.input is not None else ""))
            lines.append(f"    {observed_text(d)}")
            lines += [f"    {value}" for value in d.values]
            others = describe(d, self.a, self.b)
            if others != cause_text(d):
                lines.append(f"    rules only one side runs there: {others}")
            lines.append(f"    trace  {json.dumps(list(d.vector.inputs))}")
            lines.append(f"    config {json.dumps(d.vector.config)}")
            lines.append(f"    A {json.dumps(list(d.outputs_a))}")
            lines.append(f"    B {json.dumps(list(d.outputs_b))}")
        if self.census:
            for side, title in (("both", "both"), ("a", f"only A ({self.a.label})"),
                                ("b", f"only B ({self.b.label})")):
                chosen = [r for r, s in self.census.items() if s == side]
                if chosen:
                    lines.append(f"rules run by {title}: {', '.join(chosen)}")
        ways = counted(len(self.divergences), "way")
        lines.append("AGREES on everything tried" if self.ok else
                     f"DIFFERS in {ways}, on {', '.join(self.rules())}")
        return "\n".join(lines)

    def to_json(self) -> JSON:
        return {"format": FORMAT, "algorithm": self.algorithm,
                "a": dict(self.a.changes), "b": dict(self.b.changes),
                "tried": [attrs.asdict(t) for t in self.tried],
                "differences": [d.to_json() for d in self.divergences],
                "rules": self.census}


def cause_text(d: Divergence) -> str:
    """The cause of a difference, by side: ``RB-R21 (B) in place of RB-R8 (A)`` when named
    by a swap; else ``RB-R21 (only B)``, ``AT-D23 (only A), AT-R16 (only B)``."""
    if d.swapped:
        return f"{d.cause[1]} (B) in place of {d.cause[0]} (A)"
    parts = [f"{rule} (only {side})" for rule, side in zip(d.cause, "AB", strict=True)
             if rule is not None]
    if not parts:  # no cause recorded: the rules of each side
        parts = [f"{', '.join(rules)} (only {side})"
                 for rules, side in ((d.only_a, "A"), (d.only_b, "B")) if rules]
    return ", ".join(parts) or "no rule named (values differ)"


def observed_text(d: Divergence) -> str:
    """Where the outputs first differ, and whether in their order only."""
    refusing = f" ({d.refused} refuses)" if d.refused else ""
    if d.observable is None:
        return f"outputs differ at the config{refusing}"
    if refusing:
        return f"outputs first differ at input {d.observable}{refusing}"
    order = " (order only: the same outputs, in another order)" if d.order_only else ""
    return f"outputs first differ at input {d.observable}{order}"


def describe(d: Divergence, a: Variant, b: Variant) -> str:
    """The rules of a difference, by side: ``RB-R20 (only B)``."""
    parts = [f"{', '.join(d.only_a)} (only A)"] if d.only_a else []
    parts += [f"{', '.join(d.only_b)} (only B)"] if d.only_b else []
    return "; ".join(parts) or "no rule named (values differ)"


class Compare:
    """Runs one trace under both variants and names its difference (CF-R22, CF-R23)."""

    def __init__(self, reference: Algorithm[Any, Any, Any, Any], a: Variant,
                 b: Variant) -> None:
        self.reference, self.a, self.b = reference, a, b
        self.book, self.profiles = _profiles(reference, a, b)

    def __call__(self, source: str, vector: Vector) -> Divergence | None:
        changed = {*self.a.changes, *self.b.changes}  # each variant sets them: not shown
        vector = attrs.evolve(vector, config={k: v for k, v in vector.config.items()
                                              if k not in changed})
        config_a, config_b = self.a.config(vector.config), self.b.config(vector.config)
        outputs_a = tuple(run_json(self.reference, config_a, vector.inputs))
        outputs_b = tuple(run_json(self.reference, config_b, vector.inputs))
        if outputs_a == outputs_b:
            return None
        at = self.first_diverging(config_a, config_b, vector.inputs)
        ran_a = fired.executed_at(self.reference, config_a, vector.inputs, at)
        ran_b = fired.executed_at(self.reference, config_b, vector.inputs, at)
        only_a, only_b = fired.differing_rules(self.reference, ran_a, ran_b)
        if not only_a and not only_b:  # same lines, other values: the outputs' rules
            shown = [o for o in (*outputs_a, *outputs_b) if o.get("input") == at]
            only_a = frozenset(rules.exercised(self.reference, shown))
        swapped = self.counterfactual(config_a, vector.inputs, outputs_a, outputs_b)
        if swapped:
            cause, values = self.swap_cause(swapped, config_a, config_b, vector.inputs,
                                            (ran_a.calls, ran_b.calls))
        else:
            cause = _cause(ran_a, ran_b, only_a, only_b)
            values = _values(ran_a, ran_b, cause)
        return Divergence(source, vector, at, _sorted(only_a), _sorted(only_b), outputs_a,
                          outputs_b, len(vector.inputs), cause, values,
                          _observable(outputs_a, outputs_b),
                          _canonical(outputs_a) == _canonical(outputs_b),
                          _refused_side(ran_a, ran_b), swapped)

    def counterfactual(self, config_a: JSON, inputs: Sequence[JSON],
                       outputs_a: Sequence[JSON], outputs_b: Sequence[JSON]
                       ) -> tuple[str, ...]:
        """The slots (one, else a pair within :data:`PAIR_BUDGET`) whose function under
        B, swapped into A's run, makes its outputs B's up to the first input whose outputs
        differ (what a later input shows may have another cause: its own difference);
        ``()`` when none does or the variants are not two profiles."""
        if self.book is None or self.profiles is None:
            return ()
        book, (a, b) = self.book, self.profiles
        first = _observable(outputs_a, outputs_b)
        wanted = _through(outputs_b, first)
        for chosen in singles_then_pairs(book.differing(a, b), PAIR_BUDGET):
            with book.swapped({s: book.entry(b, s) for s in chosen}):
                got = run_json(self.reference, config_a, inputs)
            if _through(got, first) == wanted:
                return chosen
        return ()

    def swap_cause(self, swapped: tuple[str, ...], config_a: JSON, config_b: JSON,
                   inputs: Sequence[JSON],
                   there: tuple[Sequence[rulebook.Call], Sequence[rulebook.Call]]
                   ) -> tuple[tuple[str | None, str | None], tuple[str, ...]]:
        """The rules of A's and B's functions in the swapped slots, and per slot the first
        pair of their calls (A's under A, B's under B; their plain arguments and results)
        whose values differ: among the calls ``there`` (at the first diverging input) when
        both sides call it there, else over the whole run."""
        assert self.book is not None and self.profiles is not None
        ids: list[list[str]] = [[], []]
        made: list[dict[str, list[rulebook.Call]]] = []  # per side: slot -> its calls
        for side, (profile, config) in enumerate(zip(self.profiles, (config_a, config_b),
                                                     strict=True)):
            slot_of = {self.book.entry(profile, s).__code__: s for s in swapped}
            for function in (self.book.entry(profile, s) for s in swapped):
                found = rulebook.rule_of(function.__code__)
                assert found is not None
                ids[side].append(found.id)
            calls: list[rulebook.Call] = []
            with rulebook.calls(calls):
                run_json(self.reference, config, inputs)
            made.append({s: [c for c in calls if slot_of.get(c.rule.code) == s]
                         for s in swapped})
            for slot in swapped:
                near = [c for c in there[side] if slot_of.get(c.rule.code) == slot]
                if near:
                    made[side][f"there {slot}"] = near
        shown: list[str] = []
        for slot in swapped:  # the first call whose values differ between the sides
            key = f"there {slot}" if all(f"there {slot}" in m for m in made) else slot
            pairs = list(itertools.zip_longest(made[0][key], made[1][key]))
            both = [p for p in pairs if p[0] is not None and p[1] is not None]
            chosen = next((p for p in both if (p[0].arguments, p[0].result)
                           != (p[1].arguments, p[1].result)),
                          both[0] if both else pairs[0] if pairs else (None, None))
            shown += [f"{side}: {_call_text(call)}"
                      for side, call in zip("AB", chosen, strict=True) if call is not None]
        return ((", ".join(ids[0]), ", ".join(ids[1])), tuple(shown))

    def first_diverging(self, config_a: JSON, config_b: JSON,
                        inputs: Sequence[JSON]) -> int | None:
        """The first input after which the two states or outputs differ; ``None`` when a
        variant refuses the config."""
        step, decode = self.reference.machine.step, self.reference.codec.input_from_json
        try:
            first, second = (self.reference.codec.config_from_json(config_a),
                             self.reference.codec.config_from_json(config_b))
        except InvalidInput:
            return None
        initial = self.reference.machine.initial
        state_a, state_b = initial(first), initial(second)
        for index, raw in enumerate(inputs):
            next_a, out_a = _step(step, decode, first, state_a, raw)
            next_b, out_b = _step(step, decode, second, state_b, raw)
            if _bare(next_a) != _bare(next_b) or out_a != out_b:
                return index
            state_a, state_b = next_a, next_b
        return len(inputs) - 1 if inputs else None


def _through(outputs: Sequence[JSON], last: int | None) -> list[JSON]:
    """The outputs of the config and of the inputs up to ``last`` (all when ``None``)."""
    return [o for o in outputs if last is None or not isinstance(o.get("input"), int)
            or o["input"] <= last]


def _profiles(reference: Algorithm[Any, Any, Any, Any], a: Variant, b: Variant
              ) -> tuple[rulebook.Book | None, tuple[str, str] | None]:
    """The algorithm's book and the two profiles the variants name, when they differ in
    the profile alone."""
    book = rulebook.book_of(fired.package_of(reference))
    if book is None or book.key is None:  # no config field names a profile
        return book, None
    first, second = a.changes.get(book.key), b.changes.get(book.key)
    rest_a = {k: v for k, v in a.changes.items() if k != book.key}
    rest_b = {k: v for k, v in b.changes.items() if k != book.key}
    if (first not in book.profiles or second not in book.profiles or first == second
            or rest_a != rest_b):
        return book, None
    return book, (str(first), str(second))


def _call_text(call: rulebook.Call) -> str:
    arguments = ", ".join(f"{name}={value}" for name, value in call.arguments)
    result = f" = {call.result}" if call.result not in (None, "None") else ""
    return f"{call.rule.name}({arguments}){result} ({call.rule.id})"


def _bare(state: Any) -> Any:
    """A state without the config it carries (DRV-R10): the two variants' configs differ by
    design, so only what the config does to the state counts as a divergence."""
    if attrs.has(type(state)) and "config" in attrs.fields_dict(type(state)):
        return attrs.evolve(state, config=None)
    return state


def _step(step: Callable[..., Any], decode: Callable[[Any], Any], config: Any, state: Any,
          raw: JSON) -> tuple[Any, Any]:
    try:
        return step(config, state, decode(raw))  # type: ignore[no-any-return]
    except InvalidInput as error:
        return state, ("refused", error.rule)


def _diverged(ran_a: fired.Executed, ran_b: fired.Executed) -> int:
    """How many rule calls the two sides make alike before they part."""
    same = 0
    for call_a, call_b in zip(ran_a.calls, ran_b.calls, strict=False):
        if call_a.rule.code is not call_b.rule.code:
            break
        same += 1
    return same


def _cause(ran_a: fired.Executed, ran_b: fired.Executed, only_a: Iterable[str],
           only_b: Iterable[str]) -> tuple[str | None, str | None]:
    """The first rule that ran in one variant only: where the calls are recorded, the
    first call, from where the two sides part, of a rule only its side runs (both sides'
    when they get there at the same call); else, and for a refusal, each side's first
    such rule by id."""
    chosen_a, chosen_b = set(only_a), set(only_b)
    if not (ran_a.calls or ran_b.calls):
        return (_sorted(chosen_a)[0] if chosen_a else None,
                _sorted(chosen_b)[0] if chosen_b else None)
    if _refused_side(ran_a, ran_b):  # the refusal's own rule; the other side's own rule
        if ran_a.rule and ran_b.rule:
            return ran_a.rule, ran_b.rule
        parted = _diverged(ran_a, ran_b)
        if ran_a.rule:
            return ran_a.rule, _profile_call(ran_b, parted)
        return _profile_call(ran_a, parted), ran_b.rule
    parted = _diverged(ran_a, ran_b)

    def first(ran: fired.Executed, chosen: set[str]) -> tuple[int, str] | None:
        return next(((k, c.rule.id) for k, c in enumerate(ran.calls)
                     if k >= parted and c.rule.id in chosen), None)

    found_a, found_b = first(ran_a, chosen_a), first(ran_b, chosen_b)
    if found_a is not None and found_b is not None and found_a[0] != found_b[0]:
        if found_a[0] < found_b[0]:
            found_b = None
        else:
            found_a = None
    return (found_a[1] if found_a else None, found_b[1] if found_b else None)


def _profile_call(ran: fired.Executed, parted: int) -> str | None:
    """The rule of the call where the sides part when it is a function of some profiles
    only: what the side that does not refuse does instead (head's ``RB-R27`` against card's
    refusal)."""
    call = ran.calls[parted] if parted < len(ran.calls) else None
    return call.rule.id if call is not None and call.rule.profiles is not None else None


def _refused_side(ran_a: fired.Executed, ran_b: fired.Executed) -> str:
    """"A" or "B" when only that side refuses, "A B" when both refuse differently."""
    if ran_a.refused == ran_b.refused:
        return ""
    return " ".join(side for side, ran in (("A", ran_a), ("B", ran_b)) if ran.refused)


def _values(ran_a: fired.Executed, ran_b: fired.Executed,
            cause: tuple[str | None, str | None]) -> tuple[str, ...]:
    """The calls where the two sides part and the cause's first call, with their plain
    arguments and results: ``B: _bootstrap_at_anchor(length=1000) = 1700 (RB-R21)``."""
    parted = _diverged(ran_a, ran_b)
    shown: list[str] = []
    for side, ran, rule in (("A", ran_a, cause[0]), ("B", ran_b, cause[1])):
        chosen = [*ran.calls[parted:parted + 1],
                  *(c for c in ran.calls[parted:] if c.rule.id == rule)][:2]
        for call in dict.fromkeys(chosen):
            shown.append(f"{side}: {_call_text(call)}")
    return tuple(shown)


def _observable(outputs_a: Sequence[JSON], outputs_b: Sequence[JSON]) -> int | None:
    """The first input whose outputs differ between the variants (``None``: the config,
    or outputs of no input)."""
    inputs = sorted({index for o in (*outputs_a, *outputs_b)
                     if isinstance(index := o.get("input"), int)})
    for index in inputs:
        if ([o for o in outputs_a if o.get("input") == index]
                != [o for o in outputs_b if o.get("input") == index]):
            return index
    return None


def _canonical(outputs: Sequence[JSON]) -> list[str]:
    """The outputs with every list sorted, inside and out: equal for two runs whose
    outputs differ in order only."""

    def ordered(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: ordered(v) for k, v in value.items()}
        if isinstance(value, list):
            return sorted((ordered(v) for v in value), key=json.dumps)
        return value

    return sorted(json.dumps(ordered(o), sort_keys=True) for o in outputs)


def _sorted(ids: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(ids), key=rules.order))


class _Collector:
    """Keeps the smallest trace of each distinct difference, shrunk (CF-R22)."""

    def __init__(self, compare: Compare) -> None:
        self.compare = compare
        self.found: dict[tuple[object, ...], Divergence] = {}

    def offer(self, found: Divergence) -> None:
        known = self.found.get(found.key)
        if known is not None and len(known.vector.inputs) <= len(found.vector.inputs):
            return
        key, source = found.key, found.source

        def keeps(candidate: Vector) -> bool:
            again = self.compare(source, candidate)
            return again is not None and again.key == key

        minimal = shrink(found.vector, keeps)
        again = self.compare(source, minimal)
        assert again is not None
        again = attrs.evolve(again, original_size=found.original_size)
        if known is None or len(again.vector.inputs) < len(known.vector.inputs):
            self.found[key] = again


def _instances(reference: Algorithm[Any, Any, Any, Any]) -> list[Instance]:
    knowledge = reference.checks.traces
    if knowledge is None:
        return []
    chosen: dict[str, Instance] = {i.name: i for i in knowledge.instances}
    for target in knowledge.targets.values():
        for instance in target.instances:
            chosen.setdefault(instance.name, instance)
    return list(chosen.values())


def _explored(reference: Algorithm[Any, Any, Any, Any], depth: int) -> Iterator[Vector]:
    for instance in _instances(reference):
        encoded = reference.codec.config_to_json(instance.config)
        closing = reference.machine.end(instance.config)
        for number, trace in enumerate(walk(instance.moves, depth)):
            yield Vector(algorithm=reference.name,
                         name=f"{instance.name.replace('/', '_')}_{number}", config=encoded,
                         inputs=tuple(reference.codec.input_to_json(i) for i in (*trace, closing)))


def _fuzz(collector: _Collector, reference: Algorithm[Any, Any, Any, Any], count: int,
          seed: int, size: int, tried: Tried) -> None:
    """Seeded random traces from every strategy of the algorithm (its own, then each
    target's), each searched again until no new difference turns up (CF-R22)."""
    from hypothesis import HealthCheck, Phase, Verbosity, find, settings
    from hypothesis.errors import NoSuchExample

    from timealign.conformance.strategies import traces

    knowledge = reference.checks.traces
    targets = [None, *knowledge.targets.values()] if knowledge is not None else []
    chosen = settings(max_examples=count, database=None, deadline=None,
                      phases=(Phase.generate, Phase.shrink), verbosity=Verbosity.quiet,
                      suppress_health_check=list(HealthCheck))
    for position, target in enumerate(targets):
        strategy = traces(reference, size, target)
        for round_ in range(ROUNDS):
            def new(vector: Vector) -> bool:
                tried.run += 1
                found = collector.compare("fuzz", vector)
                tried.differ += found is not None
                return found is not None and found.key not in collector.found

            try:
                with reproducible():
                    example = find(strategy, new, settings=chosen,
                                   random=Random(seed * 1000 + position * 100 + round_))
            except NoSuchExample:
                break
            found = collector.compare("fuzz", attrs.evolve(
                example, name=f"{reference.name}_fuzz_seed{seed}_{position}_{round_}"))
            assert found is not None
            collector.offer(found)
    tried.note = f"seed {seed}"


def diff(algorithm: str | Algorithm[Any, Any, Any, Any], a: Variant, b: Variant, *,
         vectors: Iterable[Vector] | None = None, fuzz: int = 0, seed: int = 0,
         size: int = 30, explore: int = 0, progress: bool = False) -> DiffReport:
    """Run the reference under ``a`` and ``b`` over the shipped (or given) vectors, the
    explorer's instances up to ``explore`` inputs and ``fuzz`` random traces per strategy
    and search round, and report every distinct difference (CF-R21 to CF-R24)."""
    reference = registry.get(algorithm) if isinstance(algorithm, str) else algorithm
    compare = Compare(reference, a, b)
    collector = _Collector(compare)
    report = DiffReport(reference.name, a, b)
    started = time.monotonic()

    def tick(tried: Tried) -> None:
        if progress and time.monotonic() - started > 2:
            print(f"diff: {tried.source} {counted(tried.run, 'trace')}, {tried.differ} differ",
                  file=sys.stderr, flush=True)

    chosen = shipped(reference.name) if vectors is None else list(vectors)
    if chosen:
        tried = Tried("vectors")
        for vector in chosen:
            tried.run += 1
            found = compare("vectors", vector)
            if found is not None:
                tried.differ += 1
                collector.offer(found)
            tick(tried)
        report.tried.append(tried)
    if explore:
        tried = Tried("explore", note=f"depth {explore}")
        for vector in _explored(reference, explore):
            tried.run += 1
            found = compare("explore", vector)
            if found is not None:
                tried.differ += 1
                collector.offer(found)
        report.tried.append(tried)
        tick(tried)
    if fuzz:
        tried = Tried("fuzz")
        _fuzz(collector, reference, fuzz, seed, size, tried)
        report.tried.append(tried)
    report.divergences = sorted(collector.found.values(), key=lambda d: (
        [rules.order(r.split(", ")[0]) for r in d.cause[::-1] if r], len(d.vector.inputs)))
    report.census = census(reference, a, b, [*chosen, *(d.vector for d in report.divergences)])
    return report


def census(reference: Algorithm[Any, Any, Any, Any], a: Variant, b: Variant,
           traces: Iterable[Vector]) -> dict[str, str]:
    """Per rule the rule text runs over ``traces``: ``a`` (or ``b``) when its rule
    functions are called under that variant only, in no trace under the other; ``both``
    otherwise (CF-R24). Read from the record of calls alone: a refusal is the call of the
    rule function that raised it."""
    ran_a: set[str] = set()
    ran_b: set[str] = set()
    for vector in traces:
        ran_a |= fired.run_executed(reference, a.config(vector.config), vector.inputs).ran
        ran_b |= fired.run_executed(reference, b.config(vector.config), vector.inputs).ran
    found = {r: "a" if r not in ran_b else "b" if r not in ran_a else "both"
             for r in ran_a | ran_b}
    return {r: found[r] for r in sorted(found, key=rules.order)}


def picture(report: DiffReport, d: Divergence, width: float = 12.0) -> bytes | None:
    """The difference's trace drawn under each variant, side by side on one scale (SVG,
    PL-R11); ``None`` when a variant refuses the config (nothing to draw). Needs the
    ``plot`` extra (matplotlib)."""
    from timealign.plot.draw import render_side_by_side
    from timealign.plot.timeline import from_vector

    sides = []
    for name, chosen in (("A", report.a), ("B", report.b)):
        vector = attrs.evolve(d.vector, config=chosen.config(d.vector.config))
        try:
            timeline = from_vector(vector)
        except InvalidInput:
            return None
        sides.append(attrs.evolve(timeline, title=f"{name}: {chosen.label}"))
    return render_side_by_side(sides[0], sides[1], width=width)


def save(report: DiffReport, folder: str | Path, pictures: bool = True) -> list[Path]:
    """CF-R25: each difference as two ``timealign.vector/1`` files inside ``folder``, one
    per variant (its config, the reference's outputs), and with ``pictures`` its picture,
    under safe names; the folder is filled as CLI-R5 says (absent, empty or an earlier
    ``--save`` of diff, replaced whole)."""
    target = Path(resolved(folder))
    written: list[Path] = []
    with filled(folder, "diff --save", "--save") as staging:
        _save_into(report, staging, pictures,
                   lambda path: written.append(target / path.name))
    return written


def _save_into(report: DiffReport, staging: Path, pictures: bool,
               saved: Callable[[Path], None]) -> None:
    def write(name: str, suffix: str, data: bytes) -> None:
        path = staging / f"{file_name(name)}{suffix}"
        assert path.resolve().parent == staging.resolve(), path  # never outside
        path.write_bytes(data)
        saved(path)

    for number, d in enumerate(report.divergences, 1):
        stem = f"{report.algorithm}_diff_{number}"
        for side, chosen, outputs in (("a", report.a, d.outputs_a),
                                      ("b", report.b, d.outputs_b)):
            vector = attrs.evolve(
                d.vector, name=f"{stem}_{side}", config=chosen.config(d.vector.config),
                outputs=outputs, rules=d.only_a if side == "a" else d.only_b,
                description=f"timealign diff: {chosen.label} "
                            f"({describe(d, report.a, report.b)})")
            write(f"{stem}_{side}", ".json",
                  (json.dumps(vector.to_json(), indent=1) + "\n").encode("utf-8"))
        drawn = picture(report, d) if pictures else None
        if drawn is not None:
            write(stem, ".svg", drawn)
