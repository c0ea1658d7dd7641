"""Every list that names the algorithms names every registered one (ARCHITECTURE.md, "Where
a change goes": adding an algorithm).

Most such lists are derived from :mod:`timealign.registry` (the spec index's packages, the
figure prefixes, the rule-function and capability tests, the columnar driver tests, the
Makefile's pure checks by file name). The ones that hold knowledge about each algorithm,
or that must be read without importing the package, stay written out, and this test fails
when a registered algorithm is missing from one of them, naming the list.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from cases import figures
from tests import test_drive_columns
from timealign import native, reasons, registry
from tools import spec_index

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "reference" / "timealign"


def _folder(name: str) -> str:
    return registry.package(name).removeprefix("timealign.").replace(".", "/")


def test_every_fast_path_is_in_native_compiled() -> None:
    """`timealign.native.COMPILED` (written out: setup.py reads native.py without importing
    the package) names the fast path of every registered algorithm that has one, and no
    other module."""
    fast = {f"{registry.package(name)}.fast" for name in registry.names()
            if (PACKAGE / _folder(name) / "fast.py").is_file()}
    assert set(native.COMPILED) == fast


def test_every_algorithm_says_which_outcomes_are_normal() -> None:
    """`timealign.reasons` says, per algorithm, which outcomes are normal (SP-R31) and
    which output kind groups messages; a registered algorithm missing there would have
    every grouped row flagged."""
    assert set(reasons.NORMAL) == set(registry.names()), "reasons.NORMAL"
    assert set(reasons._GROUPING) == set(registry.names()), "reasons._GROUPING"


def test_every_algorithm_has_an_overview_figure() -> None:
    """`cases/figures.py` draws each algorithm's typical run for its spec's overview (and
    its prefix comes from the spec's id family)."""
    overviews = {algorithm for what, algorithm, _ in figures.FIGURES if what == "Overview"}
    assert overviews == set(registry.names()), "cases/figures.py FIGURES"
    assert set(figures.PREFIX) == set(registry.names())


def test_every_algorithm_has_a_config_in_the_columnar_driver_tests() -> None:
    """tests/test_drive_columns.py runs every registered algorithm, each under a config of
    its own."""
    assert set(test_drive_columns.CONFIGS) == set(registry.names()), "CONFIGS"
    assert {a.name for a in test_drive_columns.ALGORITHMS} == set(registry.names())


def test_every_algorithm_has_a_family_and_its_package_in_the_spec_index() -> None:
    """tools/spec_index.py finds each algorithm's id family in its spec and credits its
    package with that family's citations, and its codec with VEC's."""
    families = spec_index.algorithm_families()
    assert set(families) == set(registry.names())
    for name, family in families.items():
        assert spec_index.PACKAGES[family] == (_folder(name),)
        assert f"{_folder(name)}/codec.py" in spec_index.PACKAGES["VEC"]


def test_make_test_pure_runs_every_algorithms_fast_path_checks() -> None:
    """`make test-pure` (the Makefile's PURE_CHECKS) runs each registered algorithm's
    stateful and differential tests on the pure fast paths."""
    done = subprocess.run(["make", "-n", "--no-print-directory", "test-pure",
                           "STAMP=Makefile"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    [command] = [line for line in done.stdout.splitlines() if "TIMEALIGN_PURE=1" in line]
    for name in registry.names():
        folder = ROOT / "tests" / _folder(name)
        for kind in ("stateful", "differential"):
            found = sorted(folder.glob(f"test_*_{kind}.py"))
            assert found, f"tests/{_folder(name)} has no {kind} test"
            assert all(str(path.relative_to(ROOT)) in command.split() for path in found), \
                f"make test-pure does not run {found}"
