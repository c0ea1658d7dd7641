"""Where the jobs may write, checked before Spark starts (SP-R20, SP-R21).

A job must never write over what it reads: ``--input data/groups --output data`` would
overwrite the input while Spark still reads it. :func:`check_separate` refuses any output
location that equals, contains or lies inside an input location, after resolving relative
paths and symlinks; :func:`check_output_folder` and :func:`check_file_target` refuse
targets that cannot be written (a file where a folder goes, a missing parent). All of them
raise :class:`timealign.errors.InvalidInput` (exit 2) naming both paths.

Paths with a URI scheme other than ``file:`` (``hdfs://``, ``s3a://``) cannot be resolved
here; they are compared as normalised strings.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from timealign.errors import InvalidInput
from timealign.outputs import is_local, overlap, resolved

RULE_OVERLAP = "SP-R20"
TABLES: tuple[str, ...] = ("groups", "outcomes")


def table_paths(output: str) -> dict[str, str]:
    """The folders a batch or stream writes under ``output``: ``groups/`` and ``outcomes/``."""
    return {f"--output {table}/": f"{output.rstrip('/')}/{table}" for table in TABLES}


def check_separate(inputs: Mapping[str, str], outputs: Mapping[str, str]) -> None:
    """SP-R20: raise :class:`InvalidInput` if any output location overlaps an input one.

    ``inputs`` and ``outputs`` map an option name (``--input``, ``--output groups/``) to
    its path; the message names both options and both resolved paths.
    """
    for out_name, out_path in outputs.items():
        for in_name, in_path in inputs.items():
            if overlap(out_path, in_path):
                raise InvalidInput(
                    out_name.split()[0], RULE_OVERLAP,
                    f"{out_name} {resolved(out_path)!r} overlaps {in_name} "
                    f"{resolved(in_path)!r}: a job never writes where it reads; choose an "
                    f"output folder outside the input", out_path)


def check_output_folder(option: str, path: str) -> None:
    """An output folder must be a folder (or not exist yet), not a file."""
    if is_local(path):
        local = resolved(path)
        if os.path.exists(local) and not os.path.isdir(local):
            raise InvalidInput(option, RULE_OVERLAP, "is a file, not a folder", path)


def check_file_target(option: str, path: str | None, inputs: Mapping[str, str]) -> None:
    """A file the job writes at the end (``--summary``): its folder exists, it is not a
    folder, and it is not inside an input; checked before the job starts, so a long run
    does not fail at its last step."""
    if path is None:
        return
    local = resolved(path)
    if os.path.isdir(local):
        raise InvalidInput(option, RULE_OVERLAP, "is a folder, not a file", path)
    if not os.path.isdir(os.path.dirname(local)):
        raise InvalidInput(option, RULE_OVERLAP, "its folder does not exist", path)
    check_separate(inputs, {option: path})
