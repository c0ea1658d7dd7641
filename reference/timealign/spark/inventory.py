"""The input inventory (SP-R41 to SP-R44): what a run's input holds, taken before it is read
and independently of the reader that reads it.

"No loss" compared the outcomes with the rows the reader yielded, and ``verify`` re-read the
same way, so both were blind to rows the reader never yielded (files in a subfolder, a bag
whose index lists fewer messages). The inventory counts from each format's own
bookkeeping instead: a Parquet file's footer, the records of a CSV file (the ``csv`` module,
so a quoted newline stays inside its record; blank lines aside, as Spark skips them), the
non-blank lines of a JSON lines file, a bag's own counts (rosbag2's ``metadata.yaml``, an
MCAP summary, a ROS 1 bag's chunk infos, what ``bags info`` shows, BAG-R14). Every file also
gets its size and SHA-256, streamed, so that ``verify`` can say whether the input changed
since the run; a text file's digest and count come from one read of it (SP-R52), and a
compressed text file Python cannot decompress is refused before (SP-R50). It is taken
once, in the driver, before Spark starts: one sequential read of every file (a progress
line every few seconds for a large input).

The run then reconciles (:meth:`Inventory.reconcile`): the rows read equal the rows the
inventory counts, per file or bag, or the job fails (``LossError``, exit 3) naming the
file. Bags that the reader refused and skipped (BAG-R6, ``--skip-bad-files``) are refused by
name with their rule, so they need no outcome.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import hashlib
import io
import json
import os
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, cast
from urllib.parse import unquote, urlparse

import attrs

from timealign import jsontext
from timealign.errors import InvalidInput
from timealign.progress import Progress
from timealign.spark.outcomes import LossError

RULE = "SP-R41"
_CHUNK = 1 << 20


@attrs.frozen
class Stored:
    """One file of the input: its path relative to the input, size and SHA-256."""

    path: str
    size: int
    sha256: str

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "bytes": self.size, "sha256": self.sha256}


@attrs.frozen
class Unit:
    """What is counted as one: a table file, or a bag (its files together); ``rows`` is
    None when the format's bookkeeping could not be read (a compression codec Python has
    no reader for, a bag that cannot be opened: the reader then refuses or skips it)."""

    name: str
    rows: int | None
    counted_by: str
    files: tuple[Stored, ...]

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "rows": self.rows, "counted_by": self.counted_by,
                "files": [stored.as_json() for stored in self.files]}


@attrs.frozen
class Inventory:
    """Every file of a local input with its size, digest and row count (SP-R41)."""

    root: str
    format: str
    units: tuple[Unit, ...]

    @property
    def rows(self) -> int:
        return sum(unit.rows or 0 for unit in self.units)

    @property
    def counted_rows(self) -> int | None:
        """The input's rows, or None when a unit's rows were not counted (SP-D31)."""
        return None if any(unit.rows is None for unit in self.units) else self.rows

    def as_json(self) -> dict[str, Any]:
        return {"root": self.root, "format": self.format, "rows": self.rows,
                "units": [unit.as_json() for unit in self.units]}

    @classmethod
    def from_json(cls, body: Any, where: str) -> Inventory:
        """The inventory a manifest keeps; a malformed one is ``InvalidInput`` naming
        ``where`` (SP-R32)."""
        try:
            return cls(str(body["root"]), str(body["format"]), tuple(
                Unit(str(u["name"]), None if u["rows"] is None else int(u["rows"]),
                     str(u["counted_by"]), tuple(Stored(str(f["path"]), int(f["bytes"]),
                                                        str(f["sha256"]))
                                                 for f in u["files"]))
                for u in body["units"]))
        except (KeyError, TypeError, ValueError):
            raise InvalidInput(where, "SP-R32", "the manifest's inventory is malformed",
                               None) from None

    def counts(self) -> dict[str, int | None]:
        return {unit.name: unit.rows for unit in self.units}

    def reconcile(self, read: int, per_unit: Callable[[], Mapping[str, int]],
                  refused: Mapping[str, str] | None = None) -> None:
        """SP-R42: the rows read equal the rows counted, per file or bag; ``read`` is the
        total, ``per_unit`` the rows read per unit name (asked only when the totals differ
        or a unit was not counted), ``refused`` the units the reader refused by name with
        their reason (BAG-R6), which need no outcome. Raises ``LossError`` naming the
        first unit whose rows differ."""
        refused = refused or {}
        counted = {u.name: u for u in self.units if u.name not in refused}
        expected = sum(unit.rows or 0 for unit in counted.values())
        if all(u.rows is not None for u in counted.values()) and expected == read:
            return
        found = dict(per_unit())
        for name in sorted(set(counted) | set(found)):
            unit = counted.get(name)
            if unit is None:
                if name in refused:
                    continue
                raise LossError(f"the input's {name} was read ({found[name]} rows) but is "
                                f"not in the inventory taken before the run (SP-R42)")
            if unit.rows is not None and found.get(name, 0) != unit.rows:
                raise LossError(
                    f"the input's {name} holds {unit.rows} rows ({unit.counted_by}), the run "
                    f"read {found.get(name, 0)}: rows without an outcome (SP-R42); the file "
                    f"changed during the run, or the reader cannot read it whole")

    def changes(self, now: Inventory) -> list[str]:
        """SP-R44: one line per file that differs between this inventory and ``now``:
        changed (old and new size and digest), gone or added."""
        before = {f.path: f for u in self.units for f in u.files}
        after = {f.path: f for u in now.units for f in u.files}
        lines = []
        for path in sorted(set(before) | set(after)):
            old, new = before.get(path), after.get(path)
            if old is None and new is not None:
                lines.append(f"{path} is new ({new.size} bytes)")
            elif new is None and old is not None:
                lines.append(f"{path} is gone (was {old.size} bytes)")
            elif old is not None and new is not None and old != new:
                lines.append(f"{path} changed: {old.size} bytes, sha256 {old.sha256[:16]} at "
                             f"the run; now {new.size} bytes, sha256 {new.sha256[:16]}")
        return lines


def digest(path: str, progress: Callable[[int], None] | None = None) -> str:
    """The SHA-256 of a file, read in 1 MiB pieces (``progress`` gets each piece's size)."""
    with _Hashed(path, progress) as hashed:
        while hashed.read(_CHUNK):
            pass
        return hashed.hexdigest()


class _Hashed(io.RawIOBase):
    """A file's bytes, hashed as they are read: the one read of a text file feeds both its
    SHA-256 and its decompressed lines (SP-R52), so a ``.gz`` file is read once here."""

    def __init__(self, path: str, progress: Callable[[int], None] | None = None) -> None:
        super().__init__()
        self._file = open(path, "rb")  # noqa: SIM115 (closed with this object)
        self._hash = hashlib.sha256()
        self._progress = progress

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        count = self._file.readinto(buffer)
        if count:
            view = memoryview(buffer)[:count]
            self._hash.update(view)
            if self._progress is not None:
                self._progress(count)
        return count or 0

    def close(self) -> None:
        self._file.close()
        super().close()

    def hexdigest(self) -> str:
        """The SHA-256 of the whole file: the bytes not yet read are read first (a
        decompressor may stop before the file's end)."""
        while self.read(_CHUNK):
            pass
        return self._hash.hexdigest()


class _Inflated(io.RawIOBase):
    """The bytes of a ``.deflate`` file (Hadoop's ``DefaultCodec``: one zlib stream),
    decompressed piece by piece."""

    def __init__(self, raw: IO[bytes]) -> None:
        super().__init__()
        self._raw, self._zlib, self._left = raw, zlib.decompressobj(), b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._left and not self._zlib.eof:
            piece = self._raw.read(_CHUNK)
            if not piece:
                raise EOFError("the zlib stream ends before its end marker")
            self._left = self._zlib.decompress(piece)
        count = min(len(buffer), len(self._left))
        buffer[:count], self._left = self._left[:count], self._left[count:]
        return count

    def close(self) -> None:
        self._raw.close()
        super().close()


#: SP-R50: codecs Spark's text readers accept by name (Hadoop's codec factory) that Python
#: cannot decompress here, so a file of them could not be counted; refused by name.
UNCOUNTED_CODECS = (".lz4", ".snappy", ".zst")


def opened(path: str, raw: IO[bytes] | None = None) -> io.BufferedIOBase | None:
    """The decompressed bytes of a text file (``raw``: its bytes, when already open), or
    None for a codec Python cannot read (SP-R50)."""
    lower = path.lower()
    if lower.endswith(UNCOUNTED_CODECS):
        return None
    if raw is None:  # the codec's reader owns the file, and closes it
        if lower.endswith(".gz"):
            return gzip.GzipFile(path, "rb")
        if lower.endswith(".bz2"):
            return bz2.BZ2File(path, "rb")
        raw = open(path, "rb")  # noqa: SIM115 (closed with its reader)
    if lower.endswith(".gz"):
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if lower.endswith(".bz2"):
        return bz2.BZ2File(raw, "rb")
    if lower.endswith(".deflate"):
        return io.BufferedReader(_Inflated(raw), _CHUNK)
    return raw if isinstance(raw, io.BufferedIOBase) else io.BufferedReader(
        cast(io.RawIOBase, raw), _CHUNK)


def _damaged(path: str, error: Exception) -> Exception:
    """SP-R1: a text file whose compression is damaged (a flipped bit of a ``.gz``) is
    refused by name, never a failure of the command."""
    from timealign.spark.paths import PathError

    return PathError("input", "SP-R1", [
        f"cannot read the file {path}: it is damaged ({type(error).__name__}: {error}); "
        "fix or remove that file"], path)


#: What a damaged compressed file raises while it is read.
_READ_ERRORS = (OSError, EOFError, zlib.error, ValueError)


def csv_header(path: str) -> list[str] | None:
    """The first record of a CSV file (its header), None when Python cannot read it."""
    raw = opened(path)
    if raw is None:
        return None
    try:
        with raw, io.TextIOWrapper(cast(IO[bytes], raw), encoding="utf-8", errors="replace",
                                   newline="") as text:
            return next((record for record in csv.reader(text) if record), [])
    except _READ_ERRORS as error:
        raise _damaged(path, error) from None


#: SP-R52: text files this process decompressed whole (path, size, modification time):
#: SP-R1's check that a compressed file reads to its end need not decompress them again.
READ_WHOLE: set[tuple[str, int, int]] = set()


def stat_key(path: str) -> tuple[str, int, int]:
    status = os.stat(path)
    return os.path.realpath(path), status.st_size, status.st_mtime_ns


def text_rows(path: str, fmt: str, seen: Callable[[int], None]) -> tuple[
        int | None, str, str]:
    """(rows, how counted, SHA-256) of a CSV or JSON lines file, from one read of its bytes
    (SP-R52): the bytes feed the digest and, decompressed, the count."""
    key = stat_key(path)
    hashed = _Hashed(path, seen)
    try:
        raw = opened(path, cast(IO[bytes], hashed))
        if raw is None:  # refused before (SP-R50); the digest alone
            return None, "not counted: no reader for its compression in Python", digest(
                path, seen)
        with raw, io.TextIOWrapper(cast(IO[bytes], raw), encoding="utf-8", errors="replace",
                                   newline="") as text:
            if fmt == "csv":
                records = sum(1 for record in csv.reader(text) if record)
                rows, how = max(records - 1, 0), "CSV records (header aside)"
            else:
                rows, how = _json_objects(text, path), "JSON lines (blank lines aside)"
            sha = hashed.hexdigest()
    except InvalidInput:  # a JSON line that is not one object (SP-R72): its own words
        raise
    except _READ_ERRORS as error:
        raise _damaged(path, error) from None
    finally:
        hashed.close()
    READ_WHOLE.add(key)
    return rows, how, sha


_DECODER = json.JSONDecoder()


def _json_objects(lines: Iterable[str], path: str) -> int:
    """SP-R72: the rows of a JSON lines file, each non-blank line one JSON object. A line
    that is JSON but not one object (two objects, an array, a number) is refused naming the
    file and the line, before Spark reads it: Spark's reader took the first of two objects
    on a line and dropped the second without a word, and read an array as one row per
    element, so the rows read and the rows counted differed. A line that is not JSON at all
    is left to Spark's reader, which refuses it naming the file (``FAILFAST``; single quotes
    refused, :func:`timealign.spark.schema.reader_options`, so that a line of two objects
    Python cannot parse is no line Spark reads in part)."""
    rows = 0
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text:
            continue
        try:
            value, end = _DECODER.raw_decode(text)
        except ValueError:  # not JSON: Spark's reader refuses it naming the file (FAILFAST)
            problem = ""
        else:
            problem = ("holds more than one JSON value (one object per line)" if end < len(
                text) else "" if isinstance(value, dict) else
                f"holds a JSON {jsontext.kind(value)}, not an object")
        if problem:
            from timealign.spark.paths import PathError

            raise PathError("input", "SP-R72", [
                f"cannot read the file {path}: its line {number} {problem}; a JSON lines "
                f"file holds one JSON object per line: fix that line"], f"{path}:{number}")
        rows += 1
    return rows


def _table_unit(root: str, file: str, fmt: str, seen: Callable[[int], None]) -> Unit:
    from pyarrow import parquet as pq

    relative = _relative(root, file)
    if fmt != "parquet":
        rows, how, sha = text_rows(file, fmt, seen)
        return Unit(relative, rows, how, (Stored(relative, os.path.getsize(file), sha),))
    stored = Stored(relative, os.path.getsize(file), digest(file, seen))
    footer = pq.read_metadata(file)
    groups = sum(footer.row_group(k).num_rows for k in range(footer.num_row_groups))
    if groups != footer.num_rows:  # a damaged footer: which count would a reader use?
        from timealign.spark.paths import PathError

        raise PathError("input", "SP-R1", [
            f"cannot read the file {file}: its footer counts {footer.num_rows} rows, its "
            f"row groups {groups}; fix or remove that file"], file)
    return Unit(relative, int(groups), "Parquet footer", (stored,))


def _relative(root: str, file: str) -> str:
    if os.path.isfile(root):
        return os.path.basename(root)
    return Path(os.path.relpath(file, root)).as_posix()


def _bag_files(path: Path) -> list[Path]:
    """The files of a bag; anything but a regular file is refused by name (SP-R70)."""
    from timealign.spark.paths import regular_files_of

    return regular_files_of(path)


def _bag_unit(root: str, path: Path, relative: str, seen: Callable[[int], None]) -> Unit:
    from timealign.rosbag.info import bag_info
    from timealign.rosbag.rows import BagError

    base = Path(root).parent if Path(root).is_file() else Path(root)
    files = tuple(Stored(Path(os.path.relpath(p, base)).as_posix(), p.stat().st_size,
                         digest(str(p), seen)) for p in _bag_files(path))
    try:
        rows: int | None = bag_info(path, relative).count
        how = "the bag's own counts (metadata.yaml, MCAP summary or ROS 1 chunk infos)"
    except BagError as error:
        rows, how = None, f"not counted: {error.message}"
    return Unit(relative, rows, how, files)


def _sizes(files: list[str]) -> int:
    return sum(os.path.getsize(f) for f in files)


class _Seen:
    """The progress line of a long inventory (every few seconds, on stderr)."""

    def __init__(self, progress: Progress, total: int, label: str) -> None:
        self.progress, self.total, self.label, self.done = progress, total, label, 0

    def __call__(self, count: int) -> None:
        self.done += count
        if self.progress.due():
            self.progress.say(f"[timealign {self.label}] inventory of the input: "
                              f"{self.done / 1e9:.1f} of {self.total / 1e9:.1f} GB digested")


def take(path: str, fmt: str, progress: Progress | None = None, label: str = "run",
         files: list[str] | None = None) -> Inventory | None:
    """SP-R41: the inventory of the local input ``path`` in format ``fmt`` (``rosbag`` or a
    table format whose files are ``files``, as :func:`timealign.spark.schema.input_files`
    checked them); None for a remote input. An input holding no row at all is refused
    (exit 2): there is nothing to replay, and a run of it would read "no loss"."""
    if "://" in path or not os.path.exists(path):
        return None
    root = os.path.realpath(path)
    shown = progress or Progress(False)
    if fmt == "rosbag":
        from timealign.rosbag.discovery import find_bags

        found = find_bags(Path(root))
        seen = _Seen(shown, sum(_sizes([str(p) for p in _bag_files(b)]) for b, _ in found),
                     label)
        units = tuple(_bag_unit(root, bag, relative, seen) for bag, relative in found)
    else:
        listed = [os.path.realpath(f) for f in files or []]
        seen = _Seen(shown, _sizes(listed), label)
        units = tuple(_table_unit(root, file, fmt, seen) for file in listed)
    inventory = Inventory(root, fmt, units)
    if fmt != "rosbag" and all(u.rows is not None for u in units) and not inventory.rows:
        from timealign.spark.paths import PathError

        what = (f"its {len(units)} file(s) hold no row" if units else "it holds no file")
        raise PathError("input", RULE, ["{input}", " holds nothing to replay: ", what,
                                        " (counted from each file's own bookkeeping)"], path)
    return inventory


def unit_of(root: str, order_file: str) -> str:
    """The inventory name of the file a table row was read from (its ``order_file``
    column: a file URI, for text formats followed by NUL and the block start, SP-R2)."""
    location = order_file.split("\x00", 1)[0]
    local = unquote(urlparse(location).path) if "://" in location or location.startswith(
        "file:") else location
    return _relative(root, os.path.realpath(local))


def rows_per_file(counts: Iterator[tuple[str, int]], root: str) -> dict[str, int]:
    """Rows read per inventory name, from (``order_file``, rows) pairs."""
    found: dict[str, int] = {}
    for order_file, rows in counts:
        name = unit_of(root, order_file)
        found[name] = found.get(name, 0) + int(rows)
    return found
