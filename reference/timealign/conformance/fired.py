"""Which spec rules the rule text executes on one input (CF-R23).

``timealign diff`` names a difference between two variants of a config by the rules that
run under one variant and not under the other at the first input where they diverge. An
algorithm whose rule text registers its rule functions (:mod:`timealign.rulebook`) is read
from those calls alone: a call of a registered function is its rule firing, recorded in
order with its plain arguments and result. The others are read from the code's citations:
a line tracer limited to the rule-text modules records which lines one step executes, and
names a line by the ids cited on it (a comment alone on its lines belongs to the statement
below it), else by its enclosing block's, else by its function's docstring. It reads,
never decides: the outputs come from :func:`timealign.algorithm.run_json` as always.
"""

from __future__ import annotations

import ast
import functools
import importlib
import pkgutil
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import attrs

from timealign import Algorithm, rulebook
from timealign.errors import InvalidInput

JSON = dict[str, Any]
RULE = re.compile(r"\b([A-Z]{2,4})-([RIDH])(\d+)\b")
#: Modules of an algorithm package that are not its rule text: the fast path is checked
#: against the rule text, the others serve the tests and the harness.
NOT_RULE_TEXT = frozenset({"fast", "traces", "strategies", "invariants"})
Line = tuple[str, int]  # (file, line number)


def _ids(text: str, family: str) -> frozenset[str]:
    return frozenset(m.group(0) for m in RULE.finditer(text) if m.group(1) == family)


def family_of(algorithm: Algorithm[Any, Any, Any, Any]) -> str:
    """The id family of an algorithm (``AT``, ``RB``, ...): the one its rule text cites
    most."""
    source = Path(sys.modules[algorithm.step.__module__].__file__ or "").read_text("utf-8")
    counts: dict[str, int] = {}
    for match in RULE.finditer(source):
        counts[match.group(1)] = counts.get(match.group(1), 0) + 1
    return max(counts, key=lambda f: counts[f]) if counts else ""


