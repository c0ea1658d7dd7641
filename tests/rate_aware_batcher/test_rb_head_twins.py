"""The head twins of the card scenarios (``cases/rate_aware_batcher.py``, ``HEAD_TWINS``):
where the two revisions behave alike, the esslivedata-head target has a vector too."""

from __future__ import annotations

import pytest

from cases.rate_aware_batcher import CASES as CASE_LIST
from cases.rate_aware_batcher import HEAD_TWINS
from timealign import vectors
from timealign.rate_aware_batcher.traces import TARGETS

CASES = {case.name: case for case in CASE_LIST}


def test_rb_every_head_twin_runs_its_card_original_in_the_head_profile() -> None:
    """RB-R17: a twin is its card original (no ``profile``, so card) with the head profile,
    the same inputs, inside the esslivedata-head target; the names stay unique."""
    assert len(CASES) == len(CASE_LIST) and len(HEAD_TWINS) == len(set(HEAD_TWINS))
    for name in HEAD_TWINS:
        original, twin = CASES[name], CASES[f"{name}_head"]
        assert "profile" not in original.config, name
        assert twin.config == {**original.config, "profile": "esslivedata-head"}, name
        assert twin.inputs == original.inputs and "RB-R17" in twin.rules, name
        assert TARGETS["esslivedata-head"].outside(dict(twin.config),
                                                   list(twin.inputs)) is None, name


@pytest.mark.parametrize("name", HEAD_TWINS)
def test_rb_head_twin_has_the_outputs_of_its_card_original(name: str) -> None:
    """RB-R17: on these traces the head profile's own rules never fire differently (no
    clock reading, so no stall backstop), and the twin has exactly its original's outputs."""
    assert vectors.reference_outputs(CASES[f"{name}_head"]) == \
        vectors.reference_outputs(CASES[name])
