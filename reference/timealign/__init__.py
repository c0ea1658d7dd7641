"""timealign: the reference engine for three streaming timestamp-alignment algorithms.

Each algorithm is a pure state machine (:mod:`timealign.machine`); look one up with
:func:`timealign.registry.get` or import its package directly.
"""

from timealign.errors import InvalidInput
from timealign.machine import Algorithm, Grouped, Record, Settled, replay, run

__all__ = ["Algorithm", "Grouped", "InvalidInput", "Record", "Settled", "replay", "run"]
__version__ = "0.1.0"
