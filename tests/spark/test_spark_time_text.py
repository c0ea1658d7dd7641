"""Time columns as people write them (SP-R36): ISO-8601 with a zone and numbers in a unit
give the tables integer ns give; anything else is refused naming the column, before Spark
starts where the first rows tell, else by the reader in the job."""

from __future__ import annotations

import csv
import datetime
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from timealign import registry
from timealign.errors import InvalidInput
from timealign.spark.batch import run_batch
from timealign.spark.schema import ColumnMap, check_time_columns

CONFIG = {"topics": ["a", "b"], "queue_size": 5}
BASE = 1_767_225_600 * 10**9


def _stamps(count: int) -> list[int]:
    return [BASE + i * 10_000_037 for i in range(count)]  # not whole microseconds


def _iso(ns: int) -> str:
    seconds, rest = divmod(ns, 10**9)
    day = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return day.strftime("%Y-%m-%dT%H:%M:%S") + f".{rest:09d}Z"


def _seconds(ns: int) -> str:
    return f"{ns // 10**9}.{ns % 10**9:09d}"


def _rows(stamps: list[int], stamp: object, arrival: object) -> list[dict[str, object]]:
    return [{"id": f"m{i}", "topic": "ab"[i % 2], "stamp": stamp(t),  # type: ignore[operator]
             "arrival": arrival(t)} for i, t in enumerate(stamps)]  # type: ignore[operator]


def _csv(path: Path, rows: list[dict[str, object]]) -> str:
    with path.open("w", newline="") as out:
        writer = csv.DictWriter(out, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return str(path)


def _outcomes(spark: SparkSession, output: Path) -> list[tuple[object, ...]]:
    return sorted(tuple(r) for r in spark.read.parquet(f"{output}/outcomes").collect())


def test_sp_r36_iso_and_unit_numbers_equal_integer_ns(spark: SparkSession,
                                                      tmp_path: Path) -> None:
    at = registry.get("approximate_time")
    config = at.codec.config_from_json(CONFIG)
    stamps = _stamps(60)
    pq.write_table(pa.table({"id": [f"m{i}" for i in range(60)],
                             "topic": ["ab"[i % 2] for i in range(60)], "stamp": stamps,
                             "arrival": stamps}), tmp_path / "ns.parquet")
    run_batch(spark, at, config, str(tmp_path / "ns.parquet"), str(tmp_path / "out-ns"))
    expected = _outcomes(spark, tmp_path / "out-ns")
    (tmp_path / "json").mkdir()
    with (tmp_path / "json" / "d.jsonl").open("w") as out:  # JSON numbers with a fraction
        for t in stamps:
            out.write(f'{{"id": "m{stamps.index(t)}", "topic": "{"ab"[stamps.index(t) % 2]}", '
                      f'"stamp": "{_iso(t)}", "arrival": {_seconds(t)}}}\n')
    pq.write_table(pa.table({"id": [f"m{i}" for i in range(60)],
                             "topic": ["ab"[i % 2] for i in range(60)],
                             "stamp": [_iso(t) for t in stamps],
                             "arrival": [_seconds(t) for t in stamps]}),
                   tmp_path / "text.parquet")
    inputs = {
        "csv": (_csv(tmp_path / "d.csv", _rows(stamps, _iso, _seconds)), "csv"),
        "json": (str(tmp_path / "json"), "json"),
        "parquet": (str(tmp_path / "text.parquet"), "parquet"),
    }
    for name, (path, fmt) in inputs.items():
        check_time_columns(path, fmt, ColumnMap(unit="s"))  # accepted before Spark starts
        run_batch(spark, at, config, path, str(tmp_path / f"out-{name}"), fmt,
                  ColumnMap(unit="s"))
        assert _outcomes(spark, tmp_path / f"out-{name}") == expected, name


@pytest.mark.parametrize(("value", "words"), [
    ("2026-01-01T00:00:00", "no zone"), ("1767225600.5", "whole number of nanoseconds")])
def test_sp_r36_refused_before_spark_naming_the_column(tmp_path: Path, value: str,
                                                       words: str) -> None:
    rows = _rows(_stamps(4), _iso, lambda t: t)
    rows[2]["stamp"] = value
    path = _csv(tmp_path / "bad.csv", rows)
    with pytest.raises(InvalidInput, match=words) as caught:
        check_time_columns(path, "csv", ColumnMap())
    assert caught.value.field == "stamp" and "bad.csv" in caught.value.message
    assert "2026-01-01T12:00:00.123456789Z" in str(caught.value)  # an accepted value
    pq.write_table(pa.table({"id": ["a"], "stamp": [1.5]}), tmp_path / "f.parquet")
    with pytest.raises(InvalidInput, match="whole number of nanoseconds"):  # 1.5 ns
        check_time_columns(str(tmp_path / "f.parquet"), "parquet", ColumnMap())


def test_sp_r36_a_bad_value_past_the_first_rows_fails_the_job_naming_it(
        spark: SparkSession, tmp_path: Path) -> None:
    at = registry.get("approximate_time")
    rows = _rows(_stamps(50), _iso, _iso)
    rows[45]["arrival"] = "2026-01-01 00:00:01"
    path = _csv(tmp_path / "late.csv", rows)
    check_time_columns(path, "csv", ColumnMap())  # the first 20 rows are fine
    with pytest.raises(InvalidInput, match="no zone") as caught:
        run_batch(spark, at, at.codec.config_from_json(CONFIG), path, str(tmp_path / "out"), "csv")
    assert caught.value.field == "arrival" and "late.csv" in caught.value.message
    assert json.dumps(caught.value.value) == '"2026-01-01 00:00:01"'
