"""The ``timealign.vector/1`` conformance-vector format: load, run the reference, compare.

A vector is one JSON object (``spec/vectors.md``): the algorithm, its config, the inputs
in arrival order and the outputs the reference produced, each output tagged with the
index of the input that produced it. Bad inputs are part of the format: a rejected input
yields an ``error`` output naming the field and rule, and the run goes on from the state
before it (rule VEC-R5). The module is algorithm-agnostic: codecs come from the registry.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from timealign import jsontext, registry
from timealign.algorithm import check_json_run, run_json
from timealign.errors import InvalidInput, require
from timealign.outputs import MANIFEST

FORMAT = "timealign.vector/1"
GZIP_MAGIC = b"\x1f\x8b"
LOADER_RULE = "VEC-R1"
JSON = dict[str, Any]


@attrs.frozen
class Vector:
    """One conformance vector as read from a file (raw JSON parts, not decoded)."""

    algorithm: str
    name: str
    config: JSON
    inputs: tuple[JSON, ...]
    outputs: tuple[JSON, ...] | None = None
    description: str = ""
    rules: tuple[str, ...] = ()
    source: str = ""
    #: What another implementation answered, kept by ``timealign conform --save`` beside
    #: the reference's ``outputs`` (VEC-R15): its outputs and the first input at which they
    #: diverge (``None``: at the config), or its refusal or failure as text.
    observed: tuple[JSON, ...] | None = None
    first_diverging_input: int | None = None
    observed_error: str = ""

    def to_json(self) -> JSON:
        """The file form, keys in the documented order."""
        body: JSON = {"format": FORMAT, "algorithm": self.algorithm, "name": self.name}
        if self.description:
            body["description"] = self.description
        if self.rules:
            body["rules"] = list(self.rules)
        body["config"] = self.config
        body["inputs"] = list(self.inputs)
        if self.outputs is not None:
            body["outputs"] = list(self.outputs)
        if self.observed is not None:
            body["observed"] = list(self.observed)
            body["first_diverging_input"] = self.first_diverging_input
        if self.observed_error:
            body["observed_error"] = self.observed_error
        return body


def _json_error(where: str, message: str) -> InvalidInput:
    return InvalidInput(where, LOADER_RULE, message, None)


def parse_json(body: bytes, where: str, unique_keys: bool = False) -> Any:
    """UTF-8 JSON text -> value; every failure is :class:`InvalidInput` naming ``where``
    (and the line and column for syntax errors), never echoing the input (VEC-R10). With
    ``unique_keys`` an object naming a key twice is refused (VEC-R20)."""
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise _json_error(where, f"not UTF-8 text (byte {error.start}); a vector file is "
                                 "UTF-8 JSON, optionally gzip-compressed") from None
    try:
        return jsontext.loads(text, unique_keys=unique_keys)
    except jsontext.DuplicateKey as error:  # VEC-R20: which of the two was meant?
        raise InvalidInput(where, "VEC-R20", f"{error}: give each key once",
                           None) from None
    except jsontext.JSONLimit as error:  # size and depth are checked before parsing
        raise _json_error(where, f"{error} (limit of VEC-R11)") from None
    except json.JSONDecodeError as error:
        raise _json_error(f"{where}:{error.lineno}:{error.colno}",
                          f"not valid JSON: {error.msg}") from None
    except ValueError as error:  # NaN/Infinity, or an integer of too many digits
        raise _json_error(where, f"not JSON the reference reads: {str(error)[:120]}") from None


def _require_list_of(body: Mapping[str, Any], key: str, kind: type, where: str,
                     required: bool) -> None:
    value = body.get(key)
    if value is None and not required:
        return
    if not isinstance(value, list):
        raise InvalidInput(f"{where}.{key}", "VEC-R1", "must be a JSON list", value)
    for position, item in enumerate(value):
        require(isinstance(item, kind), f"{where}.{key}[{position}]", "VEC-R1",
                f"must be a JSON {'object' if kind is dict else kind.__name__}", item)


def from_json(body: Any, source: str = "") -> Vector:
    """Decode one vector object; :class:`InvalidInput` (rule VEC-R1) on a malformed one."""
    where = source or "vector"
    require(isinstance(body, Mapping), where, "VEC-R1", "a vector must be a JSON object",
            type(body).__name__)
    require(body.get("format") == FORMAT, f"{where}.format", "VEC-R1",
            f"must be {FORMAT!r}", body.get("format"))
    for key, kind in (("algorithm", str), ("name", str), ("config", dict)):
        require(isinstance(body.get(key), kind), f"{where}.{key}", "VEC-R1",
                f"must be a JSON {'object' if kind is dict else 'string'}", body.get(key))
    require(isinstance(body.get("description", ""), str), f"{where}.description", "VEC-R1",
            "must be a JSON string when present", body.get("description"))
    _require_list_of(body, "inputs", dict, where, required=True)
    _require_list_of(body, "outputs", dict, where, required=False)
    _require_list_of(body, "rules", str, where, required=False)
    outputs = body.get("outputs")
    for position, output in enumerate(outputs or ()):
        index = output.get("input")
        require(index is None or jsontext.kind(index) == "integer",
                f"{where}.outputs[{position}].input", "VEC-R1",
                "must be an integer input index or null (VEC-R12)", index)
    observed, first = _observed(body, where)
    return Vector(
        algorithm=body["algorithm"],
        name=body["name"],
        config=dict(body["config"]),
        inputs=tuple(body["inputs"]),
        outputs=None if outputs is None else tuple(outputs),
        description=str(body.get("description", "")),
        rules=tuple(body.get("rules") or ()),
        source=source,
        observed=observed,
        first_diverging_input=first,
        observed_error=str(body.get("observed_error", "")),
    )


def _observed(body: Mapping[str, Any], where: str) -> tuple[tuple[JSON, ...] | None, int | None]:
    """VEC-R15: the optional ``observed`` outputs (as ``outputs``), the
    ``first_diverging_input`` that goes with them (an index of ``inputs``, or null for the
    config) and ``observed_error`` (a string)."""
    require(isinstance(body.get("observed_error", ""), str), f"{where}.observed_error",
            "VEC-R15", "must be a JSON string when present", body.get("observed_error"))
    if "observed" not in body:
        require("first_diverging_input" not in body, f"{where}.first_diverging_input",
                "VEC-R15", "comes only with observed", body.get("first_diverging_input"))
        return None, None
    _require_list_of(body, "observed", dict, where, required=True)
    for position, output in enumerate(body["observed"]):
        index = output.get("input")
        require(index is None or jsontext.kind(index) == "integer",
                f"{where}.observed[{position}].input", "VEC-R15",
                "must be an integer input index or null (VEC-R12)", index)
    first = body.get("first_diverging_input")
    require(first is None or (jsontext.kind(first) == "integer"
                              and 0 <= first < len(body["inputs"])),
            f"{where}.first_diverging_input", "VEC-R15",
            "must be the index of an input, or null for the config", first)
    return tuple(body["observed"]), first


def _is_lines(path: Path) -> bool:
    return path.name.removesuffix(".gz").endswith(".jsonl")


def _read_limited(path: Path) -> bytes:
    """The file's bytes, gunzipped when compressed; a file (or its decompressed content)
    over :data:`jsontext.MAX_TEXT_BYTES` is refused before it is held in memory (VEC-R11)."""
    limit = jsontext.MAX_TEXT_BYTES
    with jsontext.open_regular(path) as raw:  # a FIFO would block forever (VEC-R16)
        compressed = raw.read(2) == GZIP_MAGIC
        raw.seek(0)
        stream = gzip.GzipFile(fileobj=raw) if compressed else raw
        body = stream.read(limit + 1)
    if len(body) > limit:
        raise OSError(f"over {limit} bytes{' decompressed' if compressed else ''}, "
                      "the limit of a vector file (rule VEC-R11)")
    return body


def read(path: str | Path) -> Iterator[Vector | InvalidInput]:
    """Every vector of a ``.json`` file (one vector) or ``.jsonl`` file (one per line),
    either possibly ``.gz``-compressed; a malformed vector (or an unreadable file) is
    yielded as its :class:`InvalidInput` naming file, line and field, and the other
    vectors of the file are still read (VEC-R10)."""
    path = Path(path)
    try:
        body = _read_limited(path)
    except jsontext.NotRegularFile as error:
        yield InvalidInput(str(path), error.rule, str(error), None)
        return
    except (OSError, EOFError, zlib.error) as error:
        yield _json_error(str(path), f"cannot read the file: {error}")
        return
    if not _is_lines(path):
        parts = [(str(path), body)]
    else:
        parts = [(f"{path}:{number}", line)
                 for number, line in enumerate(body.split(b"\n"), start=1) if line.strip()]
    seen: dict[str, str] = {}
    for where, part in parts:
        try:
            vector = from_json(parse_json(part, where), where)
        except InvalidInput as error:
            yield error
            continue
        first = seen.setdefault(vector.name, where)
        if first != where:  # a name is unique (VEC-R1, VEC-R13): reports and --name pick by it
            yield InvalidInput(f"{where}.name", LOADER_RULE,
                               f"a second vector of this name in the file (first at {first})",
                               vector.name)
            continue
        yield vector


def load(path: str | Path) -> list[Vector]:
    """The vectors of one file (see :func:`read`); the first malformed one is raised."""
    found = []
    for item in read(path):
        if isinstance(item, InvalidInput):
            raise item
        found.append(item)
    return found


def files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Expand directories into their vector files (``.json``, ``.jsonl``, either with
    ``.gz``), sorted by name; other paths are passed through as given. A folder's manifest
    (``_timealign.json``, written by ``conform --save`` and ``diff --save``, CLI-R5) is not
    a vector."""
    for item in paths:
        path = Path(item)
        if path.is_dir():
            yield from sorted(
                p for p in path.rglob("*")
                if p.name.removesuffix(".gz").endswith((".json", ".jsonl")) and p.is_file()
                and p.name != MANIFEST
            )
        else:
            yield path


