"""A deliberately literal, mutable transcription of the note's compact pseudocode (§17).

This is the second, independent model of the differential test: ``collections.deque`` per
topic, lists for the past buffers, a counter-free ``all non-empty`` test, the drop reasons
reported where the pseudocode discards a message. It shares nothing with the reference
except ``Fraction`` arithmetic written out again here.
"""

from __future__ import annotations

import math
from collections import deque
from fractions import Fraction
from typing import Any

NONE = -1


class Literal:
    def __init__(self, n: int, q: int, age_penalty: float = 0.1,
                 max_interval: int = 2_147_483_647_999_999_999,
                 bounds: list[int] | None = None, ros1: bool = False) -> None:
        self.n, self.q, self.max = n, q, max_interval
        self.s = Fraction(1.0 + age_penalty)
        self.sf = 1.0 + age_penalty
        self.ros1 = ros1
        self.lb = bounds or [0] * n
        self.reset()

    def reset(self) -> None:
        n = self.n
        self.D: list[deque[tuple[int, str]]] = [deque() for _ in range(n)]
        self.P: list[list[tuple[int, str]]] = [[] for _ in range(n)]
        self.dropped = [False] * n
        self.warned = [False] * n
        self.cand: list[tuple[int, str]] | None = None
        self.pivot = NONE
        self.cs = self.ce = self.pt = 0
        self.out: list[tuple[Any, ...]] = []

    def scale(self, d: int) -> int:
        if self.ros1:
            sec, nsec = divmod(d, 10**9)
            y = (float(sec) + 1e-9 * float(nsec)) * self.sf
            whole = math.floor(y)
            frac = (y - whole) * 1e9
            r = math.floor(frac)
            if frac - r >= 0.5:
                r += 1
            return int(whole) * 10**9 + r
        x = Fraction(d) * self.s
        return math.trunc(x)

    # add(i, m)
    def add(self, i: int, stamp: int, ident: str) -> list[tuple[Any, ...]]:
        self.out = []
        D, P = self.D, self.P
        D[i].append((stamp, ident))
        if len(D[i]) == 1:
            if all(D):
                self.process()
        elif not self.warned[i]:
            prev = D[i][-2][0]
            if stamp < prev:
                self.out.append(("warning", i, "out_of_order"))
                self.warned[i] = True
            elif stamp - prev < self.lb[i]:
                self.out.append(("warning", i, "closer_than_bound"))
                self.warned[i] = True
        if len(D[i]) + len(P[i]) > self.q:
            for k in range(self.n):
                D[k].extendleft(reversed(P[k]))
                P[k] = []
            self.out.append(("dropped", D[i].popleft()[1], "queue_overflow"))
            self.dropped[i] = True
            if self.pivot != NONE:
                self.cand = None
                self.pivot = NONE
                self.process()
        return self.out

    def end(self) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        for k in range(self.n):
            out.extend(("pending", m[1]) for m in [*self.P[k], *self.D[k]])
        self.reset()
        return out

    def process(self) -> None:
        D, P, n = self.D, self.P, self.n
        while all(D):
            stamps = [D[k][0][0] for k in range(n)]
            e, te = 0, stamps[0]
            s, ts = 0, stamps[0]
            for k in range(1, n):
                if not stamps[k] < te:
                    e, te = k, stamps[k]
                if stamps[k] < ts:
                    s, ts = k, stamps[k]
            for k in range(n):
                if k != e:
                    self.dropped[k] = False
            if self.pivot == NONE:
                if te - ts > self.max:
                    self.out.append(("dropped", D[s].popleft()[1], "interval_too_wide"))
                    continue
                if self.dropped[e]:
                    self.out.append(("dropped", D[s].popleft()[1], "pivot_refused"))
                    continue
                self.make(ts, te)
                self.pivot, self.pt = e, te
                P[s].append(D[s].popleft())
            elif self.scale(te - self.ce) >= ts - self.cs:
                P[s].append(D[s].popleft())
            else:
                self.make(ts, te)
                P[s].append(D[s].popleft())
            if s == self.pivot or self.scale(te - self.ce) >= self.pt - self.cs:
                self.publish()
            elif not all(D):
                self.virtual()

    def make(self, ts: int, te: int) -> None:
        for k in range(self.n):
            self.out.extend(("dropped", m[1], "superseded") for m in self.P[k])
            self.P[k] = []
        self.cand = [self.D[k][0] for k in range(self.n)]
        self.cs, self.ce = ts, te

    def publish(self) -> None:
        assert self.cand is not None
        self.out.append(("published", tuple(m[1] for m in self.cand)))
        self.cand = None
        self.pivot = NONE
        for k in range(self.n):
            self.D[k].extendleft(reversed(self.P[k]))
            self.P[k] = []
            self.D[k].popleft()

    def virtual(self) -> None:
        D, P, n = self.D, self.P, self.n
        moves = [0] * n
        while True:
            vt = []
            for k in range(n):
                if D[k]:
                    vt.append(D[k][0][0])
                else:
                    lb = P[k][-1][0] + self.lb[k]
                    vt.append(lb if lb > self.pt else self.pt)
            ve, vs = vt[0], vt[0]
            vsi = 0
            for k in range(1, n):
                if not vt[k] < ve:
                    ve = vt[k]
                if vt[k] < vs:
                    vsi, vs = k, vt[k]
            if self.scale(ve - self.ce) >= self.pt - self.cs:
                self.publish()
                return
            if self.scale(ve - self.ce) < vs - self.cs:
                for k in range(n):
                    for _ in range(moves[k]):
                        D[k].appendleft(P[k].pop())
                return
            D_front = D[vsi].popleft()
            P[vsi].append(D_front)
            moves[vsi] += 1
