"""The durable spool of received MQTT messages (MQ-R5..MQ-R7): MQTT cannot replay, so every
message is appended here, fsynced, before it is acknowledged, and the stream reads the spool.

One JSON line per entry, numbered by its position (its line number from 0), which is what
Spark's offsets count. Three kinds of entry: a received message (topic, payload in base64,
its MQTT identity, the arrival from the receiving clock), a tick (the receiving clock once per
micro-batch, MQ-R6) and a redelivery (a copy the broker sent again, naming the position of
the message it repeats, MQ-R7). Re-reading the spool gives the same entries, so a re-run
gives the same outcomes.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs

from timealign.errors import INT64_MAX, InvalidInput

SPOOL_NAME = "spool.jsonl"
SPOOL_FOLDER = "mqtt"


def spool_path(checkpoint: str | Path) -> Path:
    """MQ-R5: a stream's spool file, inside its checkpoint folder."""
    return Path(checkpoint) / SPOOL_FOLDER / SPOOL_NAME


@attrs.frozen
class Message:
    """A received message (MQ-R5): ``mid`` is the MQTT packet id (0 at QoS 0), ``dup`` the
    redelivery flag the broker set, ``arrival`` the receiving clock in ns, ``retain`` the
    flag of a delivery the broker made from its retained store (MQ-R13)."""

    position: int
    topic: str
    payload: bytes
    mid: int
    dup: bool
    arrival: int
    retain: bool = False


@attrs.frozen
class Tick:
    """The receiving clock at a micro-batch (MQ-R6)."""

    position: int
    at: int


@attrs.frozen
class Again:
    """A copy of the message at ``of``, taken once: the broker's redelivery of it (MQ-R7),
    or, ``retained``, its retained store's copy sent again at a subscription (MQ-R13)."""

    position: int
    of: int
    arrival: int
    retained: bool = False


Entry = Message | Tick | Again
#: A message as the receiver hands it over: (topic, payload, mid, dup, retain, now in ns).
Delivery = tuple[str, bytes, int, bool, bool, int]


def encode(entry: Entry) -> str:
    """One spool line (without its newline)."""
    if isinstance(entry, Message):
        raw: dict[str, Any] = {
            "pos": entry.position, "topic": entry.topic,
            "payload": base64.b64encode(entry.payload).decode("ascii"),
            "mid": entry.mid, "dup": entry.dup, "arrival": entry.arrival}
        if entry.retain:  # MQ-R13: written only when set, so older spools read alike
            raw["retain"] = True
    elif isinstance(entry, Tick):
        raw = {"pos": entry.position, "tick": entry.at}
    else:
        raw = {"pos": entry.position, "again": entry.of, "arrival": entry.arrival}
        if entry.retained:
            raw["retained"] = True
    return json.dumps(raw, separators=(",", ":"))


def _flag(raw: dict[str, Any], name: str) -> bool:
    value = raw.get(name, False)
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be a boolean")
    return value


def _int(raw: dict[str, Any], name: str) -> int:
    value = raw[name]
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= INT64_MAX:
        raise ValueError(f"{name} must be an integer in [0, 2**63 - 1]")
    return value


def decode(line: str) -> Entry:
    """The entry of one spool line. Raises ``ValueError`` saying what is wrong."""
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON ({error.msg})") from None
    if not isinstance(raw, dict):
        raise ValueError("not a JSON object")
    try:
        position = _int(raw, "pos")
        if "tick" in raw:
            return Tick(position, _int(raw, "tick"))
        if "again" in raw:
            return Again(position, _int(raw, "again"), _int(raw, "arrival"),
                         _flag(raw, "retained"))
        topic, dup = raw["topic"], raw["dup"]
        if not isinstance(topic, str) or not isinstance(dup, bool):
            raise ValueError("topic must be a string and dup a boolean")
        payload = base64.b64decode(raw["payload"], validate=True)
        return Message(position, topic, payload, _int(raw, "mid"), dup, _int(raw, "arrival"),
                       _flag(raw, "retain"))
    except KeyError as missing:
        raise ValueError(f"no field {missing}") from None
    except (binascii.Error, TypeError):
        raise ValueError("payload is not base64") from None


