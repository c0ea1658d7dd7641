"""Time and durations as people write them, to exact integer ns (SP-R36, SP-R37, RB-D22)."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from timealign import registry
from timealign.algorithm import Record
from timealign.errors import InvalidInput
from timealign.timetext import (
    count_value,
    duration,
    duration_text,
    float_text,
    instant_text,
    iso_ns,
    time_ns,
)


def _ns(text: str) -> int:
    """The reference value through datetime (microseconds) plus the sub-microsecond part."""
    head, _, rest = text.partition(".")
    digits = rest.rstrip("Z")[:9].ljust(9, "0") if rest else "0" * 9
    whole = datetime.datetime.fromisoformat(head.rstrip("Z") + "+00:00")
    return int(whole.timestamp()) * 10**9 + int(digits)


@pytest.mark.parametrize("text", ["1970-01-01T00:00:00Z", "2026-01-01T12:00:00.123456789Z",
                                  "2262-04-11T23:47:16.854775807Z", "1999-12-31T23:59:59.5Z"])
def test_sp_r36_iso_with_zone_is_exact_to_the_nanosecond(text: str) -> None:
    assert iso_ns(text, "stamp") == _ns(text)


def test_sp_r36_offsets_and_fractions() -> None:
    utc = iso_ns("2026-01-01T10:00:00.000000001Z", "stamp")
    assert iso_ns("2026-01-01T12:00:00.000000001+02:00", "stamp") == utc
    assert iso_ns("2026-01-01 05:30:00.000000001-04:30", "stamp") == utc
    assert iso_ns("2026-01-01T10:00:00.1Z", "stamp") == utc - 1 + 10**8
    assert time_ns("1967-01-01T00:00:00Z", "ns", "stamp") < 0  # before the epoch: int64


@pytest.mark.parametrize(("value", "unit", "expected"), [
    ("1767225600.5", "s", 1_767_225_600_500_000_000), ("1.5e9", "ns", 1_500_000_000),
    ("250", "ms", 250_000_000), (7, "us", 7000), (Decimal("0.000000001"), "s", 1),
    ("-3", "ns", -3), ("9223372036854775807", "ns", 2**63 - 1)])
def test_sp_r36_numbers_in_a_unit_are_exact(value: object, unit: str, expected: int) -> None:
    assert time_ns(value, unit, "stamp") == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(("value", "unit", "words"), [
    ("2026-01-01T12:00:00", "ns", "no zone"),  # an instant needs its zone
    ("2026-01-01T12:00:00.1234567891Z", "ns", "ISO-8601"),  # 10 fractional digits
    ("2026-02-30T00:00:00Z", "ns", "calendar date"),
    ("2026-01-01T24:00:00Z", "ns", "time of day"),
    ("1.0000000001", "s", "whole number of nanoseconds"),
    ("9223372036854775808", "ns", "int64"), ("9223372037", "s", "int64"),
    ("yesterday", "ns", "2026-01-01T12:00:00.123456789Z"), ("nan", "ns", "not a number"),
    ("1/3", "s", "not a number"), ("1e999", "ns", "int64"),
    ("1e9999", "ns", "not a number")])
def test_sp_r36_anything_else_is_refused_naming_the_column(value: str, unit: str,
                                                           words: str) -> None:
    with pytest.raises(InvalidInput, match=words) as caught:
        time_ns(value, unit, "t_ns")
    assert caught.value.field == "t_ns" and caught.value.rule == "SP-R36"


def test_sp_r36_poll_is_a_count() -> None:
    assert count_value(" 12 ", "poll") == 12 and count_value(5, "poll") == 5
    with pytest.raises(InvalidInput):
        count_value("1.5", "poll")


@pytest.mark.parametrize(("text", "ns", "seconds"), [
    ("50ms", 50_000_000, 0.05), ("1.5s", 1_500_000_000, 1.5), ("100us", 100_000, 0.0001),
    ("20ns", 20, 2e-8), (" 2 s ", 2_000_000_000, 2.0), ("0.1s", 100_000_000, 0.1)])
def test_sp_r37_duration_texts(text: str, ns: int, seconds: float) -> None:
    assert duration(text, "f", "R") == ns
    assert duration(text, "f", "R", seconds=True) == seconds  # the float the decimal gives
    assert duration(3, "f", "R") == 3 and duration(None, "f", "R") is None  # numbers pass


@pytest.mark.parametrize("text", ["50", "ms", "1.5 h", "0.5ns", "-", "1e3s"])
def test_sp_r37_bad_duration_text_names_the_field(text: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        duration(text, "batching_window", "EB-R1")
    assert (caught.value.field, caught.value.rule) == ("batching_window", "EB-R1")


def test_sp_r37_every_algorithm_reads_duration_texts_and_writes_numbers() -> None:
    at = registry.get("approximate_time")
    config = at.codec.config_from_json({"topics": ["a", "b"], "queue_size": 3,
                                  "max_interval_duration": "1.5s",
                                  "inter_message_lower_bounds": ["10ms", 5]})
    assert at.codec.config_to_json(config)["max_interval_duration"] == 1_500_000_000
    assert at.codec.config_to_json(config)["inter_message_lower_bounds"] == [10_000_000, 5]
    eb = registry.get("event_time_batcher")
    assert eb.codec.config_to_json(eb.codec.config_from_json(
        {"batching_window": "50ms", "max_message_delay": "1s", "message_leap_limit": "20ns"})
    ) == {"batching_window": 50_000_000, "max_message_delay": 10**9, "message_leap_limit": 20}
    rb = registry.get("rate_aware_batcher")
    assert rb.codec.config_from_json({"batch_length_s": "500ms", "timeout_s": "0.6s"}) == \
        rb.codec.config_from_json({"batch_length_s": 0.5, "timeout_s": 0.6})
    with pytest.raises(InvalidInput) as caught:
        eb.codec.config_from_json({"batching_window": "0.5ns", "max_message_delay": 1})
    assert caught.value.field == "batching_window"


def test_rb_d22_a_row_without_kind_is_unknown_and_a_bad_kind_lists_the_kinds() -> None:
    rb = registry.get("rate_aware_batcher")
    config = rb.codec.config_from_json({})
    polls = list(rb.feeding.inputs_from_records(config, [Record("a", "det", 5, 5)]))
    assert polls[0].messages[0].kind == "unknown"
    with pytest.raises(InvalidInput, match="detector_events, area_detector, log"):
        list(rb.feeding.inputs_from_records(config, [Record("a", "det", 5, 5, kind="detector")]))


@given(seconds=st.integers(0, 4_000_000_000), fraction=st.integers(0, 999_999),
       places=st.integers(0, 6))
def test_sp_r36_a_float_of_seconds_reads_as_the_decimal_written(
        seconds: int, fraction: int, places: int) -> None:
    """SP-R36: Unix seconds to the microsecond (16 digits), written as a decimal and stored
    as a float64 (what pandas does with such text), read back as exactly that decimal."""
    text = f"{seconds}.{fraction % 10**places:0{places}d}" if places else str(seconds)
    exact = Decimal(text)
    assert Decimal(float_text(float(text), "s", "stamp")) == exact
    assert time_ns(float(text), "s", "stamp") == int(exact * 10**9)


@pytest.mark.parametrize("value", [1772366400.0 + 2e-7, 1.7723664000099886e18,
                                   float("nan"), float("inf")])
def test_sp_r36_a_float_holding_no_one_decimal_is_refused(value: float) -> None:
    """SP-R36: digits finer than the floats' spacing there (a sum in floats, float ns),
    and non-finite floats, are refused with the way to write the column."""
    with pytest.raises(InvalidInput, match="integer nanoseconds, decimals or text") as caught:
        time_ns(value, "s", "stamp")
    assert caught.value.field == "stamp" and caught.value.rule == "SP-R36"


def test_pl_r15_durations_and_instants_as_people_read_them() -> None:
    """PL-R15, BAG-R14: a duration in the largest unit that holds it whole, ROS's
    Duration maximum as "no limit"; a clock time as a UTC date to the nanosecond, a time
    from a recording's start as seconds."""
    assert duration_text(100_000_000) == "100 ms"
    assert duration_text(1_500_000_000) == "1,500 ms"
    assert duration_text(20) == "20 ns" and duration_text(3 * 10**9) == "3 s"
    assert duration_text(2_147_483_647_999_999_999) == "no limit"
    assert instant_text(1_772_366_400_009_988_513) == "2026-03-01 12:00:00.009988513 UTC"
    assert instant_text(1_005_821_521) == "1.005821521 s"
