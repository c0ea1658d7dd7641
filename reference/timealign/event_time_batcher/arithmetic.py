"""The batcher's small integer helpers: split point, lookup and clipping (PEP 316 contracts).

They are total functions over integers and tuples of integers, so CrossHair can check their
contracts over all paths quickly (``proofs/crosshair_pass.py``); ``machine.py`` uses them
for rules EB-R7 (lookup), EB-R8 (clipping) and EB-R11 (split point).
"""

from __future__ import annotations


def split_point(new: int, existing: int) -> int:
    """Where a same-key conflict splits a batch: the midpoint, rounded toward ``new``.

    Upstream computes ``new + trunc((existing - new) / 2)`` on integer nanoseconds; Python's
    ``//`` floors, so the halving is done on the absolute difference (EB-R11).

    post: min(new, existing) <= __return__ <= max(new, existing)
    post: (__return__ - new) * (existing - new) >= 0
    post: abs(existing - new) - 1 <= 2 * abs(__return__ - new) <= abs(existing - new)
    """
    half = abs(existing - new) // 2
    return new + half if existing > new else new - half


def first_containing(windows: tuple[tuple[int, int], ...], t: int) -> int | None:
    """Index of the first window, in creation order, that holds ``t`` (ends included, EB-R7).

    Ties on a shared endpoint go to the earlier-created batch.

    post: __return__ is None or windows[__return__][0] <= t <= windows[__return__][1]
    post: not any(s <= t <= e for s, e in windows[:__return__])
    """
    for index, (start, end) in enumerate(windows):
        if start <= t <= end:
            return index
    return None


def new_window_end(starts: tuple[int, ...], t: int, window: int) -> int:
    """End of a batch created for event time ``t``: ``t + window`` clipped at the nearest
    start of an open batch after ``t`` (EB-R8), so windows never overlap except at ends.

    pre: window >= 0
    post: t <= __return__ <= t + window
    post: not any(t < s < __return__ for s in starts)
    post: __return__ == t + window or __return__ in starts
    """
    end = t + window
    for start in starts:
        if t < start < end:
            end = start
    return end
