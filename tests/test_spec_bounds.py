"""The bounds the spec states, read from its text and checked against the reference.

Each check reads its bound out of the rule's own section (``tools.spec_index.sections``): a
sentence that no longer states it fails here, and the bound checked is the number the
reader is told. Counting bounds ("at most one ... per input") are checked over every shipped
vector and every trace of the bounded explorer's instances up to depth 3 (the traces
``timealign conform --explore`` sends); range bounds ("an integer in [0, 2^63 − 1]") at
their edges, through the vector codec, as a vector's config and inputs are read. A worked
example the rule gives is run as written.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest

from timealign import registry, vectors
from timealign.conformance.instances import traces
from timealign.errors import InvalidInput
from tools import spec_index

WORDS = {"one": 1, "two": 2, "three": 3}
EXPLORE_DEPTH = 3
JSON = dict[str, Any]


@cache
def section(rule: str) -> str:
    """The text of the rule's section, one line (a sentence may wrap anywhere)."""
    texts = {path: path.read_text(encoding="utf-8") for path in spec_index.spec_files()}
    found = spec_index.sections(texts, [rule])
    assert rule in found, f"no section {rule} in spec/"
    return " ".join(found[rule]["markdown"].split())


def stated(rule: str, pattern: str) -> re.Match[str]:
    """The sentence of the rule stating the bound; fails when the spec no longer says it."""
    match = re.search(pattern, section(rule))
    assert match is not None, f"{rule} no longer states {pattern!r}: update this check"
    return match


def power_bound(text: str) -> int:
    """``2^63 − 1`` as the spec writes it, as an integer."""
    match = re.fullmatch(r"2\^(\d+) ?− ?1", text)
    assert match is not None, text
    return int(2 ** int(match.group(1)) - 1)


@cache
def runs(algorithm: str) -> tuple[tuple[str, tuple[JSON, ...]], ...]:
    """(name, the reference's outputs) of every shipped vector and explorer trace."""
    found = [(v.name, v.outputs)
             for path in vectors.files([spec_index.VECTORS / algorithm])
             for v in vectors.load(path) if v.outputs is not None]
    for _instance, _depth, vector in traces(registry.get(algorithm), EXPLORE_DEPTH):
        found.append((vector.name, tuple(vectors.reference_outputs(vector))))
    assert len(found) > 100
    return tuple(found)


def per_input(outputs: tuple[JSON, ...], wanted: dict[str, str]) -> Iterator[int]:
    """How many outputs matching every ``wanted`` key each input produced."""
    counted = Counter(o.get("input") for o in outputs
                      if all(o.get(key) == value for key, value in wanted.items()))
    yield from counted.values()


def test_at_r5_at_most_one_overflow_drop_per_input_over_vectors_and_explorer() -> None:
    """AT-R5: the stated count of `queue_overflow` drops per input holds on every run."""
    bound = WORDS[stated("AT-R5", r"At most (\w+) message is dropped \*for overflow\* "
                                  r"\(`queue_overflow`\) per input")[1]]
    over = [name for name, outputs in runs("approximate_time")
            if any(n > bound for n in per_input(outputs, {"kind": "dropped",
                                                          "reason": "queue_overflow"}))]
    assert not over, over[:5]


def test_at_r5_worked_example_drops_two_messages_at_one_input() -> None:
    """AT-R5: the example the rule gives (one input ending two messages, so "at most one
    message is dropped per input", the old text, was false) runs as the rule says."""
    example = stated("AT-R5", r"`topics=(\d+)`, `queue_size=(\d+)`, `max_interval_duration=(\d+)` "
                              r"and the inputs `([^`]*)`, input (\d+) drops `(\w+)` \(`(\w+)`\) "
                              r"then `(\w+)` \(`(\w+)`\)")
    topics, size, interval = (int(example[k]) for k in (1, 2, 3))
    inputs: list[JSON] = []
    for item in example[4].split():
        ident, stamp = item.split("@")
        inputs.append({"op": "message", "topic": ord(ident[0]) - ord("a"), "stamp": int(stamp),
                       "id": ident})
    config = {"topics": [chr(ord("a") + k) for k in range(topics)], "queue_size": size,
              "max_interval_duration": interval}
    vector = vectors.from_json({"format": vectors.FORMAT, "algorithm": "approximate_time",
                                "name": "at_r5_example", "config": config,
                                "inputs": [*inputs, {"op": "end"}]})
    dropped = [(o["id"], o["reason"]) for o in vectors.reference_outputs(vector)
               if o["input"] == int(example[5]) and o["kind"] == "dropped"]
    assert dropped == [(example[6], example[7]), (example[8], example[9])]


def test_rb_i2_at_most_one_batch_per_poll_over_vectors_and_explorer() -> None:
    """RB-I2: the stated count of batches per poll holds on every run."""
    bound = WORDS[stated("RB-I2", r"At most (\w+) batch per poll")[1]]
    over = [name for name, outputs in runs("rate_aware_batcher")
            if any(n > bound for n in per_input(outputs, {"kind": "batch"}))]
    assert not over, over[:5]


