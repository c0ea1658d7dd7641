"""The MQTT client in the driver process (MQ-R10): received messages into the spool, and a
tick once per trigger interval.

QoS 1 with a persistent session (``clean_session=False``) under a client id fixed by the
checkpoint, so the broker keeps the messages while the job is down; each message is
acknowledged only after the spool holds it (``manual_ack``, MQ-R5), so a crash between the
two ends in a redelivery, which the spool takes once (MQ-R7).
"""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from timealign.errors import InvalidInput
from timealign.mqtt.spool import Spool, spool_path

SUBSCRIPTION_NAME = "subscription.txt"


#: MQTT 3.1.1 (4.7.3): a topic filter is 1 to 65535 bytes of UTF-8 without U+0000.
MAX_FILTER_BYTES = 65535


def check_filter(topic: str, field: str = "source") -> None:
    """MQ-R12: a topic filter by MQTT's rules (3.1.1, 4.7.1): ``#`` only as the last level
    and alone in it, ``+`` alone in its level; not empty, at most 65535 bytes of UTF-8, no
    U+0000. A filter the broker would refuse is refused here, before anything starts."""
    def refuse(why: str) -> InvalidInput:
        return InvalidInput(field, "MQ-R12", f"not an MQTT topic filter: {why}", topic)

    if not topic:
        return  # the URL's own check names the missing filter (MQ-R10)
    if "\x00" in topic:
        raise refuse("it holds the character U+0000")
    try:
        size = len(topic.encode("utf-8"))
    except UnicodeEncodeError:
        raise refuse("it is not Unicode text (a lone surrogate)") from None
    if size > MAX_FILTER_BYTES:
        raise refuse(f"{size} bytes, more than MQTT's {MAX_FILTER_BYTES}")
    levels = topic.split("/")
    for number, level in enumerate(levels, start=1):
        if "#" in level and (level != "#" or number != len(levels)):
            raise refuse(f"'#' must be the last level and alone in it (level {number}: "
                         f"{level!r})")
        if "+" in level and level != "+":
            raise refuse(f"'+' must be alone in its level (level {number}: {level!r})")


def parse_url(url: str, field: str = "source") -> tuple[str, int, str]:
    """``mqtt://HOST:PORT/FILTER`` as (host, port, topic filter) (MQ-R10, MQ-R12). The filter
    is every character after the first ``/`` that follows the host and port, exactly as
    written: ``#`` is MQTT's multi-level wildcard, not a URL fragment, and nothing is
    percent-decoded. A ``?`` is refused (a URL query would otherwise be subscribed to as
    part of the filter and receive nothing), as are user information and an empty filter."""
    expected = "expected mqtt://HOST:PORT/TOPIC_FILTER"
    scheme, separator, rest = url.partition("://")
    if scheme != "mqtt" or not separator:
        raise InvalidInput(field, "MQ-R10", expected, url)
    authority, slash, topic = rest.partition("/")
    if "?" in url:
        raise InvalidInput(field, "MQ-R12", "a '?' (a URL query) is not taken: the MQTT "
                           "options are fixed (QoS 1, persistent session, MQ-R10); give "
                           "mqtt://HOST:PORT/TOPIC_FILTER", url)
    if "@" in authority:
        raise InvalidInput(field, "MQ-R10", "user information (user@) is not taken: the "
                           "broker is reached without credentials", url)
    parts = urlsplit(f"mqtt://{authority}")
    try:
        port = 1883 if parts.port is None else parts.port
    except ValueError:
        raise InvalidInput(field, "MQ-R10", "the port must be a number in 0..65535",
                           url) from None
    if not parts.hostname or not slash or not topic:
        raise InvalidInput(field, "MQ-R10", expected, url)
    check_filter(topic, field)
    return parts.hostname, port, topic


def subscription_path(checkpoint: str | Path) -> Path:
    """MQ-R13: where a stream's checkpoint records the topic filter its session holds."""
    return spool_path(checkpoint).parent / SUBSCRIPTION_NAME


def check_subscription(checkpoint: str | Path, topic: str, field: str = "source") -> None:
    """MQ-R13: a stream continues with the filter its session subscribed to. The broker
    keeps the subscription of a persistent session and the receiver does not renew it
    (that would resend the retained messages), so another filter would never be
    subscribed: refused, naming both."""
    path = subscription_path(checkpoint)
    if not path.is_file():
        return
    recorded = path.read_text(encoding="utf-8")
    if recorded != topic:
        raise InvalidInput(field, "MQ-R13", f"the checkpoint's stream subscribed to "
                           f"{recorded!r}; a stream continues with its filter: give that "
                           f"filter, or a new --checkpoint (and --output) for this one", topic)


