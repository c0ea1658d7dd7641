"""The shipped event-time batcher vectors (README.md here; spec/event_time_batcher.md).

Outputs are filled in by ``python -m cases.generate event_time_batcher``. Unless a case says
otherwise, W = 50, D = 20, L = 0 in ns; the UC1-UC5 cases use the design document's numbers
in milliseconds (x 10^6 ns) and include the ticks the batch driver delivers. ``MUTATIONS``
perturbs UC1 and UC3 one message at a time (re-delivery, delay at and past D, event time
moved by 1 ns), each run through the batch driver.
"""

from __future__ import annotations

from typing import Any

from timealign.algorithm import Record
from timealign.drive import drive
from timealign.event_time_batcher import ALGORITHM
from timealign.vectors import Vector

MS = 1_000_000
JSON = dict[str, Any]
FLUSH: JSON = {"op": "flush"}


def config(window: int = 50, delay: int = 20, leap: int = 0, scale: int = 1) -> JSON:
    return {"batching_window": window * scale, "max_message_delay": delay * scale,
            "message_leap_limit": leap * scale}


def msg(id: str, t: int, at: int, scale: int = 1) -> JSON:
    """Message ``id`` with key = its letters (``a1`` and ``a2`` share key ``a``)."""
    return {"op": "message", "at": at * scale, "key": id.rstrip("0123456789'"),
            "event_time": t * scale, "id": id}


def tick(at: int, scale: int = 1) -> JSON:
    return {"op": "tick", "at": at * scale}


def case(name: str, description: str, rules: str, conf: JSON, inputs: list[JSON]) -> Vector:
    return Vector(algorithm="event_time_batcher", name=name, description=description,
                  rules=tuple(rules.split()), config=conf, inputs=tuple(inputs))


def ms(id: str, t: int, at: int) -> JSON:
    return msg(id, t, at, MS)


def ms_tick(at: int) -> JSON:
    return tick(at, MS)


USE_CASES = [
    case("uc1_window", "UC1: d1 (t152) joins the first window [110, 160]; e1 at a delay of "
         "exactly D opens its own batch.", "EB-D1 EB-D11 EB-R7 EB-R8 EB-R9 EB-R13 EB-R14",
         config(scale=MS),
         [ms("a1", 110, 120), ms("b1", 122, 132), ms("c1", 142, 150), ms("d1", 152, 160),
          ms_tick(180), ms("e1", 170, 190), ms_tick(240), FLUSH]),
    case("uc2_timeout", "UC2: the first batch closes at its timeout T180; d1 and e1 share "
         "[170, 220].", "EB-D1 EB-D10 EB-R9 EB-R14", config(scale=MS),
         [ms("a1", 110, 120), ms("b1", 122, 132), ms("c1", 142, 150), ms_tick(180),
          ms("d1", 170, 190), ms("e1", 190, 210), ms_tick(240), FLUSH]),
    case("uc3_conflicts", "UC3: midpoint splits at 125 and 147.5 ms; both lower parts have "
         "already expired and close inside the message step; a3 closes on the inherited timer.",
         "EB-D1 EB-D3 EB-D6 EB-D9 EB-D11 EB-R11 EB-R12 EB-R13", config(scale=MS),
         [ms("a1", 110, 120), ms("b1", 120, 130), ms("c1", 130, 140), ms("a2", 140, 150),
          ms("a3", 155, 170), ms_tick(180), FLUSH]),
    case("uc4_late_duplicate", "UC4: the late duplicate of c1 and, unlike the document, e1 "
         "(delay 30 > D) are both too old.", "EB-D1 EB-D7 EB-D8 EB-R5", config(scale=MS),
         [ms("a1", 110, 120), ms("b1", 120, 130), ms("c1", 130, 140), ms_tick(180),
          ms("d1", 190, 210), ms("c1'", 130, 220), ms("e1", 210, 240), ms_tick(260), FLUSH]),
    case("uc5_late_unbatched", "UC5: d1 (t145@T210) is too old, not undecided.",
         "EB-D1 EB-D8 EB-R5", config(scale=MS),
         [ms("a1", 110, 120), ms("b1", 120, 130), ms("c1", 130, 140), ms_tick(180),
          ms("a2", 175, 190), ms("b2", 200, 205), ms("d1", 145, 210), ms_tick(245), FLUSH]),
    case("uc5_gap_variant", "UC5 made reachable (D = 50, d1 at t165): a new batch [165, 175] "
         "clipped at the next start; no batch is stretched, no member evicted.",
         "EB-D1 EB-D2 EB-R8", config(delay=50, scale=MS),
         [ms("a1", 110, 120), ms("b1", 120, 130), ms("c1", 130, 140), ms("a2", 175, 190),
          ms("b2", 200, 205), ms_tick(210), ms("d1", 165, 210), ms_tick(225), ms_tick(275),
          FLUSH]),
]

