"""Targets (CF-R18), refusals read as refusals (CF-R19, CF-R20), safe saved names (CF-R16),
and the stand-ins of the real upstreams (CF-I3; ``tests/conformance/standin.py``).

Small budgets with fixed seeds; the full budget (``--fuzz 3000``) is in the README."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.standin import ALGORITHMS, command
from timealign import registry, vectors
from timealign.cli import main
from timealign.conformance import Command, check, implementation, run_reference, targets
from timealign.errors import InvalidInput
from timealign.rate_aware_batcher import Config, End, Input, Poll, Polled
from timealign.rate_aware_batcher.traces import MARGIN, near_stall, off_stall_boundary
from timealign.vectors import Vector

JSON = dict[str, Any]
FUZZ, SEED, DEPTH = 100, 1, 2
CITED = re.compile(r"\((?:[A-Z]{2}-[RDHI]\d+(?:, )?)+\)")


def test_every_algorithm_lists_the_targets_of_the_issue_cf_r18() -> None:
    assert {(a, t) for a in registry.names() for t in targets(a)} == {
        (algorithm, target) for target, algorithm in ALGORITHMS.items()}


@pytest.mark.parametrize("target", sorted(ALGORITHMS))
def test_stand_in_agrees_on_its_target_with_zero_refusals_cf_i3_cf_r18(target: str) -> None:
    """CF-I3, CF-R18: within its target the stand-in (the reference plus the upstream's
    refusals) agrees on every source and refuses nothing; every generated trace is inside
    the target; every skipped vector is skipped for a reason that cites the spec."""
    algorithm = ALGORITHMS[target]
    with Command(command(target)) as stand_in:
        report = check(algorithm, stand_in, fuzz=FUZZ, seed=SEED, explore=DEPTH, target=target)
    assert report.ok, report.text()
    assert report.observe == "upstream" and report.target == target
    by_source = {s.source: s for s in report.sources}
    assert all(s.refused == 0 and s.run > 0 for s in report.sources), report.text()
    assert not by_source["fuzz"].skipped and not by_source["explore"].skipped, report.text()
    assert by_source["vectors"].skipped, "every suite holds a vector outside each target"
    assert all(CITED.search(why) for why in by_source["vectors"].skipped), report.text()


def test_without_target_the_stand_in_refuses_and_the_source_stops_cf_r19_cf_r20() -> None:
    """CF-R19, CF-R20: without ``--target`` the ros1 stand-in refuses the ros2 vectors; each
    refusal is reported as sent, not shrunk, and ten in a row stop the source with a hint."""
    with Command(command("ros1")) as stand_in:
        report = check("approximate_time", stand_in)
    [source] = report.sources
    assert (source.refused, source.differ, source.run) == (10, 0, 10)
    assert "refused 10 traces in a row: wrong algorithm, or does it need `--target`?" \
        in source.note
    assert all(d.status == "refused" and len(d.vector.inputs) == d.original_size
               for d in source.differences)
    assert "refused: ros1 cannot compute in ros2 arithmetic" in report.text()
    assert not report.ok


def test_target_list_and_unknown_target_cf_r18(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "rate_aware_batcher", "--target", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "rate_aware_batcher --target esslivedata-card",
        "rate_aware_batcher --target esslivedata-head"]
    assert main(["conform", "approximate_time", "--target", "ros3", "--cmd", "true"]) == 2
    assert "CF-R18" in capsys.readouterr().err
    with pytest.raises(InvalidInput) as caught:
        check("approximate_time", implementation(registry.get("approximate_time")),
              target="thin-edge")
    assert caught.value.rule == "CF-R18"


def _accepting(config: JSON, inputs: list[JSON]) -> list[JSON]:
    """An implementation that accepts every config and input: it publishes nothing."""
    return []


@pytest.mark.parametrize("inputs", [(), ({"op": "message", "topic": 0, "stamp": 1,
                                          "id": "a"},)])
def test_a_config_the_reference_refuses_reads_at_config_whatever_the_profile_cf_r19(
        inputs: tuple[JSON, ...]) -> None:
    """CF-R19: two topics with one lower bound is refused by the reference (AT-R1); an
    implementation that takes it differs at the config, under ``upstream`` too, even with
    no input at all."""
    bad = Vector(algorithm="approximate_time", name="one_bound", inputs=inputs,
                 config={"topics": 2, "queue_size": 3, "inter_message_lower_bounds": [1]})
    report = check("approximate_time", _accepting, vectors=[bad], observe="upstream")
    [difference] = report.sources[0].differences
    assert difference.at is None and difference.status == "differ"
    assert difference.rules == ("AT-R1",)
    assert difference.expected[0]["rule"] == "AT-R1"
    assert "first at config" in report.text() and "refuses the config (AT-R1" in report.text()


def test_an_input_the_reference_refuses_is_named_under_upstream_cf_r19() -> None:
    """CF-R19: the reference refuses a negative stamp (AT-R2) and goes on; an implementation
    that takes it and then publishes differently is pinned to that input, by its rule,
    although ``upstream`` drops error outputs."""
    trace = Vector(algorithm="approximate_time", name="negative", config={
        "topics": 2, "queue_size": 3}, inputs=(
        {"op": "message", "topic": 0, "stamp": -5, "id": "neg"},
        {"op": "message", "topic": 1, "stamp": 0, "id": "b"}))

    def takes_negative(config: JSON, inputs: list[JSON]) -> list[JSON]:
        """Clamps a negative stamp to 0 instead of refusing it."""
        clamped = [{**i, "stamp": max(0, i["stamp"])} if "stamp" in i else i for i in inputs]
        return run_reference(registry.get("approximate_time"), config, clamped)

    report = check("approximate_time", takes_negative, vectors=[trace], observe="upstream")
    [difference] = report.sources[0].differences
    assert difference.at == 0 and "AT-R2" in difference.rules
    assert difference.expected == ({"input": 0, "kind": "error", "field": "stamp",
                                    "rule": "AT-R2"},)
    assert "the reference refuses input 0 (AT-R2)" in report.text()


@pytest.mark.parametrize("name", ["suite/sub/x", "../../escape", "/etc/passwd", "x" * 5000,
                                  "", ".", "..", "a\x00b", "ünï côdé"])
def test_save_writes_any_vector_name_inside_the_folder_cf_r16(name: str,
                                                              tmp_path: Path) -> None:
    """CF-R16: whatever the vector's name holds, its file lands inside ``--save``'s folder
    and the reference passes it."""
    case = next(v for v in vectors.load(Path(__file__).resolve().parents[2] / "vectors" /
                                        "approximate_time" / "exact_match_publishes_at_once.json"))
    folder = tmp_path / "saved"
    report = check("approximate_time", _accepting, vectors=[attrs_named(case, name)],
                   save_to=folder)
    [difference] = report.sources[0].differences
    path = Path(difference.saved)
    assert path.parent == folder and path.exists() and len(path.name) < 100
    assert main(["check", str(folder)]) == 0


def attrs_named(vector: Vector, name: str) -> Vector:
    import attrs

    return attrs.evolve(vector, name=name)


def test_head_clock_readings_kept_off_the_stall_boundary_rb_d17_cf_r18() -> None:
    """CF-R18 (RB-D17): a reading exactly 10 L after the last close is moved ``MARGIN``
    past the boundary, later readings with it; the moved trace has none near it."""
    config = Config(batch_length_s=1e-6, profile="esslivedata-head")
    first = Poll((Polled("detector_events", "det", 1_000_000, "p0"),), 5_000)
    stall = Poll((Polled("log", "log", 1_000_100, "g1"),), 15_000)  # last close 5 000 + 10 L
    later = Poll((), 15_250)
    trace: list[Input] = [first, stall, later, End()]
    assert near_stall(config, trace) == 1
    moved = off_stall_boundary(config, trace)
    assert [p.now for p in moved if isinstance(p, Poll)] == [5_000, 15_000 + MARGIN,
                                                             15_250 + MARGIN]
    assert near_stall(config, moved) is None
    outputs = run_reference(registry.get("rate_aware_batcher"),
                            {"batch_length_s": 1e-6, "profile": "esslivedata-head"},
                            [registry.get("rate_aware_batcher").codec.input_to_json(i)
                             for i in moved])
    assert not [o for o in outputs if o["kind"] == "error"]
