"""The SparkSession the jobs run on: quiet local defaults tuned for a small machine.

Local mode (``local[*]`` unless ``--master`` or ``spark-submit`` says otherwise) turns the
UI and the console progress bar off, keeps shuffles at two partitions per core, uses UTC
and the loopback address, and selects the RocksDB state store that
``transformWithStateInPandas`` requires. Local Python workers run the driver's interpreter
so that the installed package is importable; on any other master the package is shipped
to the executors (:mod:`timealign.spark.ship`, SP-R17) and their Python is
``PYSPARK_PYTHON`` (or ``spark.pyspark.python`` with ``spark-submit``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import FrameType
from typing import Any

from pyspark import SparkContext
from pyspark.sql import SparkSession

from timealign.errors import InvalidInput

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"


#: SP-D31: below this many input rows (the inventory's count, SP-R41, taken before Spark
#: starts) the job's JVMs compile with C1 alone.
SHORT_JOB_ROWS = 2_000_000
#: SP-D31: the JIT of a short job: C1 only, no profiling, no C2 compiler threads.
SHORT_JOB_JIT = "-XX:TieredStopAtLevel=1"


def short_job(rows: int | None) -> bool:
    """SP-D31: whether a job over ``rows`` input rows (None: not counted) compiles with C1
    alone: below :data:`SHORT_JOB_ROWS` (a cold job over a few thousand rows spent about a
    third of its CPU in the C2 compiler; above the bound C2's code pays for its
    compilation)."""
    return rows is not None and rows < SHORT_JOB_ROWS


def java_options(rows: int | None) -> str:
    """SP-D31: the driver JVM's options of a local job over ``rows`` input rows: the
    throughput collector, and C1 alone for a :func:`short_job`."""
    return "-XX:+UseParallelGC" + (f" {SHORT_JOB_JIT}" if short_job(rows) else "")


def local_conf(cores: int, rows: int | None = None) -> dict[str, str]:
    """The quiet, predictable configuration of a local run on ``cores`` cores over ``rows``
    input rows (SP-D31; None: not counted)."""
    partitions = str(max(2, cores))
    return {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": partitions,
        "spark.default.parallelism": partitions,
        "spark.sql.adaptive.enabled": "true",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.memory": "2g",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # Measured on 2 cores, 10M rows (benchmarks/bench_spark.py): the throughput
        # collector and an uncompressed cache of the combined output (persisted only
        # until both tables are written) cut the JVM's CPU by about a fifth.
        "spark.driver.extraJavaOptions": java_options(rows),  # SP-D31
        "spark.sql.inMemoryColumnarStorage.compressed": "false",
    }


COMMON_CONF: dict[str, str] = {
    "spark.ui.showConsoleProgress": "false",  # SP-R33: one progress line, the job's own
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.streaming.stateStore.providerClass": ROCKSDB,
}


_SHIPPED: set[str] = set()  # applications the package was already added to


def submitted() -> bool:
    """True inside ``spark-submit``, which started the JVM with its own ``--master``."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


#: Lines of Spark's JVM and PySpark's workers that say nothing about the job (SP-R33):
#: log4j lines, the start-up banner, the incubator-module warning, worker start notices.
NOISE = re.compile(
    r"^(\d\d/\d\d/\d\d \d\d:\d\d:\d\d (TRACE|DEBUG|INFO|WARN|ERROR)\b"
    r"|WARNING: Using incubator modules"
    r"|Using Spark's default log4j profile"
    r"|Setting default log level to"
    r"|To adjust logging level use sc.setLogLevel"
    r"|.*Python worker"
    r"|\s*\[Stage \d+"  # Spark's console progress bar, where a master turns it on
    r"|\s*$"
    r"|\s*(at |\.\.\. \d+ more|Caused by: |Suppressed: ))")


def _filtered(read: int, write: int, keep: Callable[[str], bool]) -> None:
    """Copy lines from ``read`` to ``write``, leaving out those ``keep`` refuses."""
    with os.fdopen(read, "r", encoding="utf-8", errors="replace") as lines, \
            os.fdopen(write, "w", encoding="utf-8", errors="replace") as out:
        for line in lines:
            if keep(line):
                out.write(line)
                out.flush()


