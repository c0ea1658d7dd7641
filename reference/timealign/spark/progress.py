"""Visible progress while a job runs: a daemon thread that reports Spark's stage progress.

Spark's own console bar is off (it garbles logs); instead, every few seconds, the active
stages and their finished/total task counts go to stderr, but only when something changed.
"""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType

from pyspark.sql import SparkSession


class Progress:
    """``with Progress(spark, "run"):`` reports progress until the block ends."""

    def __init__(self, spark: SparkSession, label: str, every: float = 3.0,
                 enabled: bool = True) -> None:
        self.tracker = spark.sparkContext.statusTracker()
        self.label = label
        self.every = every
        self.enabled = enabled
        self.started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def line(self) -> str:
        parts = []
        for stage_id in sorted(self.tracker.getActiveStageIds()):
            info = self.tracker.getStageInfo(stage_id)
            if info is not None:
                parts.append(f"stage {stage_id} {info.numCompletedTasks}/{info.numTasks} "
                             f"tasks ({info.numActiveTasks} running)")
        return "; ".join(parts)

    def _loop(self) -> None:
        shown = ""
        while not self._stop.wait(self.every):
            line = self.line()
            if line and line != shown:
                elapsed = time.monotonic() - self.started
                print(f"[timealign {self.label} {elapsed:6.1f}s] {line}", file=sys.stderr,
                      flush=True)
                shown = line

    def __enter__(self) -> Progress:
        if self.enabled:
            self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
