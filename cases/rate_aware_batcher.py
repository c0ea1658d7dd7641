"""Cases of the rate-aware batcher suite: one per card scenario, rule, decision and hazard.

Traces are built from pulse trains: ``train`` lays pulses of one stream over data time,
``polled`` groups messages into polls every 100 ms of data time (a message arrives in the
poll of its nominal instant), so the vectors read like the card's drawings. Timestamps are
real epoch nanoseconds (2023-11-14), which the broken-epoch scenario needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from timealign.vectors import Vector

ALG = "rate_aware_batcher"
S = 10**9
MS = 10**6
T0 = 1_700_000_000 * S
POLL = 100 * MS
YEAR = 365 * 24 * 3600 * S
DET, MON, LOG = "detector_events", "monitor_events", "log"
Msg = dict[str, Any]


def msg(kind: str, name: str, t: int, ident: str) -> Msg:
    return {"kind": kind, "name": name, "timestamp": t, "id": ident}


def train(name: str, rate: float, seconds: float, *, kind: str = DET, begin: float = 0.0,
          phase: int = 0, skip: Iterable[int] = (), dup: Iterable[int] = (),
          jitter: Sequence[int] = ()) -> list[tuple[int, Msg]]:
    """Pulses ``k`` of a ``rate`` Hz stream from ``begin`` s for ``seconds`` s, as
    ``(nominal instant, message)``; ``skip`` drops pulses, ``dup`` splits them in two,
    ``jitter`` (cycled) shifts each stamp from its nominal instant."""
    period = round(S / rate)
    first = round(begin * rate)
    count = round(seconds * rate)
    skipped, doubled = set(skip), set(dup)
    out: list[tuple[int, Msg]] = []
    for k in range(first, first + count):
        if k in skipped:
            continue
        nominal = T0 + phase + k * period
        stamp = nominal + (jitter[k % len(jitter)] if jitter else 0)
        out.append((nominal, msg(kind, name, stamp, f"{name}{k}")))
        if k in doubled:
            out.append((nominal, msg(kind, name, stamp, f"{name}{k}b")))
    return out


def polled(*streams: list[tuple[int, Msg]], until: float, start: float = 0.0,
           every: int = POLL) -> list[dict[str, Any]]:
    """Polls every ``every`` ns from ``start`` to ``until`` seconds of data time; each
    message arrives in the first poll at or after its nominal instant."""
    arrivals = sorted((t, j, i, m) for j, s in enumerate(streams) for i, (t, m) in enumerate(s))
    inputs: list[dict[str, Any]] = []
    at = T0 + round(start * S)
    position = 0
    while at <= T0 + round(until * S):
        batch: list[Msg] = []
        while position < len(arrivals) and arrivals[position][0] <= at:
            batch.append(arrivals[position][3])
            position += 1
        inputs.append(poll(*batch))
        at += every
    return inputs


def poll(*messages: Msg, now: Any = None) -> dict[str, Any]:
    if now is None:
        return {"op": "poll", "messages": list(messages)}
    return {"op": "poll", "messages": list(messages), "now": now}


def log(t: int, ident: str, name: str = "log") -> Msg:
    return msg(LOG, name, t, ident)


END = {"op": "end"}


def case(name: str, description: str, rules: Sequence[str], inputs: list[dict[str, Any]],
         batch_length_s: float = 1.0, timeout_s: float | None = None,
         **config: Any) -> Vector:
    body = {"batch_length_s": batch_length_s, "timeout_s": timeout_s, **config}
    return Vector(ALG, name, body, tuple(inputs), None, description, tuple(rules))


def set_length(seconds: Any) -> dict[str, Any]:
    return {"op": "set_batch_length", "seconds": seconds}


def empties(n: int) -> list[dict[str, Any]]:
    return [poll() for _ in range(n)]


def clocked(inputs: list[dict[str, Any]], start: int = 0,
            every: int = POLL) -> list[dict[str, Any]]:
    """The same inputs with a wall clock: the k-th poll reads ``start + k * every`` (a live
    service polling every ``every`` ns, RB-R18)."""
    out: list[dict[str, Any]] = []
    k = 0
    for item in inputs:
        if item["op"] == "poll":
            item = {**item, "now": start + k * every}
            k += 1
        out.append(item)
    return out


def shifted(inputs: list[dict[str, Any]], by: int) -> list[dict[str, Any]]:
    """The same inputs with every timestamp moved by ``by`` ns (RB-D18)."""
    return [{**item, "messages": [{**m, "timestamp": m["timestamp"] + by}
                                  for m in item["messages"]]} if item["op"] == "poll" else item
            for item in inputs]


def both(name: str, description: str, rules: Sequence[str], inputs: list[dict[str, Any]],
         **config: Any) -> tuple[Vector, Vector]:
    """One trace as two vectors, ``<name>_card`` and ``<name>_head`` (RB-R17)."""
    return (case(f"{name}_card", description, ["RB-R17", "RB-D16", *rules], inputs,
                 profile="card", **config),
            case(f"{name}_head", description, ["RB-R17", *rules], inputs,
                 profile="esslivedata-head", **config))


def from_rows(inputs: list[dict[str, Any]], kinds: bool = True) -> list[dict[str, Any]]:
    """The polls of ``inputs`` as the Spark driver maps recorded rows (RB-D5, RB-D19): one
    row per message with the poll's number and its clock reading as ``arrival``; empty
    polls have no rows; without ``kinds`` the rows have no kind (RB-D22). Mapped by the
    reference's own ``inputs_from_records``."""
    from timealign import Record
    from timealign.rate_aware_batcher import ALGORITHM, Config

    rows = [Record(m["id"], m["name"], m["timestamp"], arrival=item["now"],
                   kind=m["kind"] if kinds else None, poll=k)
            for k, item in enumerate(inputs) if item["op"] == "poll"
            for m in item["messages"]]
    mapped = ALGORITHM.feeding.inputs_from_records(Config(), rows)
    return [*(ALGORITHM.codec.input_to_json(p) for p in mapped), END]


