"""An independent second model: a literal, mutable transcription of the note's algorithm.

Written straight from ``shared/notes/rate_aware_batcher.md`` sections 6 to 9 (mutable
objects, ``deque``, ``statistics.median``, a dict of streams), sharing no code with the
reference, so the differential tests compare two readings of the same text. Messages are
``(kind, name, timestamp, id)`` tuples; ``batch`` returns ``(start, end, ids)`` or ``None``.
"""

from __future__ import annotations

import statistics
from collections import deque

GATED = {"detector_events", "monitor_events", "monitor_counts", "area_detector"}
Message = tuple[str, str, int, str]


def from_seconds(s: float) -> int:
    return int(s * 1_000_000_000)


class Estimator:
    def __init__(self) -> None:
        self.last: int | None = None
        self.diffs: deque[int] = deque(maxlen=32)

    def observe(self, ts: int) -> None:
        if self.last is not None and ts - self.last > 0:
            self.diffs.append(ts - self.last)
        if self.last is None or ts > self.last:
            self.last = ts

    @property
    def integer_rate_hz(self) -> int | None:
        if len(self.diffs) < 4:
            return None
        seed = statistics.median(self.diffs)
        per_pulse = [d / k for d in self.diffs if (k := round(d / seed)) >= 1]
        period = statistics.median(per_pulse) if per_pulse else seed
        raw = 1e9 / period
        rate = round(raw)
        if rate < 1:
            return None
        if abs(raw - rate) > max(0.1 * rate, 0.1):
            return None
        return int(rate)


