"""Parquet as pandas and pyarrow write it (SP-R36): every timestamp type (NANOS, MICROS,
MILLIS, with and without a zone) read exactly, to the nanosecond, with no option; float
seconds read as their decimal text or refused with the fix; INT96 refused before Spark
starts; and a pandas file runs and verifies from the command line alone."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from timealign.cli import main
from timealign.errors import InvalidInput
from timealign.spark.failures import raise_job_error
from timealign.spark.paths import PathError
from timealign.spark.schema import ColumnMap, check_time_columns, input_files, read_input

BASE = 1_772_366_400 * 10**9 + 9_988_513  # 2026-03-01, not whole microseconds
STEP = 10_000_037  # ns between rows: every row has its own sub-microsecond digits
PER_UNIT = {"ms": 10**6, "us": 10**3, "ns": 1}
ZONES = {"pyarrow": "UTC", "pandas": "Europe/Berlin"}  # either way the instant


def _stamps(count: int, unit: str) -> list[int]:
    """Times in ns that the unit holds exactly (truncated to it)."""
    size = PER_UNIT[unit]
    return [(BASE + i * STEP) // size * size for i in range(count)]


def _times(writer: str, unit: str, zone: str | None, stamps: list[int]) -> object:
    """The times as ``writer`` holds them: a pyarrow timestamp array, or pandas
    ``datetime64`` of the unit, with or without a zone."""
    if writer == "pyarrow":
        return pa.array([t // PER_UNIT[unit] for t in stamps], pa.timestamp(unit, zone))
    times = pd.Series(pd.to_datetime(stamps, unit="ns")).astype(f"datetime64[{unit}]")
    return times if zone is None else times.dt.tz_localize("UTC").dt.tz_convert(zone)


def _write(path: Path, writer: str, unit: str, zone: str, stamps: list[int]) -> Path:
    """A file whose stamp has ``zone`` and whose arrival has none, as ``writer`` writes
    it (pandas: ``to_parquet``)."""
    ids = [f"m{i}" for i in range(len(stamps))]
    columns = {"id": ids, "topic": ["a"] * len(ids),
               "stamp": _times(writer, unit, zone, stamps),
               "arrival": _times(writer, unit, None, stamps)}
    if writer == "pyarrow":
        pq.write_table(pa.table(columns), path)
    else:
        pd.DataFrame(columns).to_parquet(path)
    return path


def _read(spark: SparkSession, path: Path, unit: str = "ns") -> list[tuple[str, int, int]]:
    rows = read_input(spark, str(path), "parquet", ColumnMap(unit=unit))
    try:
        return sorted((r["id"], r["stamp"], r["arrival"]) for r in rows.collect())
    except Exception as error:  # a refusal in the job, as the commands say it
        raise_job_error(error)


@pytest.mark.parametrize("writer", ["pyarrow", "pandas"])
def test_sp_r36_every_parquet_timestamp_is_read_to_the_nanosecond(
        spark: SparkSession, tmp_path: Path, writer: str) -> None:
    """SP-R36: NANOS (pandas' default `datetime64[ns, UTC]`, refused by Spark as
    PARQUET_TYPE_ILLEGAL without a setting), MICROS and MILLIS, with a zone (any zone: the
    instant) and without (the stored count), all exact, whatever --time-unit says of
    numbers; a zoneless timestamp whatever the session's time zone."""
    for unit in PER_UNIT:
        stamps = _stamps(5, unit)
        path = _write(tmp_path / f"{unit}.parquet", writer, unit, ZONES[writer], stamps)
        check_time_columns(str(path), "parquet", ColumnMap())  # accepted up front
        expected = [(f"m{i}", t, t) for i, t in enumerate(stamps)]
        assert _read(spark, path, "s") == expected, unit  # a timestamp carries its unit
    zone = spark.conf.get("spark.sql.session.timeZone") or "UTC"
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:  # a zoneless timestamp is its stored count, not a wall clock in the session's zone
        stamps = _stamps(5, "us")
        path = _write(tmp_path / "naive.parquet", writer, "us", "UTC", stamps)
        assert [a for _, _, a in _read(spark, path)] == stamps
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)


