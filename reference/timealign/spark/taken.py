"""The files a stream has taken, and whether one changed after it was taken (SP-R45, SP-R53,
SP-R54).

A file stream reads each file once, when it first sees it: rows appended to a file already
taken are never read, and nothing said so (``verify`` later found them missing). Spark's file
source logs every file it takes in the checkpoint (``sources/0/N``: the path and the file's
modification time when listed); the bag source logs every file of each bag it takes in its
offset (``offsets/N``, ``listed``, SP-R53). Every logged file still present is compared with
that time and with the record the stream's manifest keeps (its size and SHA-256, digested
once, when the file is first seen here): a file that changed is refused by name, a failure
(``LossError``, exit 3), since its new rows would have no outcome. A file removed after it
was taken (a cleaned-up source folder) is no change in rows.

The check runs when the stream starts, at every poll of the running stream (SP-R54) and when
it stops. A poll costs one ``stat`` per taken file and reads only the log files written
since the last poll; a file is digested again only when its size or modification time
changed (then it is refused anyway, unless it was rewritten identically).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from timealign.spark.inventory import digest
from timealign.spark.outcomes import LossError

RULE = "SP-R45"


def _numbered(folder: Path) -> list[Path]:
    """The log files of a checkpoint folder (``N`` or ``N.compact``), in order."""
    if not folder.is_dir():
        return []
    names = [p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")
             and p.name.split(".")[0].isdigit()]
    return sorted(names, key=lambda p: int(p.name.split(".")[0]))


def _local(location: str) -> str:
    local = unquote(urlparse(location).path) if location.startswith("file:") else location
    return os.path.realpath(local)


#: The names of JSON lines files (SP-R72), compressed or not.
_JSON = (".json", ".jsonl", ".ndjson")


def _first_digest(path: str) -> str:
    """The SHA-256 of a file the stream took, when first seen; a JSON lines file is parsed
    in the same read (SP-R72): a line holding two objects or an array, of which Spark's
    reader read only the first object or one row per element, stops the stream
    (``LossError``, exit 3) naming the file and the line, since a stream takes no inventory
    before it reads (SP-R41)."""
    from timealign.spark.inventory import UNCOUNTED_CODECS, text_rows
    from timealign.spark.paths import PathError

    lower = path.lower()
    for codec in (".gz", ".bz2", ".deflate"):
        lower = lower.removesuffix(codec)
    if not lower.endswith(_JSON) or path.lower().endswith(UNCOUNTED_CODECS):
        return digest(path)
    try:
        return text_rows(path, "json", lambda _: None)[2]
    except PathError as error:
        if error.rule != "SP-R72":
            raise
        raise LossError(f"{error.message}; the stream read part of that line only, so rows "
                        f"of it have no outcome (SP-R72)") from None


class TakenWatch:
    """The taken files of one stream's checkpoint and their records (SP-R45): ``bags`` for a
    stream of bags (its offsets log the bags' files, SP-R53), else Spark's file source log.
    :meth:`check` may be called at every poll (SP-R54): it reads only new log files."""

    def __init__(self, checkpoint: str, recorded: Any, bags: bool = False) -> None:
        self.checkpoint, self.bags = Path(checkpoint), bags
        earlier = [r for r in recorded if isinstance(r, dict) and "path" in r] \
            if isinstance(recorded, list) else []
        self.records: dict[str, dict[str, Any]] = {str(r["path"]): dict(r) for r in earlier}
        self.logged: dict[str, int] = {}
        self._read: set[str] = set()

    def _refresh(self) -> None:
        if self.bags:  # each offset holds every bag's files so far: the newest is enough
            offsets = _numbered(self.checkpoint / "offsets")
            if offsets and offsets[-1].name not in self._read:
                self._read = {offsets[-1].name}
                for line in offsets[-1].read_text(encoding="utf-8",
                                                  errors="replace").splitlines()[2:]:
                    try:
                        listed = json.loads(line).get("listed", {})
                        self.logged.update({str(k): int(v) for k, v in listed.items()})
                    except (ValueError, AttributeError, TypeError):
                        continue
            return
        for log in _numbered(self.checkpoint / "sources" / "0"):
            if log.name in self._read:
                continue
            self._read.add(log.name)
            for line in log.read_text(encoding="utf-8", errors="replace").splitlines()[1:]:
                try:
                    entry = json.loads(line)
                    self.logged[_local(str(entry["path"]))] = int(entry["timestamp"])
                except (ValueError, KeyError, TypeError):
                    continue

    def check(self) -> list[dict[str, Any]]:
        """The record of every taken file (``path``, ``bytes``, ``sha256``,
        ``modified_ms``), after checking each against its log and its earlier record.
        Raises ``LossError`` naming the first file that changed after the stream took it."""
        self._refresh()
        records: list[dict[str, Any]] = []
        for path, stamp in sorted(self.logged.items()):
            try:
                status = os.stat(path)
            except FileNotFoundError:
                continue
            size, modified = status.st_size, status.st_mtime_ns // 1_000_000
            before = self.records.get(path)
            if before is None:
                record = {"path": path, "bytes": size, "sha256": _first_digest(path),
                          "modified_ms": modified}
            elif (size, modified) == (before.get("bytes"), before.get("modified_ms")):
                record = before  # SP-R54: unchanged size and time, no digest
            else:
                record = dict(before, bytes=size, sha256=digest(path), modified_ms=modified)
            if modified != stamp or (before is not None and (
                    before.get("bytes"), before.get("sha256")) != (record["bytes"],
                                                                    record["sha256"])):
                was = "" if before is None else (f"{before.get('bytes')} bytes, sha256 "
                                                 f"{str(before.get('sha256'))[:16]} when taken; ")
                raise LossError(f"the file {path} changed after the stream took it ({was}now "
                                f"{size} bytes, sha256 {str(record['sha256'])[:16]}): rows "
                                f"added to a taken file are never read ({RULE}); write new "
                                f"rows to a new file, and replay this one with a new "
                                f"checkpoint")
            self.records[path] = record
            records.append(record)
        return records


def check_taken(checkpoint: str, recorded: Any, bags: bool = False) -> list[dict[str, Any]]:
    """SP-R45: :meth:`TakenWatch.check` once."""
    return TakenWatch(checkpoint, recorded, bags).check()
