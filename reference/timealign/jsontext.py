"""JSON text the package reads: bounded before it is parsed, compared with its types.

Every JSON text from outside (a vector file or line, ``--config``, an adapter's answer line,
a checkpoint's state value) goes through :func:`loads`: its size and nesting depth are
checked *before* the parser runs (VEC-R11), so a hostile text can neither exhaust memory
nor the interpreter's recursion limit. :func:`same` compares decoded values with their
JSON types (VEC-R12): ``0``, ``0.0`` and ``false`` are three different values, as they
are in the formats, although Python finds them equal.
"""

from __future__ import annotations

import json
import os
import re
import stat
from itertools import accumulate
from pathlib import Path
from typing import Any, BinaryIO

#: The deepest nesting of arrays and objects a JSON text may have (VEC-R11): a vector is
#: 4 deep, a checkpoint's state value about 10; the parser's recursion is never near.
MAX_DEPTH = 64
#: The longest JSON text (a file, a line of a ``.jsonl`` file or of the protocol), bytes.
MAX_TEXT_BYTES = 256 * 1024 * 1024

#: A JSON string, or an unterminated one running to the end of the text. Once a quote is
#: matched the pattern cannot fail (it stops at the closing quote, at the end, or at a lone
#: backslash before the end), so the scan never restarts inside a string from a later
#: quote: each character is examined a bounded number of times (linear, VEC-R11). Without
#: the unterminated case, ``{"a": "`` followed by ``"\\`` repeated was scanned once per
#: quote, quadratic in the text's length.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_BRACKETS = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class JSONLimit(ValueError):
    """A JSON text over a documented limit (VEC-R11), raised before parsing it."""


def depth(text: str) -> int:
    """The deepest nesting of arrays and objects in ``text`` (strings skipped), found
    without parsing: a linear scan (see :data:`_STRING`), so it is safe on any text."""
    brackets = _BRACKETS.sub("", _STRING.sub("", text))
    return max(accumulate(_STEP[c] for c in brackets), default=0)


class DuplicateKey(ValueError):
    """A JSON object naming one key twice, where the reader asked for unique keys."""


class NotRegularFile(OSError):
    """A named file that is not a regular file (a FIFO, a device, a socket): VEC-R16."""

    rule = "VEC-R16"


def open_regular(path: str | Path) -> BinaryIO:
    """``path`` opened for reading in binary, only when it is a regular file (VEC-R16).

    It is opened without blocking and checked on the open descriptor, so a FIFO (whose
    plain ``open`` waits for a writer, forever) or a device is refused by name before any
    read, and no swap of the path between a check and the open can slip one through.
    Raises :class:`NotRegularFile` (an ``OSError``) or the ``OSError`` of the open.
    """
    handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(handle).st_mode
        if not stat.S_ISREG(mode):
            what = "a folder" if stat.S_ISDIR(mode) else (
                "a FIFO" if stat.S_ISFIFO(mode) else "a device or socket")
            raise NotRegularFile(f"not a regular file ({what})")
        os.set_blocking(handle, True)
        return os.fdopen(handle, "rb")
    except BaseException:
        os.close(handle)
        raise


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    made: dict[str, Any] = {}
    for key, value in pairs:
        if key in made:
            raise DuplicateKey(f"the key {key!r} twice in one object")
        made[key] = value
    return made


def loads(text: str | bytes, max_depth: int = MAX_DEPTH, unique_keys: bool = False) -> Any:
    """Parse a JSON text after checking its size and depth (VEC-R11); ``NaN`` and
    ``Infinity`` are refused (they are not JSON); with ``unique_keys``, so is an object
    naming a key twice (:class:`DuplicateKey`). Raises :class:`JSONLimit` for a text over
    a limit and :class:`ValueError` (``json.JSONDecodeError``) for one that is not JSON."""
    if len(text) > MAX_TEXT_BYTES:
        raise JSONLimit(f"JSON text too long: {len(text)} bytes, the limit is "
                        f"{MAX_TEXT_BYTES}")
    if isinstance(text, bytes):
        text = text.decode("utf-8-sig")
    deepest = depth(text)
    if deepest > max_depth:
        raise JSONLimit(f"JSON nested too deeply: {deepest} levels, the limit is "
                        f"{max_depth}")
    try:
        return json.loads(text, parse_constant=_refuse_constant,
                          object_pairs_hook=_unique if unique_keys else None)
    except RecursionError:  # unreachable after the depth check; kept as a last guard
        raise JSONLimit("JSON nested too deeply") from None


def kind(value: object) -> str:
    """The JSON type of a decoded value: ``null``, ``boolean``, ``integer``, ``number``,
    ``string``, ``array`` or ``object`` (``bool`` is not an integer, ``1.0`` is not one)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


_SCALARS = frozenset({str, int, float, bool, type(None)})


def same(a: object, b: object) -> bool:
    """Equality of two decoded JSON values with their types (VEC-R12): ``0 != 0.0 !=
    false``; a tuple and a list are both arrays."""
    kind_of = type(a)
    if kind_of is type(b):  # the common case, exact types: no kind() per value
        # A part that is a scalar of the same exact type as its counterpart is compared
        # here, without a call per part (an output is mostly such scalars).
        if kind_of is dict:
            assert isinstance(a, dict) and isinstance(b, dict)
            if a.keys() != b.keys():
                return False
            for key, part in a.items():
                other = b[key]
                if type(part) is type(other) and type(part) in _SCALARS:
                    if part != other:
                        return False
                elif not same(part, other):
                    return False
            return True
        if kind_of is list or kind_of is tuple:
            assert isinstance(a, list | tuple) and isinstance(b, list | tuple)
            if len(a) != len(b):
                return False
            for part, other in zip(a, b, strict=True):
                if type(part) is type(other) and type(part) in _SCALARS:
                    if part != other:
                        return False
                elif not same(part, other):
                    return False
            return True
        if kind_of in _SCALARS:  # same type: == compares the values alone
            return a == b
    if kind(a) != kind(b):
        return False
    if isinstance(a, list | tuple):
        assert isinstance(b, list | tuple)
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    return a == b
