"""timealign: the reference engine for three streaming timestamp-alignment algorithms.

Each algorithm is a pure state machine described by an :class:`Algorithm`
(:mod:`timealign.algorithm`); look one up with :func:`timealign.registry.get` or import
its package directly.
"""

from timealign.algorithm import Algorithm, Fast, Grouped, Record, Settled, iter_outputs, run
from timealign.errors import InvalidInput

__all__ = [
    "Algorithm", "Fast", "Grouped", "InvalidInput", "Record", "Settled", "iter_outputs", "run",
]
__version__ = "0.1.0"
