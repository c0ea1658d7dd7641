"""The checkpoint codec: the versioned, explicit encoding of a source's streaming state
in the state store (SP-R12); not an algorithm's vector codec (``<algorithm>/codec.py``).

Spark keeps one binary value per source in its state store; it outlives the code that wrote
it, so it must not depend on import paths (raw pickle does). The value is compact JSON:

    {"v": 2, "algorithm": NAME, "state": ..., "timers": [...], "index": N,
     "arrival": A, "seq": G, "open": [ids...], "held": [[id, topic, stamp, arrival,
     kind, poll], ...]}

(``held``, the rows a driver holds back for its mapping (DRV-R8), may be absent: empty.
``config``, the digest of the config the state was built under (DRV-R10), may be absent in a
blob written before it was stored: it then decodes under the codec's config, which SP-R24's
binding already checked.)

A state carries the config it was built under (DRV-R10); that field is not stored (the
binding holds the config, SP-R24): the blob keeps its digest, a blob of another config is
refused by name (``state.config``), and the decoded state gets the codec's config back.

The state stored is always the spec's (the rule text's ``model.State``), whichever
implementation runs: a fast path's private form is converted with ``Algorithm.machine.fast``'s
``to_spec``/``from_spec`` (:meth:`StateCodec.for_algorithm`), so a later speed change cannot
break a stored checkpoint. Version 1 stored the running implementation's state as it was;
for an algorithm with a fast path that was its private form, so a version-1 blob of such
an algorithm is refused with a clear :class:`InvalidInput` (restart from a fresh
checkpoint); one of an algorithm without a fast path has the same form and still decodes.

The machine state is encoded structurally: an attrs instance or a named tuple becomes
``{"c": class name, "f": {field: value}}``, a tuple a JSON list, and the few other
containers a one-key tagged object. Classes are looked up by *name* in the table of attrs
classes reachable from the state's type hints, so a module may move without breaking a
checkpoint; a class the table does not know fails loudly when the state is written, not
months later when it is read.
"""

from __future__ import annotations

import enum
import hashlib
import json
import types
import typing
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

import attrs

from timealign import jsontext
from timealign.algorithm import Algorithm, Record
from timealign.drive import Checkpoint
from timealign.errors import INT64_MAX, InvalidInput, foreign_state

VERSION = 2
#: Versions whose blobs this codec still reads, for algorithms without a fast path.
SAME_FORM_VERSIONS = frozenset({1, 2})
RULE = "SP-R12"


def _same(state: Any) -> Any:
    return state


def canonical_config(algorithm: Algorithm[Any, Any, Any, Any], config: Any) -> str:
    """The config as canonical JSON: sorted keys, no spaces (equal configs, equal text)."""
    return json.dumps(algorithm.codec.config_to_json(config), sort_keys=True, separators=(",", ":"))


def config_digest(text: str) -> str:
    """The digest a blob keeps of its state's config (DRV-R10): 128 bits of SHA-256 of the
    canonical config, so a blob stays small whatever the config's size."""
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _carries_config(state_type: type) -> bool:
    """Whether the state class has the ``config`` field of DRV-R10 (a toy's may not)."""
    return attrs.has(state_type) and "config" in attrs.fields_dict(state_type)


def _is_record(cls: Any) -> bool:
    """An attrs class or a named tuple: a class whose instances have named fields."""
    return isinstance(cls, type) and (attrs.has(cls) or (issubclass(cls, tuple)
                                                         and hasattr(cls, "_fields")))


def _field_names(cls: Any) -> tuple[str, ...]:
    return tuple(cls._fields) if issubclass(cls, tuple) else tuple(
        f.name for f in attrs.fields(cls))


def _hints(cls: type) -> list[Any]:
    try:
        return list(typing.get_type_hints(cls).values())
    except (NameError, TypeError):
        if not attrs.has(cls):
            return []
        return [f.type for f in attrs.fields(cls) if not isinstance(f.type, str)]


def reachable_classes(root: Any) -> dict[str, type]:
    """Name -> class for every attrs class, named tuple or enum reachable from ``root``."""
    table: dict[str, type] = {}
    pending: list[Any] = [root]
    seen: set[int] = set()
    alive: list[Any] = []  # keeps visited hints alive so their ids are never reused
    while pending:
        hint = pending.pop()
        if id(hint) in seen:
            continue
        seen.add(id(hint))
        alive.append(hint)
        pending.extend(typing.get_args(hint))
        if isinstance(hint, types.GenericAlias) or typing.get_origin(hint) is not None:
            continue
        if _is_record(hint) or (isinstance(hint, type) and issubclass(hint, enum.Enum)):
            known = table.setdefault(hint.__name__, hint)
            if known is not hint:
                raise InvalidInput("state", RULE, "two state classes share a name",
                                   hint.__qualname__)
            if _is_record(hint):
                pending.extend(_hints(hint))
    return table


