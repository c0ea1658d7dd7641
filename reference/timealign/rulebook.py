"""Rules as first-class objects: each rule function of a machine's rule text carries the
spec id it enacts and the profiles it belongs to (CF-R23, CF-R24).

``@rule(rule_id, profiles=(...))`` registers the function and returns it
unchanged, so the rule text pays nothing per step; what a step fired is recorded only when
asked (:func:`calls`), from the calls of registered functions (``sys.setprofile``), never
guessed from comments. The index (``tools/spec_index.py``), the spec's "Rules by profile"
tables (``tools/spec_diffs.py``) and ``timealign diff`` read this registry;
``tests/test_rulebook.py`` fails when a registered rule never runs under a profile it
claims, or when a rule id of a converted spec has no rule function.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import CodeType, FrameType
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
    profile when ``None``); the function is returned as it is."""

    def register(function: F) -> F:
        code = function.__code__
        _REGISTRY[code] = Rule(rule_id, profiles, function.__module__, function.__qualname__,
                               code)
        return function

    return register


_QUIET: set[CodeType] = set()


def quiet(function: F) -> F:
    """Mark a helper whose calls of rule functions are not the rules firing (a guard that
    computes with a rule's arithmetic to decide whether to refuse): calls made inside it
    are not recorded. The function is returned as it is."""
    _QUIET.add(function.__code__)
    return function


def registered(package: str) -> tuple[Rule, ...]:
    """Every rule function of ``package`` (imported first), in definition order."""
    importlib.import_module(package)
    prefix = package + "."
    return tuple(r for r in _REGISTRY.values() if r.module.startswith(prefix))


def profiles_of(package: str) -> tuple[str, tuple[str, ...]] | None:
    """The config key naming a profile of ``package`` and its values (the package's
    ``RULE_PROFILES``), ``None`` when it has no profiles."""
    found = getattr(importlib.import_module(package), "RULE_PROFILES", None)
    return None if found is None else (str(found[0]), tuple(found[1]))


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
