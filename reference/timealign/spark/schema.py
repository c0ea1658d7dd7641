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

from timealign import timetext
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
    unit: str = "ns"  # the unit of numbers in the time columns, --time-unit (SP-R36)

    @classmethod
    def parse(cls, items: Sequence[str], unit: str = "ns") -> ColumnMap:
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
        return cls(tuple(sorted(pairs.items())), timetext.check_unit(unit))

    def column(self, field: str) -> str:
        return dict(self.names).get(field, field)


#: SP-R36: what a time column may hold, said by every refusal of its type.
ACCEPTED_TIMES = (f"integer or decimal numbers in the --time-unit (default ns), text "
                  f"holding such a number or an ISO-8601 time with a zone "
                  f"({timetext.ISO_EXAMPLE}), or Spark timestamps")


def time_column(kind: T.DataType, column: str, unit: str) -> bool:
    """SP-R36: whether a time column of type ``kind`` is converted by the reader's Python
    step (:func:`_convert_times`: text, decimals, integers in a unit other than ns) rather
    than cast in Spark (integer ns, timestamps); any other type (a binary float cannot
    hold every nanosecond) is refused naming the column and what is accepted."""
    if isinstance(kind, T.TimestampType | T.TimestampNTZType):
        return False
    if isinstance(kind, T.IntegralType):
        return unit != "ns"
    require(isinstance(kind, T.StringType | T.DecimalType), column, "SP-R36",
            f"a time column holds {ACCEPTED_TIMES}", kind.simpleString())
    return True


def _time_ns(frame: DataFrame, column: str, unit: str = "ns") -> Column:
    kind = frame.schema[column].dataType
    if isinstance(kind, T.TimestampType | T.TimestampNTZType):
        return F.unix_micros(F.col(column).cast(T.TimestampType())) * 1000
    if time_column(kind, column, unit):  # text for the Python step (SP-R36)
        return F.col(column).cast(T.StringType())
    return F.col(column).cast(T.LongType())


def _count(frame: DataFrame, column: str) -> Column:
    """The poll number: an integer column, or text of one (CSV) for the Python step."""
    kind = frame.schema[column].dataType
    if isinstance(kind, T.StringType):
        return F.col(column)
    require(isinstance(kind, T.IntegralType), column, "SP-R1", "the poll column holds "
            "integers", kind.simpleString())
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
            elif field == "arrival":  # SP-D2
                selected.append(_time_ns(frame, columns.column("stamp"), columns.unit)
                                .alias(field))
            elif field == "topic":
                selected.append(F.lit("").alias(field))
            else:
                kind = T.LongType() if field in TIMES else T.StringType()
                selected.append(F.lit(None).cast(kind).alias(field))
        elif field == "poll":
            selected.append(_count(frame, name).alias(field))
        elif field in TIMES:
            selected.append(_time_ns(frame, name, columns.unit).alias(field))
        else:
            selected.append(F.col(name).cast(T.StringType()).alias(field))
    if has_row_index:
        selected.append(F.col("_metadata.file_path").alias(FILE))
        selected.append(F.col("_metadata.row_index").alias(POSITION))
        return _convert_times(frame.select(*selected), columns)
    # Text files have no row index: the file part of the order is "path NUL block start"
    # (NUL sorts below every path character, so paths keep their order), and the position
    # counts rows within that block (_number_rows).
    block = F.lpad(F.col("_metadata.file_block_start").cast(T.StringType()), 20, "0")
    selected.append(F.concat_ws("\x00", F.col("_metadata.file_path"), block).alias(FILE))
    selected.append(F.lit(0).cast(T.LongType()).alias(POSITION))
    return _convert_times(_number_rows(frame.select(*selected)), columns)


