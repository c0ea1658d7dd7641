"""thin-edge measurements flattened as thin-edge reads them (MQ-R1..MQ-R4, MQ-D1)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from timealign.mqtt.thinedge import (
    REASONS,
    NotMeasurement,
    Row,
    read_message,
    rfc3339_ns,
    source_of,
    unix_ns,
)

TOPIC = "te/device/pump1///m/environment"


def test_mq_r1_sources_of_topics() -> None:
    """MQ-R1: the device name, or the entity topic id; other topics are none."""
    assert source_of(TOPIC) == "pump1"
    assert source_of("te/device/main/service/agent/m/health") == "device/main/service/agent"
    assert source_of("te/device/main///e/event") is None
    assert source_of("te/device/pump1//x/m/t") is None
    assert source_of("tedge/measurements") is None
    assert source_of("te/device/pump1///m/") == "pump1"  # thin-edge: an empty type is allowed


def test_mq_r2_r4_rows_one_per_series() -> None:
    """MQ-R2, MQ-R4: one row per numeric series, group members as group.name, text and
    properties skipped; stamp from time, arrival from the receiving clock."""
    payload = (b'{"temperature": 25.1, "time": "2026-01-01T00:00:00.100Z", "status": "ok",'
               b' "Climate": {"temp": 25, "hum": -3.5e2, "note": "x"}, "properties": {"a": 1}}')
    rows = read_message(TOPIC, payload, 7, 123)
    stamp = 1_767_225_600_100_000_000
    assert rows == [
        Row("pump1", f"{TOPIC}#7/temperature", "temperature", stamp, 123),
        Row("pump1", f"{TOPIC}#7/Climate.temp", "Climate.temp", stamp, 123),
        Row("pump1", f"{TOPIC}#7/Climate.hum", "Climate.hum", stamp, 123),
    ]


def test_mq_r3_no_time_means_the_arrival() -> None:
    """MQ-R3: without ``time`` the stamp is the arrival."""
    assert read_message(TOPIC, b'{"x": 1}', 0, 55) == [Row("pump1", f"{TOPIC}#0/x", "x", 55, 55)]


@pytest.mark.parametrize(("payload", "reason"), [
    (b"\xff\xfe", "not-json"),
    (b"{\"x\": 1", "not-json"),
    (b'{"x": NaN}', "not-json"),
    (b"[1, 2]", "not-object"),
    (b"42", "not-object"),
    (b"{}", "no-series"),
    (b'{"status": "ok", "time": 5}', "no-series"),
    (b'{"x": true}', "value"),
    (b'{"x": null}', "value"),
    (b'{"x": [1]}', "value"),
    (b'{"g": {}}', "value"),
    (b'{"g": {"a": "text"}}', "value"),
    (b'{"g": {"h": {"a": 1}}}', "value"),
    (b'{"x": 1e400}', "value"),
    (b'{"x": 1, "x": 2}', "duplicate-key"),
    (b'{"x": 1, "time": 1, "time": 2}', "duplicate-key"),
    (b'{"x": 1, "time": "2026-01-01"}', "time"),
    (b'{"x": 1, "time": "2026-01-01T00:00:00"}', "time"),
    (b'{"x": 1, "time": "2026-02-30T00:00:00Z"}', "time"),
    (b'{"x": 1, "time": "2026-01-01T00:00:60Z"}', "time"),
    (b'{"x": 1, "time": "2026-01-01T00:00:00.1234567891Z"}', "time"),
    (b'{"x": 1, "time": 1.0000000001}', "time"),
    (b'{"x": 1, "time": -1}', "time"),
    (b'{"x": 1, "time": "1969-12-31T23:59:59Z"}', "time"),
    (b'{"x": 1, "time": 9300000000}', "time"),
    (b'{"x": 1, "time": true}', "time"),
    (b'{"x": 1, "time": 1e999999999}', "time"),
    (b'{"x": 1, "time": 1.5e-999999999}', "time"),
    (b'{"x": 1, "time": "2026-01-01T00:00:0\xd9\xa1Z"}', "time"),
    # poison payloads (issue 43): each stopped the live stream for good, at every restart
    (b'{"a.b": 1, "a": {"b": 2}}', "duplicate-key"),  # two series, one name: "fed again"
    (b'{"a": {"b": 2}, "a.b": 1}', "duplicate-key"),
    (b'{"x": ' + b"7" * 5001 + b"}", "value"),  # int() past 4,300 digits: exit 4
    (b'{"g": {"x": -' + b"7" * 5001 + b"}}", "value"),
    (b'{"x": 1, "time": ' + b"7" * 5001 + b"}", "time"),
    (b'{"x": 1, "time": 1' + b"0" * 5001 + b".5}", "time"),
    (b'{"x": 1e99999999999999999999999999999}', "value"),  # past a Decimal's exponent
    (b'{"x": 1, "time": 1e-99999999999999999999999999999}', "value"),
    (b'{"x": Infinity}', "not-json"),
    (b'{"x": -Infinity}', "not-json"),
    (b'{"\\ud800": 1}', "not-json"),  # a lone surrogate: no table holds it
    (b'{"g": {"\\udfff": 1}}', "not-json"),
    (b'{"": 1}', "value"),  # a row's topic names the series
    (b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "value"),  # deep nesting
    (b'{"x": 1, "time": "' + b"9" * 10_000_000 + b'"}', "time"),  # a huge string
])
def test_mq_r2_not_a_measurement_is_an_outcome(payload: bytes, reason: str) -> None:
    """MQ-R2: a payload that is not a measurement is one outcome with a reason word."""
    found = read_message(TOPIC, payload, 3, 9)
    assert isinstance(found, NotMeasurement)
    assert (found.source, found.id, found.reason) == ("pump1", f"{TOPIC}#3", reason)
    assert found.detail


def test_mq_r2_details_stay_short() -> None:
    """MQ-R2: a detail quotes a name of the payload cut short, so a huge key cannot make
    a huge outcome row."""
    found = read_message(TOPIC, b'{"' + b"k" * 1_000_000 + b'": true}', 0, 1)
    assert isinstance(found, NotMeasurement) and len(found.detail) < 120


def test_mq_r2_huge_property_is_skipped() -> None:
    """MQ-R2: a huge text property is a property (thin-edge), not a refusal."""
    rows = read_message(TOPIC, b'{"x": 1, "note": "' + b"n" * 10_000_000 + b'"}', 0, 1)
    assert rows == [Row("pump1", f"{TOPIC}#0/x", "x", 1, 1)]


JSON_TEXT = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["", "a", "b", "a.b", "time", ".", "b.a",
                                       "properties", "\ud800"]), inner, max_size=4),
    max_leaves=8)


@given(st.one_of(st.binary(max_size=40),
                 JSON_TEXT.map(lambda value: json.dumps(value).encode()),
                 st.lists(st.sampled_from([b"{", b"}", b'"a"', b'"a.b"', b":", b",", b"1",
                                           b"1e999", b"-0", b"[", b"]", b'"time"', b"NaN",
                                           b'"\\ud800"', b"9" * 500, b'"2026-01-01T00:00:00Z"']),
                          max_size=12).map(b"".join)))
def test_mq_r2_any_payload_is_rows_or_an_outcome(payload: bytes) -> None:
    """MQ-R2, MQ-R4: whatever a payload holds, reading it returns rows with distinct ids
    whose text a table can hold, or one not-a-measurement outcome; it never raises."""
    found = read_message(TOPIC, payload, 2, 5)
    if isinstance(found, NotMeasurement):
        assert found.reason in REASONS and found.detail
        return
    assert found and len({row.id for row in found}) == len(found)
    for row in found:
        assert row.topic and 0 <= row.stamp <= 2**63 - 1
        row.id.encode("utf-8")  # raises on a lone surrogate


def test_mq_r1_other_topic_is_an_outcome() -> None:
    """MQ-R1: a message on a topic that is no measurement topic is an outcome too."""
    found = read_message("te/device/main///e/boot", b'{"x": 1}', 4, 9)
    assert isinstance(found, NotMeasurement)
    assert found == NotMeasurement("", "te/device/main///e/boot#4", "topic", found.detail)


def test_mq_r3_rfc3339_exact() -> None:
    """MQ-R3: zones, fractions to the ns, lower-case separators."""
    assert rfc3339_ns("1970-01-01T00:00:00Z") == 0
    assert rfc3339_ns("1970-01-01t01:00:00.000000001+01:00") == 1
    assert rfc3339_ns("2021-04-30T17:03:14.123+02:00") == 1_619_794_994_123_000_000
    assert rfc3339_ns("2262-04-11T23:47:16.854775807z") == 2**63 - 1


@given(st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2262, 1, 1)),
       st.integers(-23 * 60 - 59, 23 * 60 + 59), st.integers(0, 999))
def test_mq_r3_rfc3339_matches_datetime(moment: datetime, offset: int, extra: int) -> None:
    """MQ-R3: against the standard library at microsecond precision, plus 3 more digits."""
    sign = "+" if offset >= 0 else "-"
    text = (moment.strftime("%Y-%m-%dT%H:%M:%S.%f") + f"{extra:03d}"
            + f"{sign}{abs(offset) // 60:02d}:{abs(offset) % 60:02d}")
    zone = timezone(timedelta(minutes=offset))
    aware = moment.replace(tzinfo=zone)
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    delta = aware - epoch
    expected = ((delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds) * 1000
    assert rfc3339_ns(text) == expected + extra


def test_mq_d1_unix_seconds_exact() -> None:
    """MQ-D1: Unix seconds as a JSON number, exact decimal to ns (thin-edge's float
    truncation to the millisecond would give 1000.999.. ms -> 1000 ms for 1.001)."""
    assert unix_ns(1) == 1_000_000_000
    assert unix_ns(Decimal("1.001")) == 1_001_000_000
    assert unix_ns(Decimal("1767225600.123456789")) == 1_767_225_600_123_456_789
    assert unix_ns(Decimal("1.5E+3")) == 1_500_000_000_000
    assert unix_ns(Decimal("0.000000001")) == 1
    rows = read_message(TOPIC, b'{"x": 1, "time": 1767225600.1}', 0, 5)
    assert isinstance(rows, list) and rows[0].stamp == 1_767_225_600_100_000_000
