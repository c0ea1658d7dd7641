"""Visible progress while a job runs: one line with the overall fraction and the time left.

Spark's own console bar is off (it garbles logs). A batch job enters its phases in a known
order (:data:`PHASES`, the ``phase`` hook of :func:`timealign.spark.batch.run_rows`); the
overall fraction is the share of phases done plus the finished share of the tasks of the
current phase's active stages, each phase weighing the same, and the time left is the
elapsed time scaled by what remains (SP-R33). On a terminal the line is redrawn in place;
otherwise a new line is written when the whole percent changed, at most every
``every`` seconds, so a log file stays short, and at least every :data:`HEARTBEAT` seconds
during a long phase. The fraction shown never goes back (a phase's next stage starts at 0
of its tasks), so neither does the estimate's basis (SP-R40). A command whose phases are
not known up front (``verify``, ``plot --run``) shows its elapsed time and Spark's tasks.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from types import TracebackType
from typing import TextIO

from pyspark.sql import SparkSession

from timealign.progress import Progress

#: The phases of a batch job, in order (run_rows enters the first five).
PHASES: tuple[str, ...] = ("census", "replay", "outcomes", "reconcile", "publish", "summary")
#: Seconds without a line after which a line is written anyway, off a terminal (SP-R40).
HEARTBEAT = 30.0


def estimate(phase: int, phases: int, done: int, tasks: int, elapsed: float
             ) -> tuple[float, float | None]:
    """The overall fraction and the seconds left (``None`` before anything finished)."""
    within = done / tasks if tasks else 0.0
    fraction = min((phase + within) / phases, 1.0) if phases else 0.0
    left = elapsed * (1 - fraction) / fraction if fraction > 0 else None
    return fraction, left


def monotone_left(fraction: float, elapsed: float) -> float | None:
    """The seconds left at the largest ``fraction`` shown (SP-R40); None before any."""
    return elapsed * (1 - fraction) / fraction if fraction > 0 else None


def clock(seconds: float | None) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min``; ``?`` when unknown."""
    if seconds is None:
        return "?"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


class StageWatch:
    """``with StageWatch(spark, "run", progress) as watch:`` shows the job's progress line
    until the block ends (nothing when ``progress`` is disabled; at most one line every
    ``progress.every`` seconds off a terminal); ``watch.phase(name)`` is the hook the batch
    job enters around each phase."""

    def __init__(self, spark: SparkSession, label: str, progress: Progress,
                 stream: TextIO | None = None, phases: tuple[str, ...] | None = PHASES,
                 doing: str = "working") -> None:
        self.tracker = spark.sparkContext.statusTracker()
        self.label = label
        self.progress = progress
        self.every = progress.every
        self.enabled = progress.enabled
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.monotonic()
        self.current = -1  # index in PHASES; -1 before the first phase
        self.phases = phases  # None: not known up front, no fraction shown
        self.doing = doing  # the word of a line without phases
        self.fraction = 0.0  # the largest fraction shown so far (SP-R40: never back)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._drawn = False

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Mark ``name`` as the current phase while the block runs."""
        if self.phases is not None and name in self.phases:
            self.current = self.phases.index(name)
        yield

    def tasks(self) -> tuple[int, int]:
        """Finished and all tasks of the active stages."""
        done = total = 0
        for stage_id in self.tracker.getActiveStageIds():
            info = self.tracker.getStageInfo(stage_id)
            if info is not None:
                done += info.numCompletedTasks
                total += info.numTasks
        return done, total

    def line(self) -> str:
        elapsed = time.monotonic() - self.started
        if self.phases is None:
            done, total = self.tasks()
            tasks = f" (Spark: {done}/{total} tasks)" if total else ""
            return f"[timealign {self.label}] {self.doing}, {clock(elapsed)} elapsed{tasks}"
        if self.current < 0:
            return f"[timealign {self.label}] starting, {clock(elapsed)}"
        done, total = self.tasks()
        fraction, _ = estimate(self.current, len(self.phases), done, total, elapsed)
        self.fraction = max(self.fraction, fraction)  # SP-R40: never back
        left = monotone_left(self.fraction, elapsed)
        estimate_text = "time left not known yet" if left is None else f"about {clock(left)} left"
        return (f"[timealign {self.label}] {self.fraction:4.0%}  {self.phases[self.current]} "
                f"({self.current + 1}/{len(self.phases)}), {clock(elapsed)} elapsed, "
                f"{estimate_text}")

    def _show(self, text: str) -> None:
        if self.terminal:
            self.stream.write("\r\033[K" + text)
            self._drawn = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def _loop(self) -> None:
        shown = ""
        last = 0.0
        tick = 0.5 if self.terminal else self.every
        while not self._stop.wait(tick):
            text = self.line()
            key = text if self.terminal else text.split(",")[0]  # the percent and phase
            now = time.monotonic()
            due = key != shown and now - last >= self.every
            if self.terminal or due or now - last >= HEARTBEAT:  # SP-R40: a heartbeat
                self._show(text)
                shown, last = key, now

    def __enter__(self) -> StageWatch:
        if self.enabled:
            self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        if self._drawn:  # leave the terminal on a clean line for the summary
            self.stream.write("\r\033[K")
            self.stream.flush()
