"""The rule registry (:mod:`timealign.rulebook`) agrees with the spec and with what runs
(CF-R23, CF-R24, RB-R17)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from timealign import registry, rulebook
from timealign.algorithm import run_json
from timealign.conformance.fired import package_of
from timealign.conformance.suites import shipped
from timealign.errors import InvalidInput

ROOT = Path(__file__).resolve().parent.parent
#: The algorithms whose rule text is registered rule functions: every registered one (a
#: new algorithm's rule text is registered rule functions too, or these tests fail).
CONVERTED = registry.names()


def _ran(name: str, profile: str | None) -> set[rulebook.Rule]:
    """The rule functions that run over the shipped vectors of ``name`` under
    ``profile`` (``None``: an algorithm without profiles, its vectors as they are)."""
    reference = registry.get(name)
    known = rulebook.profiles_of(package_of(reference))
    assert (known is None) == (profile is None)
    calls: list[rulebook.Call] = []
    chosen = [vector.config if known is None else {**vector.config, known[0]: profile}
              for vector in shipped(name)]
    usable = reference.codec.config_from_json(next(c for c in chosen if _decodes(name, c)))
    with rulebook.calls(calls, details=False):
        for vector, config in zip(shipped(name), chosen, strict=True):
            run_json(reference, config, vector.inputs)
        with pytest.raises(InvalidInput):  # an input no codec makes: the API's refusal
            reference.machine.step(usable, reference.machine.initial(usable), object())
    return {c.rule for c in calls}


def _decodes(name: str, config: dict[str, object]) -> bool:
    try:
        registry.get(name).codec.config_from_json(config)
    except InvalidInput:
        return False
    return True


@pytest.mark.parametrize("name", CONVERTED)
def test_every_rule_function_runs_under_each_profile_it_claims_and_no_other_cf_r24(
        name: str) -> None:
    """Over the shipped vectors, each registered rule function runs under every profile
    it claims, and never under one it does not (RB-R17)."""
    package = package_of(registry.get(name))
    known = rulebook.profiles_of(package)
    profiles: tuple[str | None, ...] = (None,) if known is None else known[1]
    for profile in profiles:
        ran = _ran(name, profile)
        claimed = {r for r in rulebook.registered(package)
                   if profile is None or r.runs_under(profile)}
        assert not {r.name for r in claimed - ran}, f"never ran under {profile}"
        assert not {r.name for r in ran - claimed}, f"ran under {profile}, not claimed"


@pytest.mark.parametrize("name", CONVERTED)
def test_every_rule_of_the_spec_has_a_rule_function_and_back_cf_r23(name: str) -> None:
    """Every ``-R`` id its spec defines has a registered rule function, and every
    registered function names an id its spec defines."""
    text = (ROOT / "spec" / f"{name}.md").read_text("utf-8")
    defined = set(re.findall(r"^### ([A-Z]{2,4}-[RDIH]\d+) ", text, re.MULTILINE))
    package = package_of(registry.get(name))
    ids = {r.id for r in rulebook.registered(package)}
    family = next(iter(ids)).partition("-")[0]
    rules = {d for d in defined if d.startswith(f"{family}-R")}
    assert not sorted(rules - ids), "spec rules without a rule function"
    assert not sorted(ids - defined), "rule functions naming no spec id"


def test_head_only_rules_are_head_only_rb_r17() -> None:
    """The registry says which profile runs RB-R21, RB-R23 and RB-R27 (the issue's
    misread ones), that the shared rules run in both (RB-D2 and RB-D3 too: head refuses
    with both, issue 40), and that RB-D8's bump is the card's alone (head's is RB-R23)."""
    found = rulebook.by_profile("timealign.rate_aware_batcher")
    for rule in ("RB-R19", "RB-R20", "RB-R21", "RB-R22", "RB-R23", "RB-R24", "RB-R25",
                 "RB-R26", "RB-R27"):
        assert found[rule] == ("esslivedata-head",), rule
    assert found["RB-D8"] == ("card",)
    for rule in ("RB-R8", "RB-R11", "RB-R14", "RB-R18", "RB-D2", "RB-D3"):
        assert found[rule] == ("card", "esslivedata-head"), rule


def test_recording_restores_the_previous_profiler_and_costs_nothing_unrecorded() -> None:
    """A rule function is the function itself (no wrapper), and recording restores the
    profiler it found."""
    import sys

    from timealign.rate_aware_batcher import machine

    assert rulebook.rule_of(machine._arm_clock.__code__) is not None
    assert not hasattr(machine._arm_clock, "__wrapped__")
    previous = sys.getprofile()
    with rulebook.calls([]):
        pass
    assert sys.getprofile() is previous


# --- profiles are override tables (issue 40, CF-R40) ---------------------------------------

#: The rule text of each algorithm: the modules whose functions are rules (not the codec,
#: the checks or the conformance knowledge), and its fast path.
RULE_TEXT = ("machine", "model", "fast", "ros1", "arithmetic", "grid", "estimator")
BOOKED = tuple(n for n in CONVERTED
               if rulebook.book_of(package_of(registry.get(n))) is not None)


def _book(name: str) -> rulebook.Book:
    found = rulebook.book_of(package_of(registry.get(name)))
    assert found is not None
    return found


def _modules(name: str) -> list[Path]:
    folder = ROOT / "reference" / "timealign" / name
    return [folder / f"{m}.py" for m in RULE_TEXT if (folder / f"{m}.py").exists()]


@pytest.mark.parametrize("name", BOOKED)
def test_a_profile_is_the_base_plus_its_table_cf_r40(name: str) -> None:
    """Run under profile A with every slot where B's table differs swapped to B's function,
    each shipped vector gives B's outputs: nothing but the table tells the profiles apart
    (a rule that differs between profiles without a table entry fails here)."""
    reference, book = registry.get(name), _book(name)
    vectors = shipped(name)
    for a in book.profiles:
        for b in book.profiles:
            if a == b:
                continue
            swap = {slot: book.entry(b, slot) for slot in book.differing(a, b)}
            assert swap, f"{a} and {b} share every function"
            assert book.key is not None, "two profiles no config field names"
            for vector in vectors:
                want = run_json(reference, {**vector.config, book.key: b}, vector.inputs)
                with book.swapped(swap):
                    got = run_json(reference, {**vector.config, book.key: a}, vector.inputs)
                assert got == want, f"{vector.name}: {a} with {b}'s table is not {b}"


def _profile_reads(path: Path, key: str | None, names: tuple[str, ...]) -> list[str]:
    """Where a module reads a profile flag other than to resolve its table: an attribute
    ``.<key>`` (none when no config field names a profile), ``.head`` or ``.ros1``, or a
    comparison with a profile's name."""
    tree = ast.parse(path.read_text("utf-8"))
    allowed: set[int] = set()
    for node in ast.walk(tree):  # BOOK.rules(config.<key>): resolving the table
        if isinstance(node, ast.Call):
            allowed.add(id(node.func))  # BOOK.profile(...) declares a table
            called = node.func.attr if isinstance(node.func, ast.Attribute) else \
                node.func.id if isinstance(node.func, ast.Name) else ""
            receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
            if called in ("rules", "mode_of", "check_profile") or (
                    called == "get" and isinstance(receiver, ast.Name)
                    and receiver.id == "_RESOLVED"):  # the book's cache, read directly
                allowed.update(id(a) for a in node.args)
        if isinstance(node, ast.FunctionDef) and node.name == "head":  # Config.head itself
            allowed.update(id(n) for n in ast.walk(node))
    found = []
    for node in ast.walk(tree):
        if id(node) in allowed:
            continue
        if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)
                and node.attr in (key, "head", "ros1")):
            found.append(f"{path.name}:{node.lineno} .{node.attr}")
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                if (isinstance(side, ast.Constant) and side.value in names) or (
                        isinstance(side, ast.Name) and side.id in ("CARD", "HEAD")):
                    found.append(f"{path.name}:{node.lineno} compares with a profile")
    return found