def _module_citations(path: Path, family: str) -> dict[int, frozenset[str]]:
    """Line number -> the ids cited there, for one module: a statement's (its header's for
    a compound one) on each of its lines, with the comments alone on the lines above it; a
    function's first line (where its call event lands) its docstring's."""
    text = path.read_text("utf-8")
    lines = text.splitlines()
    found: dict[int, frozenset[str]] = {}

    def own(node: ast.stmt) -> frozenset[str]:
        body = getattr(node, "body", None)
        last = (body[0].lineno - 1 if isinstance(body, list) and body
                else node.end_lineno or node.lineno)
        ids = frozenset().union(*(_ids(lines[k - 1], family)
                                  for k in range(node.lineno, max(last, node.lineno) + 1)))
        above = node.lineno - 1
        while above >= 1 and lines[above - 1].strip().startswith("#"):
            ids |= _ids(lines[above - 1], family)
            above -= 1
        return ids

    def visit(statements: Iterable[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                found[first] = _ids(ast.get_docstring(node) or "", family)
                visit(node.body)
                continue
            if isinstance(node, ast.ClassDef):
                visit(node.body)
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # a docstring or a bare string
            ids = own(node)
            body = getattr(node, "body", None)
            header = (body[0].lineno - 1 if isinstance(body, list) and body
                      else node.end_lineno or node.lineno)
            for line in range(node.lineno, max(header, node.lineno) + 1):
                if ids:
                    found.setdefault(line, ids)
            for block in ("body", "orelse", "finalbody"):
                inner = getattr(node, block, None)
                if isinstance(inner, list):
                    visit(inner)
            for handler in getattr(node, "handlers", ()):
                visit(handler.body)

    visit(ast.parse(text).body)
    return found


def _line(code: CodeType) -> Line:
    return code.co_filename, code.co_firstlineno


@functools.cache
def citations(package: str, family: str) -> Mapping[Line, frozenset[str]]:
    """Every line of the rule-text modules of ``package`` -> the ids naming it; for a
    package with registered rule functions, each function's first line -> its rule."""
    registered = rulebook.registered(package)
    if registered:
        return {_line(r.code): frozenset({r.id}) for r in registered}
    root = importlib.import_module(package)
    found: dict[Line, frozenset[str]] = {}
    for info in pkgutil.iter_modules(root.__path__):
        if info.name in NOT_RULE_TEXT or info.ispkg:
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        path = Path(module.__file__ or "")
        if path.suffix != ".py":
            continue  # a compiled module: no lines to trace (the rule text never is)
        for line, ids in _module_citations(path, family).items():
            found[(str(path), line)] = ids
    return found


def package_of(algorithm: Algorithm[Any, Any, Any, Any]) -> str:
    """The package holding an algorithm's rule text (``timealign.approximate_time``)."""
    return algorithm.step.__module__.rpartition(".")[0]


@contextmanager
def recording(files: frozenset[str], into: set[Line]) -> Iterator[None]:
    """Add to ``into`` every line of ``files`` executed inside the block (a call adds the
    function's first line); frames of other files are not traced line by line."""

    def local(frame: FrameType, event: str, _arg: Any) -> Any:
        if event == "line":
            into.add((frame.f_code.co_filename, frame.f_lineno))
        return local

    def outer(frame: FrameType, _event: str, _arg: Any) -> Any:
        if frame.f_code.co_filename not in files:
            return None
        into.add((frame.f_code.co_filename, frame.f_code.co_firstlineno))
        return local

    previous = sys.gettrace()
    sys.settrace(outer)
    try:
        yield
    finally:
        sys.settrace(previous)


@contextmanager
def _recording(package: str, files: frozenset[str], into: set[Line],
               calls: list[rulebook.Call], details: bool = True) -> Iterator[None]:
    """The calls of registered rule functions (their first lines into ``into``, the calls
    in order into ``calls``) when ``package`` registers any, else the lines it runs."""
    if not rulebook.registered(package):
        with recording(files, into):
            yield
        return
    start = len(calls)
    try:
        with rulebook.calls(calls, details):
            yield
    finally:
        into.update(_line(c.rule.code) for c in calls[start:])


@attrs.frozen
class Executed:
    """What one variant's rule text did on one input: the lines it ran (for registered
    rule functions, their first lines), the rule calls in order when registered, and the
    rule ids of its refusal (the error's rule and any id its message names) when it
    refused."""

    lines: frozenset[Line]
    refused: frozenset[str] = frozenset()
    calls: tuple[rulebook.Call, ...] = ()
    rule: str | None = None  # the refusal's own rule


def executed_at(algorithm: Algorithm[Any, Any, Any, Any], config: JSON,
                inputs: Sequence[JSON], at: int | None) -> Executed:
    """What the rule text executes on input ``at`` of a run (``None``: decoding the
    config), after replaying the inputs before it as :func:`timealign.algorithm.run_json`
    does (a refused input leaves the state as it was)."""
    package = package_of(algorithm)
    family = family_of(algorithm)
    files = frozenset(file for file, _ in citations(package, family))
    found: set[Line] = set()
    calls: list[rulebook.Call] = []

    def done(refused: frozenset[str] = frozenset(), rule: str | None = None) -> Executed:
        return Executed(frozenset(found), refused, tuple(calls), rule)

    try:
        if at is None:
            with _recording(package, files, found, calls):
                algorithm.config_from_json(config)
            return done()
        decoded = algorithm.config_from_json(config)
    except InvalidInput as error:
        return done(_refusal(error, family), error.rule)
    state = algorithm.initial(decoded)
    for raw in inputs[:at]:
        try:
            state, _ = algorithm.step(decoded, state, algorithm.input_from_json(raw))
        except InvalidInput:
            continue
    try:
        with _recording(package, files, found, calls):
            algorithm.step(decoded, state, algorithm.input_from_json(inputs[at]))
    except InvalidInput as error:
        return done(_refusal(error, family), error.rule)
    return done()


def _refusal(error: InvalidInput, family: str) -> frozenset[str]:
    return frozenset({error.rule}) | _ids(error.message, family)


def named(algorithm: Algorithm[Any, Any, Any, Any], lines: Iterable[Line]) -> frozenset[str]:
    """The rule ids naming ``lines``."""
    cited = citations(package_of(algorithm), family_of(algorithm))
    return frozenset().union(*(cited.get(line, frozenset()) for line in lines))


def differing_rules(algorithm: Algorithm[Any, Any, Any, Any], a: Executed, b: Executed
                    ) -> tuple[frozenset[str], frozenset[str]]:
    """The rules only ``a`` runs and those only ``b`` runs at one input: for registered
    rule functions the ids of the functions each calls, else the rules of the lines one
    executes and the other does not; a refusal on one side only is named by the
    refusal's rules alone (the other side's going on is not the difference)."""
    if a.refused != b.refused and (a.refused or b.refused):
        return a.refused - b.refused, b.refused - a.refused
    if rulebook.registered(package_of(algorithm)):  # rule functions: the ids each runs
        ran_a, ran_b = named(algorithm, a.lines), named(algorithm, b.lines)
        return ran_a - ran_b, ran_b - ran_a
    only_a = named(algorithm, a.lines - b.lines)
    only_b = named(algorithm, b.lines - a.lines)
    return only_a - only_b, only_b - only_a


def run_executed(algorithm: Algorithm[Any, Any, Any, Any], config: JSON,
                 inputs: Sequence[JSON]) -> Executed:
    """Every line the rule text executes over a whole run (the config's decoding
    included), and the rules of every refusal."""
    package = package_of(algorithm)
    family = family_of(algorithm)
    files = frozenset(file for file, _ in citations(package, family))
    found: set[Line] = set()
    refused: set[str] = set()
    calls: list[rulebook.Call] = []
    with _recording(package, files, found, calls, details=False):
        try:
            decoded = algorithm.config_from_json(config)
        except InvalidInput as error:
            decoded = None
            refused |= _refusal(error, family)
        if decoded is not None:
            state = algorithm.initial(decoded)
            for raw in inputs:
                try:
                    state, _ = algorithm.step(decoded, state, algorithm.input_from_json(raw))
                except InvalidInput as error:
                    refused |= _refusal(error, family)
    return Executed(frozenset(found), frozenset(refused))
