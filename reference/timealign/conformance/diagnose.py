"""Diagnosis of a difference by the catalogued rule variants (CF-R42), and the grouping of
differences by their explanation (CF-R43).

A difference's shrunk trace is run through the rule text with each catalogued variant of
the algorithm swapped in (CF-R41; singles, then pairs within :data:`PAIR_BUDGET`); a
variant (or pair) whose outputs, projected by the target's profile as the
:class:`~timealign.conformance.harness.Judge` compares answers, equal what the
implementation answered *explains* it. Each explanation is then confirmed on the run's
other differing traces (the first :data:`KEPT` of them, with what the implementation
answered): ``explained by AT-R6 ~ tie-highest (matches 31 of 31 differing traces)``.
Differences are grouped by their explanation; an unexplained one by its symptoms (the
rules of its diverging outputs, CF-R32).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any, TypeVar

import attrs

from timealign import Algorithm, jsontext, registry, rulebook
from timealign.conformance import catalogue, observe
from timealign.progress import counted
from timealign.traces import Profile
from timealign.vectors import Vector

JSON = dict[str, Any]
T = TypeVar("T")
#: The most pairs of variants (or of a profile's overrides, CF-R23) tried together when no
#: single one matches.
PAIR_BUDGET = 45
#: The run's differing traces kept (with the implementation's answers) to confirm an
#: explanation on; the rest are counted.
KEPT = 200
Clock = Callable[[], float]


def singles_then_pairs(items: Sequence[T], budget: int = PAIR_BUDGET,
                       apart: Callable[[T, T], bool] = lambda a, b: True
                       ) -> Iterator[tuple[T, ...]]:
    """Each item alone, then pairs of them (those ``apart`` accepts) up to ``budget``."""
    yield from ((item,) for item in items)
    yield from itertools.islice(((a, b) for a, b in itertools.combinations(items, 2)
                                 if apart(a, b)), budget)


@attrs.frozen
class Explanation:
    """A variant set (one, or a pair) that reproduces a difference, with how many of the
    run's differing traces it reproduces (``None`` until confirmed)."""

    variants: tuple[rulebook.Table, ...]
    #: the labels of explanations found before that it needs beside it (CF-R43): a pair
    #: of which one half is a difference already found reads as the other half
    along: tuple[str, ...] = ()
    matches: int | None = None
    of: int | None = None
    seen: int | None = None  # the run's differing traces, kept or not

    @property
    def label(self) -> str:
        """``AT-R6 ~ tie-highest``; a pair ``AT-R6 ~ tie-highest + AT-R8 ~ strict``."""
        return " + ".join(t.label for t in self.variants)

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(t.rule for t in self.variants if t.rule is not None)

    def text(self) -> str:
        along = f" (with {', '.join(self.along)}, found before)" if self.along else ""
        if self.matches is None or self.of is None:
            return self.label + along
        beyond = f" kept, of {self.seen}" if self.seen is not None and self.seen > self.of \
            else ""
        return (f"{self.label}{along} (matches {self.matches} of "
                f"{counted(self.of, 'differing trace')}{beyond})")

    def to_json(self) -> JSON:
        return {"variants": [t.label for t in self.variants], "along": list(self.along),
                "rules": list(self.rules), "about": [t.about for t in self.variants],
                "matches": self.matches, "of": self.of, "seen": self.seen}


@attrs.frozen
class Diagnosis:
    """What the catalogue says of one difference (CF-R42): the explanations of its trace
    (best confirmed first; none: not explained), the variant sets tried, and the seconds
    it took."""

    explanations: tuple[Explanation, ...]
    symptoms: tuple[str, ...]
    tried: int
    catalogued: int
    seconds: float

    @property
    def key(self) -> tuple[str, ...]:
        """The group of its difference when explained (CF-R43): the variant sets."""
        return ("explained", *sorted(e.label for e in self.explanations))

    def text(self) -> str:
        """The report's line: ``explained by AT-R6 ~ tie-highest (matches 31 of 31
        differing traces)``, or ``not explained by any catalogued variant (...)``."""
        if self.explanations:
            return "explained by " + ", or by ".join(e.text() for e in self.explanations)
        if not self.catalogued:
            return "not explained: no catalogued variant of this algorithm"
        symptoms = f"; symptoms {', '.join(self.symptoms)}" if self.symptoms else ""
        return (f"not explained by any catalogued variant (tried "
                f"{counted(self.tried, 'variant set')} of {self.catalogued} variants"
                f"{symptoms})")

    def to_json(self) -> JSON:
        return {"explained": [e.to_json() for e in self.explanations],
                "symptoms": list(self.symptoms), "tried": self.tried,
                "catalogued": self.catalogued, "seconds": round(self.seconds, 4)}


