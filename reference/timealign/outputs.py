"""Where a command writes: the one write rule (CLI-R5), one writer per target (CLI-R6),
every target checked before work starts (CLI-R4), and folders a command fills never a
folder of the user's files (CLI-R3).

Every command and every option that writes is listed in :data:`WRITES` with how an earlier
output of it is recognised (its mark); ``tests/test_cli_fuzz.py`` checks the list against
the parsers, so a new writing option cannot be forgotten, and walks every entry. A command
never replaces or deletes a file or folder it did not create: a file target that exists is
replaced only when it carries the command's mark (a JSON document's ``"format"``, a
picture's mark), a folder target is filled only when absent, empty or an earlier output of
the same command (its manifest, ``_timealign.json``). Temporary files and folders live
beside the target (never inside a folder being checked), and :func:`claim` holds a lock
file beside each target while the command runs, so two commands never write one output.

:func:`check_targets` is the one check every command runs on its paths before any work: no
path it writes may equal, contain or lie inside a path it reads or another path it writes
(after resolving relative paths and symlinks), a file target is not a folder and its
folder exists and is writable, a folder target is not a file, and no name is longer than
the file system allows; given the command, it then applies CLI-R5 and claims the targets.
:func:`write_file` writes a file through a temporary sibling.

A command that fills a folder (``generate --output``, ``python -m timealign.spark.ship``)
writes a manifest, ``_timealign.json``, listing the command and the files it wrote. The new
content is written into a hidden temporary sibling and moved into place when complete; an
interrupted command leaves the earlier output as it was. A folder that existed before is
kept (its files are replaced, never the folder itself). Spark ignores files whose name
starts with ``_`` or ``.``, so the manifest never reads as data.
"""

from __future__ import annotations

import atexit
import errno
import json
import os
import posixpath
import re
import shutil
import socket
import tempfile
import time
import zlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import attrs

from timealign import jsontext
from timealign.errors import InvalidInput

MANIFEST = "_timealign.json"
FORMAT = "timealign.output/1"
RULE = "CLI-R3"
RULE_TARGETS = "CLI-R4"
RULE_OWN = "CLI-R5"
RULE_LOCK = "CLI-R6"
RULE_WRITE = "CLI-R21"
NAME_MAX = 255  # bytes of one path component on the file systems we run on (ext4, APFS)

#: The mark ``plot --out`` puts in a picture: an XML comment closing an SVG, a ``tEXt``
#: chunk before a PNG's end.
PICTURE_MARK = "timealign plot"
_SVG_MARK = f"<!-- written by {PICTURE_MARK} -->\n".encode()
_PNG_TEXT = b"Software\x00" + PICTURE_MARK.encode()
_PNG_MARK = len(_PNG_TEXT).to_bytes(4, "big") + b"tEXt" + _PNG_TEXT + zlib.crc32(
    b"tEXt" + _PNG_TEXT).to_bytes(4, "big")
_PNG_END = b"\x00\x00\x00\x00IEND\xaeB`\x82"
#: The ``"format"`` of the summary ``run --summary`` writes (its first key).
SUMMARY_FORMAT = "timealign.summary/1"


@attrs.frozen
class Writes:
    """One option through which a command writes (CLI-R5): the sub-command of
    ``timealign`` (the ``python -m`` entry points by a short name: ``ship``, ``demo``), the
    option (a positional by its metavar), a ``file`` or a ``folder``, and the mark that
    makes an existing target an earlier output of the command: a file's JSON ``"format"``
    (or :data:`PICTURE_MARK`), a folder's manifest ``command`` (for ``stream
    --checkpoint``, its binding's format)."""

    command: str
    option: str
    kind: str
    mark: str


