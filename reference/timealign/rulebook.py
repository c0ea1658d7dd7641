"""Rules as first-class objects: each rule function of a machine's rule text carries the
spec id it enacts and the profiles it runs under (CF-R23, CF-R24), and a profile is a named
table of overrides of those functions (CF-R40).

``@rule(rule_id)`` registers the function and returns it unchanged, so the rule text pays
nothing per step; what a step fired is recorded only when asked (:func:`calls`), from the
calls of registered functions (``sys.setprofile``), never guessed from comments or read
out of an error's message. The index (``tools/spec_index.py``), the spec's "Rules by
profile" tables (``tools/spec_diffs.py``), ``timealign diff`` and the conformance report
read this registry and this record of calls.

Profiles as forks (the consensus-specs pattern, where "Modified in X" is a function
replaced by name). An algorithm with profiles keeps one :class:`Book`: its *slots* are the
rule functions a profile may replace (``@BOOK.slot``), and each profile is a
:class:`Table` (``BOOK.profile(name, {base: replacement})``) whose entries replace a slot's
function by another registered one with the same parameters. The rule text calls a slot
through the table its config names, ``BOOK.rules(name).of(base)(...)``, so the rule text
of a profile is the base plus its table and nothing else; which profiles a slot's base or
replacement runs under follows from the tables (never written by hand). A *variant*
(``BOOK.variant(name, {base: replacement})``) is a table no config names: it is swapped in
by name over whatever profile runs (:meth:`Book.swapped`), which is how ``timealign diff``
names a difference's cause (one override of B swapped into A) and how a rule's variants
are tried. ``tests/test_rulebook.py`` fails when a registered rule never runs under a
profile it claims, when a rule id of a converted spec has no rule function, when a profile
changes a rule without a table entry, or when a refusal is not raised inside the
registered function of the rule it names.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import CodeType, FrameType, TracebackType
from typing import Any, TypeVar

import attrs

F = TypeVar("F", bound=Callable[..., Any])


@attrs.frozen
class Rule:
    """One registered rule function: the id it enacts, the profiles that run it (``None``:
    every profile of its algorithm) and where it lives."""

    id: str
    profiles: tuple[str, ...] | None
    module: str
    name: str
    code: CodeType = attrs.field(eq=False, repr=False)

    @property
    def family(self) -> str:
        return self.id.partition("-")[0]

    def runs_under(self, profile: str) -> bool:
        return self.profiles is None or profile in self.profiles


_REGISTRY: dict[CodeType, Rule] = {}


def rule(rule_id: str, profiles: tuple[str, ...] | None = None) -> Callable[[F], F]:
    """Register the decorated function as enacting ``rule_id`` under ``profiles`` (every
    profile when ``None``); the function is returned as it is. A slot of a :class:`Book`,
    or a function a profile's table puts in one, gets its profiles from the tables: name
    ``profiles`` only for a helper that is called from a profile's function alone."""

    def register(function: F) -> F:
        code = function.__code__
        _REGISTRY[code] = Rule(rule_id, profiles, function.__module__, function.__qualname__,
                               code)
        return function

    return register


def _registered_rule(function: Callable[..., Any], role: str) -> Rule:
    found = _REGISTRY.get(function.__code__)
    if found is None:
        raise TypeError(f"{function.__qualname__} is not a rule function (@rule): it cannot "
                        f"be {role}")
    return found


@attrs.frozen
class Table:
    """A named table of overrides: each entry replaces the function of a slot (its base,
    named by the base's name) with another registered rule function. ``kind`` is
    ``"profile"`` (a config names it) or ``"variant"`` (swapped in by name only)."""

    name: str
    kind: str
    entries: Mapping[str, Callable[..., Any]]
    #: A catalogued variant's rule id (CF-R41): the rule whose plausible misreading it
    #: enacts; ``None`` for a profile or an uncatalogued variant.
    rule: str | None = None
    #: What the variant does, in a line (its replacement's docstring, first sentence).
    about: str = ""

    @property
    def label(self) -> str:
        """How a report names a catalogued variant: ``AT-R6 ~ tie-highest``."""
        return self.name if self.rule is None else f"{self.rule} ~ {self.name}"

    def replaced(self) -> tuple[str, ...]:
        """The slots this table overrides, by base name."""
        return tuple(self.entries)