class StateCodec:
    """Encodes and decodes the checkpoint of one algorithm's driver plus the adapter's
    per-source bookkeeping (group sequence number, ids fed and not yet accounted)."""

    def __init__(self, algorithm_name: str, state_type: type,
                 to_spec: Callable[[Any], Any] = _same,
                 from_spec: Callable[[Any], Any] = _same,
                 admits: Callable[[Any], bool] | None = None,
                 config: Any = None, digest: str | None = None) -> None:
        self.algorithm = algorithm_name
        self.state_type = state_type
        # DRV-R10: the config the states belong to and its digest (None: not checked)
        self.config, self.digest = config, digest
        self.bound = _carries_config(state_type)
        if self.bound and digest is None:
            raise ValueError(f"the codec of {state_type.__qualname__} needs its config")
        self.admits = admits  # does the algorithm's input rule accept this held input?
        self.classes = reachable_classes(state_type)
        self.to_spec, self.from_spec = to_spec, from_spec
        self.readable = SAME_FORM_VERSIONS if to_spec is _same else frozenset({VERSION})

    @classmethod
    def for_algorithm(cls, algorithm: Algorithm[Any, Any, Any, Any], config: Any) -> StateCodec:
        """The codec of ``algorithm``'s checkpoints: the spec's state (the rule text's),
        converted from and to the fast path's form when the driver runs the fast path."""
        state_type = type(algorithm.machine.initial(config))
        admits = _input_rule(algorithm, config)
        digest = config_digest(canonical_config(algorithm, config))
        if algorithm.machine.fast is None:
            return cls(algorithm.name, state_type, admits=admits, config=config, digest=digest)
        fast = algorithm.machine.fast
        return cls(algorithm.name, state_type, fast.to_spec, fast.from_spec, admits, config,
                   digest)

    def _encode_state(self, state: Any) -> Any:
        """The spec state without its ``config`` (DRV-R10: the blob keeps its digest); a
        state of another config than the codec's is refused, nothing written."""
        if not self.bound:
            return self._encode(state)
        built = getattr(state, "config", None)
        if built is not self.config and built != self.config:
            raise foreign_state(built)
        return self._encode(state, skip="config")

    def _encode(self, value: Any, skip: str = "") -> Any:
        if value is None or isinstance(value, bool | int | str | float):
            if isinstance(value, enum.Enum):
                return self._encode_enum(value)
            return value
        kind: Any = type(value)
        if _is_record(kind):
            name = kind.__name__
            if self.classes.get(name) is not kind:
                raise InvalidInput("state", RULE, "class not reachable from the state type",
                                   kind.__qualname__)
            fields = {f: self._encode(getattr(value, f)) for f in _field_names(kind)
                      if f != skip}
            return {"c": name, "f": fields}
        if isinstance(value, tuple):
            return [self._encode(item) for item in value]
        if isinstance(value, enum.Enum):
            return self._encode_enum(value)
        if isinstance(value, frozenset):
            return {"fs": sorted((self._encode(v) for v in value), key=json.dumps)}
        if isinstance(value, list):
            return {"l": [self._encode(item) for item in value]}
        if isinstance(value, Mapping):
            return {"m": [[self._encode(k), self._encode(v)] for k, v in value.items()]}
        if isinstance(value, Fraction):
            return {"q": [value.numerator, value.denominator]}
        raise InvalidInput("state", RULE, "value of a type the codec cannot encode",
                           type(value).__qualname__)

    def _encode_enum(self, value: enum.Enum) -> Any:
        if self.classes.get(type(value).__name__) is not type(value):
            raise InvalidInput("state", RULE, "enum not reachable from the state type",
                               type(value).__qualname__)
        return {"e": type(value).__name__, "v": self._encode(value.value)}

    def _decode_state(self, value: Any) -> Any:
        """The spec state of a blob, given back the codec's config (DRV-R10)."""
        if not self.bound:
            return self._decode(value)
        if not isinstance(value, dict) or "config" in value.get("f", {}):
            raise InvalidInput("state.state", RULE, "damaged state value: a state's config "
                               "is not stored (DRV-R10)", None)
        return self._decode(value, {"config": self.config})

    def _decode(self, value: Any, extra: Mapping[str, Any] | None = None) -> Any:
        if isinstance(value, list):
            return tuple(self._decode(item) for item in value)
        if not isinstance(value, dict):
            return value
        if "c" in value:
            cls: Any = self._class(value["c"])
            fields = {k: self._decode(v) for k, v in value["f"].items()}
            fields.update(extra or {})
            if issubclass(cls, tuple):
                return cls(**fields)
            by_name = {f.name: f for f in attrs.fields(cls)}
            instance = cls(**{by_name[k].alias: v for k, v in fields.items()
                              if by_name[k].init})
            for key, item in fields.items():
                if not by_name[key].init:
                    object.__setattr__(instance, key, item)
            return instance
        if "e" in value:
            return self._class(value["e"])(self._decode(value["v"]))
        if "fs" in value:
            return frozenset(self._decode(v) for v in value["fs"])
        if "l" in value:
            return [self._decode(item) for item in value["l"]]
        if "m" in value:
            return {self._decode(k): self._decode(v) for k, v in value["m"]}
        if "q" in value:
            return Fraction(*value["q"])
        raise InvalidInput("state", RULE, "unknown tagged value", sorted(value))

    def _class(self, name: str) -> Any:
        try:
            return self.classes[name]
        except KeyError:
            raise InvalidInput("state", RULE, "checkpoint names an unknown class", name) from None

    def encode(self, checkpoint: Checkpoint[Any], seq: int, open_ids: list[str],
               recent: list[str] | None = None) -> bytes:
        """The binary state value of one source (``recent``: SP-R22's settled ids)."""
        body = {
            "v": VERSION, "algorithm": self.algorithm,
            "state": self._encode_state(self.to_spec(checkpoint.state)),
            "timers": list(checkpoint.timers), "index": checkpoint.index,
            "arrival": checkpoint.arrival, "seq": seq, "open": open_ids,
            "held": [list(attrs.astuple(record)) for record in checkpoint.held_rows],
            "recent": recent or [],
        }
        if self.digest is not None:
            body["config"] = self.digest
        return json.dumps(body, separators=(",", ":")).encode()

    def decode(self, blob: bytes) -> tuple[Checkpoint[Any], int, list[str], list[str]]:
        """Inverse of :meth:`encode`: (checkpoint, seq, open ids, recent ids);
        :class:`InvalidInput` (SP-R12) on a foreign or damaged value, and on a version-1
        value of an algorithm with a fast path (it stored the fast path's private state)."""
        try:
            body = jsontext.loads(bytes(blob))  # size and depth bounded first (VEC-R11)
            version, algorithm = body.get("v"), body.get("algorithm")
        except jsontext.JSONLimit as error:
            raise InvalidInput("state", RULE, f"damaged state value: {error} (VEC-R11)",
                               None) from None
        except (ValueError, AttributeError):
            raise InvalidInput("state", RULE, "damaged state value: not a JSON object",
                               bytes(blob[:40])) from None
        if version not in self.readable:
            raise InvalidInput("state.v", RULE, f"unsupported state version, expected "
                               f"{VERSION}: version 1 stored the fast path's private state "
                               f"of {self.algorithm}; restart from a fresh checkpoint",
                               version)
        if algorithm != self.algorithm:
            raise InvalidInput("state.algorithm", RULE, f"checkpoint of another algorithm, "
                               f"expected {self.algorithm!r}", algorithm)
        stored = body.get("config")
        if stored is not None and self.digest is not None and stored != self.digest:
            raise InvalidInput("state.config", "DRV-R10", "checkpoint written under another "
                               "config (its digest differs): a state belongs to the config it "
                               "was built under; resume with that config or start a new "
                               "checkpoint", stored)
        try:
            _require_fields(body)
            held = tuple(Record(*fields) for fields in body.get("held", ()))
            for record in held:
                _require_typed(record, Record, "state.held")
            state = self._decode_state(body["state"])
            _require_typed(state, self.state_type, "state.state")
            self._require_admitted(state)
            checkpoint = Checkpoint(self.from_spec(state), tuple(body["timers"]),
                                    body["index"], body["arrival"], held)
            return checkpoint, body["seq"], list(body["open"]), list(body.get("recent", ()))
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            if isinstance(error, InvalidInput):
                raise
            raise InvalidInput("state", RULE, f"damaged state value: {type(error).__name__} "
                               f"{str(error)[:100]}", None) from None

    def _require_admitted(self, state: Any) -> None:
        """Every input the state holds passes the algorithm's input rule for this config
        (SP-R12): a message of topic 7 in the state of a 2-topic config is refused here,
        not a wrong group or an IndexError later."""
        if self.admits is None:
            return
        for value in _records(state):
            if not self.admits(value):
                raise InvalidInput("state.state", RULE, "damaged state value: it holds an "
                                   "input its config refuses", value)


