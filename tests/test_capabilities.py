"""The descriptor's capabilities (spec/drivers.md, DRV-R11, DRV-R12, DRV-D10).

Read from the classes and, for who reads what, from the package's source (nothing of an
adapter is imported): every hook in exactly one capability, the bundle only ``name`` and
the capabilities, every registered algorithm filling its hooks, and each adapter reading
exactly the capabilities that the table of DRV-R12 lists for it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from timealign import registry
from timealign.algorithm import (
    Accounting,
    Algorithm,
    Checks,
    Codec,
    Feeding,
    Machine,
    Pictures,
)

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "reference" / "timealign"

#: The capability classes by the bundle's field name (DRV-R11).
CAPABILITIES: dict[str, type] = {
    "machine": Machine, "codec": Codec, "feeding": Feeding, "accounting": Accounting,
    "pictures": Pictures, "checks": Checks,
}

#: Every hook of the former flat descriptor (issue #33): each must land in one capability.
HOOKS = {
    "initial", "step", "end", "config_type", "fast",
    "config_from_json", "config_to_json", "input_from_json", "input_to_json",
    "output_to_json", "output_from_json",
    "inputs_from_records", "timer_of", "clock_of", "tick", "record_run", "inputs_from_columns",
    "column_runs",
    "account", "accounts",
    "timeline_records", "slots_of", "flags_of",
    "check", "traces",
}

#: Hooks that every registered algorithm of this reference fills beyond the required ones.
FILLED = {"machine": ("config_type", "fast"), "codec": ("output_from_json",),
          "feeding": ("inputs_from_columns",),
          "checks": ("check", "traces"), "pictures": ("timeline_records",)}


def _hooks(capability: type) -> list[str]:
    return [field.name for field in attrs.fields(capability)]


def test_drv_r11_every_hook_belongs_to_exactly_one_capability() -> None:
    """DRV-R11: no hook defined twice, none left out, none on the bundle itself."""
    every = [name for capability in CAPABILITIES.values() for name in _hooks(capability)]
    assert len(every) == len(set(every)), f"a hook in two capabilities: {sorted(every)}"
    assert set(every) == HOOKS
    fields = attrs.fields(Algorithm)
    assert [f.name for f in fields] == ["name", *CAPABILITIES]
    # no forwarding: neither an attribute of the class nor one looked up on an instance
    assert not HOOKS & set(dir(Algorithm)), sorted(HOOKS & set(dir(Algorithm)))
    for name in registry.names():
        algorithm = registry.get(name)
        for hook in HOOKS:
            assert not hasattr(algorithm, hook), f"{name}.{hook} is forwarded"


def test_drv_r11_a_hook_on_the_bundle_is_refused() -> None:
    """DRV-R11: the bundle takes capabilities, not hooks: the flat form is a TypeError."""
    algorithm = registry.get("approximate_time")
    with pytest.raises(TypeError):
        Algorithm(name="flat", step=algorithm.machine.step)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        attrs.evolve(algorithm, step=algorithm.machine.step)  # type: ignore[call-arg]


def test_drv_d10_hooks_sit_with_what_their_readers_use_together() -> None:
    """DRV-D10: ``end``, ``fast`` and ``config_type`` beside ``step``; ``output_from_json``
    beside ``output_to_json``; each columnar form beside its row form; ``traces`` beside
    ``check``."""
    where = {hook: field for field, capability in CAPABILITIES.items()
             for hook in _hooks(capability)}
    pairs = [("end", "step"), ("fast", "step"), ("config_type", "step"),
             ("output_from_json", "output_to_json"),
             ("inputs_from_columns", "inputs_from_records"), ("column_runs", "record_run"),
             ("accounts", "account"),
             ("traces", "check")]
    assert [where[a] == where[b] for a, b in pairs] == [True] * len(pairs), where


@pytest.mark.parametrize("name", registry.names())
def test_drv_r11_registered_algorithms_fill_their_hooks(name: str) -> None:
    """DRV-R11: each capability is of its class, every required hook is callable, and the
    three machines also fill the optional hooks the spec names; a clock is read only by a
    machine with ticks (DRV-D3)."""
    algorithm = registry.get(name)
    for field, capability in CAPABILITIES.items():
        part = getattr(algorithm, field)
        assert type(part) is capability, (name, field)
        for hook in attrs.fields(capability):
            value = getattr(part, hook.name)
            if hook.default is attrs.NOTHING:
                assert callable(value), f"{name}: {field}.{hook.name} is not callable"
    for field, hooks in FILLED.items():
        for hook in hooks:
            assert getattr(getattr(algorithm, field), hook) is not None, (name, hook)
    feeding = algorithm.feeding
    assert feeding.clocked == (name == "event_time_batcher")
    assert (feeding.record_run is not None) == (name == "rate_aware_batcher")  # DRV-R8


def test_drv_r11_fast_path_swaps_only_the_machine() -> None:
    """DRV-R11: ``fast_path()`` replaces the machine's ``initial`` and ``step`` and keeps
    every other capability (the same objects)."""
    for name in registry.names():
        algorithm = registry.get(name)
        fast = algorithm.machine.fast
        assert fast is not None
        running = algorithm.fast_path()
        assert (running.machine.initial, running.machine.step) == (fast.initial, fast.step)
        assert running.machine.end is algorithm.machine.end
        assert running.machine.fast is None
        for field in ("codec", "feeding", "accounting", "pictures", "checks"):
            assert getattr(running, field) is getattr(algorithm, field), (name, field)


def _declared() -> dict[str, set[str]]:
    """The table of DRV-R12 in spec/drivers.md: adapter (a module or folder of the package)
    -> the capabilities it reads."""
    text = (ROOT / "spec" / "drivers.md").read_text()
    section = text.split("### DRV-R12 ")[1].split("\n### ")[0]
    table: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or not cells[0].startswith("`"):
            continue
        read = set() if cells[1] == "none" else {c.strip() for c in cells[1].split(",")}
        for place in re.findall(r"`([^`]+)`", cells[0]):
            table[place] = read
    return table


def _reads(path: Path, wanted: Callable[[ast.Attribute], bool]) -> set[str]:
    tree = ast.parse(path.read_text())
    return {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and wanted(node)}


def _modules(place: str) -> list[Path]:
    target = PACKAGE / place
    return sorted(target.rglob("*.py")) if place.endswith("/") else [target]


def test_drv_r12_adapters_read_exactly_the_capabilities_they_declare() -> None:
    """DRV-R12: what each adapter of the table reads (``<expr>.machine`` and so on, in its
    source) is exactly its row, and every module that reads a capability has a row."""
    declared = _declared()
    assert {"drive.py", "plot/", "spark/", "conformance/"} <= set(declared)
    covered: set[Path] = set()
    for place, wanted in declared.items():
        modules = _modules(place)
        assert modules and all(m.exists() for m in modules), place
        covered.update(modules)
        found: set[str] = set()
        for module in modules:
            found |= _reads(module, lambda node: node.attr in CAPABILITIES)
        assert found == wanted, f"{place} reads {sorted(found)}, declares {sorted(wanted)}"
    for module in sorted(PACKAGE.rglob("*.py")):
        if module not in covered:
            assert not _reads(module, lambda node: node.attr in CAPABILITIES), \
                f"{module.relative_to(PACKAGE)} reads capabilities but has no row in DRV-R12"


PICTURE_HOOKS = set(_hooks(Pictures))
ALGORITHM_PACKAGES = tuple(registry.package(name).removeprefix("timealign.")
                           for name in registry.names())


def _through_pictures(node: ast.Attribute, annotated: set[str]) -> bool:
    """``<expr>.pictures.<hook>``, or ``<name>.<hook>`` of a name annotated ``Pictures``."""
    owner = node.value
    return (isinstance(owner, ast.Attribute) and owner.attr == "pictures") or \
        (isinstance(owner, ast.Name) and owner.id in annotated)


def _pictures_names(tree: ast.AST) -> set[str]:
    return {arg.arg for arg in ast.walk(tree) if isinstance(arg, ast.arg)
            and arg.annotation is not None and "Pictures" in ast.unparse(arg.annotation)}


def test_drv_r12_picture_hooks_are_read_only_through_pictures() -> None:
    """DRV-R12: the picture hooks are read only by the pictures (``plot/``,
    ``spark/pictures.py``), and there only through a ``Pictures``."""
    readers: set[str] = set()
    for module in sorted(PACKAGE.rglob("*.py")):
        relative = module.relative_to(PACKAGE)
        if relative.parts[0] in ALGORITHM_PACKAGES:
            continue  # the wiring reads its own codec module's functions
        tree = ast.parse(module.read_text())
        annotated = _pictures_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in PICTURE_HOOKS:
                assert _through_pictures(node, annotated), \
                    f"{relative}:{node.lineno} reads {node.attr} outside a Pictures"
                readers.add(str(relative))
    assert readers == {"plot/timeline.py", "spark/pictures.py"}


def test_drv_r12_the_plot_takes_pictures_for_a_state() -> None:
    """DRV-R12: the plot draws a machine's state from its ``Pictures`` alone: a stub
    ``Pictures`` with only ``flags_of`` gives flags and no slots."""
    from timealign.algorithm import Flag
    from timealign.plot import timeline

    slots: list[Any] = []
    flags: list[Any] = []
    only_flags: Pictures[Any, Any, Any] = Pictures(
        flags_of=lambda config, state: (Flag("x", "drop", state),))
    timeline._state_pictures(only_flags, None, True, 7, slots, flags)
    assert slots == [] and [(f.at, f.flags) for f in flags] == [(7, (Flag("x", "drop", True),))]
