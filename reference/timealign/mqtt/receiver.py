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
from timealign.mqtt.spool import Spool


def parse_url(url: str, field: str = "source") -> tuple[str, int, str]:
    """``mqtt://HOST:PORT/TOPIC`` as (host, port, topic filter or topic) (MQ-R10)."""
    parts = urlsplit(url)
    topic = parts.path[1:]
    try:
        port = parts.port or 1883
    except ValueError:
        raise InvalidInput(field, "MQ-R10", "the port must be a number in 0..65535",
                           url) from None
    if parts.scheme != "mqtt" or not parts.hostname or not topic or parts.query:
        raise InvalidInput(field, "MQ-R10", "expected mqtt://HOST:PORT/TOPIC_FILTER", url)
    return parts.hostname, port, topic


def client_id(checkpoint: str) -> str:
    """MQ-R10: fixed by the checkpoint folder, at most 23 characters (MQTT 3.1.1)."""
    digest = hashlib.sha256(str(Path(checkpoint).resolve()).encode()).hexdigest()
    return f"timealign-{digest[:13]}"


class Receiver:
    """Subscribes and spools until :meth:`stop`; ticks every ``interval`` seconds."""

    def __init__(self, url: str, spool: Spool, checkpoint: str, interval: float) -> None:
        import paho.mqtt.client as mqtt  # the mqtt extra, only when a stream starts
        from paho.mqtt.enums import CallbackAPIVersion

        self.host, self.port, self.topic = parse_url(url)
        self.spool, self.interval = spool, interval
        self._stopped = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2,
                                  client_id=client_id(checkpoint), clean_session=False,
                                  manual_ack=True)
        self.client.on_connect = self._connected
        self.client.on_message = self._message
        self.client.reconnect_delay_set(min_delay=1, max_delay=2)
        self._ticker = threading.Thread(target=self._tick, name="timealign-mqtt-tick",
                                        daemon=True)

    def start(self) -> None:
        try:
            self.client.connect(self.host, self.port, keepalive=30)
        except OSError as error:
            raise InvalidInput("source", "MQ-R10", f"cannot reach the broker ({error})",
                               f"mqtt://{self.host}:{self.port}/{self.topic}") from None
        self.client.loop_start()
        self._ticker.start()

    def _connected(self, client: Any, userdata: Any, flags: Any, reason: Any,
                   properties: Any) -> None:
        client.subscribe(self.topic, qos=1)  # again on every reconnect

    def _message(self, client: Any, userdata: Any, message: Any) -> None:
        self.spool.receive([(message.topic, bytes(message.payload), int(message.mid),
                             bool(message.dup), time.time_ns())])
        if message.qos:
            client.ack(message.mid, message.qos)  # MQ-R5: after the spool holds it

    def _tick(self) -> None:
        while not self._stopped.wait(self.interval):
            self.spool.tick(time.time_ns())

    def stop(self) -> None:
        self._stopped.set()
        self.client.disconnect()
        self.client.loop_stop()
