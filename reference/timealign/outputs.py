"""Where a command writes: every target checked before work starts (CLI-R4), and folders a
command fills never a folder of the user's files, replaced whole (CLI-R3).

:func:`check_targets` is the one check every command runs on its paths before any work: no
path it writes may equal, contain or lie inside a path it reads or another path it writes
(after resolving relative paths and symlinks), a file target is not a folder and its
folder exists and is writable, a folder target is not a file, and no name is longer than
the file system allows. :func:`write_file` writes a file through a temporary sibling.

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
import posixpath
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from timealign import jsontext
from timealign.errors import InvalidInput

MANIFEST = "_timealign.json"
FORMAT = "timealign.output/1"
RULE = "CLI-R3"
RULE_TARGETS = "CLI-R4"
NAME_MAX = 255  # bytes of one path component on the file systems we run on (ext4, APFS)


def is_local(path: str | Path) -> bool:
    """Whether ``path`` is a local path (no URI scheme other than ``file:``)."""
    scheme = urlparse(str(path)).scheme
    return scheme in ("", "file") or len(scheme) == 1  # a Windows drive letter


def resolved(path: str | Path) -> str:
    """The absolute, symlink-free form of a local path; a normalised URI otherwise."""
    text = str(path)
    if not is_local(text):
        return posixpath.normpath(text)
    if text.startswith("file:"):
        text = urlparse(text).path
    return os.path.realpath(os.path.abspath(text))


def _within(inner: str, outer: str) -> bool:
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


def overlap(a: str | Path, b: str | Path) -> bool:
    """Whether two locations are equal or one lies inside the other (after resolving)."""
    ra, rb = resolved(a), resolved(b)
    return _within(ra, rb) or _within(rb, ra)


def _writable_place(option: str, path: str, rule: str, folder: bool) -> None:
    """No component of ``path`` is longer than the file system allows, and the nearest
    existing ancestor (for a folder, the folder itself when it exists) is a folder this
    process can create an entry in: probed by creating and removing a hidden temporary
    file, since permission bits do not tell (``/proc``, read-only mounts, root)."""
    local = Path(resolved(path))
    long = next((part for part in local.parts if len(os.fsencode(part)) > NAME_MAX), None)
    if long is not None:
        raise InvalidInput(option, rule, f"a name of {len(os.fsencode(long))} bytes, longer "
                           f"than the file system allows ({NAME_MAX})", path)
    start = [local] if folder else []
    existing = next(p for p in (*start, local.parent, *local.parents) if os.path.lexists(p))
    if not existing.is_dir():
        raise InvalidInput(option, rule, f"{existing} is a file, not a folder", path)
    try:
        handle, probe = tempfile.mkstemp(prefix=".timealign-probe-", dir=existing)
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        raise InvalidInput(option, rule, f"cannot create or write in {existing}: "
                           f"{error.strerror}", path) from None


def check_targets(reads: Mapping[str, str | Path | None],
                  files: Mapping[str, str | Path | None] | None = None,
                  folders: Mapping[str, str | Path | None] | None = None, *,
                  rule: str = RULE_TARGETS, file_parent_must_exist: bool = True) -> None:
    """CLI-R4: the paths a command writes, checked before any work starts. ``reads``,
    ``files`` (written whole: a report, a summary) and ``folders`` (filled) map an option
    name to its path (None: not given). No written path equals, contains or lies inside a
    read path or another written path; a file target is not a folder, its folder exists
    (unless ``file_parent_must_exist`` is false) and is writable; a folder target is not a
    file and can be created; no name is too long. Raises :class:`InvalidInput` naming the
    option (and both options for an overlap)."""
    given_reads = {k: str(v) for k, v in reads.items() if v is not None}
    given_files = {k: str(v) for k, v in (files or {}).items() if v is not None}
    given_folders = {k: str(v) for k, v in (folders or {}).items() if v is not None}
    writes = {**given_folders, **given_files}  # a file inside a folder is named
    for option, path in writes.items():
        for other, taken in given_reads.items():
            if overlap(path, taken):
                raise InvalidInput(option, rule, f"{option} {resolved(path)!r} overlaps "
                                   f"{other} {resolved(taken)!r}: a command never writes "
                                   f"where it reads", path)
    names = list(writes)
    for i, option in enumerate(names):
        for other in names[i + 1:]:
            if overlap(writes[option], writes[other]):
                raise InvalidInput(other, rule, f"{other} {resolved(writes[other])!r} "
                                   f"overlaps {option} {resolved(writes[option])!r}: two "
                                   f"outputs of one command never share a place",
                                   writes[other])
    for option, path in given_files.items():
        if not is_local(path):
            continue
        local = resolved(path)
        if os.path.isdir(local):
            raise InvalidInput(option, rule, "is a folder, not a file", path)
        if file_parent_must_exist and not os.path.isdir(os.path.dirname(local)):
            raise InvalidInput(option, rule, "its folder does not exist", path)
        _writable_place(option, path, rule, folder=False)
    for option, path in given_folders.items():
        if not is_local(path):
            continue
        local = resolved(path)
        if os.path.exists(local) and not os.path.isdir(local):
            raise InvalidInput(option, rule, "is a file, not a folder", path)
        _writable_place(option, path, rule, folder=True)


def write_file(path: str | Path, text: str | bytes) -> Path:
    """Write ``text`` (or bytes) to ``path`` through a hidden temporary sibling moved into
    place (CLI-R4), so an interrupted write never leaves half a file."""
    target = Path(path)
    handle, staging = tempfile.mkstemp(prefix=f".{target.name[:100]}.new-", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(text.encode("utf-8") if isinstance(text, str) else text)
        os.replace(staging, target)
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise
    return target


def _earlier_files(folder: Path, command: str, option: str,
                   skip_hidden: bool = False) -> set[str]:
    """The files of ``folder`` its manifest says ``command`` wrote; refuses anything else
    (``skip_hidden``: names starting with "." are left out, as the staging folders of a
    job that was killed)."""
    manifest = folder / MANIFEST
    present = {entry.name for entry in folder.iterdir()
               if not (skip_hidden and entry.name.startswith("."))}
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
        held = sorted(present - {MANIFEST}) or [MANIFEST]
        raise InvalidInput(option, RULE, f"the folder is not empty and not an earlier output "
                           f"of {command} (no {MANIFEST} of it; it holds {held[0]}): give an "
                           f"empty or new folder", str(folder))
    foreign = sorted(present - set(listed) - {MANIFEST})
    if foreign:
        raise InvalidInput(option, RULE, f"the folder holds a file {command} did not write: "
                           f"{foreign[0]}; give an empty or new folder", str(folder / foreign[0]))
    return present


def check_fillable(folder: str | Path, command: str, option: str) -> Path:
    """``folder`` as a path ``command`` may fill (CLI-R3), checked before any work starts:
    a place a folder can be made in (CLI-R4: not below a file, writable, no name too long),
    then absent, empty or ``command``'s earlier output."""
    path = Path(folder)
    check_targets({}, folders={option: path})  # CLI-R4
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