def client_id(checkpoint: str) -> str:
    """MQ-R10: fixed by the checkpoint folder, at most 23 characters (MQTT 3.1.1)."""
    digest = hashlib.sha256(str(Path(checkpoint).resolve()).encode()).hexdigest()
    return f"timealign-{digest[:13]}"


def discard_session(host: str, port: int, client: str, timeout: float = 30.0) -> None:
    """MQ-R13: make the broker drop the persistent session of the client id ``client`` (a
    clean-session connection under it, then a disconnection); retained messages stay."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    cleaner = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client, clean_session=True)
    connected = threading.Event()
    cleaner.on_connect = lambda *_: connected.set()
    cleaner.connect(host, port, keepalive=30)
    cleaner.loop_start()
    try:
        if not connected.wait(timeout):
            raise InvalidInput("source", "MQ-R10", f"the broker did not answer in "
                               f"{timeout:g} s", f"mqtt://{host}:{port}")
    finally:
        cleaner.disconnect()
        cleaner.loop_stop()


class Receiver:
    """Subscribes and spools until :meth:`stop`; ticks every ``interval`` seconds."""

    def __init__(self, url: str, spool: Spool, checkpoint: str, interval: float) -> None:
        import paho.mqtt.client as mqtt  # the mqtt extra, only when a stream starts
        from paho.mqtt.enums import CallbackAPIVersion

        self.host, self.port, self.topic = parse_url(url)
        self.spool, self.interval, self.checkpoint = spool, interval, checkpoint
        self._stopped = threading.Event()
        #: set once the broker holds the subscription (a kept session, or a SUBACK)
        self.ready = threading.Event()
        #: why the broker refused the subscription (its SUBACK), raised by :meth:`check`
        self.refused: str | None = None
        self.client_id = client_id(checkpoint)
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2,
                                  client_id=self.client_id, clean_session=False,
                                  manual_ack=True)
        self.client.on_connect = self._connected
        self.client.on_message = self._message
        self.client.on_subscribe = self._subscribed
        self.client.reconnect_delay_set(min_delay=1, max_delay=2)
        self._ticker = threading.Thread(target=self._tick, name="timealign-mqtt-tick",
                                        daemon=True)

    def start(self) -> None:
        check_subscription(self.checkpoint, self.topic)
        try:
            if not subscription_path(self.checkpoint).is_file():
                # MQ-R13: a new checkpoint starts a new session: a session the broker kept
                # under this client id (a checkpoint deleted and made again at its path)
                # would hold another filter's subscription, and no retained message
                discard_session(self.host, self.port, self.client_id)
            self.client.connect(self.host, self.port, keepalive=30)
        except OSError as error:
            raise InvalidInput("source", "MQ-R10", f"cannot reach the broker ({error})",
                               f"mqtt://{self.host}:{self.port}/{self.topic}") from None
        self.client.loop_start()
        self._ticker.start()

    def _connected(self, client: Any, userdata: Any, flags: Any, reason: Any,
                   properties: Any) -> None:
        # MQ-R13: a session the broker kept holds the subscription, and subscribing again
        # would make the broker send its retained messages again; a new session (the first
        # start, a broker that lost its sessions) needs the subscription, on every reconnect
        if not flags.session_present:
            client.subscribe(self.topic, qos=1)
        else:
            self.ready.set()

    def _subscribed(self, client: Any, userdata: Any, mid: Any, reasons: Any,
                    properties: Any) -> None:
        failed = [str(reason) for reason in reasons if reason.is_failure]
        if failed:  # MQ-R12: an ACL, or a filter this broker does not take
            self.refused = ", ".join(failed)
            return
        path = subscription_path(self.checkpoint)
        if not path.is_file():  # MQ-R13: recorded once the broker holds the subscription
            path.write_text(self.topic, encoding="utf-8")
        self.ready.set()

    def check(self) -> None:
        """MQ-R12: raise, naming the filter, when the broker refused the subscription (the
        stream would receive nothing, forever); called at every poll of the stream."""
        if self.refused is not None:
            raise InvalidInput("source", "MQ-R12", f"the broker refused the subscription "
                               f"({self.refused})", self.topic)

    def _message(self, client: Any, userdata: Any, message: Any) -> None:
        self.spool.receive([(message.topic, bytes(message.payload), int(message.mid),
                             bool(message.dup), bool(message.retain), time.time_ns())])
        if message.qos:
            client.ack(message.mid, message.qos)  # MQ-R5: after the spool holds it

    def _tick(self) -> None:
        while not self._stopped.wait(self.interval):
            self.spool.tick(time.time_ns())

    def stop(self) -> None:
        """Disconnect and stop ticking; once (MQ-R14 stops it before the stream ends)."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        self.client.disconnect()
        self.client.loop_stop()
