"""The zip the jobs ship to a cluster's executors (SP-R17, SP-D8), without Spark."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.spark.bare import cluster_python
from timealign.cli import main
from timealign.spark.failures import WorkerError, job_error, worker_error
from timealign.spark.ship import NATIVE, dependency_folders, package_folder, write_submit_files


def test_sp_r17_d8_zip_holds_the_package_sources_and_imports_alone(tmp_path: Path) -> None:
    """SP-R17, SP-D8: the zip holds every file of the package but byte-code caches and
    compiled extensions (pure Python source: executors run the pure fast paths), and a
    Python that cannot import timealign imports it, and runs the
    reference, from the zip alone; the entry script runs the CLI."""
    archive, entry, _log_config = write_submit_files(tmp_path / "dist")
    wanted = sorted(p.relative_to(folder.parent).as_posix()
                    for folder in (package_folder(), *dependency_folders())
                    for p in folder.rglob("*")
                    if p.is_file() and "__pycache__" not in p.parts
                    and not p.name.endswith(NATIVE))  # the compiled build's extensions
    with zipfile.ZipFile(archive) as handle:
        names = sorted(handle.namelist())
    assert names == wanted and "timealign/spark/ship/__init__.py" in names
    # SP-R34: attrs (two top-level packages) travels with the package
    assert "attrs/__init__.py" in names and "attr/__init__.py" in names
    assert not [n for n in names if n.endswith((".pyc", ".so"))]
    python = cluster_python(tmp_path / "venv")  # SP-R34: no attrs either
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    alone = subprocess.run([str(python), "-c", "import timealign"], env=env,
                           capture_output=True, text=True, check=False)
    assert "No module named 'timealign'" in alone.stderr
    env["PYTHONPATH"] = str(archive)
    vectors = Path(__file__).resolve().parents[2] / "vectors" / "approximate_time"
    done = subprocess.run([str(python), str(entry), "check", str(vectors)], env=env,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "vectors passed" in done.stdout


def test_sp_r33_ship_writes_the_log_settings_spark_submit_starts_with(tmp_path: Path) -> None:
    """SP-R33: `python -m timealign.spark.ship` writes `log4j2.properties` beside the zip
    (Spark's log at errors only, on stderr, until the job sets its level) and names it;
    the README's spark-submit line passes it to the driver's JVM (the cluster test runs
    that line and finds none of Spark's start-up lines)."""
    done = subprocess.run([sys.executable, "-m", "timealign.spark.ship", str(tmp_path)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(tmp_path / name) for name in (
        "timealign.zip", "timealign_submit.py", "log4j2.properties")]
    settings = dict(line.split(" = ", 1) for line in (tmp_path / "log4j2.properties").read_text(
        encoding="utf-8").splitlines() if line and not line.startswith("#"))
    assert settings["rootLogger.level"] == "error"
    assert settings["appender.stderr.target"] == "SYSTEM_ERR"
    readme = (Path(__file__).resolve().parents[2] / "docs" / "spark.md").read_text(
        encoding="utf-8")
    assert '--driver-java-options "-Dlog4j2.configurationFile=dist/log4j2.properties"' in readme


def test_sp_r34_a_worker_error_is_named_by_its_type_and_message() -> None:
    """SP-R34: a Python worker's own exception reaches the driver as its type and message,
    with the fix when the executors lack a module; other text is left as it is."""
    text = ("org.apache.spark.api.python.PythonException: An exception was thrown from the "
            "Python worker:\nTraceback (most recent call last):\n  File \"x.py\", line 1\n"
            "ModuleNotFoundError: No module named 'attrs'\n\tat org.apache.spark.Foo(x)\n")
    error = worker_error(text)
    assert isinstance(error, WorkerError)
    assert str(error).startswith("a Python worker failed: ModuleNotFoundError: No module "
                                 "named 'attrs'; the executors' Python lacks 'attrs'")
    assert "pip install attrs" in str(error)
    assert isinstance(job_error(RuntimeError(text)), WorkerError)
    assert worker_error("java.lang.OutOfMemoryError: heap") is None


def test_sp_r17_conf_must_be_a_spark_setting(capsys: pytest.CaptureFixture[str],
                                            tmp_path: Path) -> None:
    """SP-R17: `--conf` takes spark.KEY=VALUE; anything else exits 2 before Spark starts
    (the input exists: a missing one is refused first, SP-R1)."""
    config = '{"topics": ["a", "b"], "queue_size": 2}'
    (tmp_path / "in").mkdir()
    code = main(["run", "approximate_time", "--input", str(tmp_path / "in"), "--output",
                 str(tmp_path / "out"), "--config", config, "--conf", "shuffle.partitions=4"])
    assert code == 2
    error = capsys.readouterr().err
    assert "--conf" in error and "SP-R17" in error and "shuffle.partitions=4" in error
