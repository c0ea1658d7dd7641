"""Every Python adapter keeps the protocol on a descriptor of its own (CF-R1): whatever
else writes to standard output while a trace runs (a library's ``print``, a logger, a C
extension writing to descriptor 1) goes to stderr, and the answers stay intact. The ESS
adapter is checked against a stand-in that logs on standard output as the head revision
does (``test_cf_esslivedata.py``); here the templates and the reference's own adapter."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from timealign import registry
from timealign.conformance import Command, check

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "examples" / "templates"

# Run a template with its implementation's ``step`` printing on standard output, through
# ``sys.stdout`` and straight to descriptor 1, at every input.
NOISY = """
import importlib, os, runpy, sys
module = importlib.import_module("timealign." + sys.argv[1])
original = module.step
def step(*args):
    print("noise through sys.stdout", flush=True)
    os.write(1, b"noise on descriptor 1\\n")
    return original(*args)
module.step = step
path = sys.argv[2]
sys.argv = [path]
runpy.run_path(path, run_name="__main__")
"""

# The reference adapter's main() with a runner that prints on standard output.
NOISY_REFERENCE = """
import os, sys
from timealign.commands import conformance_adapter as adapter
made = adapter.runner
def runner(algorithm):
    run = made(algorithm)
    def noisy(config, inputs):
        print("noise through sys.stdout", flush=True)
        os.write(1, b"noise on descriptor 1\\n")
        return run(config, inputs)
    return noisy
adapter.runner = runner
sys.exit(adapter.main([sys.argv[1]]))
"""


@pytest.fixture(autouse=True)
def _path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), *sys.path]))


def _script(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "noisy.py"
    path.write_text(text)
    return path


@pytest.mark.parametrize("algorithm", sorted(registry.names()))
def test_template_answers_on_its_own_descriptor_cf_r1(algorithm: str, tmp_path: Path) -> None:
    """CF-R1: a template whose implementation prints on standard output still agrees."""
    script = _script(tmp_path, NOISY)
    with Command(f"{sys.executable} {script} {algorithm} {TEMPLATES / algorithm}.py") as command:
        report = check(algorithm, command, fuzz=10, seed=3)
    assert report.ok, report.text()
    assert all(s.run > 0 and s.failed == 0 for s in report.sources), report.text()


def test_reference_adapter_answers_on_its_own_descriptor_cf_r1(tmp_path: Path) -> None:
    """CF-R1: ``python -m timealign.conformance.adapter`` with a runner that prints on
    standard output still agrees."""
    script = _script(tmp_path, NOISY_REFERENCE)
    with Command(f"{sys.executable} {script} event_time_batcher") as command:
        report = check("event_time_batcher", command, fuzz=10, seed=3)
    assert report.ok, report.text()
