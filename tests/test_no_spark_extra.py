"""An install without the ``spark`` extra (SP-R35): the Spark commands exit 2 naming it.

The check must come before any import of the extra's modules: a handler that imported
``timealign.spark.inputs`` (which imports pyspark) first ended with "No module named
'pyspark'", exit 4. The commands run in a child process whose ``pyspark`` and ``pyarrow``
cannot be imported, as in a ``pip install timealign`` without the extra.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

WITHOUT_SPARK = """
import sys
sys.modules["pyspark"] = None  # import pyspark raises ModuleNotFoundError, as uninstalled
sys.modules["pyarrow"] = None
from timealign.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _commands(tmp: Path) -> list[list[str]]:
    out = str(tmp / "out")
    return [["run", "approximate_time", "--input", str(tmp), "--output", out],
            ["stream", "approximate_time", "--source", str(tmp), "--output", out,
             "--checkpoint", str(tmp / "cp")],
            ["verify", str(tmp)],
            ["generate", "--output", out]]


@pytest.mark.parametrize("position", range(4))
def test_sp_r35_spark_commands_without_the_extra_exit_2_naming_it(
        tmp_path: Path, position: int) -> None:
    """SP-R35: `run`, `stream`, `verify` and `generate` where pyspark cannot be imported:
    exit 2, one line naming ``pip install 'timealign[spark]'``, never "No module named"."""
    argv = _commands(tmp_path)[position]
    done = subprocess.run([sys.executable, "-c", WITHOUT_SPARK, *argv], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    assert "pip install 'timealign[spark]'" in done.stderr and "SP-R35" in done.stderr
    assert "No module named" not in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "out").exists()


#: The modules of the extras (pyproject.toml: spark, plot, mqtt), as an install with the
#: ``dev`` extra only lacks them. ``google`` is protobuf's namespace.
EXTRA_MODULES = ("pyspark", "pyarrow", "pandas", "numpy", "rosbags", "google", "matplotlib",
                 "markdown", "paho")
COLLECT_WITHOUT_EXTRAS = """
import sys

class Uninstalled:  # import raises ModuleNotFoundError, as uninstalled; unlike a None in
    # sys.modules, "numpy" stays out of sys.modules (Hypothesis looks for it there)
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {modules!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Uninstalled())
import pytest
sys.exit(pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", {tests!r}]))
"""


def test_sp_r35_the_tests_collect_without_the_extras() -> None:
    """SP-R35: ``pip install -e '.[dev]'`` then ``pytest``: every test module collects
    where the extras' modules cannot be imported (a module importing pyarrow at its top
    stopped the whole run at collection), and the tests of a missing extra are left out
    (``tests/conftest.py``, which names the extra in the report header)."""
    tests = Path(__file__).resolve().parent
    done = subprocess.run(
        [sys.executable, "-c", COLLECT_WITHOUT_EXTRAS.format(modules=EXTRA_MODULES,
                                                             tests=str(tests))],
        cwd=tests.parent, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "error" not in done.stdout.splitlines()[-1], done.stdout[-4000:]
    collected = {line.split("::")[0] for line in done.stdout.splitlines() if "::" in line}
    assert "tests/mqtt/test_mq_thinedge.py" in collected  # the pure MQTT tests still run
    assert not any(name.startswith(("tests/spark/", "tests/rosbag/", "tests/plot/",
                                    "tests/mqtt/test_mq_live", "tests/mqtt/test_mq_verify"))
                   for name in collected)
