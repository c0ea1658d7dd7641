"""Pictures of vectors and runs (PL-R6 to PL-R10); matplotlib is the ``plot`` extra."""

from __future__ import annotations

import importlib.util

from timealign.errors import InvalidInput


def require_plot_extra(option: str) -> None:
    """Refuse up front, with the fix, when matplotlib (the ``plot`` extra) is missing;
    ``option`` names what asked for a picture."""
    if importlib.util.find_spec("matplotlib") is None:
        raise InvalidInput(option, "PL-R7", "pictures need the plot extra: "
                           "pip install 'timealign[plot]'", None)
