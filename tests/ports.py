"""Free TCP ports on the loopback address, for the servers the tests start (a Spark
standalone cluster, a Mosquitto broker). Standard library only: the tests of every extra
import it."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
