"""The ``timealign.vector/1`` conformance-vector format: load, run the reference, compare.

A vector is one JSON object (``spec/vectors.md``): the algorithm, its config, the inputs
in arrival order and the outputs the reference produced, each output tagged with the
index of the input that produced it. Bad inputs are part of the format: a rejected input
yields an ``error`` output naming the field and rule, and the run goes on from the state
before it (rule VEC-R5). The module is algorithm-agnostic: codecs come from the registry.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from timealign import registry
from timealign.algorithm import check_json_run
from timealign.errors import InvalidInput, require

FORMAT = "timealign.vector/1"
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
        return body


def from_json(body: Mapping[str, Any], source: str = "") -> Vector:
    """Decode one vector object; :class:`InvalidInput` (rule VEC-R1) on a malformed one."""
    where = source or "vector"
    require(isinstance(body, Mapping), where, "VEC-R1", "a vector must be a JSON object", body)
    require(body.get("format") == FORMAT, f"{where}.format", "VEC-R1",
            f"must be {FORMAT!r}", body.get("format"))
    for key, kind in (("algorithm", str), ("name", str), ("config", dict), ("inputs", list)):
        require(isinstance(body.get(key), kind), f"{where}.{key}", "VEC-R1",
                f"must be a JSON {kind.__name__}", body.get(key))
    outputs = body.get("outputs")
    require(outputs is None or isinstance(outputs, list), f"{where}.outputs", "VEC-R1",
            "must be a list when present", outputs)
    return Vector(
        algorithm=body["algorithm"],
        name=body["name"],
        config=dict(body["config"]),
        inputs=tuple(body["inputs"]),
        outputs=None if outputs is None else tuple(outputs),
        description=str(body.get("description", "")),
        rules=tuple(body.get("rules", ())),
        source=source,
    )


def load(path: str | Path) -> list[Vector]:
    """Read a ``.json`` file (one vector) or a ``.jsonl`` file (one vector per line)."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [
            from_json(json.loads(line), f"{path}:{number}")
            for number, line in enumerate(text.splitlines(), start=1)
            if line.strip()
        ]
    return [from_json(json.loads(text), str(path))]


def files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Expand directories into their ``.json``/``.jsonl`` files, sorted by name."""
    for item in paths:
        path = Path(item)
        if path.is_dir():
            yield from sorted(
                p for p in path.rglob("*") if p.suffix in (".json", ".jsonl") and p.is_file()
            )
        else:
            yield path


def _error(index: int | None, error: InvalidInput) -> JSON:
    return {"input": index, "kind": "error", "field": error.field, "rule": error.rule}


def reference_outputs(vector: Vector) -> list[JSON]:
    """Run the reference (the registered rule text) over the vector's inputs; return the
    outputs in file form."""
    algorithm = registry.get(vector.algorithm)
    try:
        config = algorithm.config_from_json(vector.config)
    except InvalidInput as error:
        return [_error(None, error)]
    state = algorithm.initial(config)
    produced: list[JSON] = []
    for index, raw in enumerate(vector.inputs):
        try:
            item = algorithm.input_from_json(raw)
            state, outputs = algorithm.step(config, state, item)
        except InvalidInput as error:
            produced.append(_error(index, error))
            continue
        produced.extend({"input": index, **algorithm.output_to_json(o)} for o in outputs)
    return produced


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
        if want != got:
            return f"output {position}: expected {json.dumps(want)}, got {json.dumps(got)}"
    if len(expected) != len(actual):
        shorter = min(len(expected), len(actual))
        extra = (expected if len(expected) > shorter else actual)[shorter]
        side = "missing" if len(expected) > shorter else "unexpected"
        return f"output {shorter}: {side} {json.dumps(extra)}"
    return None
