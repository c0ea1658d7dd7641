"""thin-edge.io measurements read as thin-edge reads them (MQ-R1..MQ-R4), without I/O.

One MQTT message (topic, payload bytes) received at ``arrival`` and spooled at ``position``
becomes either one :class:`Row` per numeric series of the payload or one
:class:`NotMeasurement` naming why it is none: nothing is dropped (MQ-R2). Times are integer
nanoseconds computed with integer arithmetic only (MQ-R3); thin-edge's own parser reads a
decimal ``time`` through a float, which the reference does not copy (MQ-D1).
"""

from __future__ import annotations

import json
import math
import re
import sys
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

import attrs

from timealign.errors import INT64_MAX
from timealign.jsontext import depth

NS = 1_000_000_000
_EPOCH = date(1970, 1, 1).toordinal()
# MQ-R3: RFC 3339 date-time with a zone (ASCII digits only: Python's \d matches any digit).
_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})"
    r"(?:\.([0-9]+))?(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))")
#: The reason word of a measurement whose rows the algorithm refuses (MQ-R2, ``rows.py``).
REFUSED = "refused"
#: The reason words of a message that is not a measurement (MQ-R1, MQ-R2, MQ-R3).
REASONS = ("topic", "not-json", "not-object", "value", "duplicate-key", "no-series", "time",
           REFUSED)


@attrs.frozen
class Row:
    """One series of one measurement message: a row of the stream (MQ-R4)."""

    source: str
    id: str
    topic: str
    stamp: int
    arrival: int


@attrs.frozen
class NotMeasurement:
    """A message that carries no measurement, with the reason word and a detail (MQ-R2)."""

    source: str
    id: str
    reason: str
    detail: str


class _Refused(ValueError):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def source_of(topic: str) -> str | None:
    """MQ-R1: the source a measurement topic ``te/<e1>/<e2>/<e3>/<e4>/m/<type>`` names:
    the device name for ``te/device/<name>///m/<type>``, else the entity topic id
    (``device/main/service/agent``); ``None`` for any other topic."""
    parts = topic.split("/")
    if len(parts) != 7 or parts[0] != "te" or parts[5] != "m" or not parts[1] or not parts[2]:
        return None
    if parts[1] == "device" and parts[3] == parts[4] == "":
        return parts[2]
    if parts[3] == "" and parts[4] != "":
        return None
    return "/".join(parts[1:5]).rstrip("/")


def message_id(topic: str, position: int) -> str:
    """MQ-R4: the id of a spooled message: its topic and spool position."""
    return f"{topic}#{position}"


def rfc3339_ns(text: str) -> int:
    """MQ-R3: an RFC 3339 date-time with a zone as Unix nanoseconds, exactly (calendar by
    ordinal days, fraction as digits: no float). Raises ``ValueError`` saying why."""
    found = _RFC3339.fullmatch(text)
    if found is None:
        raise ValueError("not an RFC 3339 date-time with a zone (YYYY-MM-DDTHH:MM:SS[.f]Z)")
    year, month, day, hour, minute, second = (int(found.group(i)) for i in range(1, 7))
    fraction, zulu, sign = found.group(7) or "", found.group(8), found.group(9)
    if hour > 23 or minute > 59 or second > 59:
        raise ValueError("hour, minute or second out of range (no leap second 60)")
    if len(fraction) > 9:
        raise ValueError("more than 9 fraction digits: finer than a nanosecond")
    days = date(year, month, day).toordinal() - _EPOCH  # ValueError on a day that is none
    offset = 0
    if zulu is None:
        off_hour, off_minute = int(found.group(10)), int(found.group(11))
        if off_hour > 23 or off_minute > 59:
            raise ValueError("zone offset out of range")
        offset = (off_hour * 60 + off_minute) * 60 * (1 if sign == "+" else -1)
    seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
    return seconds * NS + int(fraction.ljust(9, "0"))


def unix_ns(value: int | Decimal) -> int:
    """MQ-R3, MQ-D1: Unix seconds given as a JSON number, as nanoseconds exactly (the
    decimal's digits and exponent: no float, no rounding context)."""
    if isinstance(value, int):
        return value * NS
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int), "a JSON number is finite"
    kept = len(digits)
    while kept > 1 and digits[kept - 1] == 0:  # 1.000 is 1: trailing zeros say nothing
        kept -= 1
    exponent += len(digits) - kept
    # bounded before any power is taken or digits are joined: an int64 of ns has at most
    # 19 digits, 10 of them seconds (a number of 5,001 digits is refused here, never
    # converted)
    if abs(exponent) > 40 or kept > 40:
        raise ValueError("out of range")
    scaled = exponent + 9
    magnitude = int("".join(map(str, digits[:kept])) or "0")
    ns: int
    if scaled >= 0:
        ns = magnitude * 10**scaled
    else:
        ns, rest = divmod(magnitude, 10**-scaled)
        if rest:
            raise ValueError("finer than a nanosecond")
    return -ns if sign else ns


