"""The ``broker`` fixture of the live tests: a real Mosquitto on 127.0.0.1 (marker
``mqtt``, ``make test-mqtt``). Skipped when ``mosquitto`` is missing, unless
``TIMEALIGN_MQTT_REQUIRED=1`` (CI), where a missing broker fails."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mqtt.broker import Broker


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
