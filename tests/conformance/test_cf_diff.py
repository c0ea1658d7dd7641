"""``timealign diff``: two variants of the reference compared through the conformance
machinery (spec/conformance.md, CF-R21 to CF-R25)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from timealign import vectors
from timealign.cli import main
from timealign.conformance import fired, shipped
from timealign.conformance.diff import Variant, diff, variant
from timealign.errors import InvalidInput

AT, RB = "approximate_time", "rate_aware_batcher"
ROS2, ROS1 = Variant("arithmetic=ros2", {"arithmetic": "ros2"}), \
    Variant("arithmetic=ros1", {"arithmetic": "ros1"})
CARD = Variant("profile=card", {"profile": "card"})
HEAD = Variant("profile=esslivedata-head", {"profile": "esslivedata-head"})


def _suite(algorithm: str, *names: str) -> list[vectors.Vector]:
    found = [v for v in shipped(algorithm) if v.name in names]
    assert len(found) == len(names)
    return found


def test_changes_parse_as_json_else_text_and_unknown_fields_are_refused_cf_r21() -> None:
    chosen = variant(RB, ["profile=card,timeout_factor=2.5"])
    assert chosen.changes == {"profile": "card", "timeout_factor": 2.5}
    assert variant(AT, ["age_penalty=0.5"]).changes == {"age_penalty": 0.5}
    for bad in (["profile"], ["=card"], ["no_such_field=1"], []):
        with pytest.raises(InvalidInput) as caught:
            variant(RB, bad)
        assert caught.value.rule == "CF-R21"


def test_ros1_rounding_found_and_named_by_at_d23_and_at_r16_cf_r22_cf_r23_cf_r24() -> None:
    report = diff(AT, ROS2, ROS1, vectors=_suite(AT, "note_ros1_rounding_ros2"))
    assert not report.ok
    [found] = report.divergences
    assert "AT-D23" in found.only_a and "AT-R16" in found.only_b
    assert found.cause == ("AT-D23", "AT-R16") and found.swapped == ("scale_ros2",)
    assert found.values == (
        "A: scale_ros2(d=2, numerator=5, denominator=4) = 2 (AT-D23)",
        "B: scale_ros1_ratio(d=2, numerator=5, denominator=4) = 3 (AT-R16)")
    assert len(found.vector.inputs) <= 8 and found.original_size == 4
    assert found.outputs_a != found.outputs_b
    assert "arithmetic" not in found.vector.config  # each variant sets it
    assert report.census["AT-D23"] == "a" and report.census["AT-R16"] == "b"
    assert report.census["AT-R6"] == "both"
    assert "DIFFERS in 1 way, on " in report.text()


def test_head_anchor_and_backstop_found_within_8_inputs_cf_r22_cf_r23() -> None:
    """Each difference is one cause, the override of head whose swap into the card makes
    the outputs head's (the head's bootstrap at the anchor, RB-R21 in place of RB-R8,
    calling RB-R20; the backstop RB-R26), with the values of the cause's calls."""
    report = diff(RB, CARD, HEAD, vectors=_suite(
        RB, "first_call_outlier_card", "first_call_outlier_minority_card"))
    by_cause = {d.cause: d for d in report.divergences}
    assert len(by_cause) == len(report.divergences)
    anchor = by_cause[("RB-R8", "RB-R21")]
    assert "RB-R20" in anchor.only_b and anchor.observable == anchor.at == 0
    assert any(v.startswith("A: _bootstrap_at_newest(") and "(RB-R8)" in v
               for v in anchor.values)
    assert any(v.startswith("B: _bootstrap_at_anchor(") and "(RB-R21)" in v
               for v in anchor.values)
    backstop = by_cause[("RB-R10", "RB-R26")]
    for found in (anchor, backstop):
        assert len(found.vector.inputs) <= 8
    assert report.census["RB-R26"] == "b" and report.census["RB-R20"] == "b"
    assert "RB-R21 (B) in place of RB-R8 (A)" in report.text()


def test_refusal_is_named_by_its_rules_cf_r23() -> None:
    """A refusal is named by its error's rule, never by ids its message mentions (the card's
    RB-D3 message names RB-R27: issue 40)."""
    report = diff(RB, CARD, HEAD, vectors=_suite(RB, "head_stream_kinds_card"))
    refused = [d for d in report.divergences if d.only_a == ("RB-D3",)]
    assert refused and not refused[0].only_b
    assert len(refused[0].vector.inputs) == 1
    config = diff(RB, CARD, HEAD, vectors=_suite(RB, "hazard_timeout_factor_above_3"))
    [at_config] = config.divergences
    assert at_config.at is None and at_config.only_b == ("RB-R19",)
    assert at_config.vector.inputs == ()


def test_explore_and_fuzz_sources_in_process_cf_r22() -> None:
    report = diff(AT, ROS2, ROS1, vectors=[], explore=3, fuzz=10, seed=1)
    assert [t.source for t in report.tried] == ["explore", "fuzz"]
    assert any(t.differ for t in report.tried)
    assert all({"AT-R16", "AT-R19"} & set(d.only_b) for d in report.divergences)


def test_same_variants_agree_exit_0_cf_r25(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["diff", AT, "--a", "arithmetic=ros2", "--b", "arithmetic=ros2",
                 "--fuzz", "5", "--explore", "1", "--quiet"])
    assert code == 0
    assert "AGREES on everything tried" in capsys.readouterr().out


