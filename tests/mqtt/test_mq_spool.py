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
    made = spool.receive([(T, b'{"x": 1}', 1, False, False, 10),
                          (T, b"\x00\xff", 2, False, False, 20)])
    tick = spool.tick(30)
    assert made == [Message(0, T, b'{"x": 1}', 1, False, 10), Message(1, T, b"\x00\xff", 2,
                                                                       False, 20)]
    assert tick == Tick(2, 30)
    assert read_entries(tmp_path / SPOOL_NAME)[0] == [*made, tick]
    assert list(entries_between(tmp_path / SPOOL_NAME, 1, 3)) == [made[1], tick]
    again = Spool(tmp_path)  # a restart continues the positions
    assert again.count == 3
    assert again.receive([(T, b"{}", 3, False, False, 40)])[0].position == 3
    for entry in [*made, tick, Again(4, 1, 50)]:
        assert decode(encode(entry)) == entry


def test_mq_r5_torn_last_line_is_recovered(tmp_path: Path) -> None:
    """MQ-R5: a last line cut by a crash is dropped on restart (it was never acknowledged,
    the broker sends it again); the next entry takes its position."""
    Spool(tmp_path).receive([(T, b"1", 1, False, False, 10), (T, b"2", 2, False, False, 20)])
    path = tmp_path / SPOOL_NAME
    whole = path.read_bytes()
    path.write_bytes(whole[:-9])
    spool = Spool(tmp_path)
    assert spool.count == 1
    assert path.read_bytes() == whole[: whole.index(b"\n") + 1]
    assert spool.receive([(T, b"2", 2, False, False, 20)])[0] == Message(1, T, b"2", 2, False, 20)


def test_mq_r5_damaged_line_inside_is_refused(tmp_path: Path) -> None:
    """MQ-R5: a damaged line that is not the last one is refused naming file and line."""
    Spool(tmp_path).receive([(T, b"1", 1, False, False, 10), (T, b"2", 2, False, False, 20)])
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
    spool.receive([(T, b"1", 1, False, False, 100)])
    assert spool.tick(90) == Tick(1, 100)
    assert Spool(tmp_path).receive([(T, b"2", 2, False, False, 50)])[0].arrival == 100  # type: ignore[union-attr]


def test_mq_r7_redelivery_taken_once(tmp_path: Path) -> None:
    """MQ-R7: a dup copy of the last message with its packet id is recorded as a
    redelivery; a dup with other content or a reused packet id is a new message."""
    spool = Spool(tmp_path)
    spool.receive([(T, b"1", 7, False, False, 10)])
    assert Spool(tmp_path).receive([(T, b"1", 7, True, False, 20)]) == [Again(1, 0, 20)]
    spool = Spool(tmp_path)
    made = spool.receive([(T, b"1", 7, False, False, 30), (T, b"other", 7, True, False, 40),
                          (T, b"x", 0, True, False, 50)])
    assert [type(e) for e in made] == [Message, Message, Message]


def test_mq_r13_retained_copy_taken_once(tmp_path: Path) -> None:
    """MQ-R13: a delivery flagged retained whose payload is the last one taken on its topic
    is the broker's stored copy sent again at a subscription: recorded as a retained
    ``Again`` naming the message (no row), across a restart of the spool too; a retained
    delivery with other content (a new retained message) is a message."""
    spool = Spool(tmp_path)
    first = spool.receive([(T, b"up", 1, False, True, 10)])  # the first subscription
    assert first == [Message(0, T, b"up", 1, False, 10, retain=True)]
    again = Spool(tmp_path)  # a stream restart, a broker that lost its sessions
    assert again.receive([(T, b"up", 2, False, True, 20)]) == [Again(1, 0, 20, retained=True)]
    made = again.receive([(T, b"down", 3, False, False, 30),  # live: published retained
                          (T, b"down", 4, False, True, 40),   # its stored copy, again
                          (T, b"up", 5, False, True, 50),     # a new retained message
                          ("te/device/b///m/t", b"up", 6, False, True, 60)])  # other topic
    assert made == [Message(2, T, b"down", 3, False, 30), Again(3, 2, 40, retained=True),
                    Message(4, T, b"up", 5, False, 50, retain=True),
                    Message(5, "te/device/b///m/t", b"up", 6, False, 60, retain=True)]
    entries, _ = read_entries(tmp_path / SPOOL_NAME)
    assert entries == [*first, Again(1, 0, 20, retained=True), *made]  # re-read alike


def test_mq_r13_live_copies_are_all_taken(tmp_path: Path) -> None:
    """MQ-R13: only a delivery flagged retained can be a copy: the same payload published
    twice and delivered live (no retain flag) is two messages."""
    spool = Spool(tmp_path)
    made = spool.receive([(T, b"1", 1, False, False, 10), (T, b"1", 2, False, False, 20)])
    assert [type(e) for e in made] == [Message, Message]


def test_mq_r13_older_spool_lines_read_alike(tmp_path: Path) -> None:
    """MQ-R13: the retain flags are written only when set, so a spool line of an earlier
    version (without them) is read as not retained."""
    line = '{"pos":0,"topic":"t","payload":"eA==","mid":1,"dup":false,"arrival":5}'
    assert decode(line) == Message(0, "t", b"x", 1, False, 5)
    assert encode(decode(line)) == line
    with pytest.raises(ValueError, match="retain must be a boolean"):
        decode(line[:-1] + ',"retain":1}')
