"""Every registered algorithm has the same shape and keeps its fast path honest.

Read from the registry, so a fourth algorithm is covered by its registry line: its package
holds ``model``, ``machine``, ``invariants`` and ``codec`` (plus ``fast`` when it has one);
``machine.py`` shows only ``initial``, ``step`` and what the fast path shares with it;
``tests/<algorithm>/`` names its helpers and its common tests alike;
``ALGORITHM`` runs the rule text (``machine.py``) and reaches the fast path only through
``ALGORITHM.machine.fast``; the invariants and the output decoder are reachable from the
descriptor; every shipped vector satisfies the invariants through the generic entry points.
"""

from __future__ import annotations

import ast
import importlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs
import pytest

from cases import generate
from timealign import registry, vectors
from timealign.algorithm import Algorithm, check_invariants, check_json_run
from timealign.cli import main
from timealign.lockstep import Divergence, Lockstep, run_lockstep

ROOT = Path(__file__).resolve().parent.parent
NAMES = registry.names()
SHAPE = ("model", "machine", "invariants", "codec")
#: The helper modules of every ``tests/<algorithm>/`` package, one name per role: the
#: independent literal model and the helpers its tests share.
TEST_HELPERS = {"__init__.py", "literal_model.py", "support.py"}
#: The tests every algorithm has, as ``test_<prefix>_<role>.py`` with one prefix.
TEST_ROLES = ("differential", "invariants", "stateful")


def package(name: str) -> ModuleType:
    return importlib.import_module(f"timealign.{name}")


def module(name: str, part: str) -> ModuleType:
    return importlib.import_module(f"timealign.{name}.{part}")


def has_fast(name: str) -> bool:
    return (Path(package(name).__file__ or "").parent / "fast.py").exists()


@pytest.mark.parametrize("name", NAMES)
def test_package_has_the_shape(name: str) -> None:
    """One shape for every algorithm: model, machine, invariants, codec (and fast)."""
    algorithm = registry.get(name)
    assert algorithm.name == name and package(name).ALGORITHM is algorithm
    for part in SHAPE:
        module(name, part)
    machine = module(name, "machine")
    assert algorithm.machine.step is machine.step, "ALGORITHM must run the rule text (machine.py)"
    assert algorithm.machine.initial is machine.initial
    assert algorithm.checks.check is module(name, "invariants").check
    assert algorithm.codec.output_from_json is module(name, "codec").output_from_json
    if has_fast(name):
        fast = module(name, "fast")
        assert algorithm.machine.fast is not None
        assert (algorithm.machine.fast.initial, algorithm.machine.fast.step) == \
            (fast.initial, fast.step)
        assert algorithm.fast_path().machine.step is fast.step
    else:
        assert algorithm.machine.fast is None and algorithm.fast_path() is algorithm
    assert (ROOT / "spec" / f"{name}.md").exists()
    assert (ROOT / "cases" / f"{name}.py").exists()


def _source(name: str, part: str) -> Path:
    """The ``.py`` source of a module of the package (also when it is compiled)."""
    return Path(package(name).__file__ or "").parent / f"{part}.py"


@pytest.mark.parametrize("name", NAMES)
def test_machine_shows_initial_step_and_the_input_checks(name: str) -> None:
    """``machine.py`` in one style: its public functions are ``initial``, ``step`` and what
    the fast path imports from it (the input checks, AT's scale); every rule is a private
    function of the module (no class but private scratch records)."""
    machine = module(name, "machine")
    defined = [(n, obj) for n, obj in vars(machine).items()
               if callable(obj) and getattr(obj, "__module__", None) == machine.__name__]
    public = {n for n, obj in defined if not n.startswith("_")}
    assert not any(isinstance(obj, type) for n, obj in defined if not n.startswith("_")), \
        "machine.py defines no public class (the model's types live in model.py)"
    shared: set[str] = set()
    if has_fast(name):
        tree = ast.parse(_source(name, "fast").read_text())
        shared = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                  and node.module == f"timealign.{name}.machine" for alias in node.names}
    assert {"initial", "step"} <= public
    assert public <= {"initial", "step"} | shared, (
        f"public functions of {name}/machine.py beyond initial, step and what fast.py "
        f"shares: {sorted(public - {'initial', 'step'} - shared)}")


