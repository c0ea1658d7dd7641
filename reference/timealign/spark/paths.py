"""Where the jobs may write, checked once before Spark starts (SP-R20, SP-R21, PL-R9).

A job must never write over what it reads: ``--input data/groups --output data`` would
overwrite the input while Spark still reads it. :meth:`JobPaths.check` checks a job's
paths once, at its entry (the command line, or a library entry such as
:func:`timealign.spark.batch.run_batch`), and returns them as one frozen value the job
reads and never checks again: no output location may equal, contain or lie inside an input
location, after resolving relative paths and symlinks (:func:`check_separate`), and every
target must be writable (a folder where a folder goes, an existing parent).

Errors are :class:`PathError` (an :class:`timealign.errors.InvalidInput`, exit 2) naming
both paths by their role in the job ("the input", "the output groups/"); a command line
words them again with its own option names (:meth:`PathError.naming`).

Paths with a URI scheme other than ``file:`` (``hdfs://``, ``s3a://``) cannot be resolved
here; they are compared as normalised strings.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from timealign.errors import InvalidInput
from timealign.outputs import check_targets, is_local, overlap, resolved

RULE_OVERLAP = "SP-R20"
#: The characters a Hadoop path glob gives a meaning: Spark reads a path holding one as a
#: pattern (SP-R1: a local input is a folder or a file; SP-R46: a watched folder's files).
GLOB_CHARACTERS = frozenset("*?[]{}\\")
TABLES: tuple[str, ...] = ("groups", "outcomes")
ROLES: tuple[str, ...] = ("input", "output", "checkpoint", "summary", "report")


def _role_name(role: str) -> str:
    return f"the {role}"


class PathError(InvalidInput):
    """:class:`InvalidInput` about a job's path. ``field`` is the role (``"output"``);
    the text names paths by role (``words``: text, and ``{role}`` tokens such as
    ``"{output} groups/"``), as "the output"; :meth:`naming` words it with other names
    (a command's options)."""

    def __init__(self, role: str, rule: str, words: Sequence[str], value: object = None,
                 names: Mapping[str, str] | None = None) -> None:
        self.role, self.words, self.names = role, tuple(words), dict(names or {})
        super().__init__(self.names.get(role, role), rule, "".join(map(self._said, words)),
                         value)

    def _said(self, word: str) -> str:
        if word.startswith("{") and word.endswith("}"):
            role = word[1:-1]
            return self.names.get(role, _role_name(role))
        return word

    def naming(self, names: Mapping[str, str]) -> PathError:
        """The same error, each role worded as ``names`` says (``{"input": "--input"}``)."""
        return PathError(self.role, self.rule, self.words, self.value, names)


def _spoken(spec: str) -> list[str]:
    """``"output groups/"`` as words: the role token, then the rest."""
    role, _, rest = spec.partition(" ")
    return ["{" + role + "}", f" {rest}" if rest else ""]


def table_paths(output: str) -> dict[str, str]:
    """The folders a batch or stream writes under ``output``: ``groups/`` and ``outcomes/``,
    keyed by role (``"output groups/"``)."""
    return {f"output {table}/": f"{output.rstrip('/')}/{table}" for table in TABLES}


def check_separate(inputs: Mapping[str, str], outputs: Mapping[str, str]) -> None:
    """SP-R20: raise :class:`PathError` if any output location overlaps an input one.

    ``inputs`` and ``outputs`` map a role (``"input"``, ``"output groups/"``: the role, then
    what inside it) to its path; the message names both roles and both resolved paths.
    """
    for out_name, out_path in outputs.items():
        for in_name, in_path in inputs.items():
            if overlap(out_path, in_path):
                raise PathError(
                    out_name.split()[0], RULE_OVERLAP,
                    [*_spoken(out_name), f" {resolved(out_path)!r} overlaps ",
                     *_spoken(in_name), f" {resolved(in_path)!r}: a job never writes where "
                     f"it reads; choose an output folder outside the input"], out_path)


def check_output_folder(role: str, path: str) -> None:
    """An output folder must be a folder (or not exist yet), not a file."""
    if is_local(path):
        local = resolved(path)
        if os.path.exists(local) and not os.path.isdir(local):
            raise PathError(role, RULE_OVERLAP, ["is a file, not a folder"], path)


def check_file_target(role: str, path: str, inputs: Mapping[str, str]) -> None:
    """A file the job writes at the end (the summary): its folder exists, it is not a
    folder, and it is not inside an input; checked before the job starts, so a long run
    does not fail at its last step."""
    local = resolved(path)
    if os.path.isdir(local):
        raise PathError(role, RULE_OVERLAP, ["is a folder, not a file"], path)
    if not os.path.isdir(os.path.dirname(local)):
        raise PathError(role, RULE_OVERLAP, ["its folder does not exist"], path)
    check_separate(inputs, {role: path})


def check_report_folder(path: str, taken: Mapping[str, str]) -> None:
    """PL-R9: the report must go to a folder that can be created or written, outside the
    input and the tables (SP-R20), so a run never ends without the page it was asked for."""
    check_output_folder("report", path)
    check_separate(taken, {"report": path})
    target = Path(path)
    # os.path: an over-long name is refused by CLI-R4 (check_targets), not an OSError here
    existing = next(p for p in (target, *target.parents) if os.path.exists(p))
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise PathError("report", "PL-R9", [f"cannot create or write in {existing}"], path)


@attrs.frozen
class JobPaths:
    """The checked paths of one job: built by :meth:`check` only, once, at the job's
    entry; the job reads them and never checks them again."""

    input: str
    output: str
    checkpoint: str | None = None
    summary: str | None = None
    report: str | None = None
    config: str | None = None

    @classmethod
    def check(cls, input: str, output: str, *, checkpoint: str | None = None,
              summary: str | None = None, report: str | None = None,
              config: str | None = None) -> JobPaths:
        """SP-R20 (and PL-R9 for the report): every target writable, none overlapping the
        input; then CLI-R4, the check every command shares: no target overlaps the config
        file read (``config``: the option's value when it names a file) or another target,
        and each can be created where it goes; :class:`PathError` naming roles
        otherwise."""
        tables = table_paths(output)
        check_output_folder("output", output)
        if checkpoint is not None:
            check_output_folder("checkpoint", checkpoint)
            tables = {**tables, "checkpoint": checkpoint}
        check_separate({"input": input}, tables)
        taken = {"input": input, **table_paths(output)}
        if summary is not None:
            check_file_target("summary", summary, taken)
        if report is not None:
            check_report_folder(report, taken)
        config_file = config if config is not None and os.path.isfile(config) else None
        try:
            check_targets({"{input}": input, "{config}": config_file},
                          {"{summary}": summary},
                          {"{output}": output, "{checkpoint}": checkpoint,
                           "{report}": report})
        except InvalidInput as error:
            raise PathError(error.field.strip("{}"), error.rule,
                            re.split(r"(\{[a-z]+\})", error.message), error.value) from None
        return cls(input, output, checkpoint, summary, report, config_file)

    def tables(self) -> dict[str, str]:
        """The output tables' folders (:func:`table_paths`)."""
        return table_paths(self.output)


# --- SP-R70, SP-R71: what an input folder may hold -----------------------------------------

def _kind(mode: int) -> str | None:
    """What a file of this mode is when it is not a regular file (SP-R70)."""
    if stat.S_ISREG(mode):
        return None
    return ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(
        mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "no file")


def regular(file: str) -> str:
    """``file`` when it is a regular file (a link to one counts); anything else (a FIFO,
    whose opening waits for a writer forever; a device such as ``/dev/zero``, which never
    ends; a socket), and a link to such, is refused by name before it is opened (SP-R70)."""
    try:
        mode = os.stat(file).st_mode
    except OSError as error:  # a dangling link, a file gone since it was listed
        raise PathError("input", "SP-R70", [f"cannot read the file {file}: "
                                            f"{error.strerror}; fix or remove it"], file) from None
    if stat.S_ISDIR(mode):
        return file
    what = _kind(mode)
    if what is not None:
        linked = " (through a link)" if os.path.islink(file) else ""
        raise PathError("input", "SP-R70", [
            f"the file {file} is {what}{linked}, not a regular file: only regular files are "
            f"read, as a FIFO or a device never ends; remove it from ", "{input}"], file)
    return file


def regular_files_of(path: Path) -> list[Path]:
    """The files of a bag (``path`` itself when it is a file), in path order, each a regular
    file or refused by name before anything opens it (SP-R70)."""
    if not path.is_dir():
        return [Path(regular(str(path)))]
    return sorted(Path(regular(str(p))) for p in path.rglob("*") if not p.is_dir())


def walk_files(root: str) -> list[str]:
    """The files of the folder ``root`` and its subfolders in path order, names starting
    with "." or "_" left out (Spark's own, SP-R1): each a regular file or refused by name
    (SP-R70). A subfolder reached through a link is refused by name (SP-R71): Spark's
    recursive listing follows it, where a walk that does not would count fewer rows than
    the run reads (SP-R42), and one that does can loop on a link to a folder above."""
    found: list[str] = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith((".", "_")))
        for name in subfolders:
            linked = os.path.join(folder, name)
            if os.path.islink(linked):
                raise PathError("input", "SP-R71", [
                    f"the folder {linked} is a link (to {os.path.realpath(linked)}): a "
                    f"linked folder inside ", "{input}", " is not read; copy it in or give "
                    "the folder it links to as an input of its own"], linked)
        found += [regular(os.path.join(folder, n)) for n in sorted(names)
                  if not n.startswith((".", "_"))]
    return found
