"""The one exception type the package raises for bad configuration or bad input.

Every check that rejects something names the offending field and the spec rule it
breaks, so a caller (or a conformance vector) can tell *why* without reading a traceback.
Raising happens before any state is built, so the state given to ``step`` stays usable.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any


class InvalidInput(ValueError):
    """A configuration value or an input violates a rule of the spec.

    ``field`` names the offending field (``"queue_size"``, ``"inputs[3].stamp"``, ...),
    ``rule`` the spec id it breaks (``"AT-R1"``), ``value`` the rejected value.
    """

    def __init__(self, field: str, rule: str, message: str, value: object = None) -> None:
        self.field = field
        self.rule = rule
        self.value = value
        super().__init__(f"{field}: {message} (rule {rule}; got {value!r})")


def require(condition: bool, field: str, rule: str, message: str, value: object = None) -> None:
    """Raise :class:`InvalidInput` unless ``condition`` holds."""
    if not condition:
        raise InvalidInput(field, rule, message, value)


def require_ns(value: object, field: str, rule: str, *, minimum: int = 0) -> int:
    """Check that ``value`` is an integer number of nanoseconds >= ``minimum``.

    ``bool`` is rejected although it is an ``int`` subclass: ``True`` as a stamp is a bug.
    """
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidInput(field, rule, "must be an integer number of nanoseconds", value)
    if value < minimum:
        raise InvalidInput(field, rule, f"must be >= {minimum}", value)
    return value


@contextmanager
def output_fields(raw: object) -> Iterator[Mapping[str, Any]]:
    """Decode one JSON output inside the block (``output_from_json``): a non-object, or a
    field missing or of the wrong shape, becomes :class:`InvalidInput` (VEC-R4)."""
    if not isinstance(raw, Mapping):
        raise InvalidInput("output", "VEC-R4", "must be an object", raw)
    try:
        yield raw
    except (KeyError, TypeError) as error:
        raise InvalidInput("output", "VEC-R4", f"{raw.get('kind')} output lacks a field "
                           f"({error})", raw) from None
