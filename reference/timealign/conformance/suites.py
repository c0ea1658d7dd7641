"""The shipped conformance suites, installed with the package (CF-R6).

``make vectors`` writes ``timealign/suites/<algorithm>.jsonl`` next to the per-vector
files of ``vectors/<algorithm>/`` (one vector per line, the same content), so that
``pip install timealign`` gives a user every suite without a checkout.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from timealign import vectors
from timealign.errors import InvalidInput
from timealign.vectors import Vector


def bundle(algorithm: str) -> Path:
    """The path of the installed suite of ``algorithm``."""
    return Path(str(resources.files("timealign").joinpath("suites", f"{algorithm}.jsonl")))


def shipped(algorithm: str) -> list[Vector]:
    """Every shipped vector of ``algorithm``; :class:`InvalidInput` (CF-R6) if none."""
    path = bundle(algorithm)
    if not path.is_file():
        raise InvalidInput("algorithm", "CF-R6", "no shipped vector suite", algorithm)
    return vectors.load(path)
