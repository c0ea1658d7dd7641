"""Where ``header.stamp`` sits in a serialized message, and how to read only it (BAG-R4).

A header-carrying ROS type has ``header`` (``std_msgs/msg/Header``) as its first field, so
the stamp sits at a fixed byte offset from the start of the message whatever follows it
(images, point clouds): reading eight bytes replaces deserializing the whole message.

- CDR (rosbag2): a 4-byte encapsulation header (representation id, big-endian, then two
  option bytes) precedes the body; alignment is counted from the start of the body. The
  ROS 2 header starts with ``stamp`` (``int32 sec``, ``uint32 nanosec``), so the stamp is
  at body offset 0, i.e. bytes 4..12, in the byte order the representation id names
  (``0x0000`` CDR big-endian, ``0x0001`` CDR little-endian).
- ROS 1: no encapsulation, little-endian, no alignment; the header starts with
  ``uint32 seq``, so the stamp is at bytes 4..12.

The offsets are computed from the type store's definitions, not hard-coded, so a store
whose header differs is handled or refused (``None``: no header stamp), never misread.
"""

from __future__ import annotations

import struct
from typing import Any

import attrs

HEADER = "std_msgs/msg/Header"
TIME = "builtin_interfaces/msg/Time"
CDR_ENCAPSULATION = 4
CDR_BE, CDR_LE = 0x0000, 0x0001
_BASE, _NAME = 1, 2  # rosbags Nodetype values: primitive, named (nested) type
_SIZES = {"bool": 1, "byte": 1, "char": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2,
          "int32": 4, "uint32": 4, "float32": 4, "int64": 8, "uint64": 8, "float64": 8}


@attrs.frozen
class StampLayout:
    """Where the stamp of a header-carrying type is: ``offset`` from the start of the
    serialized bytes (after the CDR encapsulation for CDR), and whether ``sec`` is signed."""

    offset: int
    cdr: bool
    signed: bool

    @property
    def needed(self) -> int:
        """Bytes a message must have for its stamp to be read."""
        return self.offset + 8

    def read(self, raw: bytes | memoryview) -> int | None:
        """The stamp in ns, or None when the bytes use an encoding this reader does not
        handle (the caller then deserializes the message in full)."""
        if len(raw) < self.needed:
            return None
        order = "<"
        if self.cdr:
            kind = (raw[0] << 8) | raw[1]
            if kind not in (CDR_BE, CDR_LE):
                return None
            order = "<" if kind == CDR_LE else ">"
        sec, nanosec = struct.unpack_from(f"{order}{'i' if self.signed else 'I'}I", raw,
                                          self.offset)
        return int(sec) * 1_000_000_000 + int(nanosec)


def _fields(typestore: Any, name: str) -> list[tuple[str, tuple[int, Any]]] | None:
    definition = typestore.fielddefs.get(name)
    return None if definition is None else list(definition[1])


def stamp_layout(typestore: Any, msgtype: str, cdr: bool) -> StampLayout | None:
    """The stamp's layout for ``msgtype``, or None when the type has no header first field
    (or a header whose stamp is not preceded only by fixed-size primitives)."""
    fields = _fields(typestore, msgtype)
    if not fields or fields[0][0] != "header" or fields[0][1] != (_NAME, HEADER):
        return None
    header = _fields(typestore, HEADER) or []
    offset = 0
    for name, (node, spec) in header:
        if name == "stamp":
            if (node, spec) != (_NAME, TIME):
                return None
            time = dict(_fields(typestore, TIME) or [])
            sec, nanosec = time.get("sec"), time.get("nanosec")
            if sec not in ((_BASE, ("int32", 0)), (_BASE, ("uint32", 0))) or nanosec != (
                    _BASE, ("uint32", 0)):
                return None
            if cdr:
                offset = -(-offset // 4) * 4  # CDR aligns the 4-byte sec to 4
            start = offset + (CDR_ENCAPSULATION if cdr else 0)
            return StampLayout(start, cdr, sec[1][0] == "int32")
        if node != _BASE or spec[1] != 0 or spec[0] not in _SIZES:
            return None
        size = _SIZES[spec[0]]
        if cdr:
            offset = -(-offset // min(size, 8)) * min(size, 8)
        offset += size
    return None