def test_differences_exit_1_saved_as_vectors_and_a_picture_cf_r25(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "out"
    report = tmp_path / "report.json"
    code = main(["diff", AT, "--a", "arithmetic=ros2", "--b", "arithmetic=ros1",
                 "--fuzz", "0", "--explore", "0", "--save", str(folder), "--report",
                 str(report), "--quiet"])
    assert code == 1
    assert "DIFFERS" in capsys.readouterr().out
    saved = sorted(p.name for p in folder.iterdir())
    assert "approximate_time_diff_1_a.json" in saved and "approximate_time_diff_1_b.json" in saved
    if "matplotlib" in sys.modules or _has_matplotlib():
        # a config refusal has nothing to draw: the differences with inputs have pictures
        assert any(n.startswith("approximate_time_diff_") and n.endswith(".svg")
                   for n in saved)
    assert main(["check", str(folder)]) == 0
    assert json.loads(report.read_text())["format"] == "timealign.diff/1"


def _has_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def test_usage_errors_exit_2_cf_r25(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["diff", AT, "--a", "bogus=1", "--b", "arithmetic=ros1"],
                 ["diff", AT, "--a", "arithmetic", "--b", "arithmetic=ros1"],
                 ["diff", AT, "--a", "arithmetic=ros2", "--b", "arithmetic=ros1",
                  "--no-vectors", "--vectors", "x.json"]):
        assert main(argv) == 2
        assert "CF-R2" in capsys.readouterr().err
    # checked as the options are parsed (CLI-R1)
    assert main(["diff", AT, "--a", "arithmetic=ros2", "--b", "arithmetic=ros1",
                 "--fuzz", "-1"]) == 2
    assert "--fuzz: must be at least 0" in capsys.readouterr().err


def test_tracer_reads_citations_and_restores_the_previous_tracer_cf_r23() -> None:
    previous = sys.gettrace()
    from timealign import registry

    reference = registry.get(AT)
    ran = fired.run_executed(reference, {"topics": 2, "queue_size": 5, "arithmetic": "ros1",
                                         "age_penalty": 0.7},
                             [{"op": "message", "topic": 0, "stamp": 0, "id": "a"},
                              {"op": "message", "topic": 1, "stamp": 9, "id": "b"}])
    assert sys.gettrace() is previous
    assert "AT-R3" in fired.named(reference, ran.lines)


def test_causes_name_head_rules_refusal_sides_and_order_only_differences_cf_r23_cf_r24(
        ) -> None:
    """A refusal on one side is caused by the refusal's rule on that side and the first rule
    only the other side runs (RB-D3 against head's RB-R27); an overflow far past the window
    is head's RB-R23; outputs that differ in order only are marked so."""
    kinds = diff(RB, CARD, HEAD, vectors=_suite(RB, "head_stream_kinds_card"))
    refused = next(d for d in kinds.divergences if d.cause == ("RB-D3", "RB-R27"))
    assert refused.refused == "A" and "A refuses" in kinds.text()
    bump = diff(RB, CARD, HEAD, vectors=_suite(RB, "overflow_bump_limit_card"))
    far = next(d for d in bump.divergences if d.cause[1] == "RB-R23")
    assert far.observable is not None and far.at is not None and far.observable > far.at
    det = [{"kind": "detector_events", "name": "det", "timestamp": t, "id": i}
           for t, i in ((1700000003357142837, "det47"), (1700000003428571408, "det48"),
                        (1700000003499999979, "det49"))]
    far_mon = {"kind": "monitor_events", "name": "mon", "timestamp": 2015360003500000000,
               "id": "mon7"}
    trace = vectors.Vector(algorithm=RB, name="epoch", config={"batch_length_s": 1.0},
                           inputs=({"op": "poll", "messages": det[:1]},
                                   {"op": "poll", "messages": [*det[1:], far_mon]}))
    epoch = diff(RB, CARD, HEAD, vectors=[trace])
    [ridden] = epoch.divergences
    assert ridden.cause == ("RB-R11", "RB-R22") and ridden.order_only
    assert ridden.outputs_a != ridden.outputs_b
    assert "order only" in epoch.text()


def test_causes_are_named_by_the_swap_that_removes_them_one_entry_each_cf_r23() -> None:
    """Issue 40: card vs head's window jump (a close without a gating stream) is RB-R25's,
    not RB-R24's whose call comes first but changes no output; the two factor refusals
    (card refuses inf, head refuses 3.5) are one cause, one entry; RB-R8 runs in both."""
    report = diff(RB, CARD, HEAD, vectors=_suite(
        RB, "timeout_factor_config", "rejected_infinite_timeout",
        "hazard_timeout_factor_above_3"))
    assert len({d.swapped for d in report.divergences}) == len(report.divergences)
    jump = next(d for d in report.divergences if d.cause[1] == "RB-R25")
    assert jump.swapped == ("_end_at_window",) and jump.cause == ("RB-R14", "RB-R25")
    assert "RB-R24" in jump.only_b  # it runs there, first, and is not the cause
    assert any(v.startswith("B: _close_without_gating(") for v in jump.values)
    [factor] = [d for d in report.divergences if d.swapped == ("_check_factor",)]
    assert factor.cause == ("RB-D2", "RB-R19") and len(factor.vector.inputs) == 0
    assert report.census.get("RB-R8", "both") == "both"
    assert "RB-D1" not in report.census or report.census["RB-D1"] == "both"


def test_a_pair_is_swapped_when_no_single_override_removes_the_difference_cf_r23() -> None:
    """The stall backstop (RB-R26) fires only on a clock the closes arm (RB-R24): the card
    with either alone still differs from head, with both it does not."""
    report = diff(RB, CARD, HEAD, vectors=_suite(RB, "far_ahead_gridded_card"))
    pairs = [d for d in report.divergences if len(d.swapped) == 2]
    assert pairs and pairs[0].swapped == ("_keep_last_close", "_no_backstop")
    assert pairs[0].cause == ("RB-R14, RB-R10", "RB-R24, RB-R26")