def check_run_output(output: str, option: str = "--output") -> None:
    """CLI-R3 for ``run``: its ``output`` must be absent, empty (hidden entries aside), or
    the earlier output of ``run`` (its manifest, SP-R32, lists what it holds), because
    publishing a table (SP-R21) replaces a folder of the table's name (``groups/``) whole:
    in a folder of the user's files that deleted the user's ``groups/``. Checked before
    Spark starts; remote paths are left to the user."""
    if not is_local(output) or not os.path.isdir(resolved(output)):
        return
    _earlier_files(Path(resolved(output)), "run", option, skip_hidden=True)


def check_stream_output(output: str, checkpoint: str, option: str = "--output") -> None:
    """CLI-R3 for ``stream``: its ``output`` must be absent, empty, or the earlier output of
    the same stream, resumed from the same checkpoint (its manifest names that checkpoint,
    and the checkpoint is there), because a stream writes ``batch=N`` folders numbered from
    0 by its checkpoint: a new checkpoint into an earlier stream's tables would replace
    ``batch=0`` and keep the old ``batch=1``, one table of two runs. Checked before Spark
    starts; remote paths are left to the user."""
    if not is_local(output) or not os.path.isdir(resolved(output)):
        return
    folder = Path(resolved(output))
    present = sorted(entry.name for entry in folder.iterdir() if entry.name != MANIFEST)
    if not present:  # empty, or a stream that stopped before writing a table
        return
    body: object = None
    if (folder / MANIFEST).is_file():
        try:
            body = jsontext.loads((folder / MANIFEST).read_bytes())
        except (ValueError, OSError):
            body = None
    earlier = body.get("checkpoint") if isinstance(body, dict) and \
        body.get("format") == FORMAT and body.get("command") == "stream" else None
    if not isinstance(earlier, str):
        raise InvalidInput(option, RULE, f"the folder is not empty and not an earlier output "
                           f"of stream (no {MANIFEST} of it; it holds {present[0]}): give an "
                           f"empty or new folder", output)
    mine = resolved(checkpoint)
    resumed = os.path.isdir(mine) and any(Path(mine).iterdir())
    if earlier != mine or not resumed:
        raise InvalidInput(option, RULE, f"the folder holds the tables of an earlier stream "
                           f"with the checkpoint {earlier!r}; a stream writes into its own "
                           f"tables only when resumed from that checkpoint: give that "
                           f"--checkpoint, or an empty or new --output", output)


