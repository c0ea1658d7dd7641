"""Shared test set-up: Hypothesis profiles.

``ci`` (the default) is derandomized with no deadline and no example database, so a run is
repeatable; ``nightly`` explores far more. Choose with ``--hypothesis-profile=nightly`` or
``HYPOTHESIS_PROFILE=nightly``.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    parent=settings.get_profile("ci"),
    derandomize=True,
    deadline=None,
    database=None,
    print_blob=True,
    max_examples=100,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "nightly",
    deadline=None,
    max_examples=5000,
    stateful_step_count=100,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