class PulseGrid:
    def __init__(self, origin: int, period: int, spb: int) -> None:
        self.origin_ns, self.period_ns, self.slots_per_batch = origin, period, spb

    def pulse_index(self, t: int) -> int:
        return round((t - self.origin_ns) / self.period_ns)

    def batch_base_index(self, s: int) -> int:
        q, r = divmod(s - self.origin_ns, self.period_ns)
        return q if r <= min(1_000_000, self.period_ns // 2) else q + 1

    def slot_in_batch(self, t: int, s: int) -> int:
        return self.pulse_index(t) - self.batch_base_index(s)


class GatedStream:
    def __init__(self) -> None:
        self.estimator = Estimator()
        self.grid: PulseGrid | None = None
        self.bucket: list[Message] = []
        self.max_slot = -1
        self.absent = 0

    def refresh_grid(self, batch_start: int, length: int) -> None:
        rate = self.estimator.integer_rate_hz
        if rate is None:
            return
        l_s = length / 1e9
        if rate * l_s < 1.0:
            self.grid = None
            return
        if self.grid is not None and abs(self.grid.origin_ns - batch_start) <= 1000 * length:
            origin = self.grid.origin_ns
        else:
            if self.bucket:
                later = [m[2] for m in self.bucket if m[2] >= batch_start]
                cand: int | None = later[0] if later else self.bucket[0][2]
            else:
                cand = self.estimator.last
            if cand is None or abs(cand - batch_start) > 1000 * length:
                self.grid = None
                return
            origin = cand
        spb = round(rate * l_s)
        period = round(1e9 / rate)
        g = self.grid
        if g is None or (g.origin_ns, g.period_ns, g.slots_per_batch) != (origin, period, spb):
            self.grid = PulseGrid(origin, period, spb)


class LiteralBatcher:
    def __init__(self, batch_length_s: float = 1.0, timeout_s: float | None = None) -> None:
        self.length = from_seconds(batch_length_s)
        self.factor = timeout_s / batch_length_s if timeout_s is not None else 1.2
        self.pending_length: int | None = None
        self.window: tuple[int, int] | None = None
        self.hwm: int | None = None
        self.streams: dict[tuple[str, str], GatedStream] = {}
        self.non_gated: list[Message] = []
        self.overflow: list[Message] = []
        self.future: list[Message] = []

    def set_batch_length(self, seconds: float) -> None:
        self.pending_length = from_seconds(seconds)

    def batch(self, messages: list[Message]) -> tuple[int, int, list[str]] | None:
        if messages:
            latest = max(m[2] for m in messages)
            if self.window is None or self.hwm is None:
                self.hwm = latest
            else:
                self.hwm = max(self.hwm, min(latest, self.window[0] + 3 * self.length))
        if self.window is None:
            if not messages:
                return None
            start, end = min(m[2] for m in messages), max(m[2] for m in messages)
            for m in messages:
                if m[0] in GATED:
                    self.streams.setdefault((m[0], m[1]), GatedStream()).estimator.observe(m[2])
            self.window = (end, end + self.length)
            for s in self.streams.values():
                s.refresh_grid(end, self.length)
            return (start, end, [m[3] for m in messages])
        for m in messages:
            self.route(m)
        gridded_present = any(s.grid is not None and s.bucket for s in self.streams.values())
        if self.overflow and not gridded_present:
            self.recover_from_gap()
        if self.complete():
            return self.close()
        return None

    def route(self, m: Message) -> None:
        assert self.window is not None
        start, end = self.window
        ts = m[2]
        stream = self.streams.setdefault((m[0], m[1]), GatedStream()) if m[0] in GATED else None
        if (stream is None or stream.grid is None) and end < ts <= end + 3 * self.length:
            self.future.append(m)
            return
        if stream is None:
            self.non_gated.append(m)
            return
        stream.estimator.observe(ts)
        if stream.grid is None:
            stream.bucket.append(m)
            return
        slot = stream.grid.slot_in_batch(ts, start)
        spb = stream.grid.slots_per_batch
        if slot >= spb:
            stream.max_slot = max(stream.max_slot, spb - 1)
            self.overflow.append(m)
            return
        stream.bucket.append(m)
        stream.max_slot = max(stream.max_slot, slot)

    def drain(self) -> list[Message]:
        out, self.non_gated = self.non_gated, []
        for s in self.streams.values():
            out.extend(s.bucket)
            s.bucket = []
            s.max_slot = -1
        return out

    def recover_from_gap(self) -> None:
        assert self.window is not None
        stashed = self.drain()
        pending, self.overflow = self.overflow, []
        fut, self.future = self.future, []
        start = self.window[0]
        steps = max((min(m[2] for m in pending) - start) // self.length, 0)
        if steps > 0:
            new_start = start + steps * self.length
            self.window = (new_start, new_start + self.length)
        for m in stashed + pending + fut:
            self.route(m)

    def complete(self) -> bool:
        assert self.window is not None
        start = self.window[0]
        threshold = start + from_seconds(self.factor * (self.length / 1e9))
        if self.hwm is not None and self.hwm >= threshold:
            return True
        gating = [s for s in self.streams.values() if s.grid is not None]
        return bool(gating) and all(
            s.max_slot >= s.grid.slots_per_batch - 1 for s in gating if s.grid is not None
        )

    def refresh_streams(self, start: int) -> None:
        """At a close: evict streams absent for 5 closes, refresh the others' grids, and
        apply a pending batch length."""
        for sid in list(self.streams):
            s = self.streams[sid]
            if s.bucket:
                s.absent = 0
                s.refresh_grid(start, self.length)
            else:
                s.absent += 1
                if s.absent >= 5:
                    del self.streams[sid]
        if self.pending_length is not None:
            self.length, self.pending_length = self.pending_length, None
            for s in self.streams.values():
                s.refresh_grid(start, self.length)

    def reroute_held(self) -> None:
        """After a close: route the overflow, then the future messages, again."""
        ov, self.overflow = self.overflow, []
        for m in ov:
            self.route(m)
        fu, self.future = self.future, []
        for m in fu:
            self.route(m)

    def close(self) -> tuple[int, int, list[str]]:
        assert self.window is not None
        start, end = self.window
        self.refresh_streams(start)
        out = (start, end, [m[3] for m in self.drain()])
        self.window = (end, end + self.length)
        self.reroute_held()
        return out

    def held(self) -> list[str]:
        ids = [m[3] for m in self.non_gated]
        for s in self.streams.values():
            ids.extend(m[3] for m in s.bucket)
        return ids + [m[3] for m in self.overflow] + [m[3] for m in self.future]


# ---- the esslivedata-head profile -------------------------------------------------------
# Written from the note's appendix (later upstream changes), again as plain mutable code:
# the clock is the caller's reading passed with each call (frozen when absent).

STALL_BATCHES = 10
HORIZON_BATCHES = 3
EPOCH_BATCHES = 1000


def anchor_of(stamps: list[int], length: int) -> int:
    """Newest stamp of the biggest cluster (clusters split where consecutive sorted stamps
    are more than 3L apart; on a tie in size the later cluster wins)."""
    ordered = sorted(stamps)
    clusters = [[ordered[0]]]
    for t in ordered[1:]:
        if t - clusters[-1][-1] > HORIZON_BATCHES * length:
            clusters.append([t])
        else:
            clusters[-1].append(t)
    best = clusters[0]
    for c in clusters[1:]:
        if len(c) >= len(best):
            best = c
    return best[-1]


class LiteralHeadBatcher(LiteralBatcher):
    def __init__(self, batch_length_s: float = 1.0, timeout_s: float | None = None) -> None:
        super().__init__(batch_length_s, timeout_s)
        self.now: int | None = None
        self.last_close: int | None = None

    def batch(self, messages: list[Message],
              now: int | None = None) -> tuple[int, int, list[str]] | None:
        if now is not None:
            if self.now is not None and now < self.now:
                raise ValueError("clock went backwards")
            if self.last_close is None:
                self.last_close = now
            self.now = now
        if messages:
            latest = max(m[2] for m in messages)
            if self.window is None or self.hwm is None:
                self.hwm = latest
            else:
                self.hwm = max(self.hwm, min(latest, self.window[0] + 3 * self.length))
        if self.window is None:
            if not messages:
                return None
            return self.bootstrap(messages)
        for m in messages:
            self.route(m)
        gridded_present = any(s.grid is not None and s.bucket for s in self.streams.values())
        if self.overflow and not gridded_present:
            self.recover_from_gap()
        if self.complete():
            return self.close()
        if self.stalled():
            self.recover_from_stall()
            if self.complete():
                return self.close()
        return None

    def bootstrap(self, messages: list[Message]) -> tuple[int, int, list[str]]:
        start = min(m[2] for m in messages)
        end = anchor_of([m[2] for m in messages], self.length)
        for m in messages:
            if m[0] in GATED and m[2] <= end:
                self.streams.setdefault((m[0], m[1]), GatedStream()).estimator.observe(m[2])
        self.window = (end, end + self.length)
        self.hwm = end
        self.last_close = self.now
        for s in self.streams.values():
            s.refresh_grid(end, self.length)
        return (start, end, [m[3] for m in messages])

    def route(self, m: Message) -> None:
        assert self.window is not None
        if m[0] in GATED:
            self.streams.setdefault((m[0], m[1]), GatedStream())
        if m[2] - self.window[1] > EPOCH_BATCHES * self.length:
            self.non_gated.append(m)
            return
        start, end = self.window
        ts = m[2]
        stream = self.streams[(m[0], m[1])] if m[0] in GATED else None
        if (stream is None or stream.grid is None) and end < ts <= end + 3 * self.length:
            self.future.append(m)
            return
        if stream is None:
            self.non_gated.append(m)
            return
        stream.estimator.observe(ts)
        if stream.grid is None:
            stream.bucket.append(m)
            return
        slot = stream.grid.slot_in_batch(ts, start)
        spb = stream.grid.slots_per_batch
        if slot >= spb:
            if slot < spb * (1 + HORIZON_BATCHES):
                stream.max_slot = max(stream.max_slot, spb - 1)
            self.overflow.append(m)
            return
        stream.bucket.append(m)
        stream.max_slot = max(stream.max_slot, slot)

    def complete(self) -> bool:
        assert self.window is not None
        if self.factor == float("inf"):
            gating = [s for s in self.streams.values() if s.grid is not None]
            return bool(gating) and all(
                s.max_slot >= s.grid.slots_per_batch - 1 for s in gating if s.grid is not None
            )
        return super().complete()

    def buffered(self) -> list[Message]:
        out = list(self.non_gated)
        for s in self.streams.values():
            out.extend(s.bucket)
        return out

    def stalled(self) -> bool:
        if self.now is None or self.last_close is None:
            return False
        if self.now - self.last_close < STALL_BATCHES * self.length:
            return False
        return bool(self.buffered())

    def recover_from_stall(self) -> None:
        assert self.window is not None
        anchor = anchor_of([m[2] for m in self.buffered()], self.length)
        self.last_close = self.now
        if self.window[0] <= anchor < self.window[1]:
            return
        stashed = self.drain() + self.overflow + self.future
        self.overflow, self.future = [], []
        self.window = (anchor, anchor + self.length)
        self.hwm = anchor
        for m in stashed:
            if m[2] - self.window[1] > 3 * self.length:
                self.non_gated.append(m)
            else:
                self.route(m)

    def close(self) -> tuple[int, int, list[str]]:
        assert self.window is not None
        self.last_close = self.now
        start, end = self.window
        self.refresh_streams(start)
        members = self.drain()
        if not any(s.grid is not None for s in self.streams.values()):
            members += self.future + self.overflow
            self.future, self.overflow = [], []
            if members:
                end = max(anchor_of([m[2] for m in members], self.length), end)
        out = (start, end, [m[3] for m in members])
        self.window = (end, end + self.length)
        self.reroute_held()
        return out