def _input_rule(algorithm: Algorithm[Any, Any, Any, Any], config: Any) -> Callable[[Any], bool]:
    """Whether a value held in a state is acceptable as an input under ``config``: values
    of a class the algorithm takes as input (its vector codec round-trips them) are
    stepped once on a fresh state; others (members, batches) are not inputs and pass."""
    kinds: dict[type, bool] = {}

    def is_input(value: Any) -> bool:
        kind = type(value)
        if kind not in kinds:
            try:
                kinds[kind] = type(algorithm.codec.input_from_json(
                    algorithm.codec.input_to_json(value))) is kind
            except Exception:  # not an input of this algorithm
                kinds[kind] = False
        return kinds[kind]

    def admits(value: Any) -> bool:
        if not is_input(value):
            return True
        try:
            algorithm.machine.step(config, algorithm.machine.initial(config), value)
        except InvalidInput:
            return False
        return True

    return admits


def _records(value: Any) -> Any:
    """Every attrs instance or named tuple inside a decoded state, depth first."""
    if _is_record(type(value)):
        yield value
        for name in _field_names(type(value)):
            yield from _records(getattr(value, name))
    elif isinstance(value, tuple | list | frozenset):
        for item in value:
            yield from _records(item)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _records(key)
            yield from _records(item)


