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
from typing import TYPE_CHECKING

import timealign
from timealign.errors import InvalidInput
from timealign.outputs import filled, resolved

if TYPE_CHECKING:  # only ship_zip takes a session: the options need no Spark (CLI-R5's test)
    from pyspark.sql import SparkSession

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


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def package_zip(target: Path) -> Path:
    """Write ``target/timealign.zip``: every file of the package but byte-code caches, and
    the pure-Python packages it depends on (:data:`DEPENDENCIES`, SP-R34).

    The files are listed before the zip is opened and the zip is written to a temporary
    sibling, then moved into place (CLI-R3): a zip never contains itself or another output
    of this command, whatever ``target`` is (SP-R17)."""
    folder = package_folder()
    archive = target / "timealign.zip"
    if _inside(target.resolve(), folder):
        raise InvalidInput("the target folder", "CLI-R3", "lies inside the package it would "
                           f"zip ({folder}): the zip would contain itself", str(target))
    # Byte code and compiled extensions stay out: Python cannot load an extension from a
    # zip, so executors run the pure fast paths (timealign.native).
    chosen = [(path, path.relative_to(top.parent).as_posix())
              for top in (folder, *dependency_folders())
              for path in sorted(top.rglob("*"))
              if path.is_file() and not any(p in SKIPPED for p in path.relative_to(
                  top.parent).parts)
              and path.suffix != ".pyc" and not path.name.endswith(NATIVE)]
    handle_fd, staging = tempfile.mkstemp(prefix=".timealign.zip.", dir=target)
    os.close(handle_fd)
    try:
        with zipfile.ZipFile(staging, "w", zipfile.ZIP_DEFLATED) as handle:
            for path, name in chosen:
                handle.write(path, name)
        os.replace(staging, archive)
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise
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


#: Spark's log under ``spark-submit`` until the job sets its own level (SP-R33): the JVM
#: starts, and logs about 48 INFO lines, before ``timealign`` runs; errors only until then.
LOG_CONFIG = """\
# Spark's own log under spark-submit (written by python -m timealign.spark.ship), passed with
#   spark-submit --driver-java-options "-Dlog4j2.configurationFile=PATH/log4j2.properties"
# Errors only while the JVM starts; once the session runs, timealign sets the level (off;
# warn with --verbose; --conf spark.log.level=LEVEL), as `timealign run` does (SP-R33).
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
"""


#: The command and the option of ``python -m timealign.spark.ship`` in outputs.WRITES.
COMMAND, OPTION = "ship", "FOLDER"


def write_submit_files(target: Path) -> tuple[Path, Path, Path]:
    """``target/timealign.zip``, ``target/timealign_submit.py`` and
    ``target/log4j2.properties``: what ``spark-submit --driver-java-options
    -Dlog4j2.configurationFile=… --py-files timealign.zip timealign_submit.py run …`` needs
    (SP-R17, SP-R33). ``target`` is filled as CLI-R5 says: absent, empty or an earlier
    output of ship (its manifest), never a folder of the user's files; the files are
    written beside it and moved in together."""
    if _inside(target.resolve(), package_folder()):
        package_zip(target)  # refuses it, before anything is written
    with filled(target, "ship", OPTION) as staging:
        package_zip(staging)
        (staging / "timealign_submit.py").write_text(ENTRY, encoding="utf-8")
        (staging / "log4j2.properties").write_text(LOG_CONFIG, encoding="utf-8")
    where = Path(resolved(target))
    return (where / "timealign.zip", where / "timealign_submit.py",
            where / "log4j2.properties")