def _convert_times(rows: DataFrame, columns: ColumnMap) -> DataFrame:
    """SP-R36: the time columns held as text (ISO-8601 with a zone, numbers in the unit)
    become int64 nanoseconds, and a poll number held as text an integer, in a narrow
    Python step after the scan that calls the pure :mod:`timealign.timetext`; no machine
    ever sees anything but integer ns. A value that does not convert fails the job naming
    the column, the file and what is accepted. Rows whose time columns are already
    integer ns pass through Spark alone (no Python step)."""
    texts = [field for field in ("stamp", "arrival", "poll")
             if isinstance(rows.schema[field].dataType, T.StringType)]
    if not texts:
        return rows
    unit = columns.unit
    # the user's column of each field (an arrival taken from the stamp fails on the stamp
    # first: the stamp is converted first)
    named = {field: columns.column(field) for field in texts}
    where = {field: rows.columns.index(field) for field in texts}
    out = T.StructType([T.StructField(f.name, T.LongType(), True) if f.name in texts else f
                        for f in rows.schema.fields])
    arrow_out = to_arrow_schema(out)
    file_at = rows.columns.index(FILE)

    def convert(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from timealign import timetext
        from timealign.spark.failures import marked

        for batch in batches:
            arrays = list(batch.columns)
            for field in texts:
                converted: list[int | None] = []
                with marked(""):
                    for row, value in enumerate(batch.column(where[field]).to_pylist()):
                        try:
                            converted.append(None if value is None else (
                                timetext.count_value(value, named[field]) if field == "poll"
                                else timetext.time_ns(value, unit, named[field])))
                        except InvalidInput as error:
                            file = str(batch.column(file_at)[row]).split("\x00")[0]
                            raise InvalidInput(error.field, error.rule, f"in the file {file}: "
                                               f"{error.message}", error.value) from None
                arrays[where[field]] = pa.array(converted, pa.int64())
            yield pa.RecordBatch.from_arrays(arrays, schema=arrow_out)

    return rows.mapInArrow(convert, out)


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
    """Options of the file reader: CSV files have a header line and every column is read as
    the text written (SP-R36: no inference, which would turn ISO times into microsecond
    timestamps and decimals into binary floats; the time columns are converted exactly by
    the reader's Python step); JSON numbers with a fraction are read as decimals, not
    doubles. A malformed line of a text format fails the read naming its file
    (``FAILFAST``), where Spark's default would turn it into a row of nulls, later reported
    as a "null source" (SP-R1)."""
    if check_format(fmt) == "parquet":
        return {}
    fail = {"mode": "FAILFAST"}
    if fmt == "csv":  # SP-R73: RFC 4180 quoting, as Python's csv module counts the records
        return {"header": "true", "quote": '"', "escape": '"', **fail}
    # SP-R72: standard JSON, as the inventory checks each line (Spark's default also took
    # single-quoted strings)
    return {"prefersDecimal": "true", "allowSingleQuotes": "false", **fail}


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


def _same_header(files: list[str]) -> None:
    """SP-R1, SP-R49: the CSV files of a folder have one header, in one order: Spark reads every
    file's columns by position under the first file's header, so a file whose columns come
    in another order was read with its values under other names (refused as "stamp … got
    'string'", or read wrong). Files of a codec Python cannot read are left to Spark."""
    from timealign.spark.inventory import csv_header
    from timealign.spark.paths import PathError

    first: tuple[str, list[str]] | None = None
    for file in files:
        header = csv_header(file)
        if not header:  # a codec Python cannot read, or an empty file (no rows)
            continue
        if first is None:
            first = (file, header)
        elif header != first[1]:
            raise PathError("input", "SP-R49", [
                f"cannot read the file {file}: its columns come in the order "
                f"{', '.join(header)}, where {first[0]} has {', '.join(first[1])} (Spark "
                f"reads CSV columns by position, under the first file's header); write "
                f"every file with one header, in one order"], file)


def input_files(path: str, fmt: str, columns: ColumnMap | None = None,
                read_whole: bool = True) -> list[str]:
    """SP-R1: every file of a local input is read or refused by name before Spark reads it
    (Spark skips a zero-byte Parquet file silently, reads a README as rows, and fails on a
    damaged file with a message naming neither the file nor the cause): the files of a
    folder must carry the format's suffix, a Parquet file must have a readable footer, a
    gzip file must decompress to its end; with ``columns``, the Parquet files agree on the
    columns the job reads. Remote paths (``scheme://``) are left to Spark. Returns the files
    checked. A file of a codec Python cannot decompress is refused (SP-R50). With
    ``read_whole`` False a gzip file is not decompressed here: the inventory that follows
    reads every text file whole once, for its digest and its count (SP-R52); a file
    already read whole (unchanged since) is not read again."""
    import gzip
    import os
    import zlib

    from pyarrow import ArrowException
    from pyarrow import parquet as pq

    from timealign.spark.inventory import READ_WHOLE, UNCOUNTED_CODECS, stat_key
    from timealign.spark.paths import PathError, regular, walk_files

    if "://" in path or not os.path.exists(path):
        return []
    if os.path.isdir(path):
        found = walk_files(path)
        for file in found:
            if not file.lower().endswith(SUFFIXES[fmt]):
                raise PathError("input", "SP-R1", [
                    f"the file {file} is not a {fmt} file (its name does not end with "
                    f"{' or '.join(SUFFIXES[fmt][:3])}); remove it from ", "{input}",
                    " or rename it"], file)
    else:
        found = [regular(path)]

    def refuse(file: str, cause: str) -> PathError:
        return PathError("input", "SP-R1", [f"cannot read the file {file}: {cause}; fix or "
                                            f"remove that file"], file)

    for file in found:  # SP-R50: rows that could not be counted are refused before reading
        if fmt != "parquet" and file.lower().endswith(UNCOUNTED_CODECS):
            raise PathError("input", "SP-R50", [
                f"cannot count the rows of {file}: Python has no reader for its compression "
                f"({os.path.splitext(file)[1]}), so no row of it could be accounted for; "
                "recompress it as .gz, .bz2 or .deflate (or leave it uncompressed)"], file)
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
        elif file.lower().endswith(".gz") and read_whole and stat_key(file) not in READ_WHOLE:
            try:
                with gzip.open(file, "rb") as stream:
                    while stream.read(_GZIP_CHUNK):
                        pass
            except (OSError, EOFError, zlib.error) as error:
                raise refuse(file, f"not a readable gzip file ({error})") from None
            READ_WHOLE.add(stat_key(file))
    if fmt == "csv" and len(found) > 1:
        _same_header(found)
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
    import os

    from timealign.spark.failures import job_error
    from timealign.spark.paths import PathError

    files = input_files(path, check_format(fmt), columns)
    # SP-R43: every file input_files lists is read, those in subfolders too (Spark's
    # partition discovery read only some of them, and none gave "Unable to infer schema").
    nested = os.path.isdir(path) and "://" not in path
    reader = spark.read.format(fmt).options(**reader_options(fmt), **(
        {"recursiveFileLookup": "true"} if nested else {}))
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
    member, which the Python workers do not build (``timealign.spark.outcomes``).

    One pass over ``combined``: every row becomes the outcome rows it stands for (a group
    row its members', a settled row itself, a row set aside none) through one generator,
    rather than a union of two filtered reads, which read the persisted replay twice
    (issue 35; measured in benchmarks/README.md, "The per-file path"). No table's row
    order is part of SP-R5."""
    unsettled = F.lit(None).cast(T.StringType())
    entries = F.when(
        F.col("table") == "groups",
        F.transform("ids", lambda member: F.struct(member.alias("id"),
                                                   F.lit("grouped").alias("outcome"),
                                                   unsettled.alias("reason"))),
    ).when(F.col("table") == "outcomes", F.array(F.struct("id", "outcome", "reason")))
    # any other table (rows set aside: a bag's unconfigured topics, MQTT's not-a-measurement
    # rows) is no outcome: null, so ``inline`` yields nothing for it
    return combined.select("source", "seq", "at", "input", F.inline(entries)) \
        .select(*OUTCOME_COLUMNS)


#: Rows of each file the driver reads to check the time columns before Spark starts.
FIRST_ROWS = 20


def _first_rows(file: str, fmt: str) -> tuple[list[str], list[dict[str, Any]]]:
    """(column names, first rows as the reader will see them) of a text file, read in the
    driver: CSV cells as text, JSON numbers with a fraction as exact decimals."""
    import csv
    import decimal
    import gzip
    import io
    import json
    import zlib

    opener: Any = gzip.open if file.lower().endswith(".gz") else open
    if not file.lower().endswith((".gz", *SUFFIXES["csv"][:1], ".json", ".jsonl", ".ndjson")):
        return [], []  # another codec: left to the job's own conversion
    try:
        with opener(file, "rb") as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8", errors="replace")
            if fmt == "csv":
                reader = csv.DictReader(text)
                rows = [row for _, row in zip(range(FIRST_ROWS), reader, strict=False)]
                return list(reader.fieldnames or []), rows
            rows = []
            for _, line in zip(range(FIRST_ROWS), text, strict=False):
                try:
                    row = json.loads(line, parse_float=decimal.Decimal)
                except ValueError:
                    continue  # FAILFAST names a malformed line in the job
                if isinstance(row, dict):
                    rows.append(row)
            return sorted({k for row in rows for k in row}), rows
    except (OSError, EOFError, ValueError, zlib.error):
        return [], []  # a damaged file: the input's own check refuses it by name (SP-R1)


def check_time_columns(path: str, fmt: str, columns: ColumnMap) -> None:
    """SP-R36, before Spark starts: the time columns of a local input (the first file's
    schema, and its first rows where they hold text) hold what the reader converts, so that
    a column of zoneless ISO times or of binary floats is refused at once, naming the column
    and the file and showing an accepted value, not after Spark's start-up. The job still
    converts every row (a bad value further down fails it, naming the column and file)."""
    import decimal
    import os

    from timealign.spark.paths import regular, walk_files

    check_format(fmt)  # SP-R1: an unknown format is refused first, naming --format
    if "://" in path or not os.path.exists(path):
        return
    # SP-R70, SP-R71: nothing but a regular file is opened, here as in input_files
    files = [f for f in walk_files(path) if f.lower().endswith(SUFFIXES[fmt])] \
        if os.path.isdir(path) else [regular(path)]
    if not files:
        return
    file = files[0]
    times = {columns.column(field) for field in ("stamp", "arrival")}
    if fmt == "parquet":
        from pyarrow import ArrowException
        from pyarrow import parquet as pq

        try:
            handle = pq.ParquetFile(file)
        except (ArrowException, OSError, ValueError):
            return  # input_files names the damaged file
        arrow = handle.schema_arrow
        present = [name for name in times if name in arrow.names]
        for name in present:
            kind = arrow.field(name).type
            if pa.types.is_floating(kind):
                raise InvalidInput(name, "SP-R36", f"in the file {file}: the time column is "
                                   f"binary floating point, which cannot hold every "
                                   f"nanosecond; a time column holds {ACCEPTED_TIMES}", str(kind))
        text = [n for n in present if pa.types.is_string(arrow.field(n).type)
                or pa.types.is_large_string(arrow.field(n).type)
                or pa.types.is_decimal(arrow.field(n).type)]
        if not text or handle.metadata.num_rows == 0:
            return
        first = next(handle.iter_batches(batch_size=FIRST_ROWS, columns=text))
        rows = first.to_pylist()
    else:
        try:
            _, rows = _first_rows(file, fmt)
        except (OSError, EOFError, ValueError):
            return  # input_files names the damaged file
    for row in rows:
        for name in sorted(times):
            value = row.get(name)
            if value is None or value == "":
                continue
            if isinstance(value, float):
                raise InvalidInput(name, "SP-R36", f"in the file {file}: a time written as a "
                                   f"binary float; a time column holds {ACCEPTED_TIMES}", value)
            if isinstance(value, decimal.Decimal):
                value = str(value)
            if isinstance(value, bool) or not isinstance(value, str | int):
                raise InvalidInput(name, "SP-R36", f"in the file {file}: a time column holds "
                                   f"{ACCEPTED_TIMES}", value)
            try:
                timetext.time_ns(value, columns.unit, name)
            except InvalidInput as error:
                raise InvalidInput(name, "SP-R36", f"in the file {file}: {error.message}",
                                   error.value) from None
