"""How a failure inside Spark comes back to the user as one clear error (SP-R23).

Code running in Spark's Python workers (the batch UDF, the streaming processor) raises the
package's own errors; Spark re-raises them on the driver wrapped in a Java exception
whose text runs to hundreds of lines. :func:`marked` tags the error inside the worker with
a one-line, JSON-encoded marker; :func:`job_error` finds the marker again in the driver's
exception and rebuilds the original error type, so the CLI prints one line and exits with
the documented code. A Spark failure reading an input file becomes
:class:`~timealign.spark.paths.PathError` naming the file and its role.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

from timealign.errors import SHOWN, ConsistencyError, InvalidInput, shown
from timealign.spark.paths import PathError

MARK = "TIMEALIGN-ERROR:"
#: A Java error's words for a full (or read-only) device, and where a task was writing.
_FULL = ("No space left on device", "Disk quota exceeded", "Read-only file system")
_WRITING = re.compile(r"while writing rows to (\S+)")
_FILE = re.compile(r"(?:reading|in) file (\S+?)[.,]?(?:\s|$)")
# Spark's error classes for a checkpoint or state store it cannot use (damaged, missing
# files, written by an incompatible job).
_STATE = re.compile(r"\[((?:CANNOT_LOAD|CANNOT_WRITE)_STATE_STORE|CANNOT_LOAD_CHECKPOINT\w*|"
                    r"CHECKPOINT_FILE_\w+|STATE_STORE_\w+|ILLEGAL_STATE_STORE_VALUE)[.\]]")


# The last "Type: message" line of a Python traceback inside a Java exception's text.
_WORKER = re.compile(r"^\s*((?:\w+\.)*\w*(?:Error|Exception|Exit|Interrupt|Warning)): (.*)$",
                     re.M)


class WorkerError(RuntimeError):
    """A Python worker failed with an error of its own (not one of the package's):
    reported on the driver by the worker's exception type and message (SP-R34)."""


class OrderError(ConsistencyError):
    """Rows of a source reached the UDF out of (arrival, input order) order (SP-R10)."""


def _kinds() -> dict[str, type[ConsistencyError]]:
    from timealign.spark.outcomes import DuplicateIdError, LossError

    return {"LossError": LossError, "OrderError": OrderError,
            "DuplicateIdError": DuplicateIdError}


def _tagged(error: InvalidInput | ConsistencyError, where: str) -> str:
    """The one-line marker of ``error`` (see :func:`marked`)."""
    if isinstance(error, InvalidInput):
        message = error.message if error.message.startswith(where) else \
            f"{where}: {error.message}"  # where == "": the message as it is
        value = error.value[:SHOWN] if isinstance(error.value, str) else error.value \
            if error.value is None or shown(error.value) == repr(error.value) \
            else shown(error.value)
        detail = {"kind": "InvalidInput", "field": error.field, "rule": error.rule,
                  "message": message, "value": value}
        return MARK + json.dumps(detail, default=repr)
    text = str(error)
    return MARK + json.dumps({"kind": type(error).__name__,
                              "message": text if text.startswith(where) else f"{where}: {text}"})


@contextmanager
def marked(where: str, plain: bool = False) -> Iterator[None]:
    """Inside a Spark worker: re-raise the package's errors with a one-line marker that
    :func:`job_error` understands; ``where`` (``"source 'r1'"``) prefixes the message. With
    ``plain`` the error's own text comes first, on a line of its own, for those who read
    the error outside the jobs (the ``rosbag`` data source's users, BAG-R15)."""
    try:
        yield
    except (InvalidInput, ConsistencyError) as error:
        tag = _tagged(error, where)
        raise RuntimeError(f"{error}\n{tag}" if plain else tag) from error


def job_error(error: BaseException) -> BaseException:
    """The error a failed Spark action stands for: the package's own error when a worker
    marked one, a :class:`PathError` naming the file and its role (the input, the
    checkpoint) when Spark could not read it, else ``error`` itself."""
    text = str(error)
    if MARK in text:
        detail = json.loads(text.split(MARK, 1)[1].splitlines()[0])
        if detail["kind"] == "InvalidInput":
            return InvalidInput(detail["field"], detail["rule"], detail["message"],
                                detail["value"])
        return _kinds().get(detail["kind"], ConsistencyError)(detail["message"])
    if "SP-R10" in text:
        line = next(x for x in text.splitlines() if "SP-R10" in x)
        return OrderError(line.split("OrderError: ", 1)[-1])
    state = _STATE.search(text)
    if state:
        return PathError("checkpoint", "SP-R12", [
            f"Spark cannot use the checkpoint's state store ({state.group(1)}); restore the "
            f"checkpoint folder or start a new one"], _first_line(text))
    if any(words in text for words in _FULL):  # CLI-R21: say where, and what to do
        place = _WRITING.search(text)
        where = place.group(1).rstrip(".") if place else None
        return PathError("output", "CLI-R21", [
            f"cannot write {where or 'the output'}: no space left on its device (or it is "
            f"read-only): free some space or write elsewhere, then run again"], where)
    found = _FILE.search(text) if "FAILED_READ_FILE" in text or "reading file" in text \
        else None
    if found:
        return PathError("input", "SP-R1", [f"Spark cannot read the file {found.group(1)}: "
                         f"{_first_line(text)}; fix or remove that file"], found.group(1))
    if "Python worker" in text or "Traceback (most recent call last)" in text:
        return worker_error(text) or error
    return error


def worker_error(text: str) -> WorkerError | None:
    """SP-R34: the worker's own exception (``ModuleNotFoundError: No module named
    'attrs'``) from the text of a failed Spark action, with the fix when a module is
    missing on the executors; ``None`` when the text holds no Python traceback."""
    found = [m for m in _WORKER.finditer(text) if not m.group(1).startswith(("org.", "java."))]
    if not found:
        return None
    kind, message = found[-1].group(1), found[-1].group(2).strip()
    hint = ""
    missing = re.match(r"No module named '([^'.]+)", message)
    if kind == "ModuleNotFoundError" and missing:
        hint = (f"; the executors' Python lacks {missing.group(1)!r}: install it there "
                f"(pip install {missing.group(1)}) or set PYSPARK_PYTHON to a Python that has "
                f"it")
    return WorkerError(f"a Python worker failed: {kind}: {message}{hint}")


def _first_line(text: str) -> str:
    return next((x for x in text.splitlines() if x.strip()), "")[:300]


def raise_job_error(error: BaseException) -> NoReturn:
    """Raise :func:`job_error` of ``error`` (without the Java chain when it was rebuilt)."""
    rebuilt = job_error(error)
    if rebuilt is error:
        raise error
    raise rebuilt from None