def _start_quietly(builder: SparkSession.Builder, verbose: bool) -> SparkSession:
    """Start the JVM with its stderr passed through a filter that leaves out
    :data:`NOISE` unless ``verbose`` (SP-R33). The JVM and the Python workers it starts
    keep the filtered descriptor; this process's own stderr is restored at once."""
    if verbose or SparkContext._active_spark_context is not None or submitted():
        return builder.getOrCreate()
    read, write = os.pipe()
    saved = os.dup(2)
    threading.Thread(target=_filtered, args=(read, os.dup(saved), lambda line:
                                              NOISE.match(line) is None),
                     name="timealign-spark-console", daemon=True).start()
    sys.stderr.flush()
    os.dup2(write, 2)
    try:
        return builder.getOrCreate()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(write)


def _children() -> tuple[int, ...]:
    """The processes this one started (Linux ``/proc``; none found elsewhere)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if len(fields) > 1 and fields[1] == str(os.getpid()):
            found.append(int(stat.parent.name))
    return tuple(found)


def _start_holding_interrupt(builder: SparkSession.Builder, verbose: bool) -> SparkSession:
    """Start the session with Ctrl-C held until it is up, then stop it and raise the
    interrupt (CLI-R2). PySpark starts the JVM with SIGINT ignored and the JVM only stops
    when its session is stopped or, once started, when this process's pipe closes; an
    interrupt inside the start-up left a JVM running with no parent, holding the
    terminal. A second Ctrl-C while Spark is still starting ends its processes at once."""
    if threading.current_thread() is not threading.main_thread():
        return _start_quietly(builder, verbose)
    held: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        held.append(signum)
        if len(held) == 1:
            print("[timealign] interrupted while Spark starts: stopping it once it is up "
                  "(Ctrl-C again ends it now)", file=sys.stderr, flush=True)
            return
        for child in _children():
            with contextlib.suppress(OSError):
                os.kill(child, signal.SIGKILL)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, hold)
    try:
        with _own_group():
            spark = _start_quietly(builder, verbose)
    except Exception as error:
        if held:
            raise KeyboardInterrupt from error
        raise
    finally:
        signal.signal(signal.SIGINT, previous)
    if held:
        spark.stop()
        raise KeyboardInterrupt
    return spark


@contextlib.contextmanager
def _own_group() -> Iterator[None]:
    """The JVM this process starts is put in a process group of its own (MQ-R14): a
    signal sent to this process's group (``timeout``, a terminal's Ctrl-C, ``kill --
    -PGID``) reaches the command, which stops its job and writes what it owes, and never
    the JVM, which a SIGTERM would shut down under the job (its shutdown hooks stop the
    session; a streaming query then died with a JVM exception). PySpark gives its own
    ``Popen`` of the JVM no such option; the JVM still ends when this process does (it
    watches its stdin pipe)."""
    from pyspark import java_gateway

    launch = getattr(java_gateway, "Popen")  # noqa: B009 (not exported: typed as Any)

    def grouped(*args: Any, **kwargs: Any) -> Any:
        return launch(*args, **kwargs, process_group=0)

    setattr(java_gateway, "Popen", grouped)  # noqa: B010
    try:
        yield
    finally:
        setattr(java_gateway, "Popen", launch)  # noqa: B010


class _Py4JRootRecords(logging.Filter):
    """Leaves out what py4j logs on the root logger (``logging.exception("KeyboardInterrupt
    while sending command.")`` with two tracebacks, when Ctrl-C arrives during a call into
    the JVM): the command says "interrupted" or names the failure itself (CLI-R2, SP-R33)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return f"{os.sep}py4j{os.sep}" not in record.pathname


_PY4J_FILTER = _Py4JRootRecords()


def quiet_py4j(verbose: bool) -> None:
    """Keep py4j's records off stderr unless ``verbose`` (CLI-R2, SP-R33).

    Two routes reach stderr: py4j's own loggers (``py4j.clientserver`` logs "Exception
    occurred while shutting down connection" with tracebacks when Ctrl-C breaks a call),
    and the module-level ``logging.exception`` it calls on the root logger, which also
    installs a root handler (``basicConfig``). A root logger's filter does not see records
    propagated from child loggers, so the ``py4j`` logger stops propagating (it keeps the
    null handler py4j gives it), and the root filter takes the root-logged records."""
    root, py4j = logging.getLogger(), logging.getLogger("py4j")
    if verbose:
        root.removeFilter(_PY4J_FILTER)
        py4j.propagate = True
        return
    if _PY4J_FILTER not in root.filters:
        root.addFilter(_PY4J_FILTER)
    if not py4j.handlers:
        py4j.addHandler(logging.NullHandler())
    py4j.propagate = False


def log_level(verbose: bool, debug: bool, conf: Mapping[str, str]) -> str:
    """The level of Spark's own log (SP-R23, SP-R33): ``spark.log.level`` when ``--conf``
    sets it, WARN with ``--verbose``, ERROR with ``--debug``, else OFF."""
    if "spark.log.level" in conf:
        return conf["spark.log.level"].upper()
    return "WARN" if verbose else "ERROR" if debug else "OFF"


#: The SQL settings a job sets on any master unless given (SP-R34): what `run` chooses on
#: local[*], with one shuffle partition per executor core.
RUNTIME_CONF: dict[str, str] = {
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
}


def cluster_settings(spark: SparkSession) -> None:
    """SP-R34: on a cluster, and under ``spark-submit``, the session gets the settings
    `run` chooses locally (shuffle partitions: the executors' cores, at least 2) wherever
    neither ``--conf`` nor ``spark-submit`` set them; Spark's 200 partitions made a small
    job hundreds of tasks."""
    given = spark.sparkContext.getConf()
    wanted = {**RUNTIME_CONF,
              "spark.sql.shuffle.partitions": str(max(2, spark.sparkContext.defaultParallelism))}
    for key, value in wanted.items():
        if not given.contains(key):
            spark.conf.set(key, value)


#: Seconds a connection to a standalone master may take before it counts as unreachable.
MASTER_TIMEOUT = 5.0
#: The Java major versions Spark 4 runs on.
JAVA_VERSIONS = (17, 21)


def check_master(master: str | None, timeout: float = MASTER_TIMEOUT) -> None:
    """SP-R39: a standalone master (``spark://HOST:PORT``, several comma-separated for a
    standby set) must accept a TCP connection before the session starts; Spark itself
    retried for over a minute and then failed with py4j's text. Other masters are left to
    Spark."""
    import socket

    if master is None or not master.startswith("spark://"):
        return
    tried: list[str] = []
    for address in master[len("spark://"):].split(","):
        host, sep, port = address.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise InvalidInput("master", "SP-R39", "a standalone master is "
                               "spark://HOST:PORT (the port of the master, 7077 by default)",
                               master)
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
                return
        except OSError as error:
            tried.append(f"{address} ({error.strerror or type(error).__name__})")
    raise InvalidInput("master", "SP-R39", f"the Spark master cannot be reached: "
                       f"{'; '.join(tried)}; start it (see docs/spark.md, 'Running on a "
                       f"cluster') or check the URL", master)


def java_version(java: str) -> int | None:
    """The major version ``java -version`` reports, or None when it does not run."""
    import subprocess

    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True,
                              timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r'version "(\d+)(?:\.(\d+))?', done.stderr + done.stdout)
    if done.returncode != 0 or found is None:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def check_java() -> None:
    """SP-R39: the Java PySpark will start (``$JAVA_HOME/bin/java``, else ``java`` on the
    ``PATH``) runs and is Java 17 or 21, said before Spark starts; a bad ``JAVA_HOME``
    ended in spark-class's own errors. Skipped when a JVM is already running (a session,
    ``spark-submit``)."""
    import shutil

    if SparkContext._active_spark_context is not None or submitted():
        return
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    where = f"JAVA_HOME={home}" if home else "the PATH"
    wanted = " or ".join(map(str, JAVA_VERSIONS))
    if java is None or not os.access(java, os.X_OK):
        raise InvalidInput("JAVA_HOME" if home else "java", "SP-R39", f"Java {wanted} was not "
                           f"found (no java in {where}): Spark needs it; set JAVA_HOME to a "
                           f"Java {JAVA_VERSIONS[0]} installation", home or None)
    version = java_version(java)
    if version not in JAVA_VERSIONS:
        found = "does not run" if version is None else f"is Java {version}"
        raise InvalidInput("JAVA_HOME" if home else "java", "SP-R39", f"Java {wanted} was "
                           f"not found: {java} (from {where}) {found}; Spark needs Java "
                           f"{wanted}: set JAVA_HOME to a Java {JAVA_VERSIONS[0]} "
                           f"installation", java)


