"""A run that needs a look says so first and can stop CI (SP-R38)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from timealign.cli import main


def test_sp_r38_a_configured_topic_without_rows_needs_a_look_and_fails_on_request(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Source r1 has rows of both configured topics, r2 only of /camera (its /imu was
    misspelt at recording): r2 gives no group and 100 % queue_overflow. The summary's first
    line says it needs a look and names r2 and /imu; --fail-on needs-a-look exits 1 after
    the tables, the manifest and the --summary file are written; without it, exit 0."""
    rows = 40
    pq.write_table(pa.table({
        "source": ["r1"] * rows + ["r2"] * rows,
        "id": [f"m{i}" for i in range(2 * rows)],
        "topic": ["/camera", "/imu"] * (rows // 2) + ["/camera"] * rows,
        "stamp": [i * 10**7 for i in range(rows)] * 2}), tmp_path / "in.parquet")
    config = json.dumps({"topics": ["/camera", "/imu"], "queue_size": 5})
    args = ["run", "approximate_time", "--input", str(tmp_path / "in.parquet"),
            "--config", config, "--quiet"]
    code = main([*args, "--output", str(tmp_path / "out"), "--summary",
                 str(tmp_path / "s.json"), "--fail-on", "needs-a-look"])
    out, err = capsys.readouterr()
    assert code == 1, err
    assert out.splitlines()[0].startswith("verdict: needs a look: 1 source without rows of a "
                                          "configured topic (r2: /imu)"), out
    assert "  source 'r2' has no rows of configured topic(s) /imu" in out
    assert err.strip().splitlines() == [
        "timealign run: --fail-on needs-a-look: " + out.splitlines()[0]]
    summary = json.loads((tmp_path / "s.json").read_text())
    assert list(summary)[:2] == ["format", "verdict"] and summary["verdict"]["needs_a_look"]
    assert summary["missing_topics"] == {"sources": 1, "examples": [
        {"source": "r2", "topics": ["/imu"]}]}
    assert (tmp_path / "out" / "outcomes").is_dir()
    assert main([*args, "--output", str(tmp_path / "out2")]) == 0
