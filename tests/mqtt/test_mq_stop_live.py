"""The live MQTT job as a user runs it, against a real Mosquitto on 127.0.0.1 (``make
test-mqtt``; marker ``mqtt``): the command of docs/mqtt.md, read from the page, settles
every on-time measurement `mosquitto_pub` sends (MQ-D2, MQ-R17); SIGINT and SIGTERM, to the
command and to its process group, twice, stop it at a micro-batch boundary with its summary,
`--summary`, `--report` and `--fail-on` applied, exit 130, 143 or 1, and no JVM exception
(MQ-R14, MQ-R15). Skipped when ``mosquitto`` is missing, unless
``TIMEALIGN_MQTT_REQUIRED=1`` (CI).
"""

from __future__ import annotations

import html
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.mqtt.broker import Broker
from tests.mqtt.test_mq_live import _ids, _rows, _spooled, _until

pytestmark = pytest.mark.mqtt
ROOT = Path(__file__).resolve().parents[2]
DEVICE = "te/device/pump{}///m/env"
#: What the console must never show at a stop (MQ-R14): a JVM exception, a traceback.
JVM_TEXT = re.compile(r"Exception in thread|java\.lang\.|Traceback|py4j")


def documented_command() -> list[str]:
    """The `timealign stream` command of docs/mqtt.md, as its words (read from the page)."""
    page = (ROOT / "docs" / "mqtt.md").read_text(encoding="utf-8")
    block = re.search(r"```\n(timealign stream .*?)\n```", page, re.S)
    assert block is not None, "docs/mqtt.md shows no `timealign stream` command"
    lines = re.sub(r"\\\n\s*", " ", block.group(1)).splitlines()
    return shlex.split(lines[0])


def _start(words: list[str], port: int, cwd: Path) -> subprocess.Popen[str]:
    """``words`` (a `timealign` command) run in ``cwd`` against the broker on ``port``, in a
    process group of its own, SIGINT at its default."""
    assert words[0] == "timealign"
    argv = [sys.executable, "-m", "timealign",
            *[re.sub(r"^mqtt://127\.0\.0\.1:1883/", f"mqtt://127.0.0.1:{port}/", w)
              for w in words[1:]]]
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    return subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _stop(job: subprocess.Popen[str], number: int, group: bool, twice: bool
          ) -> tuple[str, str]:
    """Signal ``job`` (its process group with ``group``; a second signal at once with
    ``twice``, as `timeout` sends them) and wait for its end; (stdout, stderr)."""
    for _ in range(2 if twice else 1):
        if group:
            os.killpg(job.pid, number)
        else:
            job.send_signal(number)
        time.sleep(0.3)
    return job.communicate(timeout=600)


def _kill(job: subprocess.Popen[str]) -> None:
    if job.poll() is None:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()


def _committed(ck: Path) -> bool:
    return (ck / "commits").is_dir() and any((ck / "commits").iterdir())


def _publish_lines(port: int, lines: list[tuple[str, str]], seconds: float) -> float:
    """Publish ``(topic, payload template)`` lines evenly over ``seconds`` with one
    `mosquitto_pub -l` per topic, each payload's ``{time}`` the instant it is written (RFC
    3339); return the instant of the last."""
    topics = sorted({topic for topic, _ in lines})
    pubs = {topic: subprocess.Popen(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(port),
                                     "-q", "1", "-t", topic, "-l"], stdin=subprocess.PIPE,
                                    text=True) for topic in topics}
    gap = seconds / len(lines)
    for topic, payload in lines:
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        stdin = pubs[topic].stdin
        assert stdin is not None
        stdin.write(payload.replace("{time}", now) + "\n")
        stdin.flush()
        time.sleep(gap)
    last = time.monotonic()
    for pub in pubs.values():
        assert pub.stdin is not None
        pub.stdin.close()
        assert pub.wait(timeout=60) == 0
    return last


