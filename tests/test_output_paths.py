"""SP-R20: a job never writes where it reads; refused before Spark starts (exit 2).

These cases run the real CLI: the refusal happens before any SparkSession exists, so they
need no Spark (a session started by mistake would show up as seconds of run time).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from timealign.cli import main
from timealign.outputs import overlap
from timealign.spark.paths import check_separate

CONFIG = '{"topics": ["a", "b"], "queue_size": 2}'


def _table(folder: Path) -> Path:
    folder.mkdir(parents=True)
    part = folder / "part-0.parquet"
    part.write_bytes(b"PAR1 not really, but the user's data")
    return part


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    pytest.importorskip("pyspark", reason="the spark extra is not installed (SP-R35 first)")
    code = main(["run", "approximate_time", "--config", CONFIG, "--quiet", *argv])
    return code, capsys.readouterr().err


def test_sp_r20_input_equal_to_an_output_table_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R20, the reported fault: `--input data/groups --output data` deleted the input."""
    part = _table(tmp_path / "data" / "groups")
    before = part.read_bytes()
    code, err = _run(capsys, "--input", str(tmp_path / "data" / "groups"),
                     "--output", str(tmp_path / "data"))
    assert code == 2
    assert "SP-R20" in err and "--input" in err and "--output groups/" in err
    assert str(tmp_path / "data" / "groups") in err
    assert part.read_bytes() == before and "Traceback" not in err


# (folder holding the input, --input, --output); "link" is a symlink to "data".
LAYOUTS = {
    "output-inside-input": ("data/fleet", "data", "data/fleet/out"),
    "input-inside-table": ("groups/fleet", "groups/fleet", "."),
    "relative": ("data/outcomes", "./data/../data/outcomes", "data/x/.."),
    "symlink": ("data/groups", "link/groups", "data"),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_sp_r20_every_overlap_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch, layout: str) -> None:
    """SP-R20: equal, containing or contained, after resolving relative paths and
    symlinks; the input is left as it was."""
    folder, given, output = LAYOUTS[layout]
    part = _table(tmp_path / folder)
    (tmp_path / "link").symlink_to(tmp_path / "data")
    monkeypatch.chdir(tmp_path)
    code, err = _run(capsys, "--input", given, "--output", output)
    assert code == 2, err
    assert "SP-R20" in err and "overlaps" in err
    assert part.exists() and "Traceback" not in err


def test_sp_r20_stream_checkpoint_inside_source_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R20: for `stream`, the checkpoint may not overlap the watched folder either."""
    pytest.importorskip("pyspark", reason="the spark extra is not installed (SP-R35 first)")
    _table(tmp_path / "in")
    code = main(["stream", "approximate_time", "--config", CONFIG, "--quiet",
                 "--source", str(tmp_path / "in"), "--output", str(tmp_path / "out"),
                 "--checkpoint", str(tmp_path / "in" / "cp")])
    err = capsys.readouterr().err
    assert code == 2 and "--checkpoint" in err and "--source" in err


def test_sp_r20_bad_output_and_summary_targets(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R20: an output that is a file, a summary in a missing folder or that is a
    folder are refused before the job starts."""
    _table(tmp_path / "in")
    (tmp_path / "file").write_text("x")
    code, err = _run(capsys, "--input", str(tmp_path / "in"), "--output", str(tmp_path / "file"))
    assert code == 2 and "is a file" in err
    for summary, message in ((tmp_path / "nope" / "s.json", "does not exist"),
                             (tmp_path, "is a folder")):
        code, err = _run(capsys, "--input", str(tmp_path / "in"), "--output",
                         str(tmp_path / "out"), "--summary", str(summary))
        assert code == 2 and message in err and "--summary" in err


def test_sp_r20_separate_paths_pass(tmp_path: Path) -> None:
    """SP-R20: sibling folders and a shared prefix that is not a parent do not overlap."""
    assert not overlap(str(tmp_path / "data"), str(tmp_path / "data2"))
    assert overlap("hdfs://n/a/b", "hdfs://n/a/")
    assert not overlap("hdfs://n/a/b", "hdfs://n/a/c")
    check_separate({"input": str(tmp_path / "data")},
                   {"output groups/": str(tmp_path / "groups")})