class Diagnoser:
    """The catalogue of one algorithm applied to one run's differences (CF-R42, CF-R43).

    ``reference`` names the algorithm whose rule text (``registry.get``) runs with the
    variants; ``profile`` is the Judge's projection. It keeps the run's differing traces
    (:meth:`keep`) and the explanations found (:meth:`known`), so a later trace is grouped
    with the first explanation that reproduces it."""

    def __init__(self, reference: Algorithm[Any, Any, Any, Any], profile: Profile,
                 variants: Sequence[rulebook.Table] | None = None,
                 pair_budget: int = PAIR_BUDGET, kept: int = KEPT,
                 clock: Clock = time.monotonic) -> None:
        self.profile, self.pair_budget, self.most, self.clock = profile, pair_budget, kept, clock
        # an algorithm outside the registry has no catalogue
        self.rule_text: Algorithm[Any, Any, Any, Any] | None = registry.get(
            reference.name) if reference.name in registry.names() else None
        if variants is None:
            variants = () if self.rule_text is None else catalogue.variants(reference.name)
        self.variants = tuple(variants)
        self.kept: list[tuple[Vector, tuple[JSON, ...]]] = []
        self.seen = 0  # differing traces of the run, kept or not
        self.found: list[Diagnosis] = []  # explained diagnoses, in the order found
        self._memo: dict[str, Diagnosis] = {}
        self._explained: dict[str, Diagnosis] = {}
        self._reproduces: dict[tuple[tuple[str, ...], str], bool] = {}

    def keep(self, vector: Vector, observed: Sequence[JSON]) -> None:
        """One differing trace of the run, with what the implementation answered: what an
        explanation is confirmed on (the first :data:`KEPT`)."""
        self.seen += 1
        if len(self.kept) < self.most:
            self.kept.append((vector, tuple(observed)))

    def outputs(self, chosen: Sequence[rulebook.Table], vector: Vector) -> list[JSON] | None:
        """The rule text's outputs with ``chosen`` swapped in; ``None`` when it raised."""
        if self.rule_text is None:
            return None
        try:
            return catalogue.run_variants(self.rule_text, chosen, dict(vector.config),
                                          list(vector.inputs))
        except Exception:  # a variant that cannot run this trace explains nothing
            return None

    def reproduces(self, chosen: Sequence[rulebook.Table], vector: Vector,
                   observed: Sequence[JSON]) -> bool:
        """Whether the rule text with ``chosen`` swapped in answers ``vector`` as the
        implementation did, as the profile sees both (exactly as the Judge compares)."""
        key = (tuple(t.name for t in chosen), _memo(vector, observed))
        if key not in self._reproduces:  # the rule text is slow: each run once
            got = self.outputs(chosen, vector)
            self._reproduces[key] = got is not None and jsontext.same(
                observe.project(self.profile, got), observe.project(self.profile, observed))
        return self._reproduces[key]

    def diagnose(self, vector: Vector, observed: Sequence[JSON],
                 symptoms: Sequence[str] = (),
                 first: Sequence[rulebook.Table] = ()) -> Diagnosis:
        """CF-R42: the catalogued variants (singles, then pairs, never two of one slot)
        that reproduce ``observed`` on ``vector``; the pairs only when no single one does:
        first each of ``first`` (the variants found so far in the run) with every other
        variant, then others within the pair budget."""
        memo = _memo(vector, observed)
        if memo in self._memo:
            return self._memo[memo]
        start, tried = self.clock(), 0
        found: list[Explanation] = []
        for chosen in self._candidates(first):
            if len(chosen) > 1 and found and len(found[0].variants) == 1:
                break
            tried += 1
            if self.reproduces(chosen, vector, observed):
                found.append(Explanation(chosen))
        made = Diagnosis(tuple(found), tuple(symptoms), tried, len(self.variants),
                         self.clock() - start)
        self._memo[memo] = made
        return made

    def _candidates(self, first: Sequence[rulebook.Table]) -> Iterator[
            tuple[rulebook.Table, ...]]:
        """Singles, then pairs with a variant of ``first``, then the budget's pairs."""
        yield from ((t,) for t in self.variants)
        seen: set[frozenset[str]] = set()
        known = [t for t in self.variants if t in first]
        for a in known:
            for b in self.variants:
                pair = frozenset((a.name, b.name))
                if a is not b and _apart(a, b) and pair not in seen:
                    seen.add(pair)
                    yield (a, b)
        for pair_ in singles_then_pairs(self.variants, self.pair_budget, _apart):
            if len(pair_) == 2 and frozenset(t.name for t in pair_) not in seen:
                yield pair_

    def explain(self, vector: Vector, observed: Sequence[JSON]) -> Diagnosis:
        """CF-R42, CF-R43: :meth:`diagnose`, where a pair one half of which is an
        explanation found before reads as its other half, along the found one (the
        trace shows a known fault and a new one); decided once per trace."""
        memo = _memo(vector, observed)
        if memo not in self._explained:
            made = self.diagnose(vector, observed, first=[
                t for d in self.found for e in d.explanations if len(e.variants) == 1
                for t in e.variants])
            singles = {tuple(t.name for t in e.variants): e.label
                       for d in self.found for e in d.explanations if len(e.variants) == 1}
            reduced = []
            for e in made.explanations:
                names = [t.name for t in e.variants]
                known = [singles[(n,)] for n in names if (n,) in singles]
                left = tuple(t for t in e.variants if (t.name,) not in singles)
                reduced.append(attrs.evolve(e, variants=left, along=tuple(known))
                               if known and left and len(e.variants) > 1 else e)
            unique = {e.label: e for e in reduced}
            self._explained[memo] = attrs.evolve(made, explanations=tuple(unique.values()))
        return self._explained[memo]

    def known(self, diagnosis: Diagnosis) -> None:
        """Remember an explained difference's diagnosis for the grouping (CF-R43)."""
        if diagnosis.explanations and all(d.key != diagnosis.key for d in self.found):
            self.found.append(diagnosis)

    def group(self, vector: Vector, observed: Sequence[JSON]) -> Hashable | None:
        """The group of a differing trace among the explanations found (CF-R43): the first
        whose variant sets reproduce it, else the first of two found whose variant sets
        together do (a trace showing two known faults is no new one); ``None``: no
        explanation found so far reproduces it."""
        for diagnosis in self.found:
            if any(self.reproduces(e.variants, vector, observed)
                   for e in diagnosis.explanations):
                return diagnosis.key
        for first, second in itertools.combinations(self.found, 2):
            for a, b in itertools.product(first.explanations, second.explanations):
                if _apart_sets(a.variants, b.variants) and self.reproduces(
                        (*a.variants, *b.variants), vector, observed):
                    return first.key
        return None

    def _matches(self, chosen: tuple[rulebook.Table, ...],
                 others: Sequence[tuple[rulebook.Table, ...]], vector: Vector,
                 observed: Sequence[JSON]) -> bool:
        """Whether ``chosen`` reproduces a trace alone, or is needed beside one other
        explanation found in the run: the two together do, the other alone does not."""
        return self.reproduces(chosen, vector, observed) or any(
            _apart_sets(chosen, other) and self.reproduces((*chosen, *other), vector, observed)
            and not self.reproduces(other, vector, observed)
            for other in others if other != chosen)

    def confirmed(self, diagnosis: Diagnosis) -> Diagnosis:
        """CF-R42: each explanation with the number of the run's kept differing traces it
        reproduces, alone or needed beside one other explanation found in the run (the
        trace shows both faults), the best first."""
        if not diagnosis.explanations:
            return diagnosis
        start = self.clock()
        others = [e.variants for d in self.found for e in d.explanations]
        counted_ = [attrs.evolve(e, matches=sum(self._matches(e.variants, others, v, o)
                                                for v, o in self.kept),
                                 of=len(self.kept), seen=self.seen)
                    for e in diagnosis.explanations]
        counted_.sort(key=lambda e: -(e.matches or 0))
        return attrs.evolve(diagnosis, explanations=tuple(counted_),
                            seconds=diagnosis.seconds + self.clock() - start)


def _apart(a: rulebook.Table, b: rulebook.Table) -> bool:
    """Two variants can be planted together: they override different slots."""
    return not set(a.entries) & set(b.entries)


def _apart_sets(a: Sequence[rulebook.Table], b: Sequence[rulebook.Table]) -> bool:
    return all(_apart(x, y) for x in a for y in b)


def _memo(vector: Vector, observed: Sequence[JSON]) -> str:
    return json.dumps([vector.config, list(vector.inputs), list(observed)], sort_keys=True)