def _verify(out: Path) -> str:
    verified = subprocess.run([sys.executable, "-m", "timealign", "verify", str(out)],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert verified.returncode == 0, verified.stderr
    return verified.stdout


def test_mq_d2_r17_r14_the_documented_command_settles_every_on_time_measurement(
        broker: Broker, tmp_path: Path) -> None:
    """MQ-D2, MQ-R17, MQ-R14, MQ-R16: docs/mqtt.md's command, with 120 measurements
    published by `mosquitto_pub` on localhost in 6 s (3 devices, each with its `time`),
    groups every one: none `too_old` (the 20 ms once documented rejected 74 %), each
    within W + D + 2 trigger intervals and the micro-batches' run time of the stream
    going quiet; then Ctrl-C twice to the process group (as `timeout` sends it): exit 130
    after the summary, no JVM exception, and verify passes."""
    words = documented_command()
    config = json.loads(words[words.index("--config") + 1])
    bound_s = (config["batching_window"] + config["max_message_delay"]) / 1e9 + 2 * 1.0
    job = _start(words, broker.port, tmp_path)
    out, ck = tmp_path / "out", tmp_path / "ck"
    try:
        _until(lambda: _committed(ck), "the first micro-batch", job=job)
        lines = [(DEVICE.format(n % 3), '{"temperature": ' + str(n) + ', "time": "{time}"}')
                 for n in range(120)]
        last = _publish_lines(broker.port, lines, 6.0)
        _until(lambda: len(_ids(out)) >= 120, "every measurement's outcome", job=job)
        waited = time.monotonic() - last
        stdout, stderr = _stop(job, signal.SIGINT, group=True, twice=True)
    finally:
        _kill(job)
    assert job.returncode == 130, stderr
    outcomes = _rows(out, "outcomes")
    assert len(outcomes) == 120 and {r["outcome"] for r in outcomes} == {"grouped"}, \
        sorted({(r["outcome"], r["reason"]) for r in outcomes})
    # W + D + 2 intervals, and what the micro-batches took: generous for a loaded machine
    assert waited < bound_s + 120, waited
    assert "rows 120 read = 120 settled + 0 held" in stdout, stdout
    # SP-R33 (issue 42 item 3): the micro-batches' lines add up to the rows written, and a
    # micro-batch of ticks alone (one per trigger) prints none
    batches = [(int(m[1]), int(m[2])) for m in re.finditer(
        r"^\[timealign stream\] batch \d+: (\d+) rows read, (\d+) settled", stderr, re.M)]
    assert batches and all(read or settled for read, settled in batches), stderr
    assert sum(read for read, _ in batches) == 120 == sum(s for _, s in batches), batches
    assert "grouped: 120  100.0%" in stdout, stdout
    assert "already stopping" in stderr and stderr.rstrip().endswith("timealign: interrupted")
    assert "watching mqtt://" in stderr and "MQTT topic filter 'te/+/+/+/+/m/+'" in stderr
    assert "new files by modification time" not in stderr  # MQ-R16: the start line
    assert not JVM_TEXT.search(stderr + stdout), stderr
    assert _verify(out).startswith("verified: 120 rows")


def test_mq_r14_r15_sigterm_writes_summary_and_report_and_applies_fail_on(
        broker: Broker, tmp_path: Path) -> None:
    """MQ-R14, MQ-R15: SIGTERM to the process group, twice, right after messages arrive:
    the stream stops after the micro-batch that takes them (each counted, held or a
    not-a-measurement, none missing), writes `--summary` and `--report` and applies
    `--fail-on` (`held>0` trips: exit 1); started again by the report's command line
    (PL-R15), the held rows settle, and SIGTERM to the command alone is exit 143 with the
    summary rewritten; no JVM exception; verify applies its `--fail-on` to the stream's
    tables (MQ-R18)."""
    words = [*documented_command(), "--summary", "summary.json", "--report", "report"]
    out, ck = tmp_path / "out", tmp_path / "ck"
    job = _start([*words, "--fail-on", "held>0"], broker.port, tmp_path)
    try:
        _until(lambda: _committed(ck), "the first micro-batch", job=job)
        for n in range(3):
            broker.publish(DEVICE.format(n), f'{{"temperature": {n}}}')
        broker.publish(DEVICE.format(0), "not json")
        _until(lambda: len(_spooled(ck)) == 4, "the messages in the spool", job=job)
        stdout, stderr = _stop(job, signal.SIGTERM, group=True, twice=True)
    finally:
        _kill(job)
    assert job.returncode == 1, stderr
    assert "--fail-on held>0: 3 of 3 rows are held" in stderr, stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["read"] == 3 and summary["rows"] + summary["held"] == 3, summary
    assert summary["held"] == 3, summary  # D = 2 s had not passed: pending, not lost
    assert summary["not_measurements"] == [{"reason": "not-json", "messages": 1}], summary
    assert (tmp_path / "report" / "index.html").is_file()
    assert "not a measurement (not-json): 1 messages" in stdout, stdout
    assert "stopped by SIGTERM" in stderr and not JVM_TEXT.search(stderr + stdout), stderr
    assert len(_ids(out)) == 1  # the not-a-measurement; the rows are held
    # PL-R15, SP-R32: the report is the stream's, and its command line, generated from the
    # parsed options, is the command that continues the stream
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert "<h1>timealign stream: event_time_batcher</h1>" in page
    found = re.search(r'<code class="command">(.*?)</code>', page)
    assert found is not None, page
    again = shlex.split(html.unescape(found.group(1)))
    assert again[:3] == ["timealign", "stream", "event_time_batcher"], again
    for option, value in (("--checkpoint", str(ck)), ("--output", str(out)),
                          ("--format", "thin-edge"), ("--fail-on", "held>0"),
                          ("--source", words[words.index("--source") + 1].replace(
                              ":1883/", f":{broker.port}/"))):
        assert again[again.index(option) + 1] == value, (option, again)
    job = _start(again, broker.port, tmp_path)  # the report's command continues the stream
    try:
        _until(lambda: len(_ids(out)) >= 4, "the held rows' outcomes", job=job)
        stdout, stderr = _stop(job, signal.SIGTERM, group=False, twice=False)
    finally:
        _kill(job)
    assert job.returncode == 143, stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert (summary["read"], summary["held"], summary["outcomes"]) == (
        3, 0, [{"outcome": "grouped", "reason": None, "rows": 3}]), summary
    assert stderr.rstrip().endswith("timealign: stopped by SIGTERM"), stderr
    assert not JVM_TEXT.search(stderr + stdout), stderr
    assert _verify(out).startswith("verified: 4 rows")
    # MQ-R18: verify's --fail-on is applied to an MQTT stream's tables (it was ignored)
    gated = subprocess.run([sys.executable, "-m", "timealign", "verify", str(out),
                            "--fail-on", "grouped>2"], cwd=ROOT, capture_output=True,
                           text=True, timeout=300)
    assert gated.returncode == 1, gated.stderr
    assert "--fail-on grouped>2: 3 of 3 rows are grouped" in gated.stderr, gated.stderr
