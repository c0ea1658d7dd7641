"""How an MQTT stream stops (MQ-R14) and says that its first micro-batch is still running
(MQ-R17), without a broker or Spark: the signal handler, the stop hook against a
checkpoint's logs, the exit codes."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("paho")

from timealign.mqtt import job
from timealign.mqtt.spool import Spool, Tick, read_entries, spool_path
from timealign.spark import stopping


class FakeReceiver:
    """The receiver's part the stop hook uses: its spool, and ``stop``."""

    def __init__(self, spool: Spool) -> None:
        self.spool, self.stopped = spool, 0

    def stop(self) -> None:
        self.stopped += 1


class FakeQuery:
    def __init__(self) -> None:
        self.stopped = 0

    def stop(self) -> None:
        self.stopped += 1


def _commit(ck: Path, batch: int, *positions: int) -> None:
    """Spark's offsets and commits logs for micro-batch ``batch`` (one line per reader)."""
    (ck / "offsets").mkdir(parents=True, exist_ok=True)
    (ck / "commits").mkdir(parents=True, exist_ok=True)
    (ck / "offsets" / str(batch)).write_text(
        "v1\n{}\n" + "\n".join(json.dumps({"position": p}) for p in positions))
    (ck / "commits" / str(batch)).write_text("v1\n{}\n")


def test_mq_r14_committed_position_is_the_slowest_readers_end(tmp_path: Path) -> None:
    """MQ-R14: the stream has taken the spool up to the smallest end offset of its last
    committed micro-batch (its two readers may stop at different ticks); a planned batch
    not yet committed does not count."""
    assert job.committed_position(tmp_path) == 0
    _commit(tmp_path, 0, 4, 6)
    assert job.committed_position(tmp_path) == 4
    _commit(tmp_path, 1, 9, 9)
    (tmp_path / "offsets" / "2").write_text('v1\n{}\n{"position": 12}\n{"position": 12}')
    assert job.committed_position(tmp_path) == 9


@pytest.mark.parametrize(("number", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_mq_r14_a_signal_stops_at_the_micro_batch_that_takes_the_last_tick(
        tmp_path: Path, number: int, code: int, capfd: pytest.CaptureFixture[str]) -> None:
    """MQ-R14: the first signal is recorded, never raised (raising inside a call into the
    JVM broke the query's stop); at the next poll the receiver stops and a last tick at the
    signal's instant is spooled, and the query is stopped only once a committed micro-batch
    took that tick; a second signal is ignored with a line; the exit code is 128 + n; the
    handlers of before are back after."""
    before = signal.getsignal(number)
    ck = tmp_path / "ck"
    spool = Spool(spool_path(ck).parent)
    spool.tick(1)
    receiver, query = FakeReceiver(spool), FakeQuery()
    with job.Stop() as stop:
        hook = stop.watching(receiver, str(ck))  # type: ignore[arg-type]
        assert not hook(query) and stop.code is None and receiver.stopped == 0
        os.kill(os.getpid(), number)  # handled: no KeyboardInterrupt
        os.kill(os.getpid(), number)
        assert stop.code == code
        assert not hook(query)  # the last tick is spooled, not yet taken
        entries = read_entries(spool.path)[0]
        assert receiver.stopped == 1 and isinstance(entries[-1], Tick)
        assert entries[-1].at == stop.at and len(entries) == 2
        _commit(ck, 0, 1, 1)
        assert not hook(query) and query.stopped == 0  # a batch before the last tick
        _commit(ck, 1, 2, 2)
        assert hook(query) and query.stopped == 1 and receiver.stopped == 1
        assert len(read_entries(spool.path)[0]) == 2  # one last tick, however often polled
    assert signal.getsignal(number) == before
    err = capfd.readouterr().err
    assert "stopping after the micro-batch" in err and "already stopping" in err, err


def test_mq_r17_a_first_micro_batch_still_running_is_said_once(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """MQ-R17: after the wait, a first micro-batch that has not committed is said to be
    running (messages are spooled meanwhile), once; a start whose first micro-batch
    committed in time says nothing; without progress lines, nothing either."""
    watch = job.first_batch_watch(tmp_path, wait=0.0)
    watch()
    watch()
    err = capfd.readouterr().err
    assert err.count("the first micro-batch is still running") == 1, err
    assert "none is lost" in err
    _commit(tmp_path, 0, 1)
    quiet = job.first_batch_watch(tmp_path, wait=0.0)
    _commit(tmp_path, 1, 2)
    quiet()
    job.first_batch_watch(tmp_path / "other", report=False, wait=0.0)()
    assert capfd.readouterr().err == ""


def test_mq_r14_exit_codes_are_the_shells() -> None:
    """MQ-R14: 130 after SIGINT (CLI-R2), 143 after SIGTERM (128 + 15)."""
    codes: dict[Any, int] = dict(stopping.STOPPED_BY)
    assert codes == {signal.SIGINT: 128 + signal.SIGINT, signal.SIGTERM: 128 + signal.SIGTERM}