def read_entries(path: Path) -> tuple[list[Entry], int]:
    """MQ-R5: the entries of a spool file and the byte length of its whole lines. A last
    line without its newline, or one that does not decode, is torn (the writer died while
    appending it; it was never acknowledged, so the broker sends it again) and is left out;
    any other bad line is refused naming the file and the line."""
    data = path.read_bytes() if path.exists() else b""
    entries: list[Entry] = []
    kept = 0
    lines = data.split(b"\n")
    for number, line in enumerate(lines[:-1], start=1):
        try:
            entry = decode(line.decode("utf-8"))
            if entry.position != len(entries):
                raise ValueError(f"position {entry.position}, expected {len(entries)}")
        except (ValueError, UnicodeDecodeError) as error:
            if number == len(lines) - 1 and lines[-1] == b"":
                break  # the last whole line is damaged: torn (fsync covers a batch)
            raise InvalidInput(f"{path}:{number}", "MQ-R5",
                               f"damaged spool line: {error}") from None
        entries.append(entry)
        kept += len(line) + 1
    return entries, kept


def is_redelivery(last: Message | None, topic: str, payload: bytes, dup: bool) -> bool:
    """MQ-R7: a message is a redelivery when the broker flagged it ``dup`` and the last
    spooled message with its packet id has its topic and payload (a packet id is reused
    only once its message was acknowledged, which happens after the spool holds it)."""
    return dup and last is not None and last.topic == topic and last.payload == payload


def is_retained_copy(last: Message | None, payload: bytes, retain: bool) -> bool:
    """MQ-R13: a delivery flagged ``retain`` is the broker's retained message of its topic,
    sent because a subscription was made; it was taken already when the last message the
    spool took on that topic has its payload (a new retained message replaces the stored
    one, and reaches a subscribed stream as a live message first)."""
    return retain and last is not None and last.payload == payload


class Spool:
    """The spool file of one stream: appends are fsynced per batch of lines and
    serialised (the MQTT client thread and Spark's driver thread both append)."""

    def __init__(self, folder: str | Path) -> None:
        self.path = Path(folder) / SPOOL_NAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        entries, kept = read_entries(self.path)
        if self.path.exists() and self.path.stat().st_size != kept:
            with self.path.open("r+b") as handle:  # MQ-R5: drop the torn line
                handle.truncate(kept)
                os.fsync(handle.fileno())
        self._lock = threading.Lock()
        self.count = len(entries)
        self.clock = max((_clock(e) for e in entries), default=0)
        self._by_mid: dict[int, Message] = {
            e.mid: e for e in entries if isinstance(e, Message) and e.mid}
        self._by_topic: dict[str, Message] = {
            e.topic: e for e in entries if isinstance(e, Message)}

    def _append(self, made: list[Entry]) -> None:
        with self.path.open("ab") as handle:
            handle.write("".join(encode(e) + "\n" for e in made).encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        self.count += len(made)

    def _now(self, now: int) -> int:
        """MQ-R6: the receiving clock as the spool records it, never going back."""
        self.clock = max(self.clock, now)
        return self.clock

    def receive(self, items: Iterable[Delivery]) -> list[Entry]:
        """Append a batch of received messages ``(topic, payload, mid, dup, retain,
        now_ns)``, one fsync for the batch; return the entries (a redelivery or a retained
        copy of a message taken already as :class:`Again`)."""
        with self._lock:
            made: list[Entry] = []
            for topic, payload, mid, dup, retain, now in items:
                position, at = self.count + len(made), self._now(now)
                last = self._by_mid.get(mid) if mid else None
                if last is not None and is_redelivery(last, topic, payload, dup):
                    made.append(Again(position, last.position, at))
                    continue
                same_topic = self._by_topic.get(topic)
                if same_topic is not None and is_retained_copy(same_topic, payload, retain):
                    made.append(Again(position, same_topic.position, at, retained=True))
                    continue
                message = Message(position, topic, payload, mid, dup, at, retain)
                if mid:
                    self._by_mid[mid] = message
                self._by_topic[topic] = message
                made.append(message)
            if made:
                self._append(made)
            return made

    def tick(self, now: int) -> Tick:
        """Append a tick at the receiving clock (MQ-R6); return it."""
        with self._lock:
            made = Tick(self.count, self._now(now))
            self._append([made])
            return made


def _clock(entry: Entry) -> int:
    return entry.at if isinstance(entry, Tick) else entry.arrival


def entries_between(path: Path, start: int, end: int) -> Iterator[Entry]:
    """The entries at positions ``start <= p < end`` (what one micro-batch reads)."""
    entries, _ = read_entries(path)
    if len(entries) < end:
        raise InvalidInput(str(path), "MQ-R5", f"the spool holds {len(entries)} entries, "
                           f"the stream's offset is {end}: the spool was cut")
    yield from entries[start:end]
