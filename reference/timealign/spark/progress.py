"""Visible progress while a job runs: a daemon thread that reports Spark's stage progress.

Spark's own console bar is off (it garbles logs); instead, every few seconds, the active
stages and their finished/total task counts go to stderr through the package's one
:class:`timealign.progress.Progress`, but only when something changed.
"""

from __future__ import annotations

import threading
from types import TracebackType

from pyspark.sql import SparkSession

from timealign.progress import Progress


class StageWatch:
    """``with StageWatch(spark, "run", progress):`` reports Spark's stages until the block
    ends (nothing when ``progress`` is disabled)."""

    def __init__(self, spark: SparkSession, label: str, progress: Progress) -> None:
        self.tracker = spark.sparkContext.statusTracker()
        self.label = label
        self.progress = progress
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
        while not self._stop.wait(self.progress.every):
            line = self.line()
            if line and line != shown:
                self.progress.say(f"[timealign {self.label} {self.progress.elapsed():6.1f}s] "
                                  f"{line}")
                shown = line

    def __enter__(self) -> StageWatch:
        if self.progress.enabled:
            self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