def write_stream_manifest(output: str, checkpoint: str) -> None:
    """The manifest by which :func:`check_stream_output` recognises a stream's output,
    written before the stream writes its first table when the command line has not written
    its own (SP-R32, which records the checkpoint too)."""
    if not is_local(output):
        return
    folder = Path(resolved(output))
    folder.mkdir(parents=True, exist_ok=True)
    if (folder / MANIFEST).is_file():
        return
    files = sorted(entry.name for entry in folder.iterdir()
                   if entry.name != MANIFEST and not entry.name.startswith("."))
    write_file(folder / MANIFEST, json.dumps(
        {"format": FORMAT, "command": "stream", "files": files,
         "checkpoint": resolved(checkpoint)}, indent=1) + "\n")


def write_manifest(folder: str | Path, command: str, body: Mapping[str, Any]) -> Path:
    """Write ``folder``'s manifest for ``command``: the files it holds and ``body`` (what a
    run remembers of itself, SP-R32), through a temporary sibling so a reader never sees
    half a manifest. Spark ignores the file (its name starts with ``_``)."""
    path = Path(folder)
    files = sorted(entry.name for entry in path.iterdir()
                   if entry.name != MANIFEST and not entry.name.startswith("."))
    text = json.dumps({"format": FORMAT, "command": command, "files": files, **body},
                      indent=1) + "\n"
    return write_file(path / MANIFEST, text)


def read_manifest(folder: str | Path, option: str) -> dict[str, Any] | None:
    """The manifest of ``folder`` (None when it has none); a manifest that is not one of
    ours is ``InvalidInput`` naming ``option``."""
    path = Path(folder) / MANIFEST
    if not path.is_file():
        return None
    try:
        body = jsontext.loads(path.read_bytes())
    except (ValueError, OSError) as error:
        raise InvalidInput(option, "SP-R32", f"its {MANIFEST} cannot be read: {error}",
                           str(path)) from None
    if not isinstance(body, dict) or body.get("format") != FORMAT:
        raise InvalidInput(option, "SP-R32", f"its {MANIFEST} is not a timealign manifest",
                           str(path))
    return body
