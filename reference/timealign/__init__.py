"""timealign: the reference engine for three streaming timestamp-alignment algorithms.

Each algorithm is a pure state machine (:mod:`timealign.machine`); look one up with
:func:`timealign.registry.get` or import its package directly.

The fast paths may run compiled (``timealign.native``): its import finder is installed
first, before any algorithm package imports its fast path.
"""

from timealign import native

native.install()

from timealign.errors import InvalidInput  # noqa: E402
from timealign.machine import Algorithm, Grouped, Record, Settled, replay, run  # noqa: E402

__all__ = ["Algorithm", "Grouped", "InvalidInput", "Record", "Settled", "replay", "run"]
__version__ = "0.1.0"
