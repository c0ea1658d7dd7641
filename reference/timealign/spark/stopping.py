"""A live stream stopped by a signal at a micro-batch boundary (SP-R81, MQ-R14).

``timealign stream`` runs until it is told to stop: Ctrl-C (SIGINT), or SIGTERM as
systemd, ``docker stop`` and ``timeout`` send it. Raising inside a call into the JVM breaks
the call and the query's stop (a JVM exception on the console), so the handler only
records the signal; the stream job's poll loop (:func:`timealign.spark.streaming.stream_job`,
its ``stop`` hook) stops the query while no micro-batch runs, and the command then writes
the summary, the report and applies ``--fail-on`` before it exits with the signal's code.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any, Self

from timealign.errors import EXIT_INTERRUPTED, EXIT_TERMINATED

#: The exit code of a stream stopped by a signal, as a shell reports it (128 + n).
STOPPED_BY = {signal.SIGINT: EXIT_INTERRUPTED, signal.SIGTERM: EXIT_TERMINATED}


def say(line: str) -> None:
    """One line on stderr from a signal handler: ``os.write``, never the buffered
    ``sys.stderr``, which a handler run in the middle of a print would enter twice."""
    os.write(2, (line + "\n").encode())


class SignalStop:
    """Records the first SIGINT or SIGTERM while entered (in the main thread; elsewhere it
    does nothing) and says once what happens next (``then``); every later signal is
    ignored (``timeout`` signals the command, then its whole process group; a second
    Ctrl-C): the summary, the report and ``--fail-on`` follow whatever arrives."""

    #: what the stream does after the first signal, said on stderr with its rule
    then = "stopping after the micro-batch that is running, if any; then the summary (SP-R81)"

    def __init__(self) -> None:
        self.signal: int | None = None
        #: the wall clock when the signal came, in nanoseconds
        self.at = 0
        self._previous: dict[signal.Signals, Any] = {}

    def __enter__(self) -> Self:
        if threading.current_thread() is threading.main_thread():
            self._previous = {number: signal.signal(number, self._received)
                              for number in STOPPED_BY}
        return self

    def __exit__(self, *_: object) -> None:
        """The handlers of before, once the command has written what it owes."""
        for number, handler in self._previous.items():
            signal.signal(number, handler)

    def _received(self, number: int, _frame: FrameType | None) -> None:
        name = "Ctrl-C" if number == signal.SIGINT else signal.Signals(number).name
        if self.signal is None:
            self.signal, self.at = number, time.time_ns()
            say(f"[timealign stream] {name}: {self.then}")
        else:
            say(f"[timealign stream] {name}: already stopping")

    @property
    def code(self) -> int | None:
        """The exit code the signal asks for (130, 143), None while no signal came."""
        return None if self.signal is None else STOPPED_BY[signal.Signals(self.signal)]

    def when_idle(self) -> Callable[[Any], bool]:
        """SP-R81: the stream job's ``stop`` hook for a file stream: once a signal came,
        the query is stopped at its first poll while no micro-batch runs (Spark's
        ``isTriggerActive``): the micro-batch running when the signal came ends and
        commits first, and nothing is cut short. Called with None while the stream waits
        for its first file (SP-R55): whether to end the wait."""

        def stop(query: Any) -> bool:
            if self.signal is None:
                return False
            if query is None:
                return True
            if query.status.get("isTriggerActive", False):
                return False
            query.stop()
            return True

        return stop
