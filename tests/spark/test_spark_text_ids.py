"""Identities are text in every input format (SP-R49, issue 30 part 3).

Source, id, topic and kind are read as the text the file holds, never through type
inference: CSV sources ``007`` and ``7`` are two sources (inferred, both became 7 and two
robots went through one machine), CSV ids ``0000`` come back as ``0000``, a JSON id
``1.50`` as ``1.50``. Parquet keeps its own types, bags and the generator write strings.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from timealign.cli import main
from timealign.rosbag import rows as bag_rows
from timealign.spark.generate import Plan, generate
from timealign.spark.schema import ColumnMap, read_input

TEXT = ("source", "id", "topic", "kind")


def _rows(spark: SparkSession, path: Path, fmt: str) -> list[tuple[str, str, str]]:
    frame = read_input(spark, str(path), fmt, ColumnMap())
    for field in TEXT:
        assert frame.schema[field].dataType.simpleString() == "string", field
    return [(r.source, r.id, r.topic) for r in frame.orderBy("stamp").collect()]


def test_sp_r49_csv_sources_and_ids_keep_their_text(spark: SparkSession,
                                                   tmp_path: Path) -> None:
    """SP-R49: CSV `007` and `7` are two sources; ids `0000`-`0002` are not 0-2."""
    path = tmp_path / "in.csv"
    path.write_text("source,id,topic,stamp,kind\n007,0000,01,1,2\n7,0001,1,2,3\n"
                    "007,0002,01,3,2\n")
    assert _rows(spark, path, "csv") == [("007", "0000", "01"), ("7", "0001", "1"),
                                         ("007", "0002", "01")]


def test_sp_r49_json_lines_ids_keep_their_text(spark: SparkSession, tmp_path: Path) -> None:
    """SP-R49: a JSON number in an identity column is its text (`1.50`, not `1.5`), and
    a quoted `007` stays `007`."""
    path = tmp_path / "in.json"
    path.write_text("".join(json.dumps(r) + "\n" for r in (
        {"source": "007", "id": 0, "topic": "a", "stamp": 1}, {"source": 7, "id": 2,
                                                             "topic": "b", "stamp": 2}))
                    + '{"source": "7", "id": 1.50, "topic": "b", "stamp": 3}\n')
    assert _rows(spark, path, "json") == [("007", "0", "a"), ("7", "2", "b"),
                                          ("7", "1.50", "b")]


def test_sp_r49_parquet_strings_are_read_as_written(spark: SparkSession,
                                                    tmp_path: Path) -> None:
    """SP-R49: Parquet string columns are read as written (`007` stays `007`)."""
    path = tmp_path / "in.parquet"
    pq.write_table(pa.table({"source": ["007", "7"], "id": ["0000", "0001"],
                             "topic": ["01", "1"], "stamp": [1, 2]}), path)
    assert _rows(spark, path, "parquet") == [("007", "0000", "01"), ("7", "0001", "1")]


def test_sp_r49_bags_and_the_generator_write_text_identities(tmp_path: Path) -> None:
    """SP-R49: a bag's rows and the generator's files carry their identities as strings,
    so nothing downstream infers a type for them."""
    for field in ("source", "id", "topic"):
        assert bag_rows.SCHEMA.field(field).type == pa.string()
    generate(Plan(robots=2, seconds=0.5, seed=1, files=1), tmp_path / "gen")
    written = pq.read_schema(next((tmp_path / "gen").glob("*.parquet")))
    for field in ("source", "id", "topic"):
        assert written.field(field).type == pa.string(), field


def test_sp_r49_csv_files_with_columns_in_another_order_are_refused_by_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R49: Spark reads a folder of CSV files by one header's positions; a file whose
    columns come in another order is refused naming it and both orders (it was "stamp ...
    got 'string'"), before Spark starts."""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.csv").write_text("source,id,topic,stamp\ns,a,x,1\n")
    (folder / "b.csv").write_text("id,source,stamp,topic\nb,s,2,y\n")
    code = main(["run", "approximate_time", "--input", str(folder), "--output",
                 str(tmp_path / "out"), "--format", "csv", "--config",
                 '{"topics": ["x", "y"], "queue_size": 2}'])
    err = capsys.readouterr().err
    assert code == 2, err
    assert str(folder / "b.csv") in err and "id, source, stamp, topic" in err, err
    assert "source, id, topic, stamp" in err and "SP-R49" in err, err
    assert not (tmp_path / "out").exists()
