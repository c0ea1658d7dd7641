"""VEC-R12: ``jsontext.same`` (exact-type fast path, issue 26) equals its definition: equal
JSON kinds all the way down (``0 != 0.0 != false``; a tuple and a list are both arrays)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from timealign import jsontext

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.0, 1.0, -1.5]),
                    st.sampled_from(["", "a", "b"]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(tuple),
    st.dictionaries(st.sampled_from(["a", "b", "input"]), inner, max_size=3)), max_leaves=8)


def defined(a: Any, b: Any) -> bool:
    """VEC-R12 written out: the kind, then the parts."""
    if jsontext.kind(a) != jsontext.kind(b):
        return False
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(defined(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(defined(a[k], b[k]) for k in a)
    return bool(a == b)


@given(VALUES, VALUES)
def test_vec_r12_same_equals_its_definition(a: Any, b: Any) -> None:
    """VEC-R12 on random pairs and on a value against itself."""
    assert jsontext.same(a, b) == defined(a, b)
    assert jsontext.same(a, a) == defined(a, a)


class Number(float):
    """A float subclass (its kind is still ``number``)."""


@given(st.sampled_from([
    ({1: 0, "1": False}, {"1": 0, 1: False}),  # keys of mixed types, written alike
    ({1: 0, 2.5: False}, {1: False, 2.5: 0}),
    ({True: 0}, {1: 0}), ({1: 0}, {1.0: 0}), ({"a": 0, "b": False}, {"b": 0, "a": False}),
    ([float("nan")], [float("nan")]), ({float("nan"): 1}, {float("nan"): 1}),
    ([0.0], [-0.0]), ([float("inf")], [float("inf")]), ([1e16], [10**16]),
    ([Number(1.5)], [1.5]), ((1, [2]), [1, (2,)]), ([0], [False]), ([1], [True]),
    ({"input": {1, 2}}, {"input": {1, 2}}), ({"a": [None]}, {"a": [None]}),
]))
def test_vec_r12_same_on_values_python_finds_equal(pair: tuple[Any, Any]) -> None:
    """VEC-R12 where Python's ``==`` and the JSON text could mislead the fast check: mixed
    key types, NaN, signed zero, infinity, subclasses, non-JSON values."""
    a, b = pair
    assert jsontext.same(a, b) == defined(a, b)
    assert jsontext.same(b, a) == defined(b, a)
    assert jsontext.same(a, a) == defined(a, a)
