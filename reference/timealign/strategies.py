"""The fuzz strategies' shared helper (CF-R9). Every module named ``strategies.py``
imports Hypothesis, so it is loaded only by ``timealign conform --fuzz`` and ``timealign
diff`` (its seeded random traces; the ``conform`` extra), never by the rule text, the rest
of the core or the other adapters."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st


def sequence(draw: Any, element: Any, max_size: int) -> list[Any]:
    """Up to ``max_size`` elements drawn with Hypothesis's ``draw``, about half of
    ``max_size`` on average (a plain ``st.lists`` averages five), one draw per element;
    shrinking shortens it. The fuzz strategies of every algorithm share it (CF-R9)."""
    size = draw(st.integers(0, max_size))
    found: list[Any] = draw(st.lists(element, min_size=size, max_size=size))
    return found