@pytest.mark.parametrize("name", BOOKED)
def test_no_profile_flag_is_read_outside_the_tables_cf_r40(name: str) -> None:
    """The rule text and the fast path decide nothing by the profile's name: they resolve
    the profile's table (``BOOK.rules(config.<key>)``) and call its functions."""
    book = _book(name)
    reads = [r for path in _modules(name) for r in _profile_reads(path, book.key,
                                                                  book.profiles)]
    assert not reads


def test_the_profile_check_finds_a_flag_read_cf_r40(tmp_path: Path) -> None:
    """The check above is not blind: a branch on the profile is found."""
    module = tmp_path / "machine.py"
    module.write_text("def f(config):\n    if config.profile == HEAD:\n        return 1\n"
                      "    return BOOK.rules(config.profile)\n")
    assert sorted(_profile_reads(module, "profile", ("card",))) == [
        "machine.py:2 .profile", "machine.py:2 compares with a profile"]


@pytest.mark.parametrize("name", BOOKED)
def test_profiles_of_slots_and_replacements_follow_the_tables_cf_r40(name: str) -> None:
    """A slot's base runs under the profiles whose table leaves it (among those it names,
    a head-only decision made a slot), a replacement under those naming it; the base
    profile's table is empty."""
    book = _book(name)
    assert book.tables[book.profiles[0]].entries == {}
    for slot, base in book.slots.items():
        entry = rulebook.rule_of(base.__code__)
        assert entry is not None
        only = book.only[slot]  # a head-only decision made a slot keeps its profile
        assert entry.profiles == tuple(p for p in book.profiles
                                       if slot not in book.tables[p].entries
                                       and (only is None or p in only)), slot
        for profile in book.profiles:
            replacement = book.tables[profile].entries.get(slot)
            if replacement is not None:
                found = rulebook.rule_of(replacement.__code__)
                assert found is not None and profile in (found.profiles or ())