CASES: list[Vector] = [
    # ---- card scenarios -------------------------------------------------------------
    case("happy_path_14hz",
         "Steady 14 Hz stream polled every 100 ms: the bootstrap batch, a first timeout close "
         "(no grid yet), then slot-gate closes of 13 and 14 pulses.",
         ["RB-R1", "RB-R2", "RB-R3", "RB-R4", "RB-R5", "RB-R6", "RB-R8", "RB-R10", "RB-R11",
          "RB-R14", "RB-D14"],
         [*polled(train("det", 14, 5), until=5), END]),
    case("missing_pulse",
         "Pulses 20 and 34 never arrive; the last-slot pulse still closes each window.",
         ["RB-R10", "RB-R11", "RB-D8"],
         [*polled(train("det", 14, 4, skip=[20, 34]), until=4), END]),
    case("split_messages",
         "Pulses arrive twice (split messages): duplicates add no diff and no slot, the gate "
         "waits for the last slot, every message is delivered once.",
         ["RB-R2", "RB-R11", "RB-D8"],
         [*polled(train("det", 14, 4, dup=[16, 17, 30]), until=4), END]),
    case("overflow_future_pulse",
         "A pulse of the next window arrives early (in the poll of an earlier instant): it "
         "goes to overflow, bumps the gate, and is routed into the next batch after the close.",
         ["RB-R11", "RB-R14", "RB-D8"],
         [*polled(train("det", 14, 2.5), until=2.45),
          poll(msg(DET, "det", T0 + 2 * S + 1_500 * MS, "early")),
          *polled(train("det", 14, 2, begin=2.5), start=2.5, until=4.5), END]),
    case("multi_stream",
         "A 14 Hz detector and a 5 Hz monitor: a batch closes only when both are in their "
         "last slot.",
         ["RB-R10", "RB-R11", "RB-D5"],
         [*polled(train("det", 14, 4), train("mon", 5, 4, kind=MON, phase=20 * MS), until=4),
          END]),
    case("phase_offset",
         "The stream starts 40 ms into the window: the grid origin is a real pulse, all 14 "
         "slots fit, the drift tolerance keeps the base index on the right pulse.",
         ["RB-R5", "RB-R7"],
         [*polled(train("det", 14, 4, phase=40 * MS), until=4), END]),
    case("gap_recovery",
         "Five seconds of silence: the window jumps a whole number of batch lengths to where "
         "traffic resumes instead of emitting empty batches.",
         ["RB-R13", "RB-D11"],
         [*polled(train("det", 14, 3), until=3),
          *polled(train("det", 14, 3, begin=8.1), start=8.1, until=11), END]),
    case("gap_recovery_boundary_empty_batch",
         "Traffic resumes with a pulse 48 ns before a batch boundary: the floor jump lands one "
         "window early, the pulse overflows again (slot 14) and its bump closes that window "
         "empty; the pulse opens the next batch (a consequence of RB-R13 and the bump).",
         ["RB-R13", "RB-R11"],
         [*polled(train("det", 14, 3), until=3),
          *polled(train("det", 14, 3, begin=8), start=8, until=11), END]),
    case("gap_recovery_veto",
         "Traffic resumes after a silence together with one very late pulse of the same "
         "stream: the late pulse vetoes the jump; an extra batch holding it closes first.",
         ["RB-R13", "RB-D11"],
         [*polled(train("det", 14, 3), until=3),
          poll(msg(DET, "det", T0 + 8 * S, "resume"), msg(DET, "det", T0 + 2_900 * MS, "late")),
          *polled(train("det", 14, 3, begin=8.1), start=8.1, until=11), END]),
    case("timeout_fallback",
         "The detector stops mid-window; a later log message pushes the HWM past 1.2 batch "
         "lengths and the window closes on the timeout, inclusive at the threshold.",
         ["RB-R9", "RB-R10", "RB-D13"],
         [*polled(train("det", 14, 3.5), until=3.5),
          poll(log(T0 + 4_200 * MS - 1, "log-before")),
          poll(log(T0 + 4_200 * MS, "log-at")), END]),
    case("non_gated_ride_along",
         "Log messages bypass the grid: those at or before the window end ride along with "
         "the active batch (drained first), those ahead are held for the next one.",
         ["RB-R12", "RB-D14"],
         [*polled(train("det", 14, 4),
                  [(T0 + k * 330 * MS, log(T0 + k * 330 * MS, f"log{k}")) for k in range(12)],
                  until=4), END]),
    case("sub_hz_stream",
         "A 0.5 Hz monitor next to a 14 Hz detector: its rate never snaps to a grid, it never "
         "gates, it rides along and is never evicted.",
         ["RB-R3", "RB-R7", "RB-R12"],
         [*polled(train("det", 14, 12), train("mon", 0.5, 12, kind=MON, phase=300 * MS),
                  until=12), END]),
    case("future_ungridded_held",
         "A log reading stamped 150 ms past the window end sits in the future buffer and is "
         "delivered with the next batch, not with this batch's detector data.",
         ["RB-R12"],
         [*polled(train("det", 14, 2), until=2),
          poll(log(T0 + 3_150 * MS, "ahead")),
          *polled(train("det", 14, 3, begin=2.1), start=2.1, until=5), END]),
    case("future_beyond_cap_falls_through",
         "A log reading more than 3 batch lengths ahead falls through to the active batch; an "
         "ungridded gated message that far ahead falls into its stream's bucket.",
         ["RB-R12", "RB-D12"],
         [*polled(train("det", 14, 2), until=2),
          poll(log(T0 + 7 * S, "far"), msg(MON, "slow", T0 + 7 * S, "far-mon")),
          *polled(train("det", 14, 2, begin=2.1), start=2.1, until=4), END]),
    case("broken_stream_epoch",
         "A monitor whose timestamps are 43 years behind: its grid origin is more than 1000 "
         "batch lengths from the window, it never gates, its messages are still delivered.",
         ["RB-R7"],
         [*polled(train("det", 14, 4),
                  [(t, {**m, "timestamp": m["timestamp"] - 43 * YEAR})
                   for t, m in train("mon", 14, 4, kind=MON, phase=10 * MS)], until=4), END]),
    case("hwm_outlier_clamp",
         "One log message a year ahead: the HWM is clamped to start + 3L, at most two timeout "
         "closes follow, then the batcher heals; the outlier itself falls through.",
         ["RB-R9", "RB-D10"],
         [*polled(train("det", 14, 3), until=3), poll(log(T0 + 3 * S + YEAR, "outlier")),
          *empties(5), *polled(train("det", 14, 3, begin=3.1), start=3.1, until=6), END]),
    case("stream_lifecycle",
         "A monitor joins, gates after converging, goes silent for 5 closes and is evicted, "
         "then re-joins with a fresh estimator and a new origin.",
         ["RB-R14", "RB-D9"],
         [*polled(train("det", 14, 14),
                  train("mon", 5, 4, kind=MON, begin=1, phase=15 * MS),
                  train("mon", 5, 4, kind=MON, begin=10, phase=15 * MS), until=14), END]),
    case("batch_length_change",
         "set_batch_length(2.0) applies at the next close: that batch keeps 1 s, the grid "
         "origin is kept and slots per batch go from 14 to 28; two calls, the last wins.",
         ["RB-R15", "RB-R4"],
         [*polled(train("det", 14, 3), until=2.5), set_length(3.0), set_length(2.0),
          *polled(train("det", 14, 5, begin=2.6), start=2.6, until=7.5), END]),
    case("jitter_tolerance",
         "+-30 ms jitter (42 % of the period) at 14 Hz: each pulse rounds to its nearest "
         "slot; batches hold 14 +- 1 pulses and nothing is lost.",
         ["RB-R5", "RB-R6"],
         [*polled(train("det", 14, 6, jitter=[30 * MS, -30 * MS, 12 * MS, -25 * MS, 0, 29 * MS,
                                               -29 * MS]), until=6), END]),
    # ---- rules and decisions not covered by a scenario ----------------------------------
    case("slots_half_even_0p75s",
         "14 Hz at L = 0.75 s: 10.5 slots round half to even to 10.",
         ["RB-R4", "RB-R1"],
         [*polled(train("det", 14, 4), until=4), END], batch_length_s=0.75),
    case("timeout_s_config",
         "timeout_s = 0.9 with L = 1 s gives the factor 0.9: windows without a grid close "
         "0.9 s after their start.",
         ["RB-R1", "RB-R10", "RB-D2"],
         [*polled([(T0 + k * 250 * MS, log(T0 + k * 250 * MS, f"l{k}")) for k in range(16)],
                  until=4), END], timeout_s=0.9),
    case("timeout_factor_config",
         "timeout_factor given directly (2.0).",
         ["RB-D2"],
         [*polled([(T0 + k * 250 * MS, log(T0 + k * 250 * MS, f"l{k}")) for k in range(16)],
                  until=4), END], timeout_factor=2.0),
    case("stale_grid_kept",
         "A stream slows from 14 Hz to 0.5 Hz: once its estimate is None it keeps the last "
         "grid, whose gate then waits, so windows close through the timeout (RB-H7).",
         ["RB-D7", "RB-R7"],
         [*polled(train("det", 14, 3),
                  [(T0 + 3 * S + k * 2 * S, msg(DET, "det", T0 + 3 * S + k * 2 * S, f"s{k}"))
                   for k in range(8)], until=19), END]),
    case("spb_one_stray_empty_batch",
         "1 Hz stream at L = 1 s (one slot): a stray pulse rounding into the next slot "
         "closes the current batch empty; the stray is delivered in the next window.",
         ["RB-R11", "RB-R13", "RB-D8"],
         [*polled(train("det", 1, 8), until=7.9),
          poll(msg(DET, "det", T0 + 8 * S + 600 * MS, "stray")),
          *polled(train("det", 1, 3, begin=9), start=8.1, until=11), END]),
    case("end_reports_pending",
         "End of input: every held message (non-gated, buckets, overflow, future) is "
         "reported pending, in that order; nothing may follow the end.",
         ["RB-R16", "RB-D15"],
         [*polled(train("det", 14, 2.5), until=2.45),
          poll(log(T0 + 2_450 * MS, "in-window"), log(T0 + 4 * S, "ahead"),
               msg(DET, "det", T0 + 3_900 * MS, "overflowing")),
          END, poll(log(T0 + 5 * S, "after-end"))]),
    case("empty_polls_and_length_before_start",
         "Empty polls before any data do nothing; a length set before the first poll waits "
         "for the first close (the bootstrap uses the configured length).",
         ["RB-R8", "RB-R15", "RB-D6"],
         [poll(), set_length(0.5), poll(), *polled(train("det", 14, 3), until=3), END]),
    case("backlog_one_batch_per_poll",
         "A poll carrying 4 s of data: one batch per call, the rest waits for later (empty) "
         "polls (RB-H8).",
         ["RB-D6", "RB-R14"],
         [*polled(train("det", 14, 2), until=2),
          poll(*[m for _, m in train("det", 14, 4, begin=2.1)]), *empties(5), END]),
    case("rejected_config_zero_length",
         "batch_length_s = 0.0000000001 truncates to 0 ns and is refused.",
         ["RB-D1"], [poll()], batch_length_s=1e-10),
    case("rejected_set_batch_length_zero",
         "set_batch_length(0) is refused (upstream would emit zero-length windows, RB-H9); "
         "the run continues unchanged.",
         ["RB-D1", "RB-R15"],
         [*polled(train("det", 14, 2), until=2), set_length(0), set_length("2"),
          *polled(train("det", 14, 1, begin=2.1), start=2.1, until=3), END]),
    case("rejected_infinite_timeout",
         "timeout_s = 1e300 with batch_length_s = 1e-9 gives an infinite factor and is "
         "refused (upstream crashes at its first completion check, RB-H4).",
         ["RB-D2"], [poll()], batch_length_s=1e-9, timeout_s=1e300),
    case("rejected_both_timeouts",
         "timeout_s and timeout_factor together are refused.",
         ["RB-D2"], [poll()], timeout_s=1.2, timeout_factor=1.2),
    case("rejected_bad_messages",
         "Unknown stream kind, below-int64, non-integer or beyond-int64 timestamp, empty id: "
         "each poll is "
         "refused whole and the state is unchanged.",
         ["RB-D3"],
         [poll(msg("camera", "c", T0, "a")), poll(msg(DET, "d", -(2**63) - 1, "b")),
          poll(msg(DET, "d", 1.5, "c")), poll(msg(DET, "d", T0, "")),  # type: ignore[arg-type]
          poll(msg(DET, "d", 2**63, "e")),
          poll(msg(DET, "d", T0, "ok")), END]),
    case("rejected_reused_id",
         "An id still held (or repeated inside one poll) is refused; the poll is dropped whole.",
         ["RB-D4"],
         [*polled(train("det", 14, 1.5), until=1.5),
          poll(msg(DET, "det", T0 + 1_600 * MS, "det20")),
          poll(log(T0 + 1_600 * MS, "x"), log(T0 + 1_600 * MS, "x")), END]),
    # ---- hazards of the card revision --------------------------------------------------
    case("hazard_outlier_in_first_call",
         "One timestamp a year ahead in the first poll: the window starts there, real streams "
         "never get a grid, nothing ever closes again (RB-H1).",
         ["RB-R8", "RB-R7"],
         [poll(msg(DET, "det", T0, "det0"), log(T0 + YEAR, "outlier")),
          *polled(train("det", 14, 3, begin=0.1), start=0.1, until=3), END]),
    case("hazard_far_ahead_gridded",
         "A gridded stream sends one pulse 240 s ahead in a poll of its own: gap recovery "
         "jumps the window to it, real data is then late and nothing closes (RB-H2).",
         ["RB-R13", "RB-R11"],
         [*polled(train("det", 14, 3), until=3), poll(msg(DET, "det", T0 + 243 * S, "ahead")),
          *polled(train("det", 14, 3, begin=3.1), start=3.1, until=6), END]),
    case("hazard_timeout_factor_above_3",
         "timeout_factor 3.5 with only log traffic: the clamped HWM never reaches the "
         "threshold, no window ever closes (RB-H3).",
         ["RB-R10", "RB-R9"],
         [*polled([(T0 + k * 250 * MS, log(T0 + k * 250 * MS, f"l{k}")) for k in range(40)],
                  until=10), END], timeout_factor=3.5),
    case("hazard_timeout_factor_above_3_gated",
         "timeout_factor 3.5 with a clean 14 Hz detector polled every 100 ms: a grid only "
         "appears at a close or at bootstrap, the bootstrap poll holds one pulse, the timeout "
         "cannot fire, so the first window never closes (explorer finding, RB-H3).",
         ["RB-R7", "RB-R10"],
         [*polled(train("det", 14, 4), until=4), END], timeout_factor=3.5),
    case("hazard_timeout_factor_above_3_converged_at_bootstrap",
         "The same with a first poll of 500 ms (7 pulses, 6 diffs): the bootstrap refresh "
         "grids the detector and slot-gate closes run normally.",
         ["RB-R7", "RB-R8"],
         [*polled(train("det", 14, 4), start=0.5, until=4), END], timeout_factor=3.5),
    case("hazard_silent_gridded_stream",
         "A gridded monitor stops: its open gate holds windows until the timeout, and after "
         "5 absent closes it is evicted and slot-gate closes resume (RB-H6).",
         ["RB-R14", "RB-R10"],
         [*polled(train("det", 14, 10), train("mon", 5, 3, kind=MON, phase=15 * MS),
                  until=10), END]),
    case("hazard_slow_gated_stream",
         "A 0.1 Hz monitor at L = 1 s is evicted after 5 closes and re-registered each time: "
         "it never converges and never gates (RB-H10).",
         ["RB-R14", "RB-D9"],
         [*polled(train("det", 14, 32), train("mon", 0.1, 32, kind=MON, phase=5 * MS),
                  until=32), END]),
    case("hazard_persistent_far_future_stream",
         "A monitor whose clock is 10 years ahead keeps sending: every call clamps the HWM to "
         "start + 3L and closes on the timeout, the window runs ahead of the data (RB-H11).",
         ["RB-R9", "RB-R12"],
         [*polled(train("det", 14, 4),
                  [(t, {**m, "timestamp": m["timestamp"] + 10 * YEAR})
                   for t, m in train("mon", 2, 3.5, kind=MON, begin=0.5)], until=4), END]),
    case("hazard_no_wall_clock",
         "Traffic stops mid-window: without a wall-clock backstop the partial window stays "
         "buffered however many empty polls follow; the end reports it pending (RB-H5).",
         ["RB-R16", "RB-D13"],
         [*polled(train("det", 14, 2.5), until=2.5), *empties(20), END]),
    *[vector for pair in (
        # ---- the esslivedata-head profile, side by side with the card ------------------
        both("first_call_outlier",
             "One log stamped a year ahead in the first poll, then 15 s of 14 Hz, polled every "
             "100 ms of wall clock (RB-H1). Card: only the bootstrap batch, ever. Head: the "
             "two-stamp first poll ties, so the anchor is the outlier's (the later cluster); "
             "after 10 s of clock with traffic buffered the backstop re-places the window at "
             "the data, one large batch follows and slot-gate closes resume.",
             ["RB-R20", "RB-R21", "RB-R26", "RB-R18"],
             clocked([poll(msg(DET, "det", T0, "det0"), log(T0 + YEAR, "outlier")),
                      *polled(train("det", 14, 15, begin=0.1), start=0.1, until=15), END])),
        both("first_call_outlier_minority",
             "A first poll of 500 ms of 14 Hz plus one stamp a year ahead. Card: wedged as in "
             "RB-H1. Head: the plausible anchor is the newest pulse (the outlier is a cluster "
             "of one), the detector is gridded at bootstrap and closes run from the start.",
             ["RB-R20", "RB-R21"],
             [poll(*[m for _, m in train("det", 14, 0.5)], log(T0 + YEAR, "outlier")),
              *polled(train("det", 14, 3, begin=0.5), start=0.6, until=3.5), END]),
        both("far_ahead_gridded",
             "A gridded pulse 240 s ahead in a poll of its own, then 15 s of data, polled "
             "every 100 ms of wall clock (RB-H2). Card: the gap jump strands the window, "
             "nothing closes. Head: 10 s after the last close the backstop re-places the "
             "window at the buffered data (the HWM goes back with it), the stray pulse is "
             "delivered, closes resume.",
             ["RB-R26", "RB-R24", "RB-R11", "RB-R13"],
             clocked([*polled(train("det", 14, 3), until=3),
                      poll(msg(DET, "det", T0 + 243 * S, "ahead")),
                      *polled(train("det", 14, 15, begin=3.1), start=3.1, until=18), END])),
        both("first_call_outlier_from_rows",
             "The first_call_outlier trace as recorded rows with arrivals, mapped by the "
             "driver (RB-D19): each poll's clock is its last row's arrival; no empty polls.",
             ["RB-D19", "RB-R26"],
             from_rows(clocked([poll(msg(DET, "det", T0, "det0"), log(T0 + YEAR, "outlier")),
                                *polled(train("det", 14, 15, begin=0.1), start=0.1,
                                        until=15)]))),
        both("kindless_rows",
             "Recorded rows without a kind column, mapped by the driver: each message is "
             "of upstream's kind `unknown` (RB-D22), non-gated, so batches close by the "
             "timeout as for a log stream.",
             ["RB-D22", "RB-D19"],
             from_rows(clocked([*polled([(T0 + k * 250 * MS, log(T0 + k * 250 * MS, f"u{k}"))
                                         for k in range(12)], until=3)]), kinds=False)),
        both("timeout_factor_above_3",
             "timeout_factor 3.5 (RB-H3). Card: the log-only trace never closes. Head: the "
             "factor is refused.",
             ["RB-R19", "RB-D2"],
             [*polled([(T0 + k * 250 * MS, log(T0 + k * 250 * MS, f"l{k}")) for k in range(8)],
                      until=2), END], timeout_factor=3.5),
        both("infinite_timeout",
             "timeout_s = inf (RB-H4). Card: refused (upstream crashes). Head: the timeout is "
             "off; a detector gridded at bootstrap (500 ms first poll) closes on its slot gate "
             "only.",
             ["RB-R19", "RB-D2"],
             [*polled(train("det", 14, 4), start=0.5, until=4), END], timeout_s="inf"),
        both("infinite_timeout_never_gridded",
             "timeout_s = inf with a first poll of one pulse (head finding): no grid at "
             "bootstrap, no timeout, so no close; the backstop keeps re-placing the window "
             "over the buffered pulses and nothing is ever delivered.",
             ["RB-R19", "RB-R26"],
             clocked([*polled(train("det", 14, 25), until=25), END]), timeout_s="inf"),
        both("no_wall_clock",
             "Traffic stops mid-window, then 30 empty polls over 30 s of clock (RB-H5). Card: "
             "no clock, the partial window stays. Head: the backstop is due, but the anchor of "
             "the buffered pulses lies inside the window: it only re-arms; same outputs.",
             ["RB-R26", "RB-R18"],
             clocked([*polled(train("det", 14, 2.5), until=2.5), *empties(30), END],
                     every=S)),
        both("persistent_far_future_stream",
             "A monitor 10 years ahead keeps sending for 3.5 s, polled with a clock (RB-H11). "
             "Both: the clamped HWM closes a batch per poll and the window runs ahead. Head: "
             "its messages are disjoint-epoch (more than 1000 L ahead) and ride along; once "
             "the monitor stops, the backstop brings the window back to the data.",
             ["RB-R22", "RB-R26"],
             clocked([*polled(train("det", 14, 16),
                              [(t, {**m, "timestamp": m["timestamp"] + 10 * YEAR})
                               for t, m in train("mon", 2, 3.5, kind=MON, begin=0.5)],
                              until=16), END])),
        both("non_gated_backlog",
             "Log-only traffic polled every 2.5 s of data (RB-H8, RB-R25). Card: a timeout "
             "close per poll, one L each, the batches trail the data. Head: no stream gates, "
             "so each close takes every held message and ends at their plausible anchor.",
             ["RB-R25"],
             [*polled([(T0 + k * 250 * MS, log(T0 + k * 250 * MS, f"l{k}")) for k in range(40)],
                      until=10, every=2_500 * MS), *empties(4), END]),
        both("disjoint_epoch_routing",
             "A gridded detector sends one pulse 2000 s ahead next to its regular pulses. "
             "Card: overflow, it bumps the gate and waits in overflow. Head: more than 1000 L "
             "ahead, it rides along with the active batch, unobserved (RB-R22).",
             ["RB-R22", "RB-R11"],
             [*polled(train("det", 14, 2.5), until=2.45),
              poll(msg(DET, "det", T0 + 2_500 * MS, "det35"),
                   msg(DET, "det", T0 + 2_000 * S, "epoch")),
              *polled(train("det", 14, 4, begin=2.6), start=2.6, until=6.5), END]),
        both("overflow_bump_limit",
             "A gridded pulse 240 s ahead arrives with in-window pulses; its HWM forces two "
             "timeout closes in both profiles. Card: from then on it is re-routed into every "
             "window and bumps its gate, a near-empty batch per poll racing ahead of the "
             "data (RB-H2). Head: more than 4 x 14 slots ahead it bumps nothing; windows "
             "close on their last slot once the data reaches them, it waits in overflow "
             "(RB-R23).",
             ["RB-R23", "RB-D8"],
             [*polled(train("det", 14, 2.5), until=2.45),
              poll(msg(DET, "det", T0 + 2_500 * MS, "det35"),
                   msg(DET, "det", T0 + 242_500 * MS, "ahead")),
              *polled(train("det", 14, 4, begin=2.6), start=2.6, until=6.5), END]),
        both("head_stream_kinds",
             "device and livedata_nicos_data messages: upstream StreamKind values added after "
             "the card. Card: refused (RB-D3). Head: non-gated, they ride along (RB-R27).",
             ["RB-R27", "RB-D3"],
             [*polled(train("det", 14, 2), until=2),
              poll(msg("device", "motor", T0 + 2_050 * MS, "motor")),
              poll(msg("livedata_nicos_data", "nicos", T0 + 2_150 * MS, "nicos")),
              *polled(train("det", 14, 2, begin=2.1), start=2.2, until=4), END]),
        both("clock_readings",
             "The clock rule: a poll without \"now\" keeps the clock where it was, an equal "
             "reading is fine, a reading that goes back is refused with the state unchanged, "
             "a non-integer one too.",
             ["RB-R18", "RB-D17"],
             [poll(msg(DET, "det", T0, "a"), now=5 * S), poll(msg(DET, "det", T0 + 70 * MS, "b")),
              poll(msg(DET, "det", T0 + 140 * MS, "c"), now=5 * S),
              poll(msg(DET, "det", T0 + 210 * MS, "d"), now=4 * S),
              poll(msg(DET, "det", T0 + 210 * MS, "d"), now=1.5),
              poll(msg(DET, "det", T0 + 210 * MS, "d"), now=6 * S), END]),
        both("negative_time",
             "The happy path shifted to before the epoch (data time -1.7e18 ns), with a clock "
             "at negative readings: the signed 64-bit domain works in both profiles (RB-D3, "
             "RB-D18).",
             ["RB-D3", "RB-D18"],
             clocked(shifted([*polled(train("det", 14, 4), until=4), END], -2 * T0),
                     start=-(2**62))),
        both("extreme_time",
             "14 Hz pulses around +2^62 ns and a log at -2^63 (the lowest int64), 2^63 - 1 "
             "accepted, 2^63 refused (RB-D3, RB-D18).",
             ["RB-D3", "RB-D18"],
             [*shifted(polled(train("det", 14, 3), until=3), 2**62 - T0),
              poll(log(-(2**63), "lowest"), log(2**63 - 1, "highest")),
              poll(log(2**63, "beyond")), END]),
        both("batch_end_past_int64",
             "The first window starts 0.1 s below 2^63 - 1 ns with a timeout of 1 ms: the poll "
             "past the timeout would close a batch ending at its start + 1 s, past int64, and "
             "is refused whole, the state unchanged (RB-R28); the held message is pending at "
             "the end. A length or timeout past int64 is a refused config (RB-D23).",
             ["RB-R28", "RB-D23"],
             [poll(log(2**63 - 1 - 10**8, "a")), poll(log(2**63 - 1 - 10**8 + 500, "b")),
              poll(log(2**63 - 1 - 10**8 + 2 * 10**6, "c")), END],
             timeout_factor=0.001),
    ) for vector in pair],
]