@pytest.mark.parametrize("name", NAMES)
def test_tests_package_has_the_shape(name: str) -> None:
    """``tests/<algorithm>/``: the same helper names and the common tests under one prefix."""
    folder = ROOT / "tests" / name
    files = {p.name for p in folder.glob("*.py")}
    assert {f for f in files if not f.startswith("test_")} == TEST_HELPERS
    prefixes = {f.split("_")[1] for f in files if f.startswith("test_")}
    assert len(prefixes) == 1, f"one prefix for the tests of {name}: {sorted(prefixes)}"
    prefix = prefixes.pop()
    for role in TEST_ROLES:
        assert f"test_{prefix}_{role}.py" in files


def _decoded(algorithm: Algorithm[Any, Any, Any, Any], vector: vectors.Vector
             ) -> tuple[Any, list[Any], list[tuple[int, Any]]] | None:
    """The vector's run with the reference outputs, decoded; None for a refused config
    or a vector with refused inputs (the fast path is compared on whole runs)."""
    produced = vectors.reference_outputs(vector)
    if any(o["kind"] == "error" for o in produced):
        return None
    config = algorithm.codec.config_from_json(vector.config)
    inputs = [algorithm.codec.input_from_json(raw) for raw in vector.inputs]
    assert algorithm.codec.output_from_json is not None
    return config, inputs, [(o["input"], algorithm.codec.output_from_json(o, inputs))
                            for o in produced]


@pytest.mark.parametrize("name", NAMES)
def test_shipped_vectors_satisfy_the_invariants_and_the_fast_path_agrees(name: str) -> None:
    """Every shipped vector, through the generic entry points: ``check_json_run`` and
    ``check_invariants`` find nothing, ``output_from_json`` inverts ``output_to_json``, and
    the fast path steps in lockstep with the rule text (equal outputs and states), also
    when both resume from the spec's state in the middle of the run."""
    algorithm = registry.get(name)
    checked = 0
    for vector in generate.cases(name):
        produced = vectors.reference_outputs(vector)
        assert check_json_run(algorithm, vector.config, list(vector.inputs), produced) == [], \
            vector.name
        decoded = _decoded(algorithm, vector)
        if decoded is None:
            continue
        config, inputs, outputs = decoded
        assert [(k, algorithm.codec.output_to_json(o)) for k, o in outputs] == [
            (o["input"], {k: v for k, v in o.items() if k != "input"}) for o in produced]
        assert check_invariants(algorithm.checks, config, inputs, outputs) == []
        if algorithm.machine.fast is not None:
            assert list(run_lockstep(algorithm, config, inputs)[1]) == outputs
            half = len(inputs) // 2  # resumed from the spec's state (from_spec) mid-run
            state, _ = run_lockstep(algorithm, config, inputs[:half])
            resumed = Lockstep.at(algorithm, config, state)
            rest = [(half + k, o) for k, item in enumerate(inputs[half:])
                    for o in resumed.step(item)]
            assert rest == [(k, o) for k, o in outputs if k >= half]
        checked += 1
    assert checked > 0


@pytest.mark.parametrize("name", [n for n in NAMES if registry.get(n).machine.fast is not None])
def test_lockstep_catches_a_wrong_fast_path(name: str) -> None:
    """The lockstep check can fail: a fast path that drops one output is caught."""
    algorithm = registry.get(name)
    fast = algorithm.machine.fast
    assert fast is not None

    def lossy_step(config: Any, state: Any, item: Any) -> tuple[Any, tuple[Any, ...]]:
        state, outputs = fast.step(config, state, item)
        return state, outputs[1:]

    broken = attrs.evolve(algorithm, machine=attrs.evolve(
        algorithm.machine, fast=attrs.evolve(fast, step=lossy_step)))
    runs = [d for v in generate.cases(name) if (d := _decoded(algorithm, v)) is not None]
    config, inputs, _ = next(d for d in runs if d[2])
    with pytest.raises(Divergence, match="outputs differ"):
        run_lockstep(broken, config, inputs)


def test_check_reports_invariant_violations_of_a_vector(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    """VEC-R6 and the invariants: ``timealign check`` names an invariant violated by the
    expected outputs as well as the first difference."""
    case = next(c for c in generate.cases("rate_aware_batcher")
                if any(o["kind"] == "batch" and o["ids"] for o in vectors.reference_outputs(c)))
    produced = vectors.reference_outputs(case)
    first = next(o for o in produced if o["kind"] == "batch" and o["ids"])
    doubled = [*produced, {**first, "input": len(case.inputs) - 1}]
    body = {**case.to_json(), "outputs": doubled}
    (tmp_path / "v.json").write_text(json.dumps(body), encoding="utf-8")
    assert main(["check", str(tmp_path / "v.json")]) == 1
    printed = capsys.readouterr().out
    assert "missing" in printed and "invariant RB-I1" in printed, printed
