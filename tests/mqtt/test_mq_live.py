"""Live streams against a real Mosquitto on 127.0.0.1 (``make test-mqtt``; marker
``mqtt``): publish, read live, Ctrl-C, publish while the job is down, restart, stop and
start the broker, verify (MQ-R5, MQ-R7, MQ-R10, MQ-R11); a ``#`` filter, a retained
message and poison payloads through restarts (MQ-R2, MQ-R12, MQ-R13). Skipped when
``mosquitto`` is missing, unless ``TIMEALIGN_MQTT_REQUIRED=1`` (CI), where a missing
broker fails.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.mqtt.broker import Broker
from timealign.mqtt.receiver import client_id, discard_session
from timealign.mqtt.spool import Again, Message, read_entries, spool_path

pytestmark = pytest.mark.mqtt
ROOT = Path(__file__).resolve().parents[2]
CONFIG = json.dumps({"batching_window": 50_000_000, "max_message_delay": 20_000_000})
DEVICE = "te/device/pump{}///m/env"


def _stream(broker: Broker, out: Path, ck: Path, topic_filter: str = "te/+/+/+/+/m/+"
            ) -> subprocess.Popen[str]:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    return subprocess.Popen(
        [sys.executable, "-m", "timealign", "stream", "event_time_batcher",
         "--source", f"mqtt://127.0.0.1:{broker.port}/{topic_filter}", "--format",
         "thin-edge", "--output", str(out), "--checkpoint", str(ck), "--config", CONFIG,
         "--trigger-seconds", "1"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
        # SIGINT at its default: a test run started in the background inherits it ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _until(check: Callable[[], bool], what: str, limit: float = 600.0,
           job: subprocess.Popen[str] | None = None) -> None:
    """Wait for ``check``; a ``job`` that ended meanwhile fails at once, with its output."""
    deadline = time.monotonic() + limit
    while not check():
        if job is not None and job.poll() is not None:
            out, err = job.communicate()
            raise AssertionError(f"the stream ended (exit {job.returncode}) before {what}:"
                                 f"\n{out[-2000:]}\n{err[-4000:]}")
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def _rows(out: Path, table: str) -> list[dict[str, object]]:
    """The rows of a written table so far (complete batches only)."""
    found: list[dict[str, object]] = []
    for part in (out / table).glob("batch=*/*.parquet") if (out / table).is_dir() else []:
        if "_temporary" not in str(part):
            found += pq.read_table(part).to_pylist()
    return found


def _ids(out: Path) -> set[str]:
    """The ids with an outcome in the written tables so far (complete batches only)."""
    return {str(row["id"]) for table in ("outcomes", "not_measurements")
            for row in _rows(out, table)}


def _spooled(ck: Path) -> list[Message]:
    path = spool_path(ck)
    return [e for e in read_entries(path)[0] if isinstance(e, Message)] if path.exists() \
        else []


def _interrupt(process: subprocess.Popen[str]) -> str:
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    return err


def test_mq_r10_live_restart_and_verify(broker: Broker, tmp_path: Path) -> None:
    """MQ-R10, MQ-R5, MQ-R11: messages read live, Ctrl-C, messages published while the job
    is down kept by the broker (QoS 1, persistent session), the broker stopped and started
    again, and verify: every message once in the spool, every id one outcome."""
    out, ck = tmp_path / "out", tmp_path / "ck"
    job = _stream(broker, out, ck)
    try:
        _until(lambda: spool_path(ck).exists(), "the first tick")
        broker.publish(DEVICE.format(1), '{"temperature": 25.1}')
        broker.publish(DEVICE.format(1), "not json")
        broker.publish(DEVICE.format(2), '{"Climate": {"temp": 25, "hum": 40}}')
        _until(lambda: len(_ids(out)) >= 4, "the first messages' outcomes")
        first = _ids(out)
        assert any(i.endswith("/Climate.hum") for i in first)
        assert any(i.startswith(DEVICE.format(1)) and "/" not in i.split("#")[1]
                   for i in first)  # the not-a-measurement outcome (MQ-R2)
        _interrupt(job)
        # while the job is down: the persistent session keeps QoS 1 messages
        broker.publish(DEVICE.format(1), '{"pressure": 1}')
        broker.stop()  # and the broker itself restarts (persistence on)
        broker.start()
        broker.publish(DEVICE.format(2), '{"pressure": 2}')
        job = _stream(broker, out, ck)
        _until(lambda: len(_ids(out)) >= 6, "the messages sent while the job was down")
        broker.stop()  # the broker stopped and started under the running job: it reconnects
        broker.start()
        broker.publish(DEVICE.format(3), '{"pressure": 3}')
        _until(lambda: len(_ids(out)) >= 7, "a message after the broker came back")
        _interrupt(job)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()
    messages = _spooled(ck)
    payloads = sorted(m.payload for m in messages)
    assert payloads == sorted([b'{"temperature": 25.1}', b"not json",
                               b'{"Climate": {"temp": 25, "hum": 40}}', b'{"pressure": 1}',
                               b'{"pressure": 2}', b'{"pressure": 3}']), payloads  # once
    verified = subprocess.run([sys.executable, "-m", "timealign", "verify", str(out)],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith("verified: 7 rows"), verified.stdout


#: Payloads that stopped the live stream for good (issue 43), each with the reason word of
#: its not-a-measurement outcome (MQ-R2).
POISON = {b'{"a.b": 1, "a": {"b": 2}}': "duplicate-key",
          b'{"x": ' + b"7" * 5001 + b"}": "value",
          b'{"\\ud800": 1}': "not-json",
          b'{"": 1}': "value",
          b'{"x": ' + b"[" * 5000 + b"]" * 5000 + b"}": "value",
          b'{"x": 1e99999999999999999999999999999}': "value",
          b'{"x": Infinity}': "not-json",
          b"\xff\xfe{": "not-json"}


def test_mq_r12_r13_r2_wildcard_retained_and_poison_live(broker: Broker,
                                                          tmp_path: Path) -> None:
    """MQ-R12, MQ-R13, MQ-R2 through the command: ``--source mqtt://.../te/device/#``
    receives (it subscribed to ``te/device/`` and read nothing); a retained message
    published before the start has one outcome although the stream restarts and the broker
    loses the session (it had one per subscription); poison payloads are
    not-a-measurement outcomes with their reason and the stream restarts over them (each
    stopped it, exit 3 or 4, at every restart); verify passes."""
    out, ck = tmp_path / "out", tmp_path / "ck"
    retained = DEVICE.format(9)
    broker.publish(retained, '{"level": 3}', retain=True)
    job = _stream(broker, out, ck, "te/device/#")
    try:
        _until(lambda: len(_ids(out)) >= 1, "the retained message's outcome", job=job)
        for payload in POISON:
            broker.publish(DEVICE.format(1), payload)
        broker.publish(DEVICE.format(1), '{"temperature": 25.1}')
        _until(lambda: len(_ids(out)) >= len(POISON) + 2, "the poison payloads' outcomes", job=job)
        _interrupt(job)
        job = _stream(broker, out, ck, "te/device/#")  # a restart over the spooled poison
        broker.publish(DEVICE.format(2), '{"pressure": 2}')
        _until(lambda: len(_ids(out)) >= len(POISON) + 3, "a message after the restart", job=job)
        _interrupt(job)
        # the broker lost the session: the stream subscribes again, the copy is sent again
        discard_session("127.0.0.1", broker.port, client_id(str(ck)))
        job = _stream(broker, out, ck, "te/device/#")
        # a new session holds what is published once it subscribed: its retained copy first
        _until(lambda: any(isinstance(e, Again) and e.retained
                           for e in read_entries(spool_path(ck))[0]),
               "the retained copy at the new subscription", job=job)
        broker.publish(DEVICE.format(3), '{"pressure": 3}')
        _until(lambda: len(_ids(out)) >= len(POISON) + 4, "a message after the lost session",
               job=job)
        _interrupt(job)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()
    spooled = [m.payload for m in _spooled(ck) if m.topic == retained]
    assert spooled == [b'{"level": 3}'], spooled  # once, though subscribed twice
    reasons = {row["id"]: str(row["reason"]).split(":")[0]
               for row in _rows(out, "not_measurements")}
    by_payload = {m.payload: f"{m.topic}#{m.position}" for m in _spooled(ck)}
    assert {by_payload[p]: r for p, r in POISON.items()} == reasons
    verified = subprocess.run([sys.executable, "-m", "timealign", "verify", str(out)],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith(f"verified: {len(POISON) + 4} rows"), verified.stdout