RULES = [
    case("config_negative_window", "A negative window is refused; nothing is processed.",
         "EB-R1", {"batching_window": -1, "max_message_delay": 20}, [msg("a1", 100, 100)]),
    case("config_unknown_field", "An unknown config field (a typo) is refused.", "EB-R1",
         {"batching_window": 50, "max_message_delay": 20, "event_jitter": 50}, [FLUSH]),
    case("config_leap_limit_defaults_to_zero", "message_leap_limit may be left out (0).",
         "EB-R1 EB-R6", {"batching_window": 50, "max_message_delay": 20},
         [msg("a1", 101, 100), msg("a2", 100, 100), FLUSH]),
    case("input_malformed", "Malformed inputs are refused with the field named; the run goes "
         "on from the previous state.", "EB-R2",
         config(),
         [msg("a1", 100, 100), {"op": "message", "at": 101, "key": "", "event_time": 100,
                                "id": "b1"},
          {"op": "message", "at": 101, "key": "b", "event_time": True, "id": "b1"},
          {"op": "message", "at": 101, "key": "b", "event_time": 100},
          {"op": "tick", "at": -1}, {"op": "stop"}, msg("b1", 100, 101), FLUSH]),
    case("processing_time_backwards", "A message or tick before the last processing time is "
         "refused and changes nothing; equal processing times are fine.", "EB-R3 EB-D12",
         config(),
         [msg("a1", 100, 100), tick(99), msg("b1", 99, 99), msg("b2", 100, 100), tick(170),
          FLUSH]),
    case("id_still_held", "Re-using the id of a message still held by an open batch is "
         "refused.", "EB-R4 EB-D13", config(),
         [msg("a1", 100, 100), {"op": "message", "at": 101, "key": "b", "event_time": 101,
                                "id": "a1"}, tick(170), FLUSH]),
    case("too_old_boundary", "A delay of exactly D is accepted, D + 1 is too old.",
         "EB-R5 EB-D4 EB-D8", config(),
         [msg("a1", 80, 100), msg("b1", 79, 100), tick(150), FLUSH]),
    case("too_far_in_future_boundary", "With L = 5, t = T + 5 is accepted and T + 6 rejected.",
         "EB-R6 EB-D5 EB-D4 EB-D8", config(leap=5),
         [msg("a1", 105, 100), msg("b1", 106, 100), FLUSH]),
    case("lookup_tie_earlier_batch", "t on the endpoint shared by [100, 150] and the later "
         "[90, 100]: the earlier-created batch wins.", "EB-R7 EB-R8 EB-D4", config(),
         [msg("a1", 100, 100), msg("b1", 90, 100), msg("c1", 100, 101), tick(120), tick(170),
          FLUSH]),
    case("duplicate_same_event_time", "The same key at the same event time in the target "
         "batch is a duplicate; the first copy stays.", "EB-R10 EB-D7 EB-D8", config(),
         [msg("a1", 100, 100), msg("a1'", 100, 101), tick(170), FLUSH]),
    case("split_new_later_odd", "a2 is 3 ns after a1: split at 102 (rounded toward a2).",
         "EB-R11 EB-R12 EB-D6 EB-D11", config(),
         [msg("a1", 100, 100), msg("a2", 103, 103), tick(122), tick(170), FLUSH]),
    case("split_new_earlier_odd", "a2 is 5 ns before a1: split at 107 (rounded toward a2), "
         "a2 stays below with b1, a1 moves up.", "EB-R11 EB-R12 EB-D6 EB-D9", config(),
         [msg("b1", 100, 100), msg("a1", 110, 110), msg("a2", 105, 111), tick(127), tick(170),
          FLUSH]),
    case("timeout_event_time_based", "The timeout is end + D in event time (170), not first "
         "processing time + W + D (185); a tick just before it closes nothing.",
         "EB-D3 EB-D10 EB-R13 EB-R14", config(),
         [msg("a1", 100, 115), tick(169), tick(170), FLUSH]),
    case("flush_reverse_order", "Flush emits the open batches newest first.",
         "EB-R15 EB-R16", config(),
         [msg("a1", 100, 100), msg("b1", 90, 100), msg("c1", 200, 200), FLUSH]),
    case("tick_closes_in_creation_order", "A late tick closes a1's batch [100, 150] and b1's "
         "[90, 100], created after it, in creation order, not by their ends.",
         "EB-R14 EB-R8", config(),
         [msg("a1", 100, 100), msg("b1", 90, 105), tick(170), FLUSH]),
    case("no_max_batch_size", "Any number of keys share one batch.", "EB-D14 EB-D9",
         config(), [msg(f"{key}1", 100 + n, 110) for n, key in enumerate("abcdefghijkl")]
         + [tick(170), FLUSH]),
]

