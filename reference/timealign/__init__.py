"""timealign: the reference engine for three streaming timestamp-alignment algorithms.

Each algorithm is a pure state machine described by an :class:`Algorithm`
(:mod:`timealign.algorithm`); look one up with :func:`timealign.registry.get` or import
its package directly.

The fast paths may run compiled (``timealign.native``): its import finder is installed
first, before any algorithm package imports its fast path.
"""

from importlib.metadata import PackageNotFoundError, version

from timealign import native

native.install()

from timealign.algorithm import (  # noqa: E402
    Algorithm,
    Fast,
    Grouped,
    Record,
    Settled,
    iter_outputs,
    run,
)
from timealign.errors import InvalidInput  # noqa: E402

__all__ = [
    "Algorithm", "Fast", "Grouped", "InvalidInput", "Record", "Settled", "iter_outputs", "run",
]

try:  # the version is written once, in pyproject.toml
    __version__ = version("timealign")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
