"""The mutation study (CF-I1): every seeded fault, run as an external command through the
protocol, is caught, shrunk, and saved as a vector the reference passes and the fault
fails. Small budgets with fixed seeds keep it cheap; ``python -m proofs.conformance_study``
runs the larger budgets of the README table."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance.mutants import FAULTS, command
from timealign import vectors
from timealign.cli import main
from timealign.conformance import Command, check, targets

FUZZ, SEED, DEPTH = 100, 1, 2


def test_the_study_covers_three_algorithms_with_twelve_faults() -> None:
    assert len(FAULTS) >= 12
    assert {algorithm for algorithm, _ in FAULTS.values()} == {
        "approximate_time", "event_time_batcher", "rate_aware_batcher"}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_seeded_fault_is_caught_shrunk_and_saved_cf_i1(fault: str, tmp_path: Path) -> None:
    """CF-I1 (and CF-R6 to CF-R8, CF-R16 over the protocol)."""
    algorithm = FAULTS[fault][0]
    with Command(command(fault)) as implementation:
        report = check(algorithm, implementation, fuzz=FUZZ, seed=SEED, explore=DEPTH,
                       save_to=tmp_path)
        assert not report.ok, f"{fault} was not caught"
        differences = [d for s in report.sources for d in s.differences]
        assert all(d.status == "differ" for d in differences), report.text()
        for difference in differences:
            assert len(difference.vector.inputs) <= difference.original_size
            assert difference.rules, f"{fault}: a difference named no rule"
        for source in report.sources:
            if source.source == "fuzz" and source.differences:
                assert len(source.differences[0].vector.inputs) <= 16, report.text()
        assert main(["check", str(tmp_path)]) == 0  # the reference passes every saved vector
        saved = [v for p in vectors.files([tmp_path]) for v in vectors.load(p)]
        again = check(algorithm, implementation, vectors=saved)
        assert again.sources[0].differ == len(saved) == len(differences)


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_seeded_fault_is_caught_within_a_target_cf_i1_cf_r18(fault: str) -> None:
    """CF-I1 with targets (CF-R18): every fault is caught within some target of its
    algorithm, on that target's traces only (``observe full``: the faults report
    everything). Targets are tried in order; fuzz collects distinct differences (CF-R32)."""
    algorithm = FAULTS[fault][0]
    tried = []
    for target in targets(algorithm):
        with Command(command(fault)) as implementation:
            report = check(algorithm, implementation, fuzz=300, seed=SEED, explore=DEPTH,
                           target=target, observe="full")
        if not report.ok:
            assert all(s.refused == 0 for s in report.sources), report.text()
            return
        tried.append(target)
    raise AssertionError(f"{fault} was caught within none of {tried}")