class Resolved:
    """The rule functions of one profile: each slot's base, or the function the profile's
    table (and any table swapped in) puts in its place."""

    __slots__ = ("functions", "name")

    def __init__(self, name: str, functions: dict[Callable[..., Any], Callable[..., Any]]
                 ) -> None:
        self.name = name
        self.functions = functions

    def of(self, base: F) -> F:
        """The function that runs in place of the slot ``base`` under this profile."""
        try:
            return self.functions[base]  # type: ignore[return-value]
        except KeyError:
            raise LookupError(f"{base.__qualname__} is not a slot of this book "
                              "(@BOOK.slot)") from None


class Book:
    """The slots and tables of one algorithm's rule text (see the module docstring).

    ``module`` is the declaring module's ``__name__`` (the book is its package's); ``key``
    is the config field naming a profile; ``profiles`` its values, the first the base (its
    table is empty). ``key`` is ``None`` for an algorithm whose config names no profile:
    its one profile is the rule text itself, and the book holds its slots for the
    variants (CF-R41); :func:`profiles_of` then says it has no profiles. A profile's
    table is declared once, after every function it names exists; :meth:`rules` resolves
    a profile (cached), with any swapped-in table applied on top.
    """

    def __init__(self, module: str, key: str | None, profiles: tuple[str, ...]) -> None:
        package = module.rpartition(".")[0]
        self.package, self.key, self.profiles = package, key, profiles
        self.slots: dict[str, Callable[..., Any]] = {}
        self.tables: dict[str, Table] = {}
        #: The profiles a slot's base was registered with (``None``: every profile): a
        #: decision that only a profile's own functions call (a head-only helper) is a
        #: slot too, so a variant can replace it, and still runs under that profile alone.
        self.only: dict[str, tuple[str, ...] | None] = {}
        self._swapped: tuple[Table, ...] = ()
        #: The profiles resolved so far (emptied, never replaced, when a table or a swap
        #: changes them): a fast path reads it to skip a call per step.
        self.resolved: dict[str, Resolved] = {}
        _BOOKS[package] = self

    def slot(self, function: F) -> F:
        """Declare a registered rule function as a slot a table may override (decorator,
        above ``@rule``); the rule text calls it through :meth:`Resolved.of`."""
        self.only[function.__name__] = _registered_rule(function, "a slot").profiles
        self.slots[function.__name__] = function
        self.resolved.clear()
        return function

    def _table(self, name: str, kind: str,
               entries: Mapping[Callable[..., Any], Callable[..., Any]],
               rule_id: str | None = None) -> Table:
        if name in self.tables:
            raise ValueError(f"{self.package} already has a table named {name!r}")
        named: dict[str, Callable[..., Any]] = {}
        for base, replacement in entries.items():
            if self.slots.get(base.__name__) is not base:
                raise LookupError(f"{name}: {base.__qualname__} is not a slot of "
                                  f"{self.package} (@BOOK.slot)")
            _registered_rule(replacement, f"{name}'s override of {base.__qualname__}")
            if list(inspect.signature(base).parameters) != list(
                    inspect.signature(replacement).parameters):
                raise TypeError(f"{name}: {replacement.__qualname__} must take the "
                                f"parameters of {base.__qualname__}")
            if rule_id is not None and _REGISTRY[replacement.__code__].id != rule_id:
                raise ValueError(f"{name}: {replacement.__qualname__} enacts "
                                 f"{_REGISTRY[replacement.__code__].id}, not {rule_id}")
            named[base.__name__] = replacement
        about = ""
        if rule_id is not None:
            doc = inspect.getdoc(next(iter(entries.values()))) if entries else None
            if not doc:
                raise ValueError(f"{name}: a catalogued variant's replacement says what it "
                                 "does in its docstring")
            about = " ".join(doc.split("\n\n")[0].split())
        table = Table(name, kind, named, rule_id, about)
        if kind == "variant":  # runs only while swapped in: under no profile of its own
            profiled = {*self.slots.values(), *(f for t in self.tables.values()
                                                if t.kind == "profile"
                                                for f in t.entries.values())}
            for replacement in named.values():
                if replacement not in profiled:
                    _REGISTRY[replacement.__code__] = attrs.evolve(
                        _REGISTRY[replacement.__code__], profiles=())
        self.tables[name] = table
        self.resolved.clear()
        self._derive_profiles()
        return table

    def profile(self, name: str, entries: Mapping[Callable[..., Any], Callable[..., Any]]
                ) -> Table:
        """Declare the table of the profile ``name`` (one of :attr:`profiles`)."""
        if name not in self.profiles:
            raise LookupError(f"{name!r} is not a profile of {self.package}: "
                              f"{list(self.profiles)}")
        return self._table(name, "profile", entries)

    def variant(self, name: str, entries: Mapping[Callable[..., Any], Callable[..., Any]],
                rule: str | None = None) -> Table:
        """Declare a variant: a table no config names, swapped in by name
        (:meth:`swapped`). With ``rule`` it is *catalogued* (CF-R41): a plausible
        misreading of that rule, which the conformance harness tries when it diagnoses a
        difference; every replacement must then enact ``rule`` and say in its docstring what
        it does."""
        if name in self.profiles:
            raise ValueError(f"{name!r} is a profile of {self.package}, not a variant")
        return self._table(name, "variant", entries, rule)

    def catalogue(self) -> tuple[Table, ...]:
        """The catalogued variants (CF-R41), in declaration order: those of the package's
        ``variants`` module (imported here) and any declared elsewhere with a rule."""
        if importlib.util.find_spec(f"{self.package}.variants") is not None:
            importlib.import_module(f"{self.package}.variants")
        return tuple(t for t in self.tables.values() if t.kind == "variant" and t.rule)

    def rules(self, profile: str) -> Resolved:
        """The rule functions of ``profile``: the base, its table, then any swapped-in
        table."""
        found = self.resolved.get(profile)
        if found is None:
            table = self.tables.get(profile)
            if table is None or table.kind != "profile":
                raise LookupError(f"{self.package} has no profile table {profile!r} (its "
                                  "rule text declares them)")
            functions = {base: base for base in self.slots.values()}
            for each in (table, *self._swapped):
                for slot, replacement in each.entries.items():
                    functions[self.slots[slot]] = replacement
            found = self.resolved[profile] = Resolved(profile, functions)
        return found

    def entry(self, table: str, slot: str) -> Callable[..., Any]:
        """The function ``table`` puts in ``slot`` (the base when it does not override
        it)."""
        return self.tables[table].entries.get(slot, self.slots[slot])

    def differing(self, a: str, b: str) -> tuple[str, ...]:
        """The slots whose function differs between tables ``a`` and ``b``, in slot
        order."""
        return tuple(s for s in self.slots if self.entry(a, s) is not self.entry(b, s))

    @contextmanager
    def swapped(self, *tables: Table | str | Mapping[str, Callable[..., Any]]
                ) -> Iterator[None]:
        """Run the block with ``tables`` swapped in over every profile: each a table (a
        variant or a profile) by name or object, or a mapping slot name -> replacement
        (one entry of another table). Not for concurrent use: the rule text reads one
        book per process."""
        chosen = tuple(
            self.tables[t] if isinstance(t, str) else t if isinstance(t, Table)
            else Table("swap", "variant", dict(t)) for t in tables)
        for table in chosen:
            unknown = [s for s in table.entries if s not in self.slots]
            if unknown:
                raise LookupError(f"not slots of {self.package}: {unknown}")
        previous = self._swapped
        self._swapped = (*previous, *chosen)
        self.resolved.clear()
        try:
            yield
        finally:
            self._swapped = previous
            self.resolved.clear()

    def _derive_profiles(self) -> None:
        """The profiles of each slot's base and of each profile's replacement: a base runs
        under every profile whose table leaves its slot alone (among those it was
        registered with, when it names them), a replacement under the profiles whose table
        names it."""
        declared = [t for t in self.tables.values() if t.kind == "profile"]
        derived: dict[CodeType, list[str]] = {}
        for slot, base in self.slots.items():
            derived.setdefault(base.__code__, [])
            only = self.only.get(slot)
            for table in declared:
                chosen = table.entries.get(slot, base)
                if chosen is base and only is not None and table.name not in only:
                    continue
                derived.setdefault(chosen.__code__, []).append(table.name)
        for code, names in derived.items():
            entry = _REGISTRY[code]
            profiles = tuple(p for p in self.profiles if p in names)
            _REGISTRY[code] = attrs.evolve(entry, profiles=profiles)


