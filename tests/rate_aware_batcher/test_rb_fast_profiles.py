"""The fast path enacts each profile's table (RB-R17, CF-R40): its fast forms cover every
slot of the rule text and every function a table puts there, and it refuses a table it has
no form of rather than run something else."""

from __future__ import annotations

import pytest

from timealign.rate_aware_batcher import Config, Poll, Polled, Stream, fast
from timealign.rate_aware_batcher.model import BOOK, PROFILES
from timealign.rulebook import rule


def test_fast_forms_cover_every_slot_and_table_rb_r17() -> None:
    assert set(fast.FORMS) == set(BOOK.slots)
    for profile in PROFILES:
        mode = fast.mode_of(profile)
        table = BOOK.tables[profile]
        for slot, (field, forms) in fast.FORMS.items():
            if field is None:
                continue
            chosen = table.entries.get(slot, BOOK.slots[slot])
            assert chosen in forms, (profile, slot)
            # a flag is set exactly where the table replaces the slot's base
            assert getattr(mode, field) == (slot in table.entries), (profile, slot)
    assert fast.mode_of("card") == fast.Mode(*(False,) * len(fast.Mode._fields))
    assert fast.mode_of("esslivedata-head") == fast.Mode(*(True,) * len(fast.Mode._fields))


def test_fast_path_refuses_a_swapped_function_it_has_no_form_of_rb_r17() -> None:
    """A variant swapped into the rule text has no fast form: the fast path says so."""

    @rule("RB-D8")
    def bump_never(config: Config, stream: Stream, slot: int) -> Stream:
        del config, slot
        return stream

    config = Config()
    state = fast.initial(config)
    poll = Poll((Polled("log", "a", 0, "x"),))
    with BOOK.swapped({"_bump": bump_never}), pytest.raises(LookupError, match="bump_never"):
        fast.step(config, state, poll)
    fast.step(config, state, poll)  # the table alone again


@pytest.mark.parametrize("name", ["slots-minus-one", "stall-strict", "gate-strict"])
def test_fast_path_refuses_a_catalogued_variant_cf_r41(name: str) -> None:
    """A catalogued variant swaps a slot the fast path enacts only as its base (the
    arithmetic and the decisions no profile replaces): it runs through the rule text,
    never silently as the base in the fast path."""
    from timealign.conformance.catalogue import variants

    chosen = next(t for t in variants("rate_aware_batcher") if t.name == name)
    for profile in PROFILES:
        config = Config(profile=profile)
        state = fast.initial(config)
        poll = Poll((Polled("log", "a", 0, "x"),))
        with BOOK.swapped(chosen), pytest.raises(LookupError, match="rule text"):
            fast.step(config, state, poll)
        fast.step(config, state, poll)