def test_a_variant_is_swapped_in_by_name_over_any_profile_cf_r40() -> None:
    """A variant (a table no config names) runs only while swapped in, over whatever
    profile the config names; it changes no rule's profiles; a table naming a function
    that is not a slot, or one with other parameters, is refused."""
    from timealign.approximate_time import arithmetic

    book = _book("approximate_time")

    @rulebook.rule("AT-D23")
    def rounded(d: int, numerator: int, denominator: int) -> int:
        return (2 * d * numerator + denominator) // (2 * denominator)

    name = "test_rounded_scale"
    if name not in book.tables:
        book.variant(name, {arithmetic.scale_ros2: rounded})
    config = {"topics": 2, "queue_size": 5, "age_penalty": 0.25}
    inputs = [{"op": "message", "topic": t, "stamp": s, "id": f"m{k}"}
              for k, (t, s) in enumerate(((0, 0), (1, 6), (0, 10), (1, 14), (0, 20)))]
    reference = registry.get("approximate_time")
    before = rulebook.by_profile("timealign.approximate_time")
    plain = run_json(reference, config, inputs)
    calls: list[rulebook.Call] = []
    with book.swapped(name), rulebook.calls(calls):
        swapped = run_json(reference, config, inputs)
    assert any(c.rule.name.endswith("rounded") for c in calls)
    assert not any(c.rule.name == "scale_ros2" for c in calls)
    assert run_json(reference, config, inputs) == plain  # gone once the block ends
    assert swapped != plain or book.rules("ros2").of(arithmetic.scale_ros2) is \
        arithmetic.scale_ros2
    assert rulebook.by_profile("timealign.approximate_time") == before
    from timealign.approximate_time import machine

    with pytest.raises(LookupError):  # a rule function, not a slot
        book.variant("not_a_slot", {machine.check_message: rounded})
    with pytest.raises(TypeError):
        book.variant("other_parameters", {arithmetic.scale_ros2: arithmetic.scale_ros1})


# --- every refusal through a registered rule (issue 40) -------------------------------------

_REFUSING = {"InvalidInput": 1, "require": 2, "require_ns": 2, "require_count": 2}


def _refusal_sites(path: Path) -> list[tuple[int, str, str | None]]:
    """Each refusal a module raises with a rule id: (line, the enclosing function's
    qualified name, the id, ``None`` when not a literal)."""
    found: list[tuple[int, str, str | None]] = []

    def walk(node: ast.AST, stack: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.ClassDef):
                walk(child, [*stack, child.name])
                continue
            if (isinstance(child, ast.Call) and isinstance(child.func, ast.Name)
                    and child.func.id in _REFUSING):
                position = _REFUSING[child.func.id]
                argument = child.args[position] if len(child.args) > position else None
                rule_id = argument.value if isinstance(argument, ast.Constant) and \
                    isinstance(argument.value, str) else None
                found.append((child.lineno, ".".join(stack), rule_id))
            walk(child, stack)

    walk(ast.parse(path.read_text("utf-8")), [])
    return found


@pytest.mark.parametrize("name", CONVERTED)
def test_every_refusal_site_sits_in_the_rule_function_it_names(name: str) -> None:
    """Each ``InvalidInput(field, ID, ...)`` (or ``require``) of the rule text and the fast
    path sits inside a function registered as ``ID`` (the fast path calls the rule text's
    to raise), with its id written out."""
    package = package_of(registry.get(name))
    by_name = {(r.module, r.name): r.id for r in rulebook.registered(package)}
    wrong = []
    for path in _modules(name):
        module = f"{package}.{path.stem}"
        for line, function, rule_id in _refusal_sites(path):
            if rule_id is None or by_name.get((module, function)) != rule_id:
                wrong.append(f"{path.name}:{line} {function or '<module>'} raises "
                             f"{rule_id}, registered as {by_name.get((module, function))}")
    assert not wrong


