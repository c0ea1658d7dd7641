"""The durable spool (MQ-R5, MQ-R6, MQ-R7): appended before acknowledged, re-read alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from timealign.errors import InvalidInput
from timealign.mqtt.spool import (
    SPOOL_NAME,
    Again,
    Message,
    Spool,
    Tick,
    decode,
    encode,
    entries_between,
    read_entries,
)

T = "te/device/a///m/t"


def test_mq_r5_lines_round_trip(tmp_path: Path) -> None:
    """MQ-R5: every entry is one line, re-read as the same entry; positions count lines."""
    spool = Spool(tmp_path)
    made = spool.receive([(T, b'{"x": 1}', 1, False, 10), (T, b"\x00\xff", 2, False, 20)])
    tick = spool.tick(30)
    assert made == [Message(0, T, b'{"x": 1}', 1, False, 10), Message(1, T, b"\x00\xff", 2,
                                                                       False, 20)]
    assert tick == Tick(2, 30)
    assert read_entries(tmp_path / SPOOL_NAME)[0] == [*made, tick]
    assert list(entries_between(tmp_path / SPOOL_NAME, 1, 3)) == [made[1], tick]
    again = Spool(tmp_path)  # a restart continues the positions
    assert again.count == 3
    assert again.receive([(T, b"{}", 3, False, 40)])[0].position == 3
    for entry in [*made, tick, Again(4, 1, 50)]:
        assert decode(encode(entry)) == entry


def test_mq_r5_torn_last_line_is_recovered(tmp_path: Path) -> None:
    """MQ-R5: a last line cut by a crash is dropped on restart (it was never acknowledged,
    the broker sends it again); the next entry takes its position."""
    Spool(tmp_path).receive([(T, b"1", 1, False, 10), (T, b"2", 2, False, 20)])
    path = tmp_path / SPOOL_NAME
    whole = path.read_bytes()
    path.write_bytes(whole[:-9])
    spool = Spool(tmp_path)
    assert spool.count == 1
    assert path.read_bytes() == whole[: whole.index(b"\n") + 1]
    assert spool.receive([(T, b"2", 2, False, 20)])[0] == Message(1, T, b"2", 2, False, 20)


def test_mq_r5_damaged_line_inside_is_refused(tmp_path: Path) -> None:
    """MQ-R5: a damaged line that is not the last one is refused naming file and line."""
    Spool(tmp_path).receive([(T, b"1", 1, False, 10), (T, b"2", 2, False, 20)])
    path = tmp_path / SPOOL_NAME
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join([lines[0].replace(b'"mid"', b'"mud"'), *lines[1:]]))
    with pytest.raises(InvalidInput) as refused:
        Spool(tmp_path)
    assert refused.value.rule == "MQ-R5" and refused.value.field == f"{path}:1"


def test_mq_r5_a_cut_spool_is_refused(tmp_path: Path) -> None:
    """MQ-R5: an offset beyond the spool (the spool was cut behind the stream) is refused."""
    Spool(tmp_path).tick(5)
    with pytest.raises(InvalidInput, match="spool was cut"):
        list(entries_between(tmp_path / SPOOL_NAME, 0, 2))


def test_mq_r6_the_clock_never_goes_back(tmp_path: Path) -> None:
    """MQ-R6: the receiving clock as spooled is non-decreasing, across a restart too."""
    spool = Spool(tmp_path)
    spool.receive([(T, b"1", 1, False, 100)])
    assert spool.tick(90) == Tick(1, 100)
    assert Spool(tmp_path).receive([(T, b"2", 2, False, 50)])[0].arrival == 100  # type: ignore[union-attr]


def test_mq_r7_redelivery_taken_once(tmp_path: Path) -> None:
    """MQ-R7: a dup copy of the last message with its packet id is recorded as a
    redelivery; a dup with other content or a reused packet id is a new message."""
    spool = Spool(tmp_path)
    spool.receive([(T, b"1", 7, False, 10)])
    assert Spool(tmp_path).receive([(T, b"1", 7, True, 20)]) == [Again(1, 0, 20)]
    spool = Spool(tmp_path)
    made = spool.receive([(T, b"1", 7, False, 30), (T, b"other", 7, True, 40),
                          (T, b"x", 0, True, 50)])
    assert [type(e) for e in made] == [Message, Message, Message]