# --- vectors that tell the catalogued variants from the rules (CF-R41) ------------------------
# Each trace is one where a plausible misreading catalogued in
# reference/timealign/rate_aware_batcher/variants.py publishes something else than the rule
# (tests/rate_aware_batcher/test_rb_variants.py: every variant is killed by the suite).

P14 = round(S / 14)  # the 14 Hz grid period, 71 428 571 ns (RB-R4)
P5 = S // 5  # the 5 Hz grid period
HEAD_PROFILE: dict[str, Any] = {"profile": "esslivedata-head"}


def reference_state(config: dict[str, Any], inputs: list[dict[str, Any]]) -> Any:
    """The reference's state after ``inputs``, to place a stamp against its window."""
    from timealign.rate_aware_batcher import ALGORITHM

    codec, machine = ALGORITHM.codec, ALGORITHM.machine
    decoded = codec.config_from_json({"batch_length_s": 1.0, **config})
    state = machine.initial(decoded)
    for raw in inputs:
        state, _ = machine.step(decoded, state, codec.input_from_json(raw))
    return state


def slot_stamp(state: Any, slot: int) -> int:
    """The pulse instant of ``slot`` of the active window, on the first stream's grid."""
    from timealign.rate_aware_batcher.grid import batch_base_index

    grid = state.streams[0].grid
    base = batch_base_index(state.window, grid.origin, grid.period)
    return int(grid.origin + (base + slot) * grid.period)


