"""The ApproximateTime conformance cases: one vector per behaviour, naming its rule ids.

Outputs are filled in by ``python -m cases.generate approximate_time`` from the
reference; ``tests/approximate_time/test_at_vectors.py`` checks the key ones against
outputs derived by hand from the note. The algorithm description has no numeric worked
examples; the worked examples of the note (the float64 trap of §7.1, the ROS 1 rounding
example of §14, the livelock of §10) are here under ``note_…`` names.

Every case whose behaviour does not depend on the age penalty uses ``age_penalty`` 0, so a
port without an age penalty can run most of the suite and every ``AT-R…`` rule is covered
at 0 (``tests/test_vector_suites.py``); the cases about the penalty name it. The
``pitfall_…`` cases are defects the conformance harness found in a real third-party port,
named for the pitfall.
"""

from __future__ import annotations

from typing import Any

from timealign.vectors import Vector

JSON = dict[str, Any]
END: JSON = {"op": "end"}
SECOND = 1_000_000_000


def msg(ident: str, topic: int, stamp: int) -> JSON:
    return {"op": "message", "topic": topic, "stamp": stamp, "id": ident}


def config(topics: int | list[str], queue_size: int = 10, age_penalty: float | None = 0.0,
           max_interval_duration: int | None = None,
           inter_message_lower_bounds: list[int] | None = None,
           arithmetic: str | None = None) -> JSON:
    body: JSON = {
        "topics": topics,
        "queue_size": queue_size,
        "age_penalty": age_penalty,
        "max_interval_duration": max_interval_duration,
        "inter_message_lower_bounds": inter_message_lower_bounds,
    }
    if arithmetic is not None:
        body["arithmetic"] = arithmetic
    return body


def case(name: str, rules: str, description: str, cfg: JSON, inputs: list[JSON]) -> Vector:
    return Vector(algorithm="approximate_time", name=name, config=cfg, inputs=tuple(inputs),
                  description=description, rules=tuple(rules.split()))


