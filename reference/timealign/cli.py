"""The name of the ``timealign`` console script (``timealign.cli:main`` in pyproject.toml)
and of what callers of old import from it: the command line itself is
:mod:`timealign.commands.main`, in the commands layer (ARCHITECTURE.md). Kept so that
installed scripts, ``spark-submit`` entry files written by ``python -m
timealign.spark.ship`` and scripts that import ``timealign.cli`` keep working."""

from timealign.commands.main import *  # noqa: F403 (every name of its __all__)
from timealign.commands.main import __all__ as __all__