#: Every command and option that writes (CLI-R5); tests/test_cli_fuzz.py checks it against
#: the parsers and walks every entry.
WRITES: tuple[Writes, ...] = (
    Writes("conform", "--report", "file", "timealign.conformance/1"),
    Writes("conform", "--save", "folder", "conform --save"),
    Writes("diff", "--report", "file", "timealign.diff/1"),
    Writes("diff", "--save", "folder", "diff --save"),
    Writes("generate", "--output", "folder", "generate"),
    Writes("plot", "--out", "file", PICTURE_MARK),
    Writes("run", "--output", "folder", "run"),
    Writes("run", "--summary", "file", SUMMARY_FORMAT),
    Writes("run", "--report", "folder", "run --report"),
    Writes("stream", "--output", "folder", "stream"),
    Writes("stream", "--checkpoint", "folder", "timealign.checkpoint/1"),
    Writes("stream", "--summary", "file", SUMMARY_FORMAT),
    Writes("stream", "--report", "folder", "run --report"),  # one report, as run writes it
    Writes("ship", "FOLDER", "folder", "ship"),  # python -m timealign.spark.ship
    Writes("demo", "--output", "folder", "rosbag.demo"),  # python -m timealign.rosbag.demo
)
#: Folder marks checked by their own functions (:func:`check_run_output`,
#: :func:`check_stream_output`), not as a filled folder.
_OWN_CHECKS = ("run", "stream", "timealign.checkpoint/1")


def nothing_written(option: str, why: str, value: object = None) -> InvalidInput:
    """CLI-R7: the refusal of a command asked for data that would hold no message (it
    writes what was asked, or refuses before writing), naming the option that sized it."""
    return InvalidInput(option, "CLI-R7", f"gives no message ({why}): ask for more", value)


def writes(command: str, option: str) -> Writes:
    """The :data:`WRITES` entry of ``command``'s ``option``."""
    found = [w for w in WRITES if w.command == command and w.option == option]
    assert found, f"{command} {option} is not in outputs.WRITES (CLI-R5)"
    return found[0]


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
                  rule: str = RULE_TARGETS, file_parent_must_exist: bool = True,
                  command: str | None = None) -> None:
    """CLI-R4: the paths a command writes, checked before any work starts. ``reads``,
    ``files`` (written whole: a report, a summary) and ``folders`` (filled) map an option
    name to its path (None: not given). No written path equals, contains or lies inside a
    read path or another written path; a file target is not a folder, its folder exists
    (unless ``file_parent_must_exist`` is false) and is writable; a folder target is not a
    file and can be created; no name is too long. Raises :class:`InvalidInput` naming the
    option (and both options for an overlap). Given ``command`` (its :data:`WRITES`
    entries name the options), then :func:`own`: CLI-R5 and the claims of CLI-R6."""
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
    if command is not None:
        own(command, given_files, given_folders)


def own(command: str, files: Mapping[str, str | Path | None],
        folders: Mapping[str, str | Path | None]) -> None:
    """CLI-R5, CLI-R6, before any work: every target of ``command`` (option to path, None:
    not given) is new or an earlier output of ``command``, then claimed (:func:`claim`).
    ``run``'s tables and a stream's folders are recognised by their own checks
    (:func:`check_run_output`, :func:`check_stream_output`)."""
    for option, path in files.items():
        if path is not None:
            check_own_file(command, option, path)
    for option, path in folders.items():
        if path is None or not is_local(path):
            continue
        mark = writes(command, option).mark
        if mark == "run":
            check_run_output(str(path), option)
        elif mark not in _OWN_CHECKS:
            check_fillable(path, mark, option)
    claim(command, {**files, **folders})


def _carries(path: Path, mark: str) -> bool:
    """Whether the regular file ``path`` carries ``mark``: a JSON document whose first key
    is ``"format": mark``, or a picture ending with the picture mark. Reads at most 1 KB
    from each end, so a large file costs nothing."""
    try:
        with path.open("rb") as handle:
            head = handle.read(512)
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - 512))
            tail = handle.read()
    except OSError:
        return False
    if mark == PICTURE_MARK:
        return tail.endswith(_SVG_MARK) or tail.endswith(_PNG_MARK + _PNG_END)
    pattern = rb'\s*\{\s*"format"\s*:\s*"' + re.escape(mark.encode()) + rb'"'
    return re.match(pattern, head) is not None


