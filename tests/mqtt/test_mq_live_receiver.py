"""The receiver against a real Mosquitto on 127.0.0.1, without Spark (marker ``mqtt``,
``make test-mqtt``): wildcard filters receive what MQTT matches (MQ-R12), and a retained
message is spooled once across stream restarts, broker restarts and a lost session
(MQ-R13). Needs the ``mqtt`` extra (paho-mqtt) and the broker only.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.mqtt.broker import Broker
from timealign.mqtt.receiver import Receiver, client_id, discard_session
from timealign.mqtt.spool import Again, Entry, Message, Spool, read_entries, spool_path

pytestmark = pytest.mark.mqtt


def _until(check: Callable[[], bool], what: str, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _entries(ck: Path) -> list[Entry]:
    path = spool_path(ck)
    return read_entries(path)[0] if path.exists() else []


def _messages(ck: Path) -> list[Message]:
    return [e for e in _entries(ck) if isinstance(e, Message)]


class Receiving:
    """A receiver of the checkpoint ``ck`` subscribed to ``topic``, started and stopped."""

    def __init__(self, broker: Broker, ck: Path, topic: str) -> None:
        self.receiver = Receiver(f"mqtt://127.0.0.1:{broker.port}/{topic}",
                                 Spool(spool_path(ck).parent), str(ck), 3600.0)

    def __enter__(self) -> Receiver:
        self.receiver.start()
        assert self.receiver.ready.wait(30), "the broker did not take the subscription"
        return self.receiver

    def __exit__(self, *exc: object) -> None:
        self.receiver.stop()


@pytest.fixture
def ck(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "ck"


@pytest.mark.parametrize(("topic_filter", "matching", "other"), [
    ("te/device/#", ["te/device/pump1///m/env", "te/device/main/service/a/m/x", "te/device"],
     ["te/other/pump1///m/env", "tedge/device", "te/devices/x"]),
    ("te/+/m/", ["te/x/m/", "te/device/m/"], ["te/x/m/y", "te/x/y/m/", "te/x/m"]),
    ("#", ["te/device/pump1///m/env", "a"], []),
])
def test_mq_r12_wildcard_filters_receive(broker: Broker, ck: Path, topic_filter: str,
                                         matching: list[str], other: list[str]) -> None:
    """MQ-R12: ``#`` and ``+`` filters given in the URL receive what MQTT matches, nothing
    else (``te/device/#`` was subscribed to as the literal ``te/device/``, received nothing
    and said so forever; ``/#`` was refused)."""
    with Receiving(broker, ck, topic_filter):
        for topic in [*other, *matching]:  # the others first: any would arrive before
            broker.publish(topic, '{"x": 1}')
        _until(lambda: len(_messages(ck)) >= len(matching), "the matching messages")
    assert [m.topic for m in _messages(ck)] == matching


def test_mq_r13_a_retained_message_is_spooled_once(broker: Broker, ck: Path) -> None:
    """MQ-R13: a retained message published before the stream started is taken at the
    first subscription, and never again: not at a restart (the kept session is not
    subscribed again), not after a broker restart, not after the broker lost the session
    (its copy is recorded as a retained ``Again``); a retained message published while the
    stream runs is taken live, once; a new retained message is taken (issue 43: the
    message was in the spool once per subscription)."""
    topic, marker = "te/device/pump1///m/env", "te/device/pump1///m/marker"
    broker.publish(topic, '{"temperature": 20}', retain=True)

    def marked(count: int) -> Callable[[], bool]:
        return lambda: sum(m.topic == marker for m in _messages(ck)) >= count

    with Receiving(broker, ck, "te/#"):  # the first subscription: the retained message
        _until(lambda: len(_messages(ck)) >= 1, "the retained message")
    with Receiving(broker, ck, "te/#"):  # a stream restart
        broker.publish(marker, "1")
        _until(marked(1), "the first marker")
        time.sleep(1)  # a copy would arrive with the subscription, before the marker
    broker.stop()  # a broker restart, persistence on: the session is kept
    broker.start()
    with Receiving(broker, ck, "te/#"):
        broker.publish(topic, '{"temperature": 21}', retain=True)  # live, while running
        broker.publish(marker, "2")
        _until(marked(2), "the second marker")
        time.sleep(1)
    discard_session("127.0.0.1", broker.port, client_id(str(ck)))
    with Receiving(broker, ck, "te/#") as receiver:  # subscribed again: copies are sent
        broker.publish(marker, "3")
        _until(marked(3), "the third marker")
        _until(lambda: any(isinstance(e, Again) for e in _entries(ck)), "the retained copy")
        assert receiver.ready.is_set()
        broker.publish(topic, '{"temperature": 22}', retain=True)
        _until(lambda: len(_messages(ck)) >= 6, "the third retained message")
    discard_session("127.0.0.1", broker.port, client_id(str(ck)))
    with Receiving(broker, ck, "te/#"):
        broker.publish(marker, "4")
        _until(marked(4), "the fourth marker")
        _until(lambda: sum(isinstance(e, Again) for e in _entries(ck)) >= 2, "a copy")
    taken = [(m.topic, m.payload, m.retain) for m in _messages(ck) if m.topic == topic]
    assert taken == [(topic, b'{"temperature": 20}', True),
                     (topic, b'{"temperature": 21}', False),
                     (topic, b'{"temperature": 22}', False)]
    copies = [e for e in _entries(ck) if isinstance(e, Again)]
    by_position = {e.position: e for e in _entries(ck)}
    assert [(e.retained, by_position[e.of]) for e in copies] == [
        (True, _messages(ck)[2]), (True, _messages(ck)[5])]


def test_mq_r13_a_new_checkpoint_starts_a_new_session(broker: Broker, ck: Path) -> None:
    """MQ-R13: a checkpoint deleted and made again at its path (one client id) starts a new
    session: the kept session of the old one, subscribed to another filter and past its
    retained message, is dropped, so the new filter is subscribed to and the retained
    message taken (it was kept out by the session, and the old filter's messages in)."""
    broker.publish("te/a", "retained", retain=True)
    with Receiving(broker, ck, "other/#"):
        pass
    with Receiving(broker, ck, "other/#"):
        pass  # the session is kept: the record says so
    for path in sorted(ck.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    with Receiving(broker, ck, "te/#"):
        broker.publish("other/x", "old filter")
        broker.publish("te/b", "new filter")
        _until(lambda: len(_messages(ck)) >= 2, "the retained message and te/b")
        time.sleep(1)
    assert [(m.topic, m.payload) for m in _messages(ck)] == [
        ("te/a", b"retained"), ("te/b", b"new filter")]
