"""The fast path enacts each arithmetic's table (AT-R16, AT-R19, CF-R40): the scaling is
the table's function, the time check the fast form of the table's, and a check it has no
form of is refused."""

from __future__ import annotations

import pytest

from timealign.approximate_time import Config, Message, State, fast
from timealign.approximate_time.arithmetic import ARITHMETICS, BOOK, scale_ros2
from timealign.errors import InvalidInput
from timealign.rulebook import rule


def test_fast_forms_cover_every_time_check_of_the_tables_at_r19() -> None:
    # The profiles replace only the slots the fast path has forms of; the other slots are
    # the decision points only a catalogued variant replaces (CF-R41), in the rule text.
    forms = {"scale_ros2", "_time_fits", "_durations_fit"}
    assert forms <= set(BOOK.slots)
    for arithmetic in ARITHMETICS:
        assert set(BOOK.tables[arithmetic].entries) <= forms
        assert all(BOOK.entry(arithmetic, slot) is BOOK.slots[slot]
                   for slot in set(BOOK.slots) - forms)
        chosen = BOOK.entry(arithmetic, "_time_fits")
        assert chosen in fast.TIME_CHECKS
        assert fast.TIME_CHECKS[chosen] == ("_time_fits" in BOOK.tables[arithmetic].entries)
    ros1 = Config(2, 3, age_penalty=0.7, arithmetic="ros1")
    state = fast.initial(ros1)
    state, _ = fast.step(ros1, state, Message(0, 0, "a"))
    with pytest.raises(InvalidInput) as caught:  # the ros1 table's check, in the fast path
        fast.step(ros1, state, Message(1, 2**62, "b"))
    assert caught.value.rule == "AT-R19"


def test_fast_path_scales_with_the_table_and_refuses_an_unknown_check_at_r16() -> None:
    @rule("AT-R20")
    def never(config: Config, state: State, message: Message) -> None:
        del config, state, message

    config = Config(2, 3)
    with BOOK.swapped({"_time_fits": never}), pytest.raises(LookupError, match="never"):
        fast.step(config, fast.initial(config), Message(0, 0, "a"))
    assert BOOK.rules("ros2").of(scale_ros2) is scale_ros2