def _natural(body: Mapping[str, Any], key: str, optional: bool = False) -> None:
    value = body.get(key)
    if optional and value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= INT64_MAX:
        raise InvalidInput(f"state.{key}", RULE, "damaged state value: must be an integer in "
                           "[0, 2**63 - 1] (VEC-R12)", value)


def _strings(body: Mapping[str, Any], key: str) -> None:
    value = body.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InvalidInput(f"state.{key}", RULE, "damaged state value: must be a list of "
                           "strings", value)


def _require_fields(body: Any) -> None:
    """The bookkeeping fields of a state value with their JSON types (SP-R12, VEC-R12)."""
    if not isinstance(body, dict):
        raise InvalidInput("state", RULE, "damaged state value: not a JSON object",
                           jsontext.kind(body))
    for key in ("index", "seq"):
        _natural(body, key)
    _natural(body, "arrival", optional=True)
    timers = body.get("timers")
    if not isinstance(timers, list):
        raise InvalidInput("state.timers", RULE, "damaged state value: must be a list", timers)
    for position in range(len(timers)):
        _natural({"timers": timers[position]}, "timers")
    _strings(body, "open")
    if "open" not in body:
        raise InvalidInput("state.open", RULE, "damaged state value: missing", None)
    _strings(body, "recent")
    held = body.get("held", [])
    if not isinstance(held, list) or not all(isinstance(item, list) for item in held):
        raise InvalidInput("state.held", RULE, "damaged state value: must be a list of rows",
                           held)


def _require_typed(value: Any, hint: Any, where: str) -> None:
    """``value`` has the type ``hint`` says, all the way down (VEC-R12): an integer field
    holds an ``int`` (not a ``bool``, not a string), a tuple field a tuple, a record field
    a record of that class; :class:`InvalidInput` naming the field otherwise."""
    if not _typed(value, hint, where):
        raise InvalidInput(where, RULE, f"damaged state value: not of type {hint}", value)


def _typed(value: Any, hint: Any, where: str) -> bool:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any or isinstance(hint, typing.TypeVar):
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_typed(value, option, where) for option in args)
    if hint is None or hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_typed(item, args[0], where) for item in value)
        return len(args) == len(value) and all(
            _typed(item, kind, where) for item, kind in zip(value, args, strict=True))
    if origin in (frozenset, list):
        return isinstance(value, origin) and all(_typed(item, args[0], where) for item in value)
    if origin is dict:
        return isinstance(value, dict) and all(
            _typed(k, args[0], where) and _typed(v, args[1], where) for k, v in value.items())
    if _is_record(hint):
        if type(value) is not hint:
            return False
        try:
            hints = typing.get_type_hints(hint)
        except (NameError, TypeError):
            return True
        for name in _field_names(hint):
            if name in hints:
                _require_typed(getattr(value, name), hints[name], f"{where}.{name}")
        return True
    if isinstance(hint, type):
        return isinstance(value, hint)
    return True