def reference_outputs(vector: Vector, fast: bool = False) -> list[JSON]:
    """Run the reference (the registered rule text) over the vector's inputs; return the
    outputs in file form (:func:`timealign.algorithm.run_json`).

    ``fast`` runs the algorithm's fast path instead (``Algorithm.fast_path``, compiled or
    pure as ``timealign.native`` chose): the vectors check both.
    """
    algorithm = registry.get(vector.algorithm)
    return run_json(algorithm.fast_path() if fast else algorithm, vector.config, vector.inputs)


def invariant_violations(vector: Vector) -> list[str]:
    """The executable invariants (``check_invariants``) over the vector's expected outputs,
    each prefixed ``invariant``; a part that does not decode is one violation."""
    if vector.outputs is None:
        return []
    algorithm = registry.get(vector.algorithm)
    try:
        problems = check_json_run(algorithm, vector.config, list(vector.inputs),
                                  list(vector.outputs))
    except InvalidInput as error:
        return [f"invariant check: outputs do not decode: {error}"]
    return [f"invariant {problem}" for problem in problems]


def first_difference(expected: Sequence[JSON], actual: Sequence[JSON]) -> str | None:
    """Describe the first position where two output lists differ, or ``None``."""
    for position, (want, got) in enumerate(zip(expected, actual, strict=False)):
        if not jsontext.same(want, got):  # with JSON types: 2 is not 2.0 (VEC-R12)
            return f"output {position}: expected {json.dumps(want)}, got {json.dumps(got)}"
    if len(expected) != len(actual):
        shorter = min(len(expected), len(actual))
        extra = (expected if len(expected) > shorter else actual)[shorter]
        side = "missing" if len(expected) > shorter else "unexpected"
        return f"output {shorter}: {side} {json.dumps(extra)}"
    return None
