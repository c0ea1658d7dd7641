"""``--where KEY=VALUE``: a user-declared domain of config values (CF-R31).

A port without an age penalty, or with a fixed queue size, takes only part of the configs a
target's traces carry. ``--where`` narrows every source to the configs holding the given
values, the way a target narrows them to an upstream's domain (CF-R18): a vector whose
config does not hold them is skipped and counted, and every generated trace (fuzz, the
explorer's instances) carries them. A value is read as JSON, else as text, and compared in
the reference's own encoding of the config (``0`` and ``0.0`` are one age penalty).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from timealign import Algorithm
from timealign.algorithm import Codec
from timealign.errors import InvalidInput

JSON = dict[str, Any]
RULE = "CF-R31"


def value(text: str) -> Any:
    """A ``KEY=VALUE`` value: JSON, else a bare word as text (``profile=card``)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


@attrs.frozen
class Where:
    """Config values every trace must hold (CF-R31): ``changes`` in the reference's JSON
    encoding, ``label`` as the user wrote them."""

    changes: Mapping[str, Any]
    label: str

    def apply(self, codec: Codec[Any, Any, Any], config: JSON) -> JSON:
        """``config`` (JSON) with the values set; a field the reference then refuses beside
        them (lower bounds of another length than ``topics``) falls back to its default."""
        fitted = {**config, **self.changes}
        for _ in range(len(fitted)):
            try:
                codec.config_from_json(fitted)
            except InvalidInput as error:
                field = error.field.split("[")[0].split(".")[0]
                if field in fitted and field not in self.changes:
                    del fitted[field]
                    continue
            break
        return fitted

    def decoded(self, codec: Codec[Any, Any, Any], config: Any) -> Any:
        """A decoded config with the values set (:meth:`apply`), or ``None`` when the
        reference refuses the result."""
        try:
            return codec.config_from_json(self.apply(codec, codec.config_to_json(config)))
        except InvalidInput:
            return None

    def outside(self, codec: Codec[Any, Any, Any], config: JSON) -> str | None:
        """Why a trace's config does not hold the values (the reason a skipped vector is
        counted under), or ``None``."""
        mine = _canonical(codec, config)
        for key, wanted in self.changes.items():
            got = mine.get(key) if mine is not None else config.get(key)
            if not _same(got, wanted):
                return f"not {key}={_shown(wanted)} (--where, {RULE})"
        return None


def _canonical(codec: Codec[Any, Any, Any], config: Mapping[str, Any]) -> JSON | None:
    try:
        return codec.config_to_json(codec.config_from_json(config))
    except InvalidInput:
        return None


def _same(a: Any, b: Any) -> bool:
    """Equal as config values: 0 and 0.0 are one number, ``true`` is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)


def _shown(item: Any) -> str:
    return item if isinstance(item, str) else json.dumps(item)


def parse(algorithm: Algorithm[Any, Any, Any, Any], texts: Sequence[str],
          probes: Sequence[JSON], option: str = "--where") -> Where | None:
    """``KEY=VALUE`` texts as a :class:`Where` (``None`` for none); :class:`InvalidInput`
    (CF-R31) naming the text when it is not ``KEY=VALUE``, names no config field of the
    algorithm, or holds a value the reference refuses there (a wrong type, a value out of
    range). ``probes`` are configs the values are tried in (the explorer's)."""
    given: dict[str, Any] = {}
    for text in texts:
        key, sign, raw = text.partition("=")
        if not sign or not key.strip():
            raise InvalidInput(option, RULE, "must be KEY=VALUE (a config field and its "
                               "value)", text)
        given[key.strip()] = value(raw.strip())
    if not given:
        return None
    fields = set().union(*(algorithm.codec.config_to_json(algorithm.codec.config_from_json(p))
                           for p in probes)) if probes else set()
    for key in given:
        if fields and key not in fields:
            raise InvalidInput(option, RULE, f"{key} is not a config field of "
                               f"{algorithm.name} (its fields: {', '.join(sorted(fields))})",
                               f"{key}={_shown(given[key])}")
    where = Where(given, " ".join(f"{k}={_shown(v)}" for k, v in given.items()))
    refusal: InvalidInput | None = None
    for probe in probes or [{}]:
        fitted = where.apply(algorithm.codec, probe)
        try:
            canonical = algorithm.codec.config_to_json(algorithm.codec.config_from_json(fitted))
        except InvalidInput as error:
            refusal = refusal or error
            continue
        # the values as the reference encodes them (0 -> 0.0), so vectors compare alike
        return Where({k: canonical.get(k, v) for k, v in given.items()}, where.label)
    assert refusal is not None
    named = next((f"{k}={_shown(v)}" for k, v in given.items()
                  if refusal.field.split("[")[0] == k), where.label)
    raise InvalidInput(option, RULE, f"the reference refuses {named}: {refusal}", named)


def config_values(configs: Iterable[JSON], most: int = 4) -> str:
    """The values each config field took in ``configs``: ``age_penalty 0.1, 0.7; topics 2``
    (at most ``most`` per field), so a refusal note says what was refused (CF-R20)."""
    seen: dict[str, list[str]] = {}
    for config in configs:
        for key, item in config.items():
            shown = json.dumps(item)
            if shown not in seen.setdefault(key, []):
                seen[key].append(shown)
    return "; ".join(f"{key} {', '.join(found[:most])}{', ...' if len(found) > most else ''}"
                     for key, found in sorted(seen.items()))
