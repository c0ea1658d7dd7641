"""Live against a real Mosquitto on 127.0.0.1 (``make test-mqtt``; marker ``mqtt``):
publish, read live, Ctrl-C, publish while the job is down, restart, stop and start the
broker, verify (MQ-R5, MQ-R7, MQ-R10, MQ-R11). Skipped when ``mosquitto`` is missing,
unless ``TIMEALIGN_MQTT_REQUIRED=1`` (CI), where a missing broker fails.
"""

from __future__ import annotations

import getpass
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.spark.standalone import free_port
from timealign.mqtt.spool import Message, read_entries, spool_path

pytestmark = pytest.mark.mqtt
ROOT = Path(__file__).resolve().parents[2]
CONFIG = json.dumps({"batching_window": 50_000_000, "max_message_delay": 20_000_000})
DEVICE = "te/device/pump{}///m/env"


class Broker:
    """A Mosquitto with persistence on a free port, stopped and started at will."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.config = folder / "mosquitto.conf"
        folder.mkdir()
        self.config.write_text(f"listener {self.port} 127.0.0.1\nallow_anonymous true\n"
                               f"persistence true\npersistence_location {folder}/\n"
                               f"autosave_interval 1\n"
                               # as root, mosquitto drops to the user "mosquitto", who may
                               # not write (or reach) a private temporary folder
                               f"user {getpass.getuser()}\n")
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(["mosquitto", "-c", str(self.config)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(self.port),
                              "-t", "probe", "-m", "x"], capture_output=True).returncode:
            assert time.monotonic() < deadline, "mosquitto did not start"
            time.sleep(0.2)

    def stop(self) -> None:
        assert self.process is not None
        self.process.terminate()  # SIGTERM: mosquitto saves its persistence file
        self.process.wait(timeout=20)

    def publish(self, topic: str, payload: str) -> None:
        subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(self.port), "-q", "1",
                        "-t", topic, "-m", payload], check=True, timeout=20)


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    if shutil.which("mosquitto") is None or shutil.which("mosquitto_pub") is None:
        if os.environ.get("TIMEALIGN_MQTT_REQUIRED") == "1":
            pytest.fail("mosquitto and mosquitto_pub are required (make test-mqtt installs "
                        "them)")
        pytest.skip("mosquitto is not installed (make test-mqtt installs it)")
    found = Broker(tmp_path / "broker")
    found.start()
    yield found
    if found.process is not None and found.process.poll() is None:
        found.stop()


def _stream(broker: Broker, out: Path, ck: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    return subprocess.Popen(
        [sys.executable, "-m", "timealign", "stream", "event_time_batcher",
         "--source", f"mqtt://127.0.0.1:{broker.port}/te/+/+/+/+/m/+", "--format",
         "thin-edge", "--output", str(out), "--checkpoint", str(ck), "--config", CONFIG,
         "--trigger-seconds", "1"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
        # SIGINT at its default: a test run started in the background inherits it ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _until(check: Callable[[], bool], what: str, limit: float = 300.0) -> None:
    deadline = time.monotonic() + limit
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def _ids(out: Path) -> set[str]:
    """The ids with an outcome in the written tables so far (complete batches only)."""
    found: set[str] = set()
    for table in ("outcomes", "not_measurements"):
        for part in (out / table).glob("batch=*/*.parquet") if (out / table).is_dir() else []:
            if "_temporary" not in str(part):
                found |= set(pq.read_table(part).column("id").to_pylist())
    return found


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