CASES: list[Vector] = [
    case("exact_match_publishes_at_once", "AT-R3 AT-R6 AT-R10 AT-R12 AT-R14 AT-R18 AT-D6",
         "Equal fronts on three topics: the first candidate is provably optimal at once.",
         config(3), [msg("a0", 0, 10), msg("b0", 1, 10), msg("c0", 2, 10), END]),
    case("improvement_destroys_past", "AT-R11 AT-R12 AT-R13 AT-D1 AT-D7 AT-D9 AT-D11",
         "a0/b6 cannot be proven; a10 gives a tighter set: a0 is destroyed (superseded), "
         "b6 moves to the past, the start topic is the pivot: publish {a10, b6}.",
         config(2), [msg("a0", 0, 0), msg("b6", 1, 6), msg("a10", 0, 10), END]),
    case("virtual_search_publishes_with_zero_bounds", "AT-R13 AT-D7",
         "All bounds 0: a0 is hidden and topic 0 gets the virtual stamp pivot_time 10; the "
         "search virtually moves b0 (no gain), sees b30, whose age proves {a0, b0, c10} "
         "optimal.",
         config(3), [msg("b0", 1, 0), msg("b30", 1, 30), msg("c10", 2, 10), msg("a0", 0, 0),
                     END]),
    case("queued_message_does_not_resume_search", "AT-R3 AT-D5",
         "b100 lands behind b6 while a search is pending: nothing runs until topic 0's "
         "deque becomes non-empty again.",
         config(2), [msg("a0", 0, 0), msg("b6", 1, 6), msg("b100", 1, 100),
                     msg("a10", 0, 10), END]),
    case("lower_bound_publishes_earlier", "AT-R13 AT-D7",
         "Bound 25 on topic 0: the virtual stamp of topic 0 is 25, which proves {a0, b10} "
         "optimal at once.",
         config(2, inter_message_lower_bounds=[25, 0]),
         [msg("b10", 1, 10), msg("a0", 0, 0), msg("a30", 0, 30), END]),
    case("lower_bound_zero_waits", "AT-R13",
         "The same input without bounds: {a0, b10} is published only when a30 arrives.",
         config(2), [msg("b10", 1, 10), msg("a0", 0, 0), msg("a30", 0, 30), END]),
    case("max_interval_is_strict", "AT-R8 AT-D10",
         "max_interval_duration 5: a spread of exactly 5 is accepted; a1/b1 spread 6, so "
         "the start front a1 is deleted permanently.",
         config(2, max_interval_duration=5),
         [msg("a0", 0, 0), msg("b0", 1, 5), msg("a1", 0, 20), msg("b1", 1, 26), END]),
    case("note_livelock_after_last_topic_overflow",
         "AT-R5 AT-R7 AT-R9 AT-R18 AT-D3 AT-D4 AT-H1",
         "Equal stamps, queue_size 1: topic 1 overflows, its flag survives because it "
         "stays the end topic, and every topic-0 message is refused forever (note §10).",
         config(2, queue_size=1),
         [msg("b1", 1, 0), msg("b2", 1, 0), msg("a1", 0, 0), msg("a2", 0, 0),
          msg("b3", 1, 0), msg("a3", 0, 0), END]),
    case("overflow_of_topic0_recovers", "AT-R5 AT-R7 AT-D3",
         "Equal stamps, queue_size 1: topic 0 overflows, but topic 0 is never the end "
         "topic, so its flag is cleared and the next set is published.",
         config(2, queue_size=1), [msg("a1", 0, 0), msg("a2", 0, 0), msg("b1", 1, 0), END]),
    case("overflow_counts_deque_and_past", "AT-R5 AT-D4",
         "b1 overflows topic 1 (b0 in the past plus b1 in the past: the deque is empty); "
         "counting the deque only would publish {a0, b0} instead of {a0, b1}.",
         config(2, queue_size=1),
         [msg("a0", 0, 2), msg("b0", 1, 0), msg("b1", 1, 0), msg("b2", 1, 4), END]),
    case("overflow_checked_after_process", "AT-R5 AT-D4",
         "Topic 0 holds a0 in the past and receives a10 (2 > queue_size 1): the set "
         "{a10, b10} is published first, so a0 is superseded, not overflowed.",
         config(2, queue_size=1), [msg("b10", 1, 10), msg("a0", 0, 0), msg("a10", 0, 10), END]),
    case("overflow_drops_candidate_message", "AT-R5 AT-R9 AT-D4",
         "b11 overflows topic 1 while {a0, b10} is the candidate: the candidate's own b10 is "
         "dropped, the candidate discarded, process() re-run, and a0 refused.",
         config(2, queue_size=1), [msg("b10", 1, 10), msg("a0", 0, 0), msg("b11", 1, 11), END]),
    case("overflow_flag_without_candidate", "AT-R5 AT-R9 AT-D4",
         "a5 overflows topic 0 with no candidate: the flag is set anyway; topic 0 is then "
         "the end topic, so b1 is refused.",
         config(2, queue_size=1), [msg("a0", 0, 0), msg("a5", 0, 5), msg("b1", 1, 1), END]),
    case("warning_out_of_order", "AT-R4 AT-D12",
         "a3 after a5 on topic 0: one out_of_order warning; a1 is not warned about again; "
         "nothing is reordered.",
         config(2), [msg("a5", 0, 5), msg("a3", 0, 3), msg("a1", 0, 1), msg("b4", 1, 4), END]),
    case("warning_closer_than_bound", "AT-R4",
         "Bound 10 on topic 1: b5 follows b0 by 5 ns in the deque: one closer_than_bound "
         "warning.",
         config(2, inter_message_lower_bounds=[0, 10]),
         [msg("b0", 1, 0), msg("b5", 1, 5), msg("b7", 1, 7), END]),
    case("note_float64_trap_ros2", "AT-R11 AT-D23 AT-D8",
         "age_penalty 0.7: age 10 scales to trunc(10 x 1.69999999999999995559) = 16 < gain "
         "17, so {a27, b17} replaces the candidate (note §7.1).",
         config(2, age_penalty=0.7), [msg("a0", 0, 0), msg("b17", 1, 17), msg("a27", 0, 27), END]),
    case("note_float64_trap_ros1", "AT-R16",
         "The same input in ROS 1 arithmetic: 17 >= 17 is a tie, the older {a0, b17} wins.",
         config(2, age_penalty=0.7, arithmetic="ros1"),
         [msg("a0", 0, 0), msg("b17", 1, 17), msg("a27", 0, 27), END]),
    case("note_ros1_rounding_ros2", "AT-D23",
         "age_penalty 0.25, age 2 ns: ROS 2 truncates 2.5 to 2 < gain 3: {a7, b5} (note §14).",
         config(2, age_penalty=0.25), [msg("a2", 0, 2), msg("b5", 1, 5), msg("a7", 0, 7), END]),
    case("note_ros1_rounding_ros1", "AT-R16",
         "The same input in ROS 1 arithmetic: 2.5 rounds to 3 >= 3: {a2, b5}.",
         config(2, age_penalty=0.25, arithmetic="ros1"),
         [msg("a2", 0, 2), msg("b5", 1, 5), msg("a7", 0, 7), END]),
    case("default_age_penalty_is_0_1", "AT-D14 AT-D23 AT-R1",
         "age_penalty null means 0.1: age 10 scales to 11 >= gain 11, so the older "
         "{a0, b11} is kept (with 0 the newer {a21, b11} would win).",
         config(2, age_penalty=None),
         [msg("a0", 0, 0), msg("b11", 1, 11), msg("a21", 0, 21), END]),
    case("age_penalty_zero_ros2", "AT-D23 AT-D8",
         "age_penalty 0 in ROS 2 arithmetic: age 10 scales to 10 < gain 11, so the newer "
         "{a21, b11} wins (the default 0.1 keeps {a0, b11}).",
         config(2), [msg("a0", 0, 0), msg("b11", 1, 11), msg("a21", 0, 21), END]),
    case("age_penalty_zero_ros1", "AT-R16",
         "The same in ROS 1 arithmetic: 10.0 x 1.0 is 10 < gain 11: {a21, b11}.",
         config(2, arithmetic="ros1"),
         [msg("a0", 0, 0), msg("b11", 1, 11), msg("a21", 0, 21), END]),
    case("tie_rule_start_lowest_index", "AT-R6 AT-D2",
         "Start ties go to the lowest index: nothing is published here, whereas the "
         "highest-index rule would publish {a0, b1, c2} at c4.",
         config(3), [msg("a0", 0, 0), msg("b1", 1, 2), msg("c2", 2, 0), msg("c4", 2, 4), END]),
    case("pivot_time_fixed_at_first_candidate", "AT-R11 AT-R12 AT-D13",
         "Improvements raise candidate_end to 11 while pivot_time stays 10; the optimality "
         "test uses pivot_time and publishes {a11, b10, c10}.",
         config(3), [msg("c10", 2, 10), msg("a0", 0, 0), msg("b2", 1, 2), msg("a11", 0, 11),
                     msg("b9", 1, 9), msg("b10", 1, 10), END]),
    case("wiki_optimality_fails_with_too_large_bound", "AT-R13 AT-H3",
         "ROS wiki claim 5 counterexample: bound 3 on topic 0 is larger than its real "
         "spacing (1), so {m1, m0} (spread 1) is proven optimal at once; m2 then makes "
         "{m2, m0} (spread 0). No warning fires: m1 has left the deque.",
         config(2, age_penalty=0.0, inter_message_lower_bounds=[3, 3]),
         [msg("m0", 1, 2), msg("m1", 0, 1), msg("m2", 0, 2), END]),
    case("wiki_sets_cross_with_out_of_order_stamps", "AT-D12 AT-H4",
         "ROS wiki claim 3 fails for out-of-order input: the second set is earlier than the "
         "first on both topics.",
         config(2, queue_size=20),
         [msg("m0", 1, 2), msg("m1", 0, 2), msg("m2", 0, 0), msg("m3", 1, 0), END]),
    case("wiki_arrival_order_matters_with_overflow_a", "AT-R5 AT-H5",
         "ROS wiki claim 6 needs large queues: with queue_size 1 this interleaving "
         "publishes {a1, b0} ...",
         config(2, queue_size=1), [msg("a0", 0, 0), msg("a1", 0, 0), msg("b0", 1, 0), END]),
    case("wiki_arrival_order_matters_with_overflow_b", "AT-R5 AT-H5",
         "... and this interleaving of the same streams publishes {a0, b0}.",
         config(2, queue_size=1), [msg("b0", 1, 0), msg("a0", 0, 0), msg("a1", 0, 0), END]),
    case("several_sets_in_one_input", "AT-D16 AT-R14",
         "b6 completes two sets in one input: {a1, b0} and then {a2, b3}.",
         config(2), [msg("b0", 1, 2), msg("a1", 0, 3), msg("a2", 0, 6), msg("b3", 1, 6), END]),
    case("single_topic", "AT-D15 AT-D22 AT-R1",
         "N = 1: every message is published alone at once, whatever its stamp (rolling's "
         "variadic policy; Humble's and Jazzy's nine-slot one takes two topics or more).",
         config(1), [msg("a5", 0, 5), msg("a3", 0, 3), msg("a9", 0, 9), END]),
    case("end_reports_pending_and_restarts", "AT-R17 AT-R18 AT-D18 AT-D19 AT-D20",
         "End reports the held messages (topic order; past then deque) and starts afresh: "
         "the next two messages form a set of their own.",
         config(2), [msg("b10", 1, 10), msg("a0", 0, 0), msg("b20", 1, 20), END,
                     msg("a30", 0, 30), msg("b30", 1, 30), END]),
    case("named_topics", "AT-R1 AT-D21",
         "Topics given by name; inputs and outputs still use topic indices.",
         config(["camera", "lidar"]), [msg("c1", 0, 100), msg("l1", 1, 100), END]),
    case("config_rejects_queue_size_zero", "AT-R1 AT-D17",
         "queue_size 0 is undefined behaviour upstream; the reference rejects it.",
         config(2, queue_size=0), [msg("a0", 0, 0)]),
    case("config_rejects_negative_age_penalty", "AT-R1 AT-D17",
         "A negative age penalty is accepted by upstream release builds; rejected here.",
         config(2, age_penalty=-0.5), [msg("a0", 0, 0)]),
    case("config_rejects_short_bound_list", "AT-R1 AT-D17",
         "One lower bound for two topics (upstream would index out of range).",
         config(2, inter_message_lower_bounds=[5]), [msg("a0", 0, 0)]),
    case("input_errors_change_nothing", "AT-R2 AT-D17",
         "A topic out of range, a negative stamp and a non-integer stamp are rejected; the "
         "run goes on from the state before each.",
         config(2), [msg("a0", 0, 0), msg("x1", 2, 0), msg("x2", 1, -1),
                     {"op": "message", "topic": 1, "stamp": 1.5, "id": "x3"},
                     msg("b0", 1, 0), END]),
    case("input_virtual_time_past_int64", "AT-R20 AT-D24",
         "Topic 0's lower bound is 2e18 ns: a message of topic 0 at 8e18 ns would have the "
         "virtual time 1e19 ns, past int64 (upstream's Time + Duration throws), and is "
         "refused; the run goes on from the state before it.",
         config(2, inter_message_lower_bounds=[2 * 10**18, 0]),
         [msg("a0", 0, 0), msg("x1", 0, 8 * 10**18), msg("b0", 1, 0), END]),
    case("pitfall_stamp_zero_is_a_stamp", "AT-R2 AT-R10 AT-R12 AT-D6",
         "Stamp 0 is a stamp like any other (a port that uses 0 as 'unset' never makes a "
         "message stamped 0 the pivot, and then publishes nothing ever): three exact "
         "matches, three sets at once.",
         config(2), [msg("a0", 0, 0), msg("b0", 1, 0), msg("a1", 0, SECOND),
                     msg("b1", 1, SECOND), msg("a2", 0, 2 * SECOND), msg("b2", 1, 2 * SECOND),
                     END]),
    case("pitfall_stamp_zero_obeys_max_interval", "AT-R8 AT-D10",
         "A set starting at stamp 0 obeys the maximum interval too (a port using 0 as "
         "'unset' skips the check and publishes {a0, b10}, a 10 ns span): max 5 ns drops "
         "a0, then b10.",
         config(2, max_interval_duration=5),
         [msg("a0", 0, 0), msg("b10", 1, 10), msg("a20", 0, 20), END]),
    case("pitfall_equal_stamps_in_a_queue", "AT-R11 AT-R12 AT-D1 AT-D12",
         "Two queued messages with equal stamps do not end the search (a port that stops "
         "there publishes {a0, b0}, a 5 ns span): a2 and a3 improve the candidate, and the "
         "minimal {a3, b0} (1 ns) is published.",
         config(2), [msg("a0", 0, 100), msg("a1", 0, 100), msg("b0", 1, 105),
                     msg("a2", 0, 103), msg("a3", 0, 106), END]),
    case("drop_flag_cleared_by_another_end", "AT-R5 AT-R7 AT-R9 AT-R10 AT-D3",
         "a0 overflows topic 0 and sets its drop flag; b2 ties a1 and is the end of {a1, b2} "
         "(highest index), which clears topic 0's flag; so topic 0 may be the pivot again: "
         "at b4, {a3, b4} becomes the candidate (pending at the end), b4 is not refused.",
         config(2, queue_size=1), [msg("a0", 0, 0), msg("a1", 0, 10), msg("b2", 1, 10),
                                   msg("a3", 0, 20), msg("b4", 1, 10), END]),
    case("publish_puts_set_aside_messages_back", "AT-R13 AT-R14",
         "b2 (stamp 5, like b1) is set aside during the search for a0's set; publishing "
         "{a0, b1} puts it back in front of topic 1's deque, so a4 pairs with it: "
         "{a4, b2}.",
         config(2, queue_size=2), [msg("a0", 0, 10), msg("b1", 1, 5), msg("b2", 1, 5),
                                   msg("b3", 1, 15), msg("a4", 0, 10), END]),
    case("end_reports_the_past_before_the_deque", "AT-R13 AT-R17",
         "The search sets a0 aside in topic 0's past buffer while a2 waits in its deque: "
         "the end reports them in arrival order, a0 before a2.",
         config(3, queue_size=3), [msg("a0", 0, 0), msg("b1", 1, 10), msg("a2", 0, 5),
                                   msg("c3", 2, 0), END]),
    case("virtual_moves_are_undone", "AT-R12 AT-R13 AT-D7",
         "The virtual search for {a0, b1, c2} sets c2 aside, cannot prove the candidate and "
         "puts c2 back in front of its deque (its moves are undone by count); a3 then proves "
         "the candidate optimal: {a0, b1, c2} is published.",
         config(3, queue_size=2), [msg("a0", 0, 0), msg("b1", 1, 5), msg("c2", 2, 0),
                                   msg("a3", 0, 10), END]),
    case("end_clears_the_warned_flags", "AT-R4 AT-R17 AT-D20",
         "Each run after an end starts afresh, its warned flags included: topic 1 warns "
         "out_of_order in the first run (b1 after b0) and again in the second (b3 after b2).",
         config(2, queue_size=5), [msg("b0", 1, 20), msg("b1", 1, 10), END,
                                   msg("b2", 1, 20), msg("b3", 1, 10), END]),
    case("ros1_config_rejects_a_single_topic", "AT-R19 AT-R1",
         "The ROS 1 policy takes two message types or more: a one-topic ros1 config is "
         "refused (ROS 2 takes it, AT-D15).",
         config(1, arithmetic="ros1"), [msg("a0", 0, 0)]),
    case("ros1_config_rejects_a_bound_beyond_a_ros1_duration", "AT-R19 AT-R1",
         "A lower bound of 2^31 s does not fit ROS 1's signed 32-bit seconds.",
         config(2, inter_message_lower_bounds=[0, 2**31 * 10**9], arithmetic="ros1"),
         [msg("a0", 0, 0)]),
    case("ros1_rejects_an_age_beyond_a_ros1_duration", "AT-R19 AT-R16 AT-R12 AT-R14",
         "Sim time next to wall-clock time, age penalty 0.5: a1 at 1.7e9 s would scale an "
         "age of 1.7e9 s to 2.55e9 s, beyond ROS 1's 2^31 s (ROS 1 throws inside add() and "
         "keeps a half-updated synchronizer); refused, the run goes on from the state before "
         "it and a2 publishes {a0, b0}.",
         config(2, age_penalty=0.5, arithmetic="ros1"),
         [msg("b0", 1, 1), msg("a0", 0, 0), msg("a1", 0, 1_700_000_000_123_456_789),
          msg("a2", 0, 5), END]),
    case("ros1_accepts_sim_and_wall_clock_with_a_small_penalty", "AT-R19 AT-R16",
         "The same stamps with the default age penalty 0.1: 1.87e9 s still fits ROS 1's "
         "durations, so a1 is taken and proves {a0, b0} optimal at once.",
         config(2, arithmetic="ros1"),
         [msg("b0", 1, 1), msg("a0", 0, 0), msg("a1", 0, 1_700_000_000_123_456_789), END]),
    case("ros1_rejects_a_stamp_beyond_a_ros1_time", "AT-R19",
         "ROS 1 time is unsigned 32-bit seconds: a stamp of 2^32 s cannot be expressed, and "
         "2^31 s next to 0 is an age no ROS 1 duration holds (ROS 1 throws at b0); both "
         "refused, the run goes on.",
         config(2, arithmetic="ros1"),
         [msg("a0", 0, 0), msg("x1", 1, 2**32 * 10**9), msg("b0", 1, 2**31 * 10**9),
          msg("b1", 1, 3), END]),
]


