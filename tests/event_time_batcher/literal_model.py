"""The independent second model: a literal, mutable transcription of the note's section 5.

It follows the note's pseudo-code line by line (a list of batches, each with a key -> event
dict, mutated in place; ``Vec::pop`` for flush) and shares no code with the reference. It
adds only what the reference adds on purpose: an output for each silent drop (EB-D8) and
members sorted by arrival (EB-D9). Inputs must be valid (no time reversal, unique ids).
Outputs are plain tuples: ``("batch", start, end, ids)``, ``("timer", at)``,
``("rejected", id, reason)``, ``("dropped", id, reason)``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, NamedTuple

Out = tuple[Any, ...]


class Event(NamedTuple):
    t: int
    seq: int
    id: str


class Batch:
    def __init__(self, start: int, end: int) -> None:
        self.start, self.end = start, end
        self.events: dict[str, Event] = {}

    def emit(self) -> Out:
        ordered = sorted(self.events.values(), key=lambda e: e.seq)
        return ("batch", self.start, self.end, tuple(e.id for e in ordered))


class LiteralBatcher:
    def __init__(self, w: int, d: int, leap: int) -> None:
        self.w, self.d, self.leap = w, d, leap
        self.batches: list[Batch] = []
        self.seq = 0

    def event(self, now: int, key: str, t: int, id: str) -> list[Out]:
        self.seq += 1
        m = Event(t, self.seq, id)
        if t < now - self.d:
            return [("rejected", id, "too_old")]
        if t > now + self.leap:
            return [("rejected", id, "too_far_in_future")]
        b = next((b for b in self.batches if b.start <= t <= b.end), None)
        if b is None:
            start, end = t, t + self.w
            later = [x for x in self.batches if x.start > t]
            if later:
                end = min(end, min(later, key=lambda x: x.start).start)
            new = Batch(start, end)
            new.events[key] = m
            self.batches.append(new)
            return self.timer_or_close(now, end)
        if key not in b.events:
            b.events[key] = m
            return []
        e = b.events[key]
        if e.t == t:
            return [("rejected", id, "duplicate")]
        s = t + math.trunc(Fraction(e.t - t, 2))
        old_end, b.end = b.end, s
        new = Batch(s, old_end)
        members, b.events = b.events, {}
        lost: list[Out] = []
        for k, x in [*members.items(), (key, m)]:
            side = b if x.t < s else new
            if k in side.events:
                lost.append(("dropped", side.events[k].id, "overwritten"))
            side.events[k] = x
        self.batches.append(new)
        return lost + self.timer_or_close(now, s)

    def timer_or_close(self, now: int, end: int) -> list[Out]:
        x = end + self.d
        if now < x:
            return [("timer", x)]
        return self.time(now)

    def time(self, now: int) -> list[Out]:
        closed = [b for b in self.batches if b.end + self.d <= now]
        self.batches = [b for b in self.batches if b.end + self.d > now]
        return [b.emit() for b in closed]

    def flush(self) -> list[Out]:
        out = []
        while self.batches:
            out.append(self.batches.pop().emit())
        return out
