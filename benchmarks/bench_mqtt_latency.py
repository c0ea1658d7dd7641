"""The live MQTT job's latency from publish to outcome (MQ-R17): how long after
`mosquitto_pub` hands a measurement to a local Mosquitto its outcome is in the stream's
tables, for measurements published as the stream starts (the first micro-batch, which
starts Spark's state store and Python workers) and once it runs (steady state).

The stream runs as docs/mqtt.md shows it (its config read from the page) against a
Mosquitto on a free port of 127.0.0.1; each measurement carries its `time`; an outcome's
instant is when its micro-batch's table file appears (polled every 0.1 s). Wall time, so
the load average is printed with the figures.

    python benchmarks/bench_mqtt_latency.py                 # 20 s of steady state
    python benchmarks/bench_mqtt_latency.py --seconds 60 --rate 4
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
TOPIC = "te/device/bench{}///m/env"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _documented() -> list[str]:
    page = (ROOT / "docs" / "mqtt.md").read_text(encoding="utf-8")
    block = re.search(r"```\n(timealign stream .*?)\n```", page, re.S)
    assert block is not None, "docs/mqtt.md shows no `timealign stream` command"
    return shlex.split(re.sub(r"\\\n\s*", " ", block.group(1)).splitlines()[0])


class Publisher:
    """One `mosquitto_pub -l` per device: a line written is a message published."""

    def __init__(self, port: int, devices: int) -> None:
        self.pubs = [subprocess.Popen(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(port),
                                       "-q", "1", "-t", TOPIC.format(n), "-l"],
                                      stdin=subprocess.PIPE, text=True)
                     for n in range(devices)]
        self.sent: dict[str, float] = {}  # payload -> monotonic instant it was written

    def send(self, device: int, value: int) -> None:
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        payload = json.dumps({"temperature": value, "time": stamp})
        stdin = self.pubs[device].stdin
        assert stdin is not None
        stdin.write(payload + "\n")
        stdin.flush()
        self.sent[payload] = time.monotonic()

    def close(self) -> None:
        for pub in self.pubs:
            assert pub.stdin is not None
            pub.stdin.close()
            pub.wait(timeout=60)


class Outcomes:
    """The instant each id's outcome first appeared in ``out/outcomes`` (polled)."""

    def __init__(self, out: Path) -> None:
        self.out, self.seen, self.read = out, dict[str, float](), set[Path]()

    def poll(self) -> None:
        now = time.monotonic()
        for part in sorted((self.out / "outcomes").glob("batch=*/*.parquet")):
            if part in self.read or "_temporary" in str(part):
                continue
            try:
                ids = pq.read_table(part, columns=["id"]).column("id").to_pylist()
            except OSError:
                continue  # still being written
            self.read.add(part)
            for found in ids:
                self.seen.setdefault(str(found), now)


def _positions(ck: Path) -> dict[str, str]:
    """payload -> the id of its row (``<topic>#<spool position>/temperature``, MQ-R4)."""
    ids = {}
    for line in (ck / "mqtt" / "spool.jsonl").read_text().splitlines():
        entry = json.loads(line)
        if "payload" in entry:
            payload = base64.b64decode(entry["payload"]).decode()
            ids[payload] = f"{entry['topic']}#{entry['pos']}/temperature"
    return ids


def _figures(latencies: list[float]) -> str:
    ordered = sorted(latencies)
    if not ordered:
        return "none"

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return (f"p50 {at(0.5):.1f} s, p90 {at(0.9):.1f} s, max {ordered[-1]:.1f} s "
            f"({len(ordered)} measurements)")


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="steady state to measure")
    parser.add_argument("--rate", type=float, default=2.0, help="measurements per second")
    parser.add_argument("--devices", type=int, default=3)
    parser.add_argument("--first", type=int, default=10,
                        help="measurements published as the stream starts")
    args = parser.parse_args()
    if shutil.which("mosquitto") is None or shutil.which("mosquitto_pub") is None:
        print("bench_mqtt_latency: mosquitto is not installed (make test-mqtt installs it)")
        return 0
    words = _documented()
    config = json.loads(words[words.index("--config") + 1])
    with tempfile.TemporaryDirectory() as folder:
        work, port = Path(folder), _free_port()
        (work / "mosquitto.conf").write_text(f"listener {port} 127.0.0.1\n"
                                             "allow_anonymous true\n")
        broker = subprocess.Popen(["mosquitto", "-c", str(work / "mosquitto.conf")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        argv = [sys.executable, "-m", "timealign",
                *[w.replace("mqtt://127.0.0.1:1883/", f"mqtt://127.0.0.1:{port}/")
                  for w in words[1:]], "--quiet"]
        env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
        started = time.monotonic()
        job = subprocess.Popen(argv, cwd=work, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
        out, ck = work / "out", work / "ck"
        outcomes = Outcomes(out)
        publisher = Publisher(port, args.devices)
        try:
            while not (ck / "mqtt" / "spool.jsonl").exists():  # the receiver is subscribed
                time.sleep(0.1)
            for n in range(args.first):  # taken by the first micro-batch
                publisher.send(n % args.devices, n)
            first = dict(publisher.sent)
            while not (ck / "commits").is_dir() or not any((ck / "commits").iterdir()):
                assert job.poll() is None, job.communicate()[1]
                outcomes.poll()
                time.sleep(0.1)
            first_batch = time.monotonic() - started
            value, end = args.first, time.monotonic() + args.seconds
            while time.monotonic() < end:
                publisher.send(value % args.devices, value)
                value += 1
                until = time.monotonic() + 1 / args.rate
                while time.monotonic() < until:
                    outcomes.poll()
                    time.sleep(0.05)
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                ids = _positions(ck)
                if all(ids.get(p) in outcomes.seen for p in publisher.sent):
                    break
                outcomes.poll()
                time.sleep(0.1)
        finally:
            publisher.close()
            os.killpg(job.pid, signal.SIGTERM)
            job.wait(timeout=300)
            broker.terminate()
            broker.wait()
        ids = _positions(ck)
        latency = {p: outcomes.seen[ids[p]] - sent for p, sent in publisher.sent.items()
                   if ids.get(p) in outcomes.seen}
        missing = len(publisher.sent) - len(latency)
    load = os.getloadavg()
    print(f"MQTT publish -> outcome, {datetime.now(UTC):%Y-%m-%d}, load average "
          f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on {os.cpu_count()} cores; config "
          f"W {config['batching_window'] / 1e9:g} s, D {config['max_message_delay'] / 1e9:g} s, "
          f"a micro-batch every 1 s")
    print(f"  first micro-batch committed {first_batch:.1f} s after the command started")
    print(f"  published as the stream starts: "
          f"{_figures([latency[p] for p in first if p in latency])}")
    print(f"  steady state: {_figures([v for p, v in latency.items() if p not in first])}")
    print(f"  (W + D = {(config['batching_window'] + config['max_message_delay']) / 1e9:g} s "
          f"of it is the batcher's by its rules; no outcome: {missing})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