def late_half_pulses() -> list[dict[str, Any]]:
    """A 14 Hz detector whose every pulse after the first is followed by a stamp half a
    period older than it."""
    arrivals = []
    for k in range(4 * 14):
        arrivals.append((T0 + k * P14, msg(DET, "det", T0 + k * P14, f"det{k}")))
        if k >= 1:
            arrivals.append((T0 + k * P14,
                             msg(DET, "det", T0 + k * P14 - P14 // 2, f"late{k}")))
    return [*polled(arrivals, until=4), END]


def bootstrap_past_pulse(offset: int) -> list[dict[str, Any]]:
    """A first poll of six 14 Hz pulses and a log ``offset`` ns after the last (the first
    window starts there, its grid's origin is that pulse), then the pulses go on."""
    first = [msg(DET, "det", T0 + k * P14, f"det{k}") for k in range(6)]
    return [poll(*first, log(T0 + 5 * P14 + offset, "mark")),
            *polled(train("det", 14, 3, begin=6 / 14 + 0.001), start=0.5, until=3.5), END]


def half_period_stamp() -> list[dict[str, Any]]:
    """A 5 Hz monitor with one extra stamp exactly half a period past a pulse."""
    arrivals = [(T0 + j * P5, msg(MON, "mon", T0 + j * P5, f"mon{j}")) for j in range(25)]
    arrivals.append((T0 + 13 * P5 + P5 // 2, msg(MON, "mon", T0 + 13 * P5 + P5 // 2, "half")))
    return [*polled(sorted(arrivals, key=lambda a: a[0]), until=5), END]


def disjoint_edge() -> list[dict[str, Any]]:
    """A gridded pulse exactly 1000 L past the window end, next to an in-window one."""
    lead = polled(train("det", 14, 2.5), until=2.45)
    state = reference_state(HEAD_PROFILE, lead)
    edge = state.window + state.batch_length + 1000 * state.batch_length
    return [*lead, poll(msg(DET, "det", T0 + 2_500 * MS, "det35"), msg(DET, "det", edge, "edge")),
            *polled(train("det", 14, 3, begin=2.6), start=2.6, until=5.5), END]


NO_TIMEOUT_HEAD: dict[str, Any] = {**HEAD_PROFILE, "timeout_factor": "inf"}


def bump_edges() -> list[dict[str, Any]]:
    """Gridded from the first poll (no timeout): a pulse in slot 4 x 14, then one in slot
    2 x 14 + 1, each next to an in-window pulse (which vetoes gap recovery)."""
    lead = [poll(*(m for _, m in train("det", 14, 1))),
            *polled(train("det", 14, 1.5, begin=1), start=1, until=2.45)]
    state = reference_state(NO_TIMEOUT_HEAD, lead)
    slots = state.streams[0].grid.slots
    far = poll(msg(DET, "det", T0 + 2_500 * MS, "det35"),
               msg(DET, "det", slot_stamp(state, 4 * slots), "slot56"))
    state = reference_state(NO_TIMEOUT_HEAD, [*lead, far])
    near = poll(msg(DET, "det", T0 + 2_550 * MS, "det35b"),
                msg(DET, "det", slot_stamp(state, 2 * slots + 1), "slot29"))
    return [*lead, far, near,
            *polled(train("det", 14, 3, begin=2.6), start=2.6, until=5.5), END]


CASES.extend([
    case("stream_is_kind_and_name",
         "A 14 Hz detector and a 5 Hz monitor both named x: two streams (RB-R1), each "
         "gridded at its own rate; one stream per name would mix their stamps.",
         ["RB-R1", "RB-R2"],
         [*polled(train("x", 14, 4),
                  [(t, {**m, "id": f"mon-{m['id']}"})
                   for t, m in train("x", 5, 4, kind=MON, phase=20 * MS)], until=4), END]),
    case("late_stamps_leave_the_estimator",
         "Each 14 Hz pulse is followed by a stamp half a period older: an older stamp "
         "changes nothing (RB-R2), so the rate is 14 Hz; one that moved last back would "
         "measure every diff as 1.5 periods and never snap a rate.",
         ["RB-R2", "RB-R3"], late_half_pulses()),
    case("slots_round_2p8",
         "14 Hz at L = 0.2 s: rate x L = 2.8 rounds to 3 slots (RB-R4), not 2 by "
         "truncation.",
         ["RB-R4"], [*polled(train("det", 14, 4), until=4), END], batch_length_s=0.2),
    case("pulse_half_to_even",
         "A 5 Hz monitor with a stamp exactly half a period past its 13th pulse (relative "
         "index 12.5 from the grid's origin): half to even puts it on pulse 12, slot 3, and "
         "the window waits for pulse 13 (RB-R5); rounding half up or up would close on it.",
         ["RB-R5", "RB-R6"], half_period_stamp()),
    case("batch_base_at_drift_tolerance",
         "The first window starts exactly 1 ms (the drift tolerance) past a pulse: it "
         "starts on that pulse (r <= tolerance, RB-R5), so its last slot is a pulse "
         "earlier than with a strict comparison.",
         ["RB-R5", "RB-R6", "RB-R8"], bootstrap_past_pulse(MS)),
    case("batch_base_past_drift_tolerance",
         "The first window starts 20 ms past a pulse (more than the 1 ms tolerance, less "
         "than half a period): its base is the next pulse (RB-R5), not the nearest one, "
         "and slots count from there (RB-R6).",
         ["RB-R5", "RB-R6", "RB-R8"], bootstrap_past_pulse(20 * MS)),
    case("origin_at_or_after_window_start",
         "A detector converges at the first timeout close with an off-grid late stamp "
         "first in its bucket: the new origin is the first bucket stamp at or after the "
         "window start (RB-R7), a real pulse, not the late one.",
         ["RB-R7"],
         [poll(msg(DET, "det", T0, "det0"), msg(DET, "det", T0 + P14, "det1")),
          poll(msg(DET, "det", T0 + P14 - 30 * MS, "late")),
          *polled(train("det", 14, 3, begin=2 / 14), start=0.15, until=3.5), END]),
    case("gap_veto_by_gridded_only",
         "Traffic resumes after a silence together with a new (ungridded) 7 Hz monitor: "
         "only a gridded stream's bucket vetoes gap recovery (RB-R13), so the window jumps "
         "at once.",
         ["RB-R13"],
         [*polled(train("det", 14, 3), until=3),
          *polled(train("det", 14, 3, begin=8.1),
                  train("mon", 7, 1, kind=MON, begin=8.0, phase=3 * MS), start=8.1, until=11),
          END]),
    case("anchor_cut_past_3l_head",
         "Head: a first poll with stamps at 0, 1 ms and 3 s + 1 ms (L = 1 s): neighbours "
         "exactly 3 L apart stay in one cluster (RB-R20), so the anchor is the newest "
         "stamp, not 1 ms.",
         ["RB-R20", "RB-R21"],
         [poll(log(T0, "a"), log(T0 + MS, "b"), log(T0 + 3 * S + MS, "c")),
          *polled(train("det", 14, 3, begin=3.1), start=3.1, until=6), END],
         **HEAD_PROFILE),
    case("bootstrap_observes_up_to_anchor_head",
         "Head: a first poll of eight 14 Hz pulses and a detector stamp one year ahead: the "
         "anchor is the last pulse and only stamps up to it are observed (RB-R21), so the "
         "detector is gridded at the bootstrap; observing the outlier would leave its "
         "newest stamp a year ahead and no plausible origin.",
         ["RB-R21", "RB-R7"],
         [poll(*(msg(DET, "det", T0 + k * P14, f"det{k}") for k in range(8)),
               msg(DET, "det", T0 + YEAR, "outlier")),
          *polled(train("det", 14, 3, begin=8 / 14 + 0.01), start=0.6, until=3.5), END],
         **HEAD_PROFILE),
    case("disjoint_epoch_edge_head",
         "Head: a gridded pulse exactly 1000 L past the window end is not a disjoint epoch "
         "(more than 1000 L, measured from the end, RB-R22): it overflows, as in the card.",
         ["RB-R22", "RB-R11"], disjoint_edge(), **HEAD_PROFILE),
    case("bump_limit_edges_head",
         "Head without a timeout, gridded from the first poll: a pulse in slot 4 x 14 = 56 "
         "bumps nothing (slot < 4 slots, RB-R23); a later one in slot 29 bumps the gate "
         "and closes the window.",
         ["RB-R23", "RB-R19"], bump_edges(), **NO_TIMEOUT_HEAD),
])

# The overview figure of spec/rate_aware_batcher.md: a detector (14 Hz) and a monitor
# (5 Hz) gate the windows, a log stream rides along, polled every 100 ms for 4.5 s.
CASES.append(case(
    "typical_run",
    "A typical run: a 14 Hz detector and a 5 Hz monitor gate 1 s windows, log lines ride "
    "along; the bootstrap batch, a timeout close while the grids form, then a close each "
    "time both streams reach their last slot; the partial last window is pending at the end.",
    ["RB-R8", "RB-R10", "RB-R11", "RB-R12", "RB-R14", "RB-R16"],
    [*polled(train("det", 14, 4.5), train("mon", 5, 4.5, kind=MON, phase=20 * MS),
             [(T0 + k * 450 * MS, log(T0 + k * 450 * MS, f"log{k}")) for k in range(10)],
             until=4.5), END]))

# --- head twins ------------------------------------------------------------------------------
# The esslivedata-head target runs only head vectors, so each card scenario on which the two
# revisions behave alike has a twin `<case>_head`: the same inputs (no clock readings: the
# clock stays frozen, as in upstream's own tests, so the stall backstop never fires) in the
# esslivedata-head profile, its outputs again from the reference. A twin has exactly its
# original's outputs (tests/rate_aware_batcher/test_rb_head_twins.py). The card scenarios
# left out publish something else in head (its profile rules differ there: RB-R17), or lie
# outside the head target (RB-D3, RB-R19), or already come as a `both` pair.
HEAD_TWINS = (
    "happy_path_14hz", "missing_pulse", "split_messages", "overflow_future_pulse",
    "multi_stream", "phase_offset", "gap_recovery", "gap_recovery_boundary_empty_batch",
    "gap_recovery_veto", "timeout_fallback", "non_gated_ride_along", "sub_hz_stream",
    "future_ungridded_held", "future_beyond_cap_falls_through", "broken_stream_epoch",
    "hwm_outlier_clamp", "stream_lifecycle", "batch_length_change", "jitter_tolerance",
    "slots_half_even_0p75s", "timeout_s_config", "stale_grid_kept",
    "empty_polls_and_length_before_start", "backlog_one_batch_per_poll",
    "hazard_outlier_in_first_call", "hazard_far_ahead_gridded", "hazard_silent_gridded_stream",
    "hazard_slow_gated_stream", "hazard_no_wall_clock", "typical_run",
)


def head_twin(original: Vector) -> Vector:
    """``original`` (a card case) in the esslivedata-head profile (RB-R17)."""
    return Vector(ALG, f"{original.name}_head",
                  {**original.config, "profile": "esslivedata-head"}, original.inputs, None,
                  f"Head twin of {original.name} (esslivedata-head profile; the revisions "
                  f"behave alike here): {original.description}",
                  tuple(dict.fromkeys(("RB-R17", *original.rules))))


CASES.extend([head_twin(c) for c in list(CASES) if c.name in HEAD_TWINS])
