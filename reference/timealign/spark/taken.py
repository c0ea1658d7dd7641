"""The files a stream has taken, and whether one changed after it was taken (SP-R45).

A file stream reads each file once, when it first sees it: rows appended to a file already
taken are never read, and nothing said so (``verify`` later found them missing). Spark's file
source logs every file it takes in the checkpoint (``sources/0/N``: the path and the file's
modification time when listed). When the stream starts and when it stops, every logged file
still present is compared with that time and with the record the stream's manifest keeps
(its size and SHA-256, digested once, when the file is first seen here): a file that changed
is refused by name, a failure (``LossError``, exit 3), since its new rows would have no
outcome. A file removed after it was taken (a cleaned-up source folder) is no change in rows.
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


def logged(checkpoint: str) -> dict[str, int]:
    """Path -> modification time (ms) of every file the stream's file source logged as taken
    (its batch files, compacted or not); empty for a new checkpoint."""
    folder = Path(checkpoint) / "sources" / "0"
    found: dict[str, int] = {}
    if not folder.is_dir():
        return found
    names = [p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")
             and p.name.split(".")[0].isdigit()]
    for log in sorted(names, key=lambda p: int(p.name.split(".")[0])):
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines()[1:]:
            try:
                entry = json.loads(line)
                location, stamp = str(entry["path"]), int(entry["timestamp"])
            except (ValueError, KeyError, TypeError):
                continue
            local = unquote(urlparse(location).path) if location.startswith("file:") \
                else location
            found[os.path.realpath(local)] = stamp
    return found


def check_taken(checkpoint: str, recorded: Any) -> list[dict[str, Any]]:
    """SP-R45: the record of every taken file (``path``, ``bytes``, ``sha256``,
    ``modified_ms``), after checking each against Spark's log and the earlier ``recorded``
    list (the manifest's ``taken``; anything else counts as none). Raises ``LossError``
    naming the first file that changed after the stream took it."""
    earlier = {r["path"]: r for r in recorded if isinstance(r, dict) and "path" in r} \
        if isinstance(recorded, list) else {}
    records: list[dict[str, Any]] = []
    for path, stamp in sorted(logged(checkpoint).items()):
        if not os.path.isfile(path):
            continue
        status = os.stat(path)
        size, modified = status.st_size, status.st_mtime_ns // 1_000_000
        before = earlier.get(path)
        if before is None:
            record = {"path": path, "bytes": size, "sha256": digest(path),
                      "modified_ms": modified}
        else:
            record = dict(before)
            if (size, modified) != (before.get("bytes"), before.get("modified_ms")):
                record.update(bytes=size, sha256=digest(path), modified_ms=modified)
        if modified != stamp or (before is not None and (
                before.get("bytes"), before.get("sha256")) != (record["bytes"],
                                                                record["sha256"])):
            was = "" if before is None else (f"{before.get('bytes')} bytes, sha256 "
                                             f"{str(before.get('sha256'))[:16]} when taken; ")
            raise LossError(f"the file {path} changed after the stream took it ({was}now "
                            f"{size} bytes, sha256 {str(record['sha256'])[:16]}): rows added to a "
                            f"taken file are never read ({RULE}); write new rows to a new "
                            f"file, and replay this one with a new checkpoint")
        records.append(record)
    return records
