"""Ship the ``timealign`` package to a cluster's executors (SP-R17).

The UDFs and the streaming processor are pickled by reference to their module
(``timealign.spark.batch``, ``timealign.spark.streaming``), so every executor's Python must
import ``timealign``. On ``local[*]`` the workers run the driver's own interpreter and find
the installed package; on a cluster they run another machine's Python. The job therefore
zips the package it runs from (the pure-Python source files, nothing compiled) and adds the
zip with ``SparkContext.addPyFile``: Spark copies it to every executor and puts it on the
Python workers' ``sys.path``. The zip also holds the pure-Python package ``timealign``
needs that a Spark cluster's Python rarely has (attrs, SP-R34); pyspark, pyarrow, pandas
and numpy are what a Spark cluster's Python has.
"""

from __future__ import annotations

import atexit
import importlib.machinery
import importlib.util
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

from pyspark.sql import SparkSession

import timealign

SKIPPED = ("__pycache__",)
NATIVE = tuple(importlib.machinery.EXTENSION_SUFFIXES)


def package_folder() -> Path:
    """The folder the running ``timealign`` package was imported from."""
    return Path(timealign.__file__).resolve().parent


#: Pure-Python packages the executors import and a Spark cluster's Python rarely has: the
#: runtime dependency of ``timealign`` (attrs ships two top-level packages), SP-R34.
DEPENDENCIES = ("attr", "attrs")


def dependency_folders() -> list[Path]:
    """The folders of :data:`DEPENDENCIES` as the driver imports them."""
    folders = []
    for name in DEPENDENCIES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            folders.append(Path(next(iter(spec.submodule_search_locations))).resolve())
    return folders


def package_zip(target: Path) -> Path:
    """Write ``target/timealign.zip``: every file of the package but byte-code caches, and
    the pure-Python packages it depends on (:data:`DEPENDENCIES`, SP-R34)."""
    archive = target / "timealign.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as handle:
        for folder in (package_folder(), *dependency_folders()):
            for path in sorted(folder.rglob("*")):
                relative = path.relative_to(folder.parent)
                # Byte code and compiled extensions stay out: Python cannot load an
                # extension from a zip, so executors run the pure fast paths
                # (timealign.native).
                if path.is_file() and not any(p in SKIPPED for p in relative.parts) \
                        and path.suffix != ".pyc" and not path.name.endswith(NATIVE):
                    handle.write(path, relative.as_posix())
    return archive


def shipped_by_submit() -> bool:
    """True when the package itself runs from a zip (``spark-submit --py-files``), which
    Spark already ships: there is no folder to zip."""
    return not package_folder().is_dir()


def build_zip() -> Path | None:
    """Zip the package into a temporary folder that lives until the driver exits (the driver
    serves the zip to executors that join later); None when ``spark-submit`` shipped it.

    The zip is also put on this process's ``PYTHONPATH`` before the JVM starts: for a
    ``transformWithStateInPandas`` stream the driver's JVM runs a Python worker of its own
    (to initialize the processor), with the executors' Python and the JVM's environment,
    but without the session's Python files."""
    if shipped_by_submit():
        return None
    folder = Path(tempfile.mkdtemp(prefix="timealign-ship-"))
    atexit.register(shutil.rmtree, folder, True)
    archive = package_zip(folder)
    paths = [str(archive), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)
    return archive


def ship_zip(spark: SparkSession, archive: Path) -> None:
    """Add the zip to the session's Python files: Spark copies it to every executor and
    puts it on their Python workers' ``sys.path``."""
    spark.sparkContext.addPyFile(str(archive))


ENTRY = '''"""spark-submit entry point of timealign (written by python -m timealign.spark.ship)."""
import sys

from timealign.cli import main

sys.exit(main(sys.argv[1:]))
'''


def write_submit_files(target: Path) -> tuple[Path, Path]:
    """``target/timealign.zip`` and ``target/timealign_submit.py``: what ``spark-submit
    --py-files timealign.zip timealign_submit.py run …`` needs."""
    target.mkdir(parents=True, exist_ok=True)
    entry = target / "timealign_submit.py"
    entry.write_text(ENTRY, encoding="utf-8")
    return package_zip(target), entry


if __name__ == "__main__":
    import sys

    for written in write_submit_files(Path(sys.argv[1] if len(sys.argv) > 1 else ".")):
        print(written)