def typical_run() -> list[JSON]:
    """A robot's camera (30 Hz), IMU (50 Hz) and lidar (10 Hz) over a quarter of a second,
    each message arriving a fixed latency after its stamp (IMU 1 ms, camera 8 ms, lidar
    25 ms), in arrival order: the lidar, the slowest topic, paces the sets, and the camera
    and IMU messages between two sets are dropped, as the policy intends."""
    ms = 1_000_000
    streams = [
        ("camera", 0, [k * 33 + (1 if k % 2 else 0) for k in range(8)], 8),
        ("imu", 1, [k * 20 for k in range(13)], 1),
        ("lidar", 2, [5 + k * 100 for k in range(3)], 25),
    ]
    rows = sorted((stamp + latency, topic, stamp, f"{name}{k}")
                  for name, topic, stamps, latency in streams
                  for k, stamp in enumerate(stamps))
    return [msg(ident, topic, stamp * ms) for _arrival, topic, stamp, ident in rows] + [END]


# The overview figure of spec/approximate_time.md.
CASES.append(case(
    "typical_run", "AT-R3 AT-R5 AT-R11 AT-R12 AT-R14 AT-R17",
    "A typical run: camera 30 Hz, IMU 50 Hz and lidar 10 Hz with their latencies; one set "
    "per lidar scan, the camera and IMU messages in between dropped (superseded or by "
    "overflow), the newest left pending at the end.",
    config(["camera", "imu", "lidar"], queue_size=5), typical_run()))