def session_settings(master: str | None, conf: Mapping[str, str],
                     rows: int | None = None) -> dict[str, str]:
    """The settings a session starts with: :data:`COMMON_CONF`, on ``local[...]`` (or no
    master outside ``spark-submit``) :func:`local_conf`, and SP-D31's JIT of a short job
    over ``rows`` input rows on any other master (its executors run the tasks), as the
    JVMs' default options, which a cluster's ``extraJavaOptions`` follow (and override);
    then ``conf``, the user's ``--conf``, which replaces any of them."""
    settings = dict(COMMON_CONF)
    if master is None and submitted():
        pass  # spark-submit's --master and --conf are already in the JVM
    elif master is None or master.startswith("local"):
        inside = (master or "local[*]").partition("[")[2].rstrip("]")
        cores = (os.cpu_count() or 2) if inside in ("", "*") else int(inside.split(",")[0])
        settings.update(local_conf(cores, rows))
    elif short_job(rows):  # SP-D31: before a cluster's own
        settings.update({"spark.driver.defaultJavaOptions": SHORT_JOB_JIT,
                         "spark.executor.defaultJavaOptions": SHORT_JOB_JIT})
    settings.update(conf)
    return settings


def build_session(
    master: str | None = None,
    app_name: str = "timealign",
    conf: Mapping[str, str] | None = None,
    verbose: bool = False,
    rows: int | None = None,
) -> SparkSession:
    """Start (or reuse) the session; ``master=None`` means the master of ``spark-submit``
    when run by it, else local on every core. Spark's own console lines are left out
    unless ``verbose`` or ``--conf spark.log.level`` (SP-R33). Java and a standalone master
    are checked first (SP-R39). ``rows``: the input's rows when counted before the start
    (SP-R41), which choose the JVMs' JIT (SP-D31); ``conf`` overrides what they choose."""
    check_java()
    check_master(master)
    builder = SparkSession.builder.appName(app_name)
    if not (master is None and submitted()):  # else spark-submit's master
        builder = builder.master(master or "local[*]")
        if (master or "local").startswith("local"):
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    shipping = None
    if (master is None and submitted()) or not (master or "local").startswith("local"):
        from timealign.spark.ship import build_zip  # SP-R17

        shipping = build_zip()
    for key, value in session_settings(master, conf or {}, rows).items():
        builder = builder.config(key, value)
    loud = verbose or "spark.log.level" in (conf or {})  # Spark's own log asked for
    quiet_py4j(loud)  # CLI-R2, SP-R33
    spark = _start_holding_interrupt(builder, loud)
    spark.sparkContext.setLogLevel(log_level(verbose, False, conf or {}) if loud else "ERROR")
    if shipping is not None or (master is None and submitted()):
        cluster_settings(spark)
    context = spark.sparkContext
    if shipping is not None and context.applicationId not in _SHIPPED:
        from timealign.spark.ship import ship_zip

        ship_zip(spark, shipping)
        _SHIPPED.add(context.applicationId)
    return spark


@contextlib.contextmanager
def session_conf(spark: SparkSession, settings: dict[str, str]) -> Iterator[None]:
    """Set SQL settings for the duration of a job, then restore the previous values."""
    before: dict[str, str | None] = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, previous in before.items():
            if previous is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, previous)
