"""The jobs' data model (SP-R1, SP-R2, SP-R4, SP-R5): input columns, mapping, output schemas.

Input rows are read from Parquet (or CSV / JSON lines) and reduced to the canonical columns
below before anything else happens; payload columns are never moved through Python, the
outputs carry ids so users join payloads back.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import attrs
import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from timealign.errors import InvalidInput, require

FIELDS: tuple[str, ...] = ("source", "id", "topic", "stamp", "arrival", "kind", "poll")
REQUIRED: tuple[str, ...] = ("id", "stamp")
TIMES: tuple[str, ...] = ("stamp", "arrival", "poll")
FORMATS: tuple[str, ...] = ("parquet", "csv", "json")
# SP-R2: "input order" = (file path, row position in the file), carried as two columns.
FILE, POSITION = "order_file", "order_row"
DEFAULT_SOURCE = ""

COMBINED = T.StructType([
    T.StructField("table", T.StringType(), False),
    T.StructField("source", T.StringType(), False),
    T.StructField("seq", T.LongType()),
    T.StructField("start", T.LongType()),
    T.StructField("end", T.LongType()),
    T.StructField("ids", T.ArrayType(T.StringType(), False)),
    T.StructField("at", T.LongType()),
    T.StructField("input", T.LongType()),
    T.StructField("id", T.StringType()),
    T.StructField("outcome", T.StringType()),
    T.StructField("reason", T.StringType()),
])
ARROW_COMBINED: pa.Schema = to_arrow_schema(COMBINED)
GROUP_COLUMNS: tuple[str, ...] = ("source", "seq", "start", "end", "ids", "at", "input")
OUTCOME_COLUMNS: tuple[str, ...] = ("source", "id", "outcome", "seq", "reason", "at", "input")


@attrs.frozen
class ColumnMap:
    """Which input column holds each canonical field (``--column stamp=header_ns``)."""

    names: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, items: Sequence[str]) -> ColumnMap:
        pairs: dict[str, str] = {}
        for item in items:
            field, sep, column = item.partition("=")
            require(bool(sep) and field in FIELDS and bool(column), "--column", "SP-R1",
                    f"expected FIELD=COLUMN with FIELD one of {FIELDS}", item)
            # a field mapped twice is a slip: keeping the last would read another column
            # than one of the two the user wrote (SP-R1)
            require(field not in pairs, "--column", "SP-R1",
                    f"{field} is mapped twice ({field}={pairs.get(field)} and {item}); map "
                    f"each field once", item)
            pairs[field] = column
        return cls(tuple(sorted(pairs.items())))

    def column(self, field: str) -> str:
        return dict(self.names).get(field, field)


def _time_ns(frame: DataFrame, column: str) -> Column:
    kind = frame.schema[column].dataType
    if isinstance(kind, T.TimestampType | T.TimestampNTZType):
        return F.unix_micros(F.col(column).cast(T.TimestampType())) * 1000
    require(isinstance(kind, T.IntegralType), column, "SP-R1",
            "time columns must be integer nanoseconds or timestamps", kind.simpleString())
    return F.col(column).cast(T.LongType())


def file_stem() -> Column:
    """The name of the file a row was read from, without its last extension (SP-R18)."""
    return F.regexp_extract(F.col("_metadata.file_name"), r"^(.+?)(\.[^.]*)?$", 1)


def canonical(frame: DataFrame, columns: ColumnMap, has_row_index: bool,
              source_from_file: bool = False) -> DataFrame:
    """The canonical input (SP-R1) plus the input-order columns (SP-R2). Without a source
    column, the source is ``""`` (SP-D3), or with ``source_from_file`` the file's name
    without its extension (SP-R18)."""
    present = set(frame.columns)
    for field, name in columns.names:  # a mistyped --column never falls back to a default
        require(name in present, name, "SP-R1",
                f"the input has no column {name!r} (--column {field}={name}); its columns "
                f"are {sorted(present)}")
    for field in REQUIRED:
        name = columns.column(field)
        require(name in present, name, "SP-R1", f"required column for {field!r} is missing",
                sorted(present))
    selected: list[Column] = []
    for field in FIELDS:
        name = columns.column(field)
        if name not in present:
            if field == "source":
                default = file_stem() if source_from_file else F.lit(DEFAULT_SOURCE)
                selected.append(default.alias(field))  # SP-D3, SP-R18
            elif field == "arrival":
                selected.append(_time_ns(frame, columns.column("stamp")).alias(field))  # SP-D2
            elif field == "topic":
                selected.append(F.lit("").alias(field))
            else:
                kind = T.LongType() if field in TIMES else T.StringType()
                selected.append(F.lit(None).cast(kind).alias(field))
        elif field in TIMES:
            selected.append(_time_ns(frame, name).alias(field))
        else:
            selected.append(F.col(name).cast(T.StringType()).alias(field))
    if has_row_index:
        selected.append(F.col("_metadata.file_path").alias(FILE))
        selected.append(F.col("_metadata.row_index").alias(POSITION))
        return frame.select(*selected)
    # Text files have no row index: the file part of the order is "path NUL block start"
    # (NUL sorts below every path character, so paths keep their order), and the position
    # counts rows within that block (_number_rows).
    block = F.lpad(F.col("_metadata.file_block_start").cast(T.StringType()), 20, "0")
    selected.append(F.concat_ws("\x00", F.col("_metadata.file_path"), block).alias(FILE))
    selected.append(F.lit(0).cast(T.LongType()).alias(POSITION))
    return _number_rows(frame.select(*selected))


def _number_rows(rows: DataFrame) -> DataFrame:
    """SP-R2 for CSV and JSON lines: a file block is read, in order, by one task, so counting
    the rows of each block as the task yields them gives their position in the file. A
    narrow step right after the scan (no shuffle in between), valid in batch and streaming
    (where Spark's monotonically increasing id is not available); Arrow keeps every other
    column exactly as read."""
    where = rows.columns.index(POSITION)

    def number(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        seen: dict[str, int] = {}
        for batch in batches:
            positions = []
            for block in batch.column(FILE).to_pylist():
                count = seen.get(block, 0)
                positions.append(count)
                seen[block] = count + 1
            columns = list(batch.columns)
            columns[where] = pa.array(positions, pa.int64())
            yield pa.RecordBatch.from_arrays(columns, schema=batch.schema)

    return rows.mapInArrow(number, rows.schema)


def check_format(fmt: str) -> str:
    require(fmt in FORMATS, "--format", "SP-R1",
            f"must be one of {', '.join(FORMATS)} or rosbag", fmt)
    return fmt


def reader_options(fmt: str) -> dict[str, str]:
    """Options of the file reader: CSV files have a header line and their column types are
    inferred (SP-R1); a stream, given its schema, ignores the inference. A malformed line of
    a text format fails the read naming its file (``FAILFAST``), where Spark's default
    would turn it into a row of nulls, later reported as a "null source" (SP-R1)."""
    if check_format(fmt) == "parquet":
        return {}
    fail = {"mode": "FAILFAST"}
    return {"header": "true", "inferSchema": "true", **fail} if fmt == "csv" else fail


# SP-R1: the names a file of an input folder may have per format (Spark's codecs after the
# text formats' own suffixes); names starting with "." or "_" are Spark's and left out.
SUFFIXES: dict[str, tuple[str, ...]] = {
    "parquet": (".parquet",),
    "csv": tuple(f".csv{c}" for c in ("", ".gz", ".bz2", ".deflate", ".lz4", ".snappy", ".zst")),
    "json": tuple(f"{e}{c}" for e in (".json", ".jsonl", ".ndjson")
                  for c in ("", ".gz", ".bz2", ".deflate", ".lz4", ".snappy", ".zst")),
}
_GZIP_CHUNK = 1 << 20


def _same_columns(schemas: dict[str, Any], columns: ColumnMap) -> tuple[str, str] | None:
    """SP-R1: the first file whose columns read by the job differ from another file's (a
    column missing, or of another type), and why; Spark takes one file's schema for the
    whole folder, so such a file would be read with nulls or refused without its name."""
    first, reference = next(iter(schemas.items()))
    wanted = [columns.column(field) for field in FIELDS]
    for file, found in schemas.items():
        for name in wanted:
            here = found.field(name).type if name in found.names else None
            there = reference.field(name).type if name in reference.names else None
            if here != there:
                return file, (f"cannot read the file {file}: its column {name!r} is "
                              f"{here or 'missing'} where {first} has {there or 'none'}; "
                              f"fix or remove that file")
    return None


def _csv_header(file: str) -> list[str] | None:
    """The column names of a CSV file's header line (None: a codec Python does not read)."""
    import csv
    import gzip
    import io

    lower = file.lower()
    if not lower.endswith((".csv", ".csv.gz")):
        return None
    with (gzip.open(file, "rb") if lower.endswith(".gz") else open(file, "rb")) as raw:
        line = raw.readline(1 << 20).decode("utf-8-sig", errors="replace")
    return next(csv.reader(io.StringIO(line)), [])