# --- ROS 1 twins ---------------------------------------------------------------------------
# The ros1 target (AT-R16, AT-R19) runs only ros1 vectors, so each ros2 case whose behaviour
# is not about the ros2 arithmetic has a twin `<case>_ros1`: the same config and inputs with
# `"arithmetic": "ros1"`, its outputs again from the reference. Outside the arithmetic the
# two profiles do not differ (AT-R16), so a twin's outputs equal its original's
# (tests/approximate_time/test_at_vectors.py). The ros2 cases without a twin, and why (also
# listed in vectors/approximate_time/README.md):
NO_ROS1_TWIN: dict[str, str] = {
    "note_float64_trap_ros2": "about the ros2 arithmetic (AT-D23); the ros1 side is "
                              "note_float64_trap_ros1",
    "note_ros1_rounding_ros2": "about the ros2 arithmetic (AT-D23); the ros1 side is "
                               "note_ros1_rounding_ros1",
    "age_penalty_zero_ros2": "about the ros2 arithmetic (AT-D23); the ros1 side is "
                             "age_penalty_zero_ros1",
    "single_topic": "one topic: the ros1 profile refuses the config (AT-R19), as "
                    "ros1_config_rejects_a_single_topic shows",
    "config_rejects_queue_size_zero": "a refused config (AT-R1, AT-D17): refused in both "
                                      "profiles, outside every target",
    "config_rejects_negative_age_penalty": "a refused config (AT-R1, AT-D17): refused in both "
                                           "profiles, outside every target",
    "config_rejects_short_bound_list": "a refused config (AT-R1, AT-D17): refused in both "
                                       "profiles, outside every target",
    "input_errors_change_nothing": "refused inputs (AT-R2, AT-D17): refused in both profiles, "
                                   "outside every target",
    "input_virtual_time_past_int64": "a refused input (AT-R20): refused in both profiles, "
                                     "outside every target",
}


def ros1_twin(original: Vector) -> Vector:
    """``original`` (a ros2 case) run in ROS 1 arithmetic: AT-R16 replaces AT-D23."""
    rules = tuple(dict.fromkeys(("AT-R16" if r == "AT-D23" else r)
                                for r in (*original.rules, "AT-R16")))
    return Vector(algorithm=original.algorithm, name=f"{original.name}_ros1",
                  config={**original.config, "arithmetic": "ros1"}, inputs=original.inputs,
                  description=f"ROS 1 twin of {original.name} (ros1 arithmetic): "
                              f"{original.description}",
                  rules=rules)


CASES.extend([ros1_twin(c) for c in list(CASES)
              if c.config.get("arithmetic", "ros2") == "ros2" and c.name not in NO_ROS1_TWIN])
