"""`--fail-on` gates (SP-R38): the verdict's level and thresholds per outcome and reason,
read exactly, refused when they name what the algorithm never writes."""

from __future__ import annotations

import argparse
from fractions import Fraction
from typing import Any

import pytest

from timealign import gates
from timealign.errors import InvalidInput


def _summary(look: bool = False, held: int | None = None) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "verdict": {"needs_a_look": look, "line": "verdict: needs a look: x" if look else "ok"},
        "rows": 500, "outcomes": [
            {"outcome": "grouped", "reason": None, "rows": 496},
            {"outcome": "rejected", "reason": "too_old", "rows": 2},
            {"outcome": "rejected", "reason": "duplicate", "rows": 2}]}
    if held is not None:
        summary |= {"held": held, "read": 500 + held}
    return summary


def test_sp_r38_gates_parse_counts_shares_and_the_level() -> None:
    assert gates.parse("needs-a-look") == gates.Gate("needs-a-look")
    assert gates.parse("rejected>1%") == gates.Gate("rejected", Fraction(1), True)
    assert gates.parse("too_old > 0") == gates.Gate("too_old", Fraction(0), False)
    assert gates.parse("rejected>0.5%") == gates.Gate("rejected", Fraction(1, 2), True)
    assert str(gates.parse("rejected>0.5%")) == "rejected>0.5%"
    assert str(gates.parse("too_old>3")) == "too_old>3"
    for bad in ("rejected>", "rejected>=1", "rejected>1.5", "Rejected>1", "needs a look",
                "rejected>-1", "rejected>nan%"):
        with pytest.raises(argparse.ArgumentTypeError):
            gates.parse(bad)


def test_sp_r38_thresholds_per_outcome_and_reason() -> None:
    """Two late rows in 500 (0.4 %) pass `rejected>1%` and fail `too_old>0`; the level
    fails only a verdict that needs a look."""
    summary = _summary()
    assert gates.tripped([gates.parse("rejected>1%")], summary) == []
    assert gates.tripped([gates.parse("rejected>0.8%")], summary) == []  # 4/500 = 0.8 %
    assert gates.tripped([gates.parse("rejected>0.79%")], summary) == [
        "--fail-on rejected>0.79%: 4 of 500 rows are rejected (0.80%)"]
    assert gates.tripped([gates.parse("too_old>0")], summary) == [
        "--fail-on too_old>0: 2 of 500 rows are too_old (0.40%)"]
    assert gates.tripped([gates.parse("too_old>2"), gates.parse("needs-a-look")],
                         summary) == []
    assert gates.tripped([gates.parse("needs-a-look")], _summary(look=True)) == [
        "--fail-on needs-a-look: verdict: needs a look: x"]


def test_sp_r38_a_streams_held_rows_count_as_pending_of_the_rows_read() -> None:
    summary = _summary(held=100)
    assert gates.count(summary, "pending") == 100 == gates.count(summary, "held")
    assert gates.tripped([gates.parse("pending>10%")], summary) == [
        "--fail-on pending>10%: 100 of 600 rows are pending (16.67%)"]
    assert gates.tripped([gates.parse("rejected>0.7%")], summary) == []  # 4/600


def test_sp_r38_a_name_the_algorithm_never_writes_is_refused() -> None:
    gates.check([gates.parse("too_old>0"), gates.parse("rejected>1%")], "event_time_batcher")
    gates.check([gates.parse("queue_overflow>0")], "approximate_time")
    with pytest.raises(InvalidInput, match="too_olde") as caught:
        gates.check([gates.parse("too_olde>0")], "event_time_batcher")
    assert caught.value.field == "--fail-on" and "too_old" in caught.value.message
    with pytest.raises(InvalidInput):
        gates.check([gates.parse("too_old>0")], "approximate_time")
