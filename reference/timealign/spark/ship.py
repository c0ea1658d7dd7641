"""Ship the ``timealign`` package to a cluster's executors (SP-R17).

The UDFs and the streaming processor are pickled by reference to their module
(``timealign.spark.batch``, ``timealign.spark.streaming``), so every executor's Python must
import ``timealign``. On ``local[*]`` the workers run the driver's own interpreter and find
the installed package; on a cluster they run another machine's Python. The job therefore
zips the package it runs from (the pure-Python source files, nothing compiled) and adds the
zip with ``SparkContext.addPyFile``: Spark copies it to every executor and puts it on the
Python workers' ``sys.path``. Executors still need the package's third-party dependencies
(attrs, pyarrow, pandas, pyspark) installed.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import zipfile
from pathlib import Path

from pyspark.sql import SparkSession

import timealign

SKIPPED = ("__pycache__",)


def package_folder() -> Path:
    """The folder the running ``timealign`` package was imported from."""
    return Path(timealign.__file__).resolve().parent


def package_zip(target: Path) -> Path:
    """Write ``target/timealign.zip``: every file of the package but byte-code caches."""
    folder = package_folder()
    archive = target / "timealign.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as handle:
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder.parent)
            if path.is_file() and not any(p in SKIPPED for p in relative.parts) \
                    and path.suffix != ".pyc":
                handle.write(path, relative.as_posix())
    return archive


def shipped_by_submit() -> bool:
    """True when the package itself runs from a zip (``spark-submit --py-files``), which
    Spark already ships: there is no folder to zip."""
    return not package_folder().is_dir()


def ship_package(spark: SparkSession) -> Path | None:
    """Zip the package and add it to the session's Python files; return the zip (None when
    ``spark-submit`` shipped it already). The zip lives until the driver exits: the driver
    serves it to executors that join later."""
    if shipped_by_submit():
        return None
    folder = Path(tempfile.mkdtemp(prefix="timealign-ship-"))
    atexit.register(shutil.rmtree, folder, True)
    archive = package_zip(folder)
    spark.sparkContext.addPyFile(str(archive))
    return archive
