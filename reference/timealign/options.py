"""Typed command-line option values, validated when the options are parsed (CLI-R1).

Every number a command takes is checked by argparse itself (``type=``), so a bad value
(``nan``, ``inf``, ``-3``, ``100000`` where at most 1,000 makes sense) is a usage error,
exit 2, before any work starts, never an exit 4 from deep inside the job.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def integer(least: int | None = None, most: int | None = None) -> Callable[[str], int]:
    """An argparse ``type``: a whole number in [``least``, ``most``] (either end open)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        _in_range(value, least, most)
        return value

    parse.__name__ = "integer"  # argparse names the type in its message
    return parse


def number(least: float | None = None, most: float | None = None,
           above: float | None = None) -> Callable[[str], float]:
    """An argparse ``type``: a finite number in [``least``, ``most``] (or > ``above``)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
        if above is not None and not value > above:
            raise argparse.ArgumentTypeError(f"must be more than {above:g}, got {text}")
        _in_range(value, least, most)
        return value

    parse.__name__ = "number"
    return parse


def _in_range(value: float, least: float | None, most: float | None) -> None:
    if least is not None and value < least:
        raise argparse.ArgumentTypeError(f"must be at least {least:g}, got {value:g}")
    if most is not None and value > most:
        raise argparse.ArgumentTypeError(f"must be at most {most:g}, got {value:g}")
