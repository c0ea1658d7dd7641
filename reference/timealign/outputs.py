"""Folders a command fills: never a folder of the user's files, replaced whole (CLI-R3).

A command that fills a folder (``generate --output``, ``python -m timealign.spark.ship``)
writes a manifest, ``_timealign.json``, listing the command and the files it wrote. It fills
a folder only when the folder is absent, empty, or holds exactly its own earlier output (the
manifest and the files it lists): a folder with any other file is refused before work
starts, naming that file, so no file of the user's is ever deleted or overwritten. The new
content is written into a hidden temporary sibling and moved into place when complete; an
interrupted command leaves the earlier output as it was. Spark ignores files whose name
starts with ``_`` or ``.``, so the manifest never reads as data.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from timealign import jsontext
from timealign.errors import InvalidInput

MANIFEST = "_timealign.json"
FORMAT = "timealign.output/1"
RULE = "CLI-R3"


def _earlier_files(folder: Path, command: str, option: str) -> set[str]:
    """The files of ``folder`` its manifest says ``command`` wrote; refuses anything else."""
    manifest = folder / MANIFEST
    present = {entry.name for entry in folder.iterdir()}
    if not present:
        return set()
    listed: object = None
    if manifest.is_file():
        try:
            body = jsontext.loads(manifest.read_bytes())
        except (ValueError, OSError):
            body = None
        if isinstance(body, dict) and body.get("format") == FORMAT \
                and body.get("command") == command:
            listed = body.get("files")
    if not isinstance(listed, list) or not all(isinstance(name, str) for name in listed):
        raise InvalidInput(option, RULE, f"the folder is not empty and not an earlier output "
                           f"of {command} (no {MANIFEST} of it): give an empty or new folder",
                           str(folder))
    foreign = sorted(present - set(listed) - {MANIFEST})
    if foreign:
        raise InvalidInput(option, RULE, f"the folder holds a file {command} did not write: "
                           f"{foreign[0]}; give an empty or new folder", str(folder / foreign[0]))
    return present


def check_fillable(folder: str | Path, command: str, option: str) -> Path:
    """``folder`` as a path ``command`` may fill (CLI-R3), checked before any work starts."""
    path = Path(folder)
    if path.exists() and not path.is_dir():
        raise InvalidInput(option, RULE, "is a file, not a folder", str(path))
    if path.is_dir():
        _earlier_files(path, command, option)
    return path


@contextmanager
def filled(folder: str | Path, command: str, option: str) -> Iterator[Path]:
    """A temporary sibling folder to write ``command``'s output into; on success it gets
    the manifest and replaces ``folder`` (CLI-R3); on failure it is removed."""
    path = check_fillable(folder, command, option)
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.new-", dir=path.parent))
    try:
        yield staging
        files = sorted(entry.name for entry in staging.iterdir())
        (staging / MANIFEST).write_text(json.dumps(
            {"format": FORMAT, "command": command, "files": files}, indent=1) + "\n",
            encoding="utf-8")
        if path.is_dir():
            _earlier_files(path, command, option)  # nothing of the user's crept in meanwhile
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-", dir=path.parent))
            os.replace(path, old / path.name)
            os.replace(staging, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(staging, path)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