def check_own_file(command: str, option: str, path: str | Path) -> None:
    """CLI-R5: a file target of ``command`` that exists must be an earlier output of it
    (it carries the mark of :data:`WRITES`); a user's file, a vector suite, an adapter's
    source, a link or anything but a regular file is refused, naming it, and left as it
    is."""
    if not is_local(path):
        return
    text = str(path)
    if text.startswith("file:"):
        text = urlparse(text).path
    if not os.path.lexists(text):
        return
    mark = writes(command, option).mark
    if os.path.islink(text) or not os.path.isfile(text) or not _carries(Path(text), mark):
        raise InvalidInput(option, RULE_OWN, f"{text} exists and is not an earlier output "
                           f"of {command} (no {mark!r} mark): a command never replaces a file "
                           f"it did not write; give a new name, or remove the file first",
                           str(path))


def marked(command: str, option: str, data: str | bytes) -> bytes:
    """``data`` as ``command`` writes it to ``option``: a picture gets the picture mark
    (after an SVG's end, or as a PNG ``tEXt`` chunk before its ``IEND``); a JSON document
    carries its ``"format"`` already."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if writes(command, option).mark != PICTURE_MARK:
        return raw
    if raw.endswith(_PNG_END):
        return raw[:-len(_PNG_END)] + _PNG_MARK + _PNG_END
    return raw + _SVG_MARK


def write_target(command: str, option: str, path: str | Path, data: str | bytes) -> Path:
    """Write the file target ``option`` of ``command`` (CLI-R5): checked again now (a
    file of the user's may have appeared since the command started), marked, and written
    through a temporary sibling."""
    check_own_file(command, option, path)
    with writing(option, path):  # CLI-R21
        return write_file(path, marked(command, option, data))


# --- CLI-R21: a write that fails names what it wrote ---------------------------------------

#: What a full (or read-only) device raises, as ``errno``.
_DEVICE_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS)


def device_full(error: BaseException) -> bool:
    """Whether ``error`` says the device written to is full (or read-only): Python's own
    ``OSError`` carries the ``errno``, Arrow's writers only its text (``[errno 28]``)."""
    if not isinstance(error, OSError):
        return False
    if error.errno in _DEVICE_ERRORS:
        return True
    text = str(error).lower()
    return any(f"errno {code}]" in text for code in _DEVICE_ERRORS) or \
        "no space left on device" in text


def _why(error: OSError) -> str:
    if device_full(error):
        return ("no space left on its device (or it is read-only): free some space or "
                "write elsewhere, then run again")
    return str(error.strerror or error).strip()


@contextmanager
def writing(option: str, where: str | Path, device_only: bool = False) -> Iterator[None]:
    """CLI-R21: an ``OSError`` while writing ``where`` for ``option`` (a full disk, a
    read-only mount) becomes one line naming the option and the path, exit 2, instead of
    ``[Errno 28] No space left on device`` naming neither. ``device_only``: only a full or
    read-only device is translated (around code that also reads)."""
    try:
        yield
    except InvalidInput:
        raise
    except OSError as error:
        if device_only and not device_full(error):
            raise
        raise InvalidInput(option, RULE_WRITE, f"cannot write {where}: {_why(error)}",
                           str(where)) from None


# --- CLI-R6: one writer per target --------------------------------------------------------

_CLAIMS: dict[Path, list[Path]] = {}  # lock file -> the folders made to hold it


def lock_file(path: str | Path) -> Path:
    """The lock file of a target: a hidden sibling, ``.NAME.timealign-lock``."""
    local = Path(resolved(path))
    return local.parent / f".{local.name[:200]}.timealign-lock"


def _holder(lock: Path) -> tuple[str, bool]:
    """Who holds ``lock`` (words) and whether that claim is stale: its process, on this
    host, has ended (a command killed without cleaning up), or the file is unreadable and
    over a minute old (killed while writing it)."""
    try:
        words = lock.read_text(encoding="utf-8", errors="replace").split()
        age = time.time() - lock.stat().st_mtime
    except OSError:
        return "another command", False
    if len(words) < 3 or not words[0].isdigit():
        return "another command", age > 60
    pid, host, command = int(words[0]), words[1], " ".join(words[2:])
    stale = False
    if host == socket.gethostname():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            stale = True
        except OSError:
            pass  # alive, another user's
    return f"another {command} (process {pid} on {host})", stale


def claim(command: str, targets: Mapping[str, str | Path | None]) -> None:
    """CLI-R6: take the lock file of every local target (created with ``O_EXCL``, so two
    commands never both get it) until :func:`release` (the exit point of every command,
    :func:`timealign.command.guarded`, and the interpreter's exit). A target another
    running command holds is refused, naming that command; a stale lock (its process has
    ended) is taken over."""
    for option, path in targets.items():
        if path is None or not is_local(path):
            continue
        lock = lock_file(path)
        if lock in _CLAIMS:
            continue
        made = [p for p in (lock.parent, *lock.parent.parents) if not p.exists()]
        for attempt in (1, 2):
            try:
                lock.parent.mkdir(parents=True, exist_ok=True)
                handle = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                who, stale = _holder(lock)
                if stale and attempt == 1:
                    lock.unlink(missing_ok=True)
                    continue
                raise InvalidInput(option, RULE_LOCK, f"{who} is writing it now (its lock "
                                   f"{lock}): wait for it to end; if no such command runs, "
                                   f"remove the lock", str(path)) from None
            except OSError as error:
                raise InvalidInput(option, RULE_TARGETS, f"cannot create its lock {lock}: "
                                   f"{error.strerror}", str(path)) from None
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as out:
                    out.write(f"{os.getpid()} {socket.gethostname()} {command}\n")
            except OSError as error:  # CLI-R21: a full disk leaves no empty lock behind
                lock.unlink(missing_ok=True)
                for folder in sorted(made, key=lambda p: -len(p.parts)):
                    try:
                        folder.rmdir()
                    except OSError:
                        break
                raise InvalidInput(option, RULE_WRITE, f"cannot write its lock {lock}: "
                                   f"{_why(error)}", str(path)) from None
            if not _CLAIMS:
                atexit.register(release)
            _CLAIMS[lock] = sorted(made, key=lambda p: -len(p.parts))
            break


def release() -> None:
    """End every claim of this process (CLI-R6): its lock files are removed, and the
    folders made only to hold them when they are still empty."""
    for lock, made in list(_CLAIMS.items()):
        del _CLAIMS[lock]
        try:
            words = lock.read_text(encoding="utf-8").split()
            if words and words[0] == str(os.getpid()):
                lock.unlink()
        except OSError:
            pass
        for folder in made:
            try:
                folder.rmdir()
            except OSError:
                break


def write_file(path: str | Path, text: str | bytes) -> Path:
    """Write ``text`` (or bytes) to ``path`` through a hidden temporary sibling moved into
    place (CLI-R4), so an interrupted write never leaves half a file."""
    target = Path(path)
    handle, staging = tempfile.mkstemp(prefix=f".{target.name[:100]}.new-", dir=target.parent)
    try:
        mask = os.umask(0o022)
        os.umask(mask)
        os.fchmod(handle, 0o666 & ~mask)  # as open() would make it, not mkstemp's 0600
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
    beside which the staging folder can be made (its parent's nearest existing folder is
    writable), then absent, empty or ``command``'s earlier output (CLI-R5). Returns the
    resolved path: ``.`` is filled from beside it, never from inside."""
    path = Path(resolved(folder)) if is_local(folder) else Path(folder)
    check_targets({}, folders={option: path})  # CLI-R4
    if path.exists() and not path.is_dir():
        raise InvalidInput(option, RULE, "is a file, not a folder", str(folder))
    if path.parent != path:
        _writable_place(option, str(path), RULE_TARGETS, folder=False)  # the staging's place
    if path.is_dir():
        _earlier_files(path, command, option)
    return path


def _manifest_text(command: str, files: list[str]) -> str:
    return json.dumps({"format": FORMAT, "command": command, "files": sorted(files)},
                      indent=1) + "\n"


@contextmanager
def filled(folder: str | Path, command: str, option: str) -> Iterator[Path]:
    """A temporary sibling folder to write ``command``'s output into (CLI-R3, CLI-R5); on
    success its files get the manifest and take the place of the earlier output: a folder
    that did not exist is the staging folder renamed; a folder that did (empty, or an
    earlier output) is kept, its earlier files moved aside beside it and the new ones moved
    in (the manifest first lists both, so an interruption leaves only files it names). On
    failure the staging folder is removed and the earlier output is as it was."""
    path = check_fillable(folder, command, option)
    with writing(option, path):  # CLI-R21
        path.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{path.name[:100]}.new-", dir=path.parent))
    try:
        with writing(option, path, device_only=True):  # CLI-R21: the command's own writes
            yield staging
        with writing(option, path):
            _fill(path, staging, command, option)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _fill(path: Path, staging: Path, command: str, option: str) -> None:
    """The staged files of :func:`filled` moved into ``path`` with their manifest."""
    files = sorted(entry.name for entry in staging.iterdir() if entry.name != MANIFEST)
    if not path.is_dir():
        (staging / MANIFEST).write_text(_manifest_text(command, files), encoding="utf-8")
        os.rename(staging, path)
        return
    earlier = _earlier_files(path, command, option) - {MANIFEST}  # nothing crept in
    write_file(path / MANIFEST, _manifest_text(command, sorted(earlier | set(files))))
    old = Path(tempfile.mkdtemp(prefix=f".{path.name[:100]}.old-", dir=path.parent))
    try:
        for name in sorted(earlier):
            os.replace(path / name, old / name)
        for name in files:
            os.replace(staging / name, path / name)
        write_file(path / MANIFEST, _manifest_text(command, files))
    finally:
        shutil.rmtree(old, ignore_errors=True)


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
    _check_checkpoint(checkpoint)
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


#: The file by which a stream's checkpoint is known as timealign's (SP-R24's binding).
CHECKPOINT_BINDING = "timealign.json"


def _check_checkpoint(checkpoint: str, option: str = "--checkpoint") -> None:
    """CLI-R5 for a stream's checkpoint: absent, empty, or a checkpoint a stream of
    timealign wrote (its binding, ``timealign.json``, SP-R24); Spark writes ``metadata``,
    ``offsets/``, ``commits/``, ``sources/`` and ``state/`` into it, over any file of the
    user's of those names."""
    if not is_local(checkpoint) or not os.path.isdir(resolved(checkpoint)):
        return
    folder = Path(resolved(checkpoint))
    present = sorted(entry.name for entry in folder.iterdir())
    if present and not (folder / CHECKPOINT_BINDING).is_file():
        raise InvalidInput(option, RULE_OWN, f"the folder is not empty and not a stream "
                           f"checkpoint of timealign (no {CHECKPOINT_BINDING}; it holds "
                           f"{present[0]}): give an empty or new folder", checkpoint)


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
    with writing("--output", folder / MANIFEST):  # CLI-R21
        write_file(folder / MANIFEST, json.dumps(
            {"format": FORMAT, "command": "stream", "files": files,
             "checkpoint": resolved(checkpoint)}, indent=1) + "\n")


def write_manifest(folder: str | Path, command: str, body: Mapping[str, Any],
                   option: str = "--output") -> Path:
    """Write ``folder``'s manifest for ``command``: the files it holds and ``body`` (what a
    run remembers of itself, SP-R32), through a temporary sibling so a reader never sees
    half a manifest. Spark ignores the file (its name starts with ``_``)."""
    path = Path(folder)
    files = sorted(entry.name for entry in path.iterdir()
                   if entry.name != MANIFEST and not entry.name.startswith("."))
    text = json.dumps({"format": FORMAT, "command": command, "files": files, **body},
                      indent=1) + "\n"
    with writing(option, path / MANIFEST):  # CLI-R21
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
