"""SP-R20, SP-R21: the batch job never writes over its input, and publishes its tables only
once it has succeeded (tiny tables on the shared session)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from tests.pairs_toy import PAIRS, PairsConfig
from timealign.errors import InvalidInput
from timealign.spark.batch import run_batch

CONFIG = PairsConfig(window=3)


def _write(path: Path, topics: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    count = len(topics)
    pq.write_table(pa.table({"source": ["s"] * count, "id": [f"m{i}" for i in range(count)],
                             "topic": topics, "stamp": list(range(count)),
                             "arrival": list(range(count))}), path)
    return path


def _listing(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_sp_r21_failed_run_leaves_previous_tables(spark: SparkSession, tmp_path: Path) -> None:
    """SP-R21: a run that fails (here SP-D4, a row the machine rejects) leaves the tables of
    the previous run byte for byte, and no staging folder; a later good run replaces them."""
    out = tmp_path / "out"
    good = _write(tmp_path / "good" / "f.parquet", ["x", "y", "x", "y"])
    run_batch(spark, PAIRS, CONFIG, str(good), str(out))
    before = _listing(out)
    assert sorted(p.name for p in out.iterdir()) == ["groups", "outcomes"]
    bad = _write(tmp_path / "bad" / "f.parquet", ["x", "y", ""])
    with pytest.raises(InvalidInput):
        run_batch(spark, PAIRS, CONFIG, str(bad), str(out))
    assert _listing(out) == before
    assert sorted(p.name for p in out.iterdir()) == ["groups", "outcomes"]
    other = _write(tmp_path / "other" / "f.parquet", ["x", "y"])
    run_batch(spark, PAIRS, CONFIG, str(other), str(out))
    assert spark.read.parquet(str(out / "outcomes")).count() == 2
    assert sorted(p.name for p in out.iterdir()) == ["groups", "outcomes"]


def test_sp_r20_run_batch_refuses_overlap(spark: SparkSession, tmp_path: Path) -> None:
    """SP-R20: the library entry point refuses too, before reading anything."""
    data = _write(tmp_path / "data" / "groups" / "f.parquet", ["x", "y"])
    with pytest.raises(InvalidInput, match="SP-R20"):
        run_batch(spark, PAIRS, CONFIG, str(data.parent), str(tmp_path / "data"))
    assert data.exists()