def _refused(read: Any, body: JSON, field: str, rule: str) -> bool:
    try:
        read(body)
    except InvalidInput as error:
        assert (error.field, error.rule) == (field, rule), str(error)
        return True
    return False


@pytest.mark.parametrize("field", ["batching_window", "max_message_delay", "message_leap_limit"])
def test_eb_r1_each_duration_takes_exactly_the_stated_range(field: str) -> None:
    """EB-R1: each duration takes every integer of the stated range `[0, 2^63 − 1]` (the
    others 0) and refuses one past either end, naming the field."""
    match = stated("EB-R1", r"`batching_window`, `max_message_delay`, `message_leap_limit` are "
                            r"each an integer in `\[0, (2\^\d+ − 1)\]`")
    high = power_bound(match[1])
    read = registry.get("event_time_batcher").codec.config_from_json
    base = {"batching_window": 0, "max_message_delay": 0, "message_leap_limit": 0}
    for value in (0, high):
        assert not _refused(read, {**base, field: value}, field, "EB-R1")
    for value in (-1, high + 1):
        assert _refused(read, {**base, field: value}, field, "EB-R1")


@pytest.mark.parametrize("field", ["event_time", "at"])
def test_eb_r2_message_times_take_exactly_the_stated_range(field: str) -> None:
    """EB-R2: a message's `event_time` and `at` each take every integer of the stated
    range and refuse one past either end, naming the field; a tick's `at` too."""
    match = stated("EB-R2", r"an `event_time` and an `at`, each of the two an integer in "
                            r"`\[0, (2\^\d+ − 1)\]`.*a tick has an `at`, an integer in "
                            r"`\[0, (2\^\d+ − 1)\]`")
    high, tick_high = power_bound(match[1]), power_bound(match[2])
    read = registry.get("event_time_batcher").codec.input_from_json
    message = {"op": "message", "key": "k", "id": "m", "event_time": 0, "at": 0}
    for value in (0, high):
        assert not _refused(read, {**message, field: value}, field, "EB-R2")
    for value in (-1, high + 1):
        assert _refused(read, {**message, field: value}, field, "EB-R2")
    tick = {"op": "tick", "at": tick_high}
    assert not _refused(read, tick, "at", "EB-R2")
    assert _refused(read, {**tick, "at": tick_high + 1}, "at", "EB-R2")


def test_at_r1_config_takes_exactly_the_stated_ranges() -> None:
    """AT-R1: at most the stated number of topics (the count and the name list alike), a
    `queue_size` from 1, `max_interval_duration` and each lower bound in the stated range:
    each edge accepted, one past it refused naming the field."""
    topics = int(stated("AT-R1", r"N is at most ([\d,]+)")[1].replace(",", ""))
    interval = power_bound(stated("AT-R1", r"`max_interval_duration` is an int ns in "
                                           r"`?\[0, (2\^\d+ ?− ?1)\]")[1])
    bounds = power_bound(stated("AT-R1", r"`inter_message_lower_bounds` is a list of exactly N "
                                         r"ints in `?\[0, (2\^\d+ ?− ?1)\]")[1])
    assert stated("AT-R1", r"`queue_size` is an int ≥ (\d+)")[1] == "1"
    read = registry.get("approximate_time").codec.config_from_json
    base: JSON = {"topics": 2, "queue_size": 1}
    for count in (topics, [f"t{k}" for k in range(topics)]):
        assert not _refused(read, {**base, "topics": count}, "topics", "AT-R1")
    for count in (topics + 1, [f"t{k}" for k in range(topics + 1)]):
        assert _refused(read, {**base, "topics": count}, "topics", "AT-R1")
    assert _refused(read, {**base, "queue_size": 0}, "queue_size", "AT-R1")
    for value in (0, interval):
        assert not _refused(read, {**base, "max_interval_duration": value},
                            "max_interval_duration", "AT-R1")
    for value in (-1, interval + 1):
        assert _refused(read, {**base, "max_interval_duration": value},
                        "max_interval_duration", "AT-R1")
    for value in (0, bounds):
        assert not _refused(read, {**base, "inter_message_lower_bounds": [value, 0]},
                            "inter_message_lower_bounds[0]", "AT-R1")
    for value in (-1, bounds + 1):
        assert _refused(read, {**base, "inter_message_lower_bounds": [value, 0]},
                        "inter_message_lower_bounds[0]", "AT-R1")


def test_rb_r18_clock_reading_takes_exactly_the_signed_64_bit_range() -> None:
    """RB-R18: a poll's clock reading is any integer of the stated signed 64-bit range; one
    past either end refuses the poll naming `now`."""
    stated("RB-R18", r"JSON `\"now\"`: an integer in the signed 64-bit range")
    low, high = -2**63, 2**63 - 1
    read = registry.get("rate_aware_batcher").codec.input_from_json
    for value in (low, high):
        assert not _refused(read, {"op": "poll", "messages": [], "now": value}, "now", "RB-R18")
    for value in (low - 1, high + 1):
        assert _refused(read, {"op": "poll", "messages": [], "now": value}, "now", "RB-R18")