_BOOKS: dict[str, Book] = {}


def book_of(package: str) -> Book | None:
    """The book of ``package`` (imported first), ``None`` when it has no profiles."""
    importlib.import_module(package)
    return _BOOKS.get(package)


def catalogue(package: str) -> tuple[Table, ...]:
    """The catalogued variants of ``package``'s rules (CF-R41); ``()`` without a book."""
    book = book_of(package)
    return () if book is None else book.catalogue()


def raised_by(error: BaseException) -> tuple[Rule, ...]:
    """The registered rule functions an exception was raised by or inside, innermost
    first: the frames of its traceback (from where it was caught down to where it was
    raised), and those of the exceptions it was raised from or while handling."""
    found: list[Rule] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        frames: list[Rule] = []
        tb: TracebackType | None = current.__traceback__
        while tb is not None:
            registered = _REGISTRY.get(tb.tb_frame.f_code)
            if registered is not None:
                frames.append(registered)
            tb = tb.tb_next
        found += reversed(frames)
        current = current.__cause__ or current.__context__
    return tuple(found)


_QUIET: set[CodeType] = set()


def quiet(function: F) -> F:
    """Mark a helper whose calls of rule functions are not the rules firing (a guard that
    computes with a rule's arithmetic to decide whether to refuse): calls made inside it
    are not recorded. The function is returned as it is."""
    _QUIET.add(function.__code__)
    return function


