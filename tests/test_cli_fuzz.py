"""The command line under generated options and corrupted files (CLI-R1, VEC-R10, VEC-R11).

Each run asserts what every command promises: an exit code of the README's table (never 4
for bad usage or bad input), no traceback, and no file changed outside the declared
outputs. The budget is Hypothesis's profile: short under ``make test`` (``ci``), longer
under ``make proofs`` (``nightly``). Spark-free commands only, in process, so the suite is
fast; the Spark jobs' paths are covered by tests/spark.
"""

from __future__ import annotations

import gzip
import hashlib
import math
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from timealign.cli import main

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "reference" / "timealign" / "suites" / "approximate_time.jsonl"
DOCUMENTED = {0, 1, 2}  # replay/check: ok, differs, bad input; never 3 or 4 here

FUZZ = settings(suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow], deadline=None)


def _digest(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@FUZZ
@given(flips=st.lists(st.tuples(st.integers(0, 10**9), st.integers(0, 7)), min_size=1,
                      max_size=4),
       compressed=st.booleans(), command=st.sampled_from(["check", "replay"]))
def test_cli_r1_vec_r10_bit_flipped_vector_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        flips: list[tuple[int, int]], compressed: bool, command: str) -> None:
    """CLI-R1, VEC-R10: a vector file (plain or gzip) with flipped bits: a documented exit
    code, no traceback, the file itself untouched."""
    body = SUITE.read_bytes()[:20_000]
    body = body[:body.rfind(b"\n") + 1]
    if compressed:
        body = gzip.compress(body, mtime=0)
    damaged = bytearray(body)
    for position, bit in flips:
        damaged[position % len(damaged)] ^= 1 << bit
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    path = folder / ("v.jsonl.gz" if compressed else "v.jsonl")
    path.write_bytes(bytes(damaged))
    before = _digest(folder)
    code = main([command, str(path)])
    captured = capsys.readouterr()
    assert code in DOCUMENTED, captured.err
    assert "Traceback" not in captured.err + captured.out
    assert _digest(folder) == before


_NUMBERS = st.one_of(st.integers(-10**20, 10**20).map(str),
                     st.floats(allow_nan=True, allow_infinity=True).map(repr),
                     st.sampled_from(["nan", "inf", "-inf", "", "1e400", "0x10", "3.5", "-0"]),
                     st.text(max_size=6))


@FUZZ
@given(option=st.sampled_from(["--timeout", "--fuzz", "--size", "--explore", "--seed"]),
       value=_NUMBERS.filter(lambda v: _bad(v)))
def test_cli_r1_conform_numeric_options(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        option: str, value: str) -> None:
    """CLI-R1: a non-number, non-finite or negative value of a numeric `conform` option is
    refused at parse time (exit 2): no report, no traceback, the command never started."""
    report = tmp_path / "report.json"
    code = main(["conform", "approximate_time", "--cmd", "false", "--no-vectors",
                 "--report", str(report), option, value, "--quiet"])
    captured = capsys.readouterr()
    assert code == 2, captured.err
    assert "Traceback" not in captured.err and not report.exists()


def _bad(text: str) -> bool:
    """A value no numeric option takes: not a number, not finite, or negative (a valid one
    could ask for a billion rows or an hour of fuzzing)."""
    try:
        number = float(text)
    except ValueError:
        return True
    return not math.isfinite(number) or number < 0


@FUZZ
@given(option=st.sampled_from(["--jitter-ms", "--seed", "--robots", "--messages", "--loss",
                               "--files", "--seconds"]),
       value=_NUMBERS.filter(lambda v: _bad(v)))
def test_cli_r1_generate_refuses_bad_numbers_before_writing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str) -> None:
    """CLI-R1: a non-number, non-finite or negative value of a `generate` option is exit 2
    at parse time: nothing is written."""
    pytest.importorskip("pyarrow", reason="the spark extra is not installed")
    output = tmp_path / "fleet"
    code = main(["generate", "--output", str(output), "--messages", "200", "--robots", "1",
                 option, value])
    captured = capsys.readouterr()
    assert code == 2, captured.err
    assert "Traceback" not in captured.err
    assert list(tmp_path.iterdir()) == []
