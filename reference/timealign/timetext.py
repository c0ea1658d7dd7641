"""Time as people write it, turned into integer nanoseconds exactly (SP-R36, SP-R37).

Two edges read time written by people: the jobs' time columns (ISO-8601 text with a zone,
or numbers in a unit, ``--time-unit``) and the algorithms' configs (durations such as
``"50ms"`` beside the numbers each upstream uses). Both go through this module, before a
machine sees anything: machines only ever get integer nanoseconds (or, for the rate-aware
batcher's config, the float seconds its upstream takes). Everything here is integer or
:class:`~fractions.Fraction` arithmetic; no float touches a time. Pure, no I/O.
"""

from __future__ import annotations

import datetime
import math
import re
from decimal import Decimal
from fractions import Fraction
from typing import Any

from timealign.errors import INT64_MAX, InvalidInput

#: Nanoseconds per unit of ``--time-unit`` and of a duration's suffix.
UNITS: dict[str, int] = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
INT64_MIN = -(2**63)
#: An accepted value of each kind, shown by every refusal (SP-R36).
ISO_EXAMPLE = "2026-01-01T12:00:00.123456789Z"
DURATION_EXAMPLES = '"50ms", "1.5s", "100us", "20ns"'

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d{1,3})?")
_ISO = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?"
    r"(?:([Zz])|([+-])(\d\d):(\d\d))")
_ISO_ZONELESS = re.compile(r"\d{4}-\d\d-\d\d(?:[Tt ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?)?")
_DURATION = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+))\s*(s|ms|us|ns)\s*")
_EPOCH = datetime.date(1970, 1, 1).toordinal()
_LONGEST = 64  # characters of a time or duration text; longer is refused unread


def _in_int64(value: int, field: str, rule: str, text: object) -> int:
    if not INT64_MIN <= value <= INT64_MAX:
        raise InvalidInput(field, rule, "is outside the int64 nanoseconds Parquet and Spark "
                           "hold (about years 1678 to 2262)", text)
    return value


def check_unit(unit: str) -> str:
    """``unit`` if it is one of :data:`UNITS`, else ``InvalidInput`` naming the option."""
    if unit not in UNITS:
        raise InvalidInput("--time-unit", "SP-R36", f"must be one of {', '.join(UNITS)}", unit)
    return unit


def iso_ns(text: str, field: str, rule: str = "SP-R36") -> int:
    """Nanoseconds since the epoch of an ISO-8601 date and time with a zone (``Z`` or
    ``±hh:mm``), fractional seconds up to 9 digits, computed with integers only."""
    found = _ISO.fullmatch(text.strip())
    if found is None:
        zone = "it has no zone (add Z or ±hh:mm)" if _ISO_ZONELESS.fullmatch(text.strip()) \
            else "not an ISO-8601 time with a zone"
        raise InvalidInput(field, rule, f"{zone}; accepted: {ISO_EXAMPLE}", text)
    year, month, day, hour, minute, second = (int(found.group(i)) for i in range(1, 7))
    try:
        days = datetime.date(year, month, day).toordinal() - _EPOCH
    except ValueError:
        raise InvalidInput(field, rule, f"not a calendar date; accepted: {ISO_EXAMPLE}",
                           text) from None
    offset = 0
    if found.group(9) is not None:
        hours, minutes = int(found.group(10)), int(found.group(11))
        if hours > 23 or minutes > 59:
            raise InvalidInput(field, rule, f"not a zone offset; accepted: {ISO_EXAMPLE}", text)
        offset = (hours * 60 + minutes) * 60 * (-1 if found.group(9) == "-" else 1)
    if hour > 23 or minute > 59 or second > 59:  # no leap second: POSIX time has none
        raise InvalidInput(field, rule, f"not a time of day; accepted: {ISO_EXAMPLE}", text)
    fraction = (found.group(7) or "").ljust(9, "0")
    seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
    return _in_int64(seconds * 10**9 + int(fraction), field, rule, text)


def number_ns(value: str | int | Fraction, unit: str, field: str, rule: str = "SP-R36") -> int:
    """Nanoseconds of a number in ``unit``: decimal text (``"1767225600.5"``, ``"1.5e9"``),
    an integer or an exact fraction; refused unless exact at the nanosecond and in int64."""
    if isinstance(value, str):
        if len(value) > _LONGEST or _NUMBER.fullmatch(value.strip()) is None:
            raise InvalidInput(field, rule, f"not a number or an ISO-8601 time with a zone; "
                               f"accepted: 1767225600000000000 (ns) or {ISO_EXAMPLE}", value)
        exact = Fraction(value.strip()) * UNITS[unit]
    else:
        exact = Fraction(value) * UNITS[unit]
    if exact.denominator != 1:
        raise InvalidInput(field, rule, f"is not a whole number of nanoseconds in unit "
                           f"{unit} (--time-unit s|ms|us|ns says the unit of numbers); "
                           f"accepted: 1767225600000000000 (ns) or {ISO_EXAMPLE}", value)
    return _in_int64(exact.numerator, field, rule, value)


