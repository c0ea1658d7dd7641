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
