"""A real Mosquitto on 127.0.0.1 for the live tests (``make test-mqtt``; marker ``mqtt``):
persistence on, a free port, stopped and started at will (the fixture ``broker`` of
``conftest.py``). Standard library only, so the receiver's live tests run without the
spark extra.
"""

from __future__ import annotations

import getpass
import subprocess
import time
from pathlib import Path

from tests.ports import free_port


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

    def publish(self, topic: str, payload: str | bytes, retain: bool = False) -> None:
        """One message at QoS 1 (``retain``: kept by the broker as the topic's retained
        message); bytes are sent as they are (``mosquitto_pub -s`` reads stdin)."""
        data = payload.encode() if isinstance(payload, str) else payload
        subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(self.port), "-q", "1",
                        "-t", topic, "-s", *(["-r"] if retain else [])], input=data,
                       check=True, timeout=20)