HAZARDS = [
    case("hazard_redelivery_on_split_point", "EB-H1: c1's re-delivery joins the lower part "
         "[100, 105] while c1 sits in [105, 150].", "EB-R7 EB-R12 EB-D7", config(),
         [msg("a1", 100, 100), msg("c1", 105, 105), msg("a2", 110, 110), msg("c1'", 105, 115),
          tick(125), tick(170), FLUSH]),
    case("hazard_one_ns_conflict", "EB-H2: a2 is 1 ns before a1: all members go up, a1 is "
         "dropped (overwritten) and the lower part [100, 100] closes empty.",
         "EB-R11 EB-R12 EB-R16 EB-D8", config(),
         [msg("b1", 100, 100), msg("a1", 101, 101), msg("a2", 100, 102), tick(120), tick(170),
          FLUSH]),
    case("hazard_late_earlier", "EB-H3: b1 (t90) gets its own batch [90, 100], clipped at a1's "
         "start.", "EB-R8 EB-D2", config(),
         [msg("a1", 100, 100), msg("b1", 90, 105), tick(120), tick(170), FLUSH]),
    case("hazard_tick_first", "EB-H4: the tick at 170 comes first; b1 (t150) opens a batch.",
         "EB-R14 EB-D10", config(),
         [msg("a1", 100, 100), tick(170), msg("b1", 150, 170), tick(220), FLUSH]),
    case("hazard_message_first", "EB-H4: b1 (t150@170) comes first and joins [100, 150].",
         "EB-R7 EB-R14", config(),
         [msg("a1", 100, 100), msg("b1", 150, 170), tick(170), FLUSH]),
    case("hazard_missing_ticks", "EB-H5: no tick at 170; b2's split closes every expired batch "
         "inside its step.", "EB-R12 EB-R13", config(),
         [msg("a1", 100, 100), msg("b1", 160, 175), msg("b2", 180, 195), tick(230), FLUSH]),
    case("hazard_order_ab", "EB-H6: a1 then b1 share [100, 150].", "EB-R9 EB-D2",
         config(delay=50), [msg("a1", 100, 140), msg("b1", 140, 140), tick(200), FLUSH]),
    case("hazard_order_ba", "EB-H6: b1 then a1: two batches.", "EB-R8 EB-D2",
         config(delay=50), [msg("b1", 140, 140), msg("a1", 100, 140), tick(190), tick(240),
                            FLUSH]),
    case("hazard_zero_window", "EB-H7: W = 0; a1 and b1 share [100, 100]; c1 at t = T - D "
         "is born expired and closes in its own step.", "EB-R8 EB-R13 EB-D4",
         config(window=0),
         [msg("a1", 100, 100), msg("b1", 100, 110), tick(120), msg("c1", 101, 121), FLUSH]),
]



def driven(conf: JSON, rows: list[tuple[str, int, int]]) -> list[JSON]:
    """The inputs the batch driver delivers for rows ``(id, t, at)`` in ns: the messages in
    arrival order, a tick at each requested timer before any input at or past it, a flush."""
    records = [Record(id, id.rstrip("0123456789'"), t, at)
               for id, t, at in sorted(rows, key=lambda row: row[2])]
    config = ALGORITHM.codec.config_from_json(conf)
    return [ALGORITHM.codec.input_to_json(item) for _, item, _ in drive(ALGORITHM, config, records)]


def mutations(base: str, rows: list[tuple[str, int, int]]) -> list[Vector]:
    """Timing mutations of a use case, one message at a time: re-delivered 5 ms later (a
    QoS 1 duplicate), delivered at a delay of exactly D and of D + 1 ns, and its event time
    moved 1 ns either way. Rows are in ms; the vectors in ns, fed through the driver."""
    conf = config(scale=MS)
    delay = conf["max_message_delay"]
    rows_ns = [(id, t * MS, at * MS) for id, t, at in rows]
    found = []
    for n, (id, t, at) in enumerate(rows_ns):
        variants = {
            "redelivered": ("re-delivered 5 ms later", "EB-R10 EB-R5 EB-D7",
                            [*rows_ns, (f"{id}'", t, at + 5 * MS)]),
            "delay_exactly_d": ("delivered at a delay of exactly D", "EB-R5 EB-D4",
                                [*rows_ns[:n], (id, t, t + delay), *rows_ns[n + 1:]]),
            "delay_d_plus_1ns": ("delivered 1 ns too late", "EB-R5 EB-D4",
                                 [*rows_ns[:n], (id, t, t + delay + 1), *rows_ns[n + 1:]]),
            "earlier_1ns": ("generated 1 ns earlier", "EB-R7 EB-R11 EB-D11",
                            [*rows_ns[:n], (id, t - 1, at), *rows_ns[n + 1:]]),
            "later_1ns": ("generated 1 ns later", "EB-R7 EB-R11 EB-D11",
                          [*rows_ns[:n], (id, t + 1, at), *rows_ns[n + 1:]]),
        }
        for suffix, (what, rules, changed) in variants.items():
            found.append(case(f"{base}_{id}_{suffix}", f"{base.upper()}, one change: {id} {what}.",
                              rules, conf, driven(conf, changed)))
    return found