def _same_header_order(files: Sequence[str]) -> None:
    """SP-R49: Spark reads every CSV file of a folder by the column positions of one file's
    header, so a file whose columns come in another order would be read into the wrong
    fields (its ids as stamps); it is refused naming both files and both orders."""
    from timealign.spark.paths import PathError

    first: tuple[str, list[str]] | None = None
    for file in files:
        header = _csv_header(file)
        if header is None or not header:
            continue
        if first is None:
            first = (file, header)
        elif header != first[1]:
            raise PathError("input", "SP-R49", [
                f"cannot read the file {file}: its columns come in the order "
                f"{', '.join(header)}, where {first[0]} has {', '.join(first[1])}; CSV "
                f"files of one input must share one header"], file)


def input_files(path: str, fmt: str, columns: ColumnMap | None = None) -> list[str]:
    """SP-R1: every file of a local input is read or refused by name before Spark reads it
    (Spark skips a zero-byte Parquet file silently, reads a README as rows, and fails on a
    damaged file with a message naming neither the file nor the cause): the files of a
    folder must carry the format's suffix, a Parquet file must have a readable footer, a
    gzip file must decompress to its end; with ``columns``, the Parquet files agree on the
    columns the job reads. Remote paths (``scheme://``) are left to Spark. Returns the files
    checked."""
    import gzip
    import os
    import zlib

    from pyarrow import ArrowException
    from pyarrow import parquet as pq

    from timealign.spark.paths import PathError

    if "://" in path or not os.path.exists(path):
        return []
    if os.path.isdir(path):
        found: list[str] = []
        for folder, subfolders, names in os.walk(path):
            subfolders[:] = sorted(d for d in subfolders if not d.startswith((".", "_")))
            found += [os.path.join(folder, n) for n in sorted(names)
                      if not n.startswith((".", "_"))]
        for file in found:
            if not file.lower().endswith(SUFFIXES[fmt]):
                raise PathError("input", "SP-R1", [
                    f"the file {file} is not a {fmt} file (its name does not end with "
                    f"{' or '.join(SUFFIXES[fmt][:3])}); remove it from ", "{input}",
                    " or rename it"], file)
    else:
        found = [path]

    def refuse(file: str, cause: str) -> PathError:
        return PathError("input", "SP-R1", [f"cannot read the file {file}: {cause}; fix or "
                                            f"remove that file"], file)

    schemas: dict[str, Any] = {}
    for file in found:
        if fmt == "parquet":
            if os.path.getsize(file) == 0:
                raise refuse(file, "it is empty (zero bytes), not a Parquet file")
            try:
                schemas[file] = pq.read_metadata(file).schema.to_arrow_schema()
            except (ArrowException, OSError, ValueError) as error:
                raise refuse(file, f"not a readable Parquet file ({error})") from None
        elif os.path.getsize(file) == 0 and not file.lower().endswith(
                SUFFIXES[fmt][:1] if fmt == "csv" else (".json", ".jsonl", ".ndjson")):
            # a compressed file is never zero bytes (it has a header): Python's gzip and
            # Spark both read an empty `.csv.gz` as no rows, a truncated file lost whole
            raise refuse(file, "it is empty (zero bytes), not a compressed file")
        elif file.lower().endswith(".gz"):
            try:
                with gzip.open(file, "rb") as stream:
                    while stream.read(_GZIP_CHUNK):
                        pass
            except (OSError, EOFError, zlib.error) as error:
                raise refuse(file, f"not a readable gzip file ({error})") from None
    if fmt == "csv":
        _same_header_order(found)  # SP-R49
    differs = _same_columns(schemas, columns) if columns is not None and schemas else None
    if differs is not None:
        raise PathError("input", "SP-R1", [differs[1]], differs[0])
    return found


