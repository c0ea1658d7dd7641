"""Progress lines on stderr while a long job runs (CF-R15; the Spark jobs' stage lines).

One class for every job of the package: at most one line every ``every`` seconds, none
when disabled; each caller words its own line (a :class:`Worded` report, or a line it
builds and hands to :meth:`Progress.say`). Here, beside the core, so that every adapter
can import it without importing another adapter.
"""

from __future__ import annotations

import sys
import time
from typing import Protocol


class Worded(Protocol):
    """What reports its own progress line (``total``: the number of items, if known)."""

    def progress_line(self, total: int | None) -> str: ...


class Progress:
    """A progress line on stderr at most every ``every`` seconds, only when ``enabled``;
    with ``finished``, also one line as each part of the job ends, even when not
    ``enabled`` (``--quiet`` keeps those: a long run is never minutes of silence)."""

    def __init__(self, enabled: bool, every: float = 2.0, finished: bool = False) -> None:
        self.enabled, self.every, self.finished_lines = enabled, every, finished
        self.started = self.last = time.monotonic()

    def elapsed(self) -> float:
        """Seconds since the progress began."""
        return time.monotonic() - self.started

    def due(self) -> bool:
        """Whether a line may be shown now (enabled, ``every`` seconds since the last)."""
        now = time.monotonic()
        if self.enabled and now - self.last >= self.every:
            self.last = now
            return True
        return False

    def say(self, line: str) -> None:
        """Show ``line`` now (when enabled)."""
        if self.enabled:
            print(line, file=sys.stderr, flush=True)

    def finished(self, report: Worded) -> None:
        """Show ``report``'s line as its part ends, with the seconds since the start."""
        if self.enabled or self.finished_lines:
            print(f"{report.progress_line(None)} (done, {self.elapsed():.0f} s)",
                  file=sys.stderr, flush=True)

    def __call__(self, report: Worded, total: int | None = None) -> None:
        """Show ``report``'s line if one is due."""
        if self.due():
            self.say(report.progress_line(total))


def counted(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 input``, ``2 inputs``, ``0 inputs``: a count with its noun in the right number,
    for every summary line a command prints (``nouns``: an irregular plural)."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"


def permille_text(value: int | None) -> str:
    """Thousandths as a percentage with one decimal (``975`` is ``97.5``; SP-R74's fill),
    for the printed summary and the report alike; ``-`` for none."""
    return "-" if value is None else f"{value // 10}.{value % 10}"