@pytest.mark.parametrize("name", CONVERTED)
def test_every_refusal_of_the_vectors_is_raised_inside_its_rule_function(name: str) -> None:
    """Over the shipped vectors (under each profile), every refusal of the machine and of
    its config is raised by, or inside, a registered function of the rule it names: what
    ``timealign diff`` and the conformance report read from the call record is the rule
    the error names (Config(9e9, timeout_factor=3.0, profile=head) refused RB-D2 inside
    RB-R19's function before issue 40)."""
    reference = registry.get(name)
    package = package_of(reference)
    known = rulebook.profiles_of(package)  # None: no config field names a profile
    profiles: tuple[str | None, ...] = (None,) if known is None else known[1]
    checked: set[str] = set()
    wrong: list[str] = []
    for profile in profiles:
        for vector in shipped(name):
            config = dict(vector.config) if known is None or profile is None else {
                **vector.config, known[0]: profile}
            try:
                decoded = reference.codec.config_from_json(config)
            except InvalidInput as error:
                if any(f.module.startswith(package) for f in rulebook.raised_by(error)):
                    _check_raised(error, f"{vector.name} config", checked, wrong)
                continue
            state = reference.machine.initial(decoded)
            for index, raw in enumerate(vector.inputs):
                try:
                    item = reference.codec.input_from_json(raw)
                except InvalidInput:
                    continue  # the codec's, before the machine
                try:
                    state, _ = reference.machine.step(decoded, state, item)
                except InvalidInput as error:
                    _check_raised(error, f"{vector.name} input {index}", checked, wrong)
    assert not wrong
    assert checked, "no refusal in the shipped vectors"


def _check_raised(error: InvalidInput, where: str, checked: set[str],
                  wrong: list[str]) -> None:
    ids = [r.id for r in rulebook.raised_by(error)]
    checked.add(error.rule)
    if error.rule not in ids:
        wrong.append(f"{where}: {error.rule} raised inside {ids or 'no rule function'}")


def test_head_refusals_of_the_issue_are_raised_by_their_rules_rb_d2_rb_d3() -> None:
    """The issue's two cases: head refuses a timeout beyond int64 with RB-D2 inside an
    RB-D2 function, and an unknown kind with RB-D3 inside an RB-D3 function."""
    from timealign.rate_aware_batcher import Config, Polled

    cases: list[Callable[[], object]] = [
        lambda: Config(9e9, timeout_factor=3.0, profile="esslivedata-head"),
        lambda: Polled("foo", "x", 0, "a")]
    for make, rule_id in zip(cases, ("RB-D2", "RB-D3"), strict=True):
        with pytest.raises(InvalidInput) as caught:
            make()
        assert caught.value.rule == rule_id
        assert rulebook.raised_by(caught.value)[0].id == rule_id


def test_a_catalogued_variant_names_its_rule_and_says_what_it_does_cf_r41() -> None:
    """A catalogued variant enacts the rule it names and describes itself; it runs only
    through :func:`run_variants`' swap, so the reference around it is unchanged."""
    from timealign.approximate_time import arithmetic

    book = _book("approximate_time")

    @rulebook.rule("AT-D23")
    def rounded_up(d: int, numerator: int, denominator: int) -> int:
        """Rounds the age-penalty product up instead of truncating it."""
        return -((-d * numerator) // denominator)

    @rulebook.rule("AT-D23")
    def undocumented(d: int, numerator: int, denominator: int) -> int:
        return d

    name = "test_rounded_up"
    table = book.variant(name, {arithmetic.scale_ros2: rounded_up}, rule="AT-D23")
    try:
        _check_catalogued(book, table, name, undocumented, rounded_up)
    finally:  # not left in the catalogue the whole-catalogue tests run
        del book.tables[name]


def _check_catalogued(book: rulebook.Book, table: rulebook.Table, name: str,
                      undocumented: Callable[..., int],
                      rounded_up: Callable[..., int]) -> None:
    from timealign.approximate_time import arithmetic
    from timealign.conformance.catalogue import run_variants

    assert table.rule == "AT-D23" and table.label == "AT-D23 ~ test_rounded_up"
    assert table.about == "Rounds the age-penalty product up instead of truncating it."
    assert table in book.catalogue()
    with pytest.raises(ValueError, match="docstring"):
        book.variant("test_undocumented", {arithmetic.scale_ros2: undocumented},
                     rule="AT-D23")
    with pytest.raises(ValueError, match="not AT-R6"):
        book.variant("test_wrong_rule", {arithmetic.scale_ros2: rounded_up}, rule="AT-R6")
    config = {"topics": 2, "queue_size": 5, "age_penalty": 0.3}
    inputs = [{"op": "message", "topic": t, "stamp": s, "id": f"m{k}"}
              for k, (t, s) in enumerate(((0, 0), (1, 7), (0, 11), (1, 13), (0, 23)))]
    reference = registry.get("approximate_time")
    plain = run_json(reference, config, inputs)
    assert run_variants("approximate_time", [], config, inputs) == plain
    run_variants("approximate_time", [name], config, inputs)
    assert run_json(reference, config, inputs) == plain