def test_sp_r36_a_pandas_file_runs_and_verifies_with_no_option(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SP-R36, SP-R32: `run` then `verify OUT` of a pandas `datetime64[ns, UTC]` file, with
    no option; the groups' times are the file's to the nanosecond."""
    stamps = _stamps(40, "ns")
    frame = pd.DataFrame({"id": [f"m{i}" for i in range(40)],
                          "topic": ["a", "b"] * 20,
                          "stamp": pd.to_datetime(stamps, unit="ns", utc=True)})
    frame.to_parquet(tmp_path / "pandas.parquet")
    out = tmp_path / "out"
    config = json.dumps({"topics": ["a", "b"], "queue_size": 5})
    assert main(["run", "approximate_time", "--input", str(tmp_path / "pandas.parquet"),
                 "--output", str(out), "--config", config, "--quiet"]) == 0, \
        capsys.readouterr().err
    assert main(["verify", str(out), "--quiet"]) == 0, capsys.readouterr().err
    groups = pq.read_table(out / "groups").to_pylist()
    assert groups and {g["start"] for g in groups} | {g["end"] for g in groups} <= set(stamps)


def test_sp_r36_float_seconds_read_as_their_decimal_text(spark: SparkSession,
                                                         tmp_path: Path) -> None:
    """SP-R36: a float64 column under --time-unit s reads as each float's shortest text,
    as the same seconds written as decimals (the JSON path) read."""
    seconds = [1772366400.009988, 1772366400.5, 1772366401.25, 1772366402.0, 0.000001]
    text = ["1772366400.009988", "1772366400.5", "1772366401.25", "1772366402", "0.000001"]
    ids = [f"m{i}" for i in range(len(seconds))]
    pd.DataFrame({"id": ids, "stamp": seconds}).to_parquet(tmp_path / "float.parquet")
    pq.write_table(pa.table({"id": ids, "stamp": text}), tmp_path / "text.parquet")
    check_time_columns(str(tmp_path / "float.parquet"), "parquet", ColumnMap(unit="s"))
    assert _read(spark, tmp_path / "float.parquet", "s") == \
        _read(spark, tmp_path / "text.parquet", "s")
    assert _read(spark, tmp_path / "float.parquet", "s")[0][1] == 1_772_366_400_009_988_000


@pytest.mark.parametrize(("value", "words"), [
    (1772366400.0 + 2e-7, "holds no one decimal time"),  # below the floats' spacing
    (1772366400.123456789e9, "holds no one decimal time"),  # float nanoseconds
])
def test_sp_r36_a_float_without_one_decimal_text_is_refused_with_the_fix(
        spark: SparkSession, tmp_path: Path, value: float, words: str) -> None:
    """SP-R36: a float whose shortest text has digits finer than floats' spacing there holds
    no one decimal time: refused before Spark starts (first rows) and by the job (further
    down), naming the column and the file and saying how to write it."""
    first = tmp_path / "first.parquet"
    pd.DataFrame({"id": ["a", "b"], "stamp": [value, 1772366400.5]}).to_parquet(first)
    with pytest.raises(InvalidInput, match=words) as caught:
        check_time_columns(str(first), "parquet", ColumnMap(unit="s"))
    assert caught.value.field == "stamp" and "first.parquet" in caught.value.message
    assert "integer nanoseconds, decimals or text" in caught.value.message
    later = tmp_path / "later.parquet"
    floats = [1772366400.5 + i for i in range(30)] + [value]
    pd.DataFrame({"id": [f"m{i}" for i in range(31)], "stamp": floats}).to_parquet(later)
    check_time_columns(str(later), "parquet", ColumnMap(unit="s"))  # the first 20 are fine
    with pytest.raises(InvalidInput, match=words) as caught:
        _read(spark, later, "s")
    assert caught.value.field == "stamp" and "later.parquet" in caught.value.message


def test_sp_r36_float32_and_int96_are_refused_before_spark(tmp_path: Path) -> None:
    """SP-R36: a 32-bit float holds 7 digits; an INT96 timestamp Spark reads to the
    microsecond, dropping its nanoseconds silently: both refused naming the file."""
    pq.write_table(pa.table({"id": ["a"], "stamp": pa.array([1.5], pa.float32())}),
                   tmp_path / "f32.parquet")
    with pytest.raises(InvalidInput, match="32-bit float"):
        check_time_columns(str(tmp_path / "f32.parquet"), "parquet", ColumnMap(unit="s"))
    old = tmp_path / "int96"
    old.mkdir()
    pq.write_table(pa.table({"id": ["a"], "stamp": pa.array([BASE], pa.timestamp("ns"))}),
                   old / "old.parquet", use_deprecated_int96_timestamps=True)
    with pytest.raises(PathError, match="INT96") as caught:
        input_files(str(old), "parquet", ColumnMap())
    assert "old.parquet" in str(caught.value) and caught.value.rule == "SP-R36"
