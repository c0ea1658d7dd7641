"""A Spark standalone cluster on the loopback address, started from the PySpark installation.

The pip-installed PySpark has no ``sbin/start-*.sh`` scripts, but ``bin/spark-class`` runs
the standalone ``Master`` and ``Worker`` classes. The tests and ``benchmarks/bench_spark.py``
use this to run the jobs on a real cluster (separate executor JVMs and Python workers, the
package shipped to them) rather than ``local[*]``. Ports are chosen free, logs go to a
folder of the caller's choice, every wait is bounded, and :meth:`Cluster.stop` ends exactly
the processes it started, by PID.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

import attrs
import pyspark

from tests.ports import free_port

MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"
MASTER_READY = "I have been elected leader"
WORKER_READY = "Successfully registered with master"


class ClusterError(RuntimeError):
    """A master or worker did not come up in time (the message holds its log's tail)."""


def spark_home() -> Path:
    """The PySpark package folder, which holds ``bin/spark-class`` and the jars."""
    return Path(pyspark.__file__).resolve().parent


@attrs.define
class Cluster:
    """A running master and its workers; ``url`` is the ``--master`` to give the jobs."""

    url: str
    logs: Path
    processes: list[subprocess.Popen[bytes]] = attrs.field(factory=list)

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM every process this cluster started (workers first), SIGKILL after
        ``grace`` seconds."""
        for process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        for process in reversed(self.processes):
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
        self.processes.clear()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _environment(extra: Mapping[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_HOME")}
    env.update({"SPARK_HOME": str(spark_home()), "SPARK_LOCAL_IP": "127.0.0.1",
                "SPARK_NO_DAEMONIZE": "1"})
    env.update(extra)
    return env


def _launch(cluster: Cluster, name: str, arguments: list[str], env: dict[str, str],
            ready: str, timeout: float) -> None:
    log = cluster.logs / f"{name}.log"
    with log.open("wb") as handle:
        process = subprocess.Popen(
            [str(spark_home() / "bin" / "spark-class"), *arguments], stdout=handle,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
            start_new_session=True)
    cluster.processes.append(process)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            break
        time.sleep(0.2)
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
    cluster.stop()
    raise ClusterError(f"{name} not ready after {timeout:.0f} s (log {log}):\n{tail}")


def start_cluster(logs: Path, workers: int = 1, cores: int = 2, memory: str = "2g",
                  env: Mapping[str, str] | None = None, timeout: float = 90.0) -> Cluster:
    """Start a master and ``workers`` workers of ``cores`` cores each on 127.0.0.1.

    ``env`` is added to the processes' environment (``PYTHONPATH`` of the caller is not
    passed on: the executors must get the package from the job, not from a checkout).
    Raises :class:`ClusterError` if a process is not ready within ``timeout`` seconds.
    """
    logs.mkdir(parents=True, exist_ok=True)
    environment = _environment(env or {})
    port = free_port()
    cluster = Cluster(f"spark://127.0.0.1:{port}", logs)
    _launch(cluster, "master", [MASTER, "--host", "127.0.0.1", "--port", str(port),
                                "--webui-port", str(free_port())],
            environment, MASTER_READY, timeout)
    for number in range(workers):
        work = logs / f"worker-{number}"
        work.mkdir(exist_ok=True)
        _launch(cluster, f"worker-{number}",
                [WORKER, "--host", "127.0.0.1", "--cores", str(cores), "--memory", memory,
                 "--webui-port", str(free_port()), "--work-dir", str(work), cluster.url],
                environment, WORKER_READY, timeout)
    return cluster