UC1_ROWS = [("a1", 110, 120), ("b1", 122, 132), ("c1", 142, 150), ("d1", 152, 160),
            ("e1", 170, 190)]
UC3_ROWS = [("a1", 110, 120), ("b1", 120, 130), ("c1", 130, 140), ("a2", 140, 150),
            ("a3", 155, 170)]
MUTATIONS = mutations("uc1", UC1_ROWS) + mutations("uc3", UC3_ROWS)

# The overview figure of spec/event_time_batcher.md: three sensors of a thin-edge device
# measured about once a second, W = 50 ms, D = 20 ms, fed through the batch driver (rows in
# ms: id, event time, arrival); the key is the id's letters.
TYPICAL_ROWS = [("temp1", 1000, 1004), ("hum1", 1003, 1006), ("press1", 1008, 1012),
                ("temp2", 2000, 2003), ("hum2", 2006, 2010), ("press2", 2004, 2031),
                ("temp3", 3000, 3002), ("press3", 3005, 3009), ("hum3", 3020, 3024),
                ("temp4", 3030, 3033)]
TYPICAL = [case("typical_run", "A typical run: three sensors measured once a second; each "
                "second's measurements form a batch closed D after its window; press2 is "
                "delivered 27 ms late and rejected too_old; temp4, a second temperature in "
                "the third window, splits it at the midpoint.",
                "EB-R5 EB-R7 EB-R8 EB-R9 EB-R11 EB-R12 EB-R13 EB-R14 EB-R15",
                config(scale=MS),
                driven(config(scale=MS), [(i, t * MS, at * MS) for i, t, at in TYPICAL_ROWS]))]

# Rule cases inside the thin-edge target's domain (W, D, L in whole milliseconds, EB-D11;
# event times may carry nanoseconds): the cases above with a ns config lie outside it, so
# these tell a thin-edge.io port's misreadings apart (the catalogued variants of CF-R41)
# under its profile, which sees batches as sets of ids and timers, not windows.
THIN_EDGE = [
    case("thin_edge_window_end_inclusive", "Whole ms: b1 at exactly the end of [100, 150] "
         "joins that batch (both ends included), closed with a1 at 170 ms.",
         "EB-R7 EB-R9 EB-D4 EB-D11", config(scale=MS),
         [ms("a1", 100, 100), ms("b1", 150, 160), ms_tick(170), FLUSH]),
    case("thin_edge_split_odd_ns", "Whole ms config, a2 3 ns after a1: the split point is "
         "100 ms + 2 ns (rounded toward a2), so the lower part's timer is 120 ms + 2 ns.",
         "EB-R11 EB-R12 EB-R13 EB-D11", config(scale=MS),
         [ms("a1", 100, 100), msg("a2", 100 * MS + 3, 100 * MS + 3),
          tick(120 * MS + 2), ms_tick(170), FLUSH]),
    case("thin_edge_one_ns_conflict", "EB-H2 in a whole ms config: a2 1 ns before a1 splits "
         "at b1's 100 ms; a2 replaces a1 in the upper part and the lower part closes empty.",
         "EB-R11 EB-R12 EB-R16 EB-D11", config(scale=MS),
         [ms("b1", 100, 100), msg("a1", 100 * MS + 1, 100 * MS + 1),
          msg("a2", 100 * MS, 100 * MS + 2), ms_tick(120), ms_tick(170), FLUSH]),
    case("thin_edge_tick_closes_in_creation_order", "Whole ms: a late tick closes a1's "
         "batch and b1's, created after it with an earlier end, in creation order.",
         "EB-R14 EB-R8 EB-D11", config(scale=MS),
         [ms("a1", 100, 100), ms("b1", 90, 105), ms_tick(170), FLUSH]),
]

CASES: list[Vector] = USE_CASES + RULES + HAZARDS + MUTATIONS + TYPICAL + THIN_EDGE
