"""The Python adapter templates (examples/templates/, one per algorithm) behind
``timealign conform``: as shipped each wraps the reference, so each must agree on the
shipped suite, fuzz and explore under the full profile (CF-R2, CF-R3, CF-R10)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from timealign import registry
from timealign.conformance import Command, check

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "examples" / "templates"


def test_one_template_per_algorithm() -> None:
    assert {p.stem for p in TEMPLATES.glob("*.py")} == set(registry.names())


@pytest.mark.parametrize("algorithm", sorted(registry.names()))
def test_template_agrees_with_the_reference_cf_r2(algorithm: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), *sys.path]))
    with Command(f"{sys.executable} {TEMPLATES / algorithm}.py") as command:
        report = check(algorithm, command, fuzz=60, seed=3, explore=2)
    assert report.ok, report.text()
    assert report.observe == "full"
    assert all(s.run > 0 for s in report.sources), report.text()
