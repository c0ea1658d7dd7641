"""A Python environment with this one's libraries but without ``timealign`` (SP-R17)."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path


def bare_python(folder: Path) -> Path:
    """A venv whose only extra path is this environment's site-packages, added by a ``.pth``
    line: Python does not process the ``.pth`` files inside a folder added that way, so the
    editable install of ``timealign`` (itself a ``.pth``) is not visible there."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    site = next(folder.glob("lib/python*/site-packages"))
    (site / "main.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return folder / "bin" / "python"


#: What a Spark cluster's Python usually has (SP-R34): pyspark, pyarrow, pandas, numpy and
#: the packages they import, nothing else (no attrs); plus protobuf (``google``), which
#: PySpark's own state API of ``transformWithStateInPandas`` imports on every worker.
CLUSTER_PACKAGES = ("pyspark", "py4j", "pyarrow", "pandas", "numpy", "numpy.libs", "dateutil",
                    "pytz", "tzdata", "six.py", "google")


def cluster_python(folder: Path) -> Path:
    """A venv that sees only :data:`CLUSTER_PACKAGES` of this environment (each linked into
    a folder of its own, which a ``.pth`` line adds): the executors of a typical cluster."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    site = next(folder.glob("lib/python*/site-packages"))
    shared = Path(sysconfig.get_paths()["purelib"])
    chosen = folder / "cluster-packages"
    chosen.mkdir()
    for name in CLUSTER_PACKAGES:
        if (shared / name).exists():
            (chosen / name).symlink_to(shared / name)
    (site / "cluster.pth").write_text(f"{chosen}\n")
    return folder / "bin" / "python"