def registered(package: str) -> tuple[Rule, ...]:
    """Every rule function of ``package`` (imported first), in definition order; not those
    of its catalogue of variants (its ``variants`` module, CF-R41): a misreading of a rule
    is no part of the rule text, runs under no profile and only while swapped in."""
    importlib.import_module(package)
    prefix, catalogued = package + ".", package + ".variants"
    return tuple(r for r in _REGISTRY.values()
                 if r.module.startswith(prefix) and r.module != catalogued)


def profiles_of(package: str) -> tuple[str, tuple[str, ...]] | None:
    """The config key naming a profile of ``package`` and its values (its :class:`Book`),
    ``None`` when it has no profiles (no book, or one no config field names)."""
    book = book_of(package)
    return None if book is None or book.key is None else (book.key, book.profiles)


def by_profile(package: str) -> dict[str, tuple[str, ...]]:
    """Each rule id of ``package`` -> the profiles its rule functions run under (every
    profile for a function that names none), in the profiles' order."""
    known = profiles_of(package)
    every = known[1] if known is not None else ()
    found: dict[str, set[str]] = {}
    for entry in registered(package):
        found.setdefault(entry.id, set()).update(
            every if entry.profiles is None else entry.profiles)
    return {rule_id: tuple(p for p in every if p in chosen)
            for rule_id, chosen in found.items()}


def rule_of(code: CodeType) -> Rule | None:
    """The rule a code object enacts, if registered."""
    return _REGISTRY.get(code)


@attrs.frozen
class Call:
    """One call of a rule function: its rule, its scalar arguments and its result (shown
    when they are plain values, ``None`` otherwise)."""

    rule: Rule
    arguments: tuple[tuple[str, str], ...]
    result: str | None


_SHOWN = (int, float, str, bool)


def _shown(value: object) -> str | None:
    if isinstance(value, _SHOWN) or value is None:
        return repr(value)
    if isinstance(value, tuple | list) and len(value) <= 6 and all(
            isinstance(v, _SHOWN) for v in value):
        return repr(value)
    return None


@contextmanager
def calls(into: list[Call], details: bool = True) -> Iterator[None]:
    """Append to ``into``, in call order, every call of a registered rule function made
    inside the block (with ``details``, its plain-valued arguments and result)."""
    open_calls: dict[int, tuple[int, Rule, tuple[tuple[str, str], ...]]] = {}
    quiet_frames: set[int] = set()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            if frame.f_code in _QUIET:
                quiet_frames.add(id(frame))
                return
            found = _REGISTRY.get(frame.f_code)
            if found is None or quiet_frames:
                return
            if not details:
                into.append(Call(found, (), None))
                return
            names = frame.f_code.co_varnames[:frame.f_code.co_argcount]
            shown = tuple((n, s) for n in names
                          if (s := _shown(frame.f_locals.get(n))) is not None)
            open_calls[id(frame)] = (len(into), found, shown)
            into.append(Call(found, shown, None))
        elif event == "return":
            quiet_frames.discard(id(frame))
            started = open_calls.pop(id(frame), None)
            if started is not None:
                position, found, shown = started
                into[position] = Call(found, shown, _shown(arg))

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(previous)