def _stamp(value: Any) -> int:
    if isinstance(value, str):
        try:
            ns = rfc3339_ns(value)
        except ValueError as error:
            raise _Refused("time", f"time {shown(value)}: {error}") from None
    elif isinstance(value, int | Decimal) and not isinstance(value, bool):
        try:
            ns = unix_ns(value)
        except ValueError as error:
            raise _Refused("time", f"time {shown(str(value))}: {error}") from None
    else:
        raise _Refused("time", "time must be an RFC 3339 string or Unix seconds")
    if not 0 <= ns <= INT64_MAX:  # DRV-D9
        raise _Refused("time", f"time {shown(str(value))} is outside 1970..2262 (int64 ns)")
    return ns


def shown(text: str) -> str:
    """A name or text of a payload as a detail shows it: quoted, escaped (a lone surrogate
    or a control character stays readable) and cut after 64 characters (MQ-R2)."""
    return repr(text[:64]) + ("..." if len(text) > 64 else "")


def _number(name: str, value: Any) -> None:
    """A series value must be a number thin-edge can hold (a finite f64, 0 or normal)."""
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise _Refused("value", f"{shown(name)} is not a number")
    as_float = float(value)  # only the range check of thin-edge's f64, never a time
    if not math.isfinite(as_float) or (as_float != 0 and abs(as_float) < sys.float_info.min):
        raise _Refused("value", f"{shown(name)} is out of the float64 range")


def _name(name: str) -> str:
    """MQ-R2: a series name is Unicode text (a JSON ``\\ud800`` escape decodes to a lone
    surrogate, which no table can hold) and not empty (a row's topic names it)."""
    if not name:
        raise _Refused("value", "a series without a name (the key \"\")")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise _Refused("not-json", f"the key {shown(name)} holds a lone surrogate: not "
                       f"Unicode text") from None
    return name


def _integer(text: str) -> int | Decimal:
    """A JSON integer: as an ``int`` up to 400 digits, beyond as a ``Decimal`` (out of
    float64's range either way, refused as a value or a time, never converted to an
    ``int``, which Python refuses past 4,300 digits)."""
    return int(text) if len(text) <= 400 else Decimal(text)


def _decimal(text: str) -> Decimal:
    """A JSON number with a fraction or an exponent, exactly. An exponent past what a
    ``Decimal`` holds (``1e99999999999999999999999999``) is out of every range: refused."""
    try:
        return Decimal(text)
    except InvalidOperation:
        raise _Refused("value", f"the number {shown(text)} is out of range") from None


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    made: dict[str, Any] = {}
    for key, value in pairs:
        if key in made:
            raise _Refused("duplicate-key", f"the key {shown(key)} twice in one object")
        made[key] = value
    return made


def _refuse_constant(name: str) -> Any:
    raise _Refused("not-json", f"{name} is not JSON")


def series(payload: bytes) -> tuple[int | None, list[str]]:
    """MQ-R2: the payload's ``time`` (ns, ``None`` when absent) and its numeric series
    names in payload order (``group.name`` inside a group). Raises ``_Refused``."""
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        raise _Refused("not-json", "the payload is not UTF-8") from None
    if depth(text) > 2:
        raise _Refused("value", "nested deeper than a group of series")
    try:
        raw = json.loads(text, parse_float=_decimal, parse_int=_integer,
                         parse_constant=_refuse_constant, object_pairs_hook=_pairs)
    except json.JSONDecodeError as error:
        raise _Refused("not-json", f"not JSON: {error.msg} at char {error.pos}") from None
    if not isinstance(raw, dict):
        raise _Refused("not-object", "the payload is not a JSON object")
    stamp: int | None = None
    names: dict[str, None] = {}

    def add(name: str) -> None:
        if name in names:  # {"a.b": 1, "a": {"b": 2}}: two series, one name, one id
            raise _Refused("duplicate-key", f"the series {shown(name)} twice: a key with "
                           f"a '.' and a group's member flatten to one name")
        names[_name(name)] = None

    for key, value in raw.items():
        if key == "time":
            stamp = _stamp(value)
        elif key == "properties" or isinstance(value, str):
            continue  # thin-edge: a JSON property or a text property, not a series
        elif isinstance(value, dict):
            members = [name for name, member in value.items() if not isinstance(member, str)]
            if not members:  # thin-edge: a group needs one measurement (text is none)
                raise _Refused("value", f"the group {shown(key)} holds no numeric series")
            for name in members:
                _number(f"{key}.{name}", value[name])
                add(f"{key}.{name}")
        else:
            _number(key, value)
            add(key)
    if not names:
        raise _Refused("no-series", "no numeric series in the payload")
    return stamp, list(names)


def read_message(topic: str, payload: bytes, position: int, arrival: int
                 ) -> list[Row] | NotMeasurement:
    """MQ-R1..MQ-R4: the rows of one spooled message, or why it is not a measurement."""
    ident = message_id(topic, position)
    source = source_of(topic)
    if source is None:
        return NotMeasurement("", ident, "topic",
                              "not a thin-edge measurement topic te/<entity>/m/<type>")
    try:
        stamp, names = series(payload)
    except _Refused as refused:
        return NotMeasurement(source, ident, refused.reason, refused.detail)
    at = arrival if stamp is None else stamp
    return [Row(source, f"{ident}/{name}", name, at, arrival) for name in names]