def float_text(value: float, unit: str, field: str, rule: str = "SP-R36") -> str:
    """The decimal text a binary float (float64) of a time column stands for (SP-R36): its
    shortest round-trip text (``repr``, what a writer prints for it), in positional form,
    when that text is the only decimal with as few fractional digits that the float holds
    (its last digit's place is wider than the float's spacing there); else ``InvalidInput``
    saying how to write the column. A float that holds ``1772366400.009988`` reads as that
    text; one whose text is ``1772366400.3000002`` (a sum in floats) holds no decimal time:
    floats there are 2.384e-07 s apart, finer than its last digit, so other decimals of that
    length round to it too."""
    fix = ("write the column from the times as recorded, as integer nanoseconds, decimals or "
           "text (a float keeps about 16 digits)")
    if not math.isfinite(value):
        raise InvalidInput(field, rule, f"a time written as the float {value!r}; {fix}", value)
    text = repr(float(value))
    exponent = Decimal(text).as_tuple().exponent
    assert isinstance(exponent, int)  # finite
    if Fraction(10) ** exponent <= Fraction(math.ulp(value)):
        raise InvalidInput(field, rule, f"a time written as a binary float whose shortest text "
                           f"{text} holds no one decimal time: floats there are "
                           f"{math.ulp(value):.4g} {unit} apart, finer than its last digit, so "
                           f"its written digits are lost; {fix}", value)
    return format(Decimal(text), "f")


#: Times from this one on (1980-01-01) are read as clock times and written as dates.
CLOCK_FROM_NS = 315_532_800 * 10**9


def instant_text(ns: int) -> str:
    """A time in ns as people read it, exactly: a UTC date to the nanosecond for a clock
    time (``2026-03-01 12:00:00.009988513 UTC``), seconds for a time counted from a
    recording's start (``1.005821521 s``)."""
    seconds, rest = divmod(ns, 10**9)
    if ns < CLOCK_FROM_NS:
        return f"{seconds}.{rest:09d} s"
    day = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return f"{day:%Y-%m-%d %H:%M:%S}.{rest:09d} UTC"


#: A duration this long or longer means "no limit" (ROS's Duration maximum, 2^31 - 1 s and
#: 999,999,999 ns, is ApproximateTime's default ``max_interval_duration``).
NO_LIMIT_NS = (2**31 - 1) * 10**9


def duration_text(ns: int) -> str:
    """A duration in ns as people write it, exactly (PL-R15): the largest of s, ms, us, ns
    that holds it whole (``100 ms``, ``1500 ms``, ``20 ns``); ``no limit`` from
    :data:`NO_LIMIT_NS` on."""
    if ns >= NO_LIMIT_NS:
        return "no limit"
    for unit, size in UNITS.items():
        if ns % size == 0:
            return f"{ns // size:,} {unit}"
    raise AssertionError("UNITS ends with ns")  # pragma: no cover


def time_ns(value: str | int | float | Fraction, unit: str, field: str,
            rule: str = "SP-R36") -> int:
    """A time column's value in nanoseconds: ISO-8601 text with a zone, or a number (text,
    integer, or a float read as its decimal text, :func:`float_text`) in ``unit``
    (SP-R36)."""
    if isinstance(value, float):
        value = float_text(value, unit, field, rule)
    if isinstance(value, str):
        if len(value) > _LONGEST:
            raise InvalidInput(field, rule, f"too long for a time; accepted: {ISO_EXAMPLE}",
                               value)
        stripped = value.strip()
        if len(stripped) > 4 and stripped[4:5] == "-" and stripped[:4].isdigit():
            return iso_ns(stripped, field, rule)
    return number_ns(value, unit, field, rule)


def count_value(value: str | int, field: str, rule: str = "SP-R1") -> int:
    """An integer column written as text (a poll number in a CSV file): digits only."""
    if isinstance(value, int):
        return value
    if len(value) > _LONGEST or re.fullmatch(r"[+-]?\d+", value.strip()) is None:
        raise InvalidInput(field, rule, "must be an integer", value)
    return _in_int64(int(value.strip()), field, rule, value)


def duration(value: Any, field: str, rule: str, seconds: bool = False) -> Any:
    """A config's duration (SP-R37): text with a unit (``"50ms"``, ``"1.5s"``, ``"100us"``,
    ``"20ns"``) becomes the number the algorithm's config takes: integer nanoseconds, or
    with ``seconds`` the float seconds of an upstream that takes floats (the binary64
    nearest the exact value, as the same decimal written as a JSON number gives). Any other
    value is returned as it is, for the config's own checks. Text that is not a duration is
    ``InvalidInput`` naming ``field`` and ``rule``."""
    if not isinstance(value, str):
        return value
    found = _DURATION.fullmatch(value) if len(value) <= _LONGEST else None
    if found is None:
        raise InvalidInput(field, rule, f"a duration text needs a number and a unit s, ms, us "
                           f"or ns, e.g. {DURATION_EXAMPLES}", value)
    exact = Fraction(found.group(1)) * UNITS[found.group(2)]  # in ns
    if seconds:
        return float(exact / 10**9)  # correctly rounded, as float("0.05") is
    if exact.denominator != 1:
        raise InvalidInput(field, rule, "is not a whole number of nanoseconds", value)
    return exact.numerator
