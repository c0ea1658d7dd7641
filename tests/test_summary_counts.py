"""The summary lines of ``check``, ``conform`` and ``diff`` put a count's noun in the right
number: ``1 input``, ``1 trace``, ``1 vector``, ``1 way`` (CF-R15, CF-R24, VEC-R6)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from timealign.cli import main
from timealign.conformance import check, shipped
from timealign.conformance.diff import DiffReport, Divergence, Variant
from timealign.conformance.harness import SourceReport
from timealign.progress import counted
from timealign.vectors import Vector

ROOT = Path(__file__).resolve().parent.parent
ONE = re.compile(r"\b1 (inputs|traces|vectors|ways)\b")
INPUT = {"op": "message", "topic": 0, "stamp": 5, "id": "a"}


def test_counted_words_a_count_in_the_right_number() -> None:
    assert counted(1, "input") == "1 input" and counted(0, "input") == "0 inputs"
    assert counted(2, "way") == "2 ways" and counted(1, "batch", "batches") == "1 batch"
    assert counted(3, "batch", "batches") == "3 batches"


def test_diff_summary_of_one_difference_with_one_input_cf_r24() -> None:
    """CF-R24: a single difference of a one-input trace reads `1 input`, `1 way`."""
    vector = Vector(algorithm="approximate_time", name="one", config={"topics": 2},
                    inputs=(INPUT,))
    found = Divergence("vectors", vector, 0, ("AT-D23",), ("AT-R16",), (), (), 1)
    report = DiffReport("approximate_time", Variant("x=1", {"x": 1}), Variant("x=2", {"x": 2}),
                        divergences=[found])
    text = report.text()
    assert ONE.search(text) is None, text
    assert ": 1 input (from 1, vectors), first at input 0" in text
    assert text.splitlines()[-1] == "DIFFERS in 1 way, on AT-R16, AT-D23"


def test_conform_lines_of_one_trace_and_one_input_cf_r15() -> None:
    """CF-R15: the progress line of one trace and a difference of one input."""
    source = SourceReport("explore", run=1)
    assert source.progress_line(None) == "conform: explore 1 trace, 0 differ, 0 failed"

    def invents(config: dict[str, object], inputs: list[dict[str, object]]) -> list[
            dict[str, object]]:
        return [{"input": 0, "kind": "pending", "id": "zz"}] if inputs else []

    vector = Vector(algorithm="approximate_time", name="one",
                    config={"topics": 2, "queue_size": 2}, inputs=(INPUT,))
    report = check("approximate_time", invents, vectors=[vector])
    text = report.text()
    assert "- vectors differ: one, 1 input (from 1), first at input 0" in text, text
    assert ONE.search(text) is None, text


def test_check_of_one_vector_vec_r6(capsys: pytest.CaptureFixture[str],
                                       tmp_path: Path) -> None:
    """VEC-R6: `check` of one vector says `1 of 1 vector passed`."""
    vector = next(v for v in shipped("approximate_time"))
    path = tmp_path / "one.json"
    path.write_text(json.dumps(vector.to_json()), encoding="utf-8")
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().out == "1 of 1 vector passed\n"