def _as_text(reader: Any, frame: DataFrame, path: str, columns: ColumnMap) -> DataFrame:
    """SP-R49: the identity columns (source, id, topic, kind) of a text format read as the
    text the file holds, never as an inferred type: inferred, CSV sources ``007`` and ``7``
    both became the integer 7 (two robots through one machine), ids ``0000`` came back as
    ``0``, a JSON id ``1.50`` as ``1.5``. The times keep their inferred (integer) types."""
    text = {columns.column(field) for field in FIELDS if field not in TIMES}
    fields = frame.schema.fields
    if all(f.name not in text or isinstance(f.dataType, T.StringType) for f in fields):
        return frame
    typed = T.StructType([T.StructField(f.name, T.StringType(), True) if f.name in text
                          else f for f in fields])
    return reader.schema(typed).load(path)  # type: ignore[no-any-return]


def _loads(reader: Any, file: str) -> bool:
    try:
        reader.load(file)
    except Exception:
        return False
    return True


def load_named(spark: SparkSession, path: str, fmt: str,
               columns: ColumnMap | None = None) -> DataFrame:
    """``spark.read.load`` of ``path`` after :func:`input_files`; a failure names the file
    when Spark's message does not (a malformed line found while inferring a schema: each
    file is then loaded alone to find it) and never is py4j's bare "An error occurred while
    calling o54.load." (SP-R1)."""
    from timealign.spark.failures import job_error
    from timealign.spark.paths import PathError

    files = input_files(path, check_format(fmt), columns)
    reader = spark.read.format(fmt).options(**reader_options(fmt))
    try:
        return _as_text(reader, reader.load(path), path, columns or ColumnMap())
    except Exception as error:  # AnalysisException: path missing, unreadable
        rebuilt = job_error(error)
        if rebuilt is not error:
            raise rebuilt from None
        lines = [x.strip() for x in str(error).splitlines() if x.strip()]
        # py4j's first line ("An error occurred while calling o54.load.") says nothing.
        first = next((x for x in lines if "error occurred while calling" not in x), "")
        first = first[:300].lstrip(": ")
    bad = files[0] if len(files) == 1 else next(
        (file for file in files if not _loads(reader, file)), None)
    if bad is not None:
        raise PathError("input", "SP-R1", [f"cannot read the file {bad}: {first}; fix or "
                                           f"remove that file"], bad)
    raise InvalidInput("--input", "SP-R1", f"cannot read input: {first}", path)


def read_input(spark: SparkSession, path: str, fmt: str, columns: ColumnMap,
               source_from_file: bool = False) -> DataFrame:
    """Read a file or folder of rows and reduce it to the canonical columns; every file is
    checked first (:func:`input_files`)."""
    frame = load_named(spark, path, fmt, columns)
    return canonical(frame, columns, has_row_index=fmt == "parquet",
                     source_from_file=source_from_file)


def groups_of(combined: DataFrame) -> DataFrame:
    return combined.where(F.col("table") == "groups").select(*GROUP_COLUMNS)


def outcomes_of(combined: DataFrame) -> DataFrame:
    """The outcomes table (SP-R5): the combined output's outcome rows (messages settled
    otherwise than in a group) and, derived from each group's row, one ``grouped`` row per
    member, which the Python workers do not build (``timealign.spark.outcomes``)."""
    settled = combined.where(F.col("table") == "outcomes").select(*OUTCOME_COLUMNS)
    members = combined.where(F.col("table") == "groups").select(
        "source", F.explode("ids").alias("id"), F.lit("grouped").alias("outcome"), "seq",
        F.lit(None).cast(T.StringType()).alias("reason"), "at", "input")
    return settled.unionByName(members)
