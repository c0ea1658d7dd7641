"""The Spark adapter: batch and streaming jobs that drive the reference machines per source.

The jobs never re-implement a rule: rows become inputs through each machine's
``inputs_from_records``, ticks and the end of input follow ``timealign.drive`` (spec
``drivers.md``), and every outcome comes from ``Algorithm.accounting.account`` (spec ``spark.md``).
Importing this package imports neither pyspark nor pyarrow: the CLI registers its
sub-commands here and loads Spark only when one of them runs.
"""

from __future__ import annotations

import importlib.util

from timealign.errors import InvalidInput

#: What the ``spark`` extra installs that the jobs import (protobuf only for ``stream``).
SPARK_MODULES: tuple[str, ...] = ("pyspark", "pyarrow", "pandas", "numpy")


def _absent(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is None
    except ModuleNotFoundError:  # its parent package (``google`` of ``google.protobuf``)
        return True


def require_spark_extra(command: str, modules: tuple[str, ...] = SPARK_MODULES) -> None:
    """SP-R35: refuse up front, naming the extra and its install line, when a module of
    the ``spark`` extra is missing (exit 2), instead of a ``ModuleNotFoundError`` (exit 4)
    once the job has started."""
    missing = [name for name in modules if _absent(name)]
    if missing:
        raise InvalidInput(command, "SP-R35", f"needs the spark extra ({', '.join(missing)} "
                           "missing): pip install 'timealign[spark]'", None)
