"""Draw the spec's figures from the shipped vectors into ``spec/figures/`` (PL-R8).

Each entry of :data:`FIGURES` names the spec id or section a figure shows and the vector it
is drawn from; the figure is ``spec/figures/<prefix>_<vector>.svg`` and the spec of the
algorithm embeds it next to that hazard or scenario. An entry may also ask, in
:data:`ZOOMS`, for an event-time window drawn again enlarged below the lanes (PL-R18),
and, in :data:`FLAGS`, for the strip of the machine's flags after each input (PL-R20).
The SVG is the same bytes for the same vector (``timealign.plot.draw``), so
``tests/plot/test_plot_figures.py`` regenerates every figure in memory and fails when a
committed one is stale, not embedded, or has no caption ("*What to look at:*" after the
image), or when two of its marks lie at one point (PL-D4).

    python -m cases.figures        # or: make figures
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from timealign import vectors
from tools import spec_index

ROOT = Path(__file__).resolve().parent.parent / "vectors"  # the vector files
SPEC = ROOT.parent / "spec"
FOLDER = SPEC / "figures"
#: Each algorithm's figure prefix: its spec's id family, in lower case (``at_``).
PREFIX = {name: family.lower() for name, family in spec_index.algorithm_families().items()}

# (what the figure shows in the spec, algorithm, vector name)
FIGURES: tuple[tuple[str, str, str], ...] = (
    ("Overview", "approximate_time", "typical_run"),
    ("AT-H1", "approximate_time", "note_livelock_after_last_topic_overflow"),
    ("AT-H1", "approximate_time", "overflow_of_topic0_recovers"),
    ("AT-H3", "approximate_time", "wiki_optimality_fails_with_too_large_bound"),
    ("AT-H4", "approximate_time", "wiki_sets_cross_with_out_of_order_stamps"),
    ("AT-H5", "approximate_time", "wiki_arrival_order_matters_with_overflow_a"),
    ("AT-H5", "approximate_time", "wiki_arrival_order_matters_with_overflow_b"),
    ("Overview", "event_time_batcher", "typical_run"),
    ("UC1", "event_time_batcher", "uc1_window"),
    ("UC2", "event_time_batcher", "uc2_timeout"),
    ("UC3", "event_time_batcher", "uc3_conflicts"),
    ("UC4", "event_time_batcher", "uc4_late_duplicate"),
    ("UC5", "event_time_batcher", "uc5_late_unbatched"),
    ("UC5", "event_time_batcher", "uc5_gap_variant"),
    ("EB-H1", "event_time_batcher", "hazard_redelivery_on_split_point"),
    ("EB-H2", "event_time_batcher", "hazard_one_ns_conflict"),
    ("EB-H3", "event_time_batcher", "hazard_late_earlier"),
    ("EB-H4", "event_time_batcher", "hazard_tick_first"),
    ("EB-H4", "event_time_batcher", "hazard_message_first"),
    ("EB-H5", "event_time_batcher", "hazard_missing_ticks"),
    ("EB-H6", "event_time_batcher", "hazard_order_ab"),
    ("EB-H6", "event_time_batcher", "hazard_order_ba"),
    ("EB-H7", "event_time_batcher", "hazard_zero_window"),
    ("Overview", "rate_aware_batcher", "typical_run"),
    ("Happy path", "rate_aware_batcher", "happy_path_14hz"),
    ("Missing pulse", "rate_aware_batcher", "missing_pulse"),
    ("Split messages", "rate_aware_batcher", "split_messages"),
    ("Overflow", "rate_aware_batcher", "overflow_future_pulse"),
    ("Multi-stream", "rate_aware_batcher", "multi_stream"),
    ("Phase offset", "rate_aware_batcher", "phase_offset"),
    ("Gap recovery", "rate_aware_batcher", "gap_recovery"),
    ("Timeout fallback", "rate_aware_batcher", "timeout_fallback"),
    ("Non-gated ride-along", "rate_aware_batcher", "non_gated_ride_along"),
    ("Sub-Hz stream", "rate_aware_batcher", "sub_hz_stream"),
    ("Future ungridded", "rate_aware_batcher", "future_ungridded_held"),
    ("Broken stream", "rate_aware_batcher", "broken_stream_epoch"),
    ("HWM outlier clamp", "rate_aware_batcher", "hwm_outlier_clamp"),
    ("Stream lifecycle", "rate_aware_batcher", "stream_lifecycle"),
    ("Batch-length change", "rate_aware_batcher", "batch_length_change"),
    ("Jitter tolerance", "rate_aware_batcher", "jitter_tolerance"),
    ("RB-H1", "rate_aware_batcher", "hazard_outlier_in_first_call"),
    ("RB-H2", "rate_aware_batcher", "hazard_far_ahead_gridded"),
    ("RB-H3", "rate_aware_batcher", "hazard_timeout_factor_above_3"),
    ("RB-H3", "rate_aware_batcher", "hazard_timeout_factor_above_3_gated"),
    ("RB-H5", "rate_aware_batcher", "hazard_no_wall_clock"),
    ("RB-H6", "rate_aware_batcher", "hazard_silent_gridded_stream"),
    ("RB-H7", "rate_aware_batcher", "stale_grid_kept"),
    ("RB-H8", "rate_aware_batcher", "backlog_one_batch_per_poll"),
    ("RB-H10", "rate_aware_batcher", "hazard_slow_gated_stream"),
    ("RB-H11", "rate_aware_batcher", "hazard_persistent_far_future_stream"),
)

#: (algorithm, vector) -> the event-time window (ns) drawn enlarged below the lanes (PL-R18).
ZOOMS: dict[tuple[str, str], tuple[int, int]] = {
    # the split of the third second's batch at 3015 ms (EB-R11, EB-R12)
    ("event_time_batcher", "typical_run"): (2_995_000_000, 3_055_000_000),
}
#: The entries that draw the machine's flags after each input (PL-R20): the drop flags
#: that make AT-H1 a livelock, and the same trace that recovers.
FLAGS: frozenset[tuple[str, str]] = frozenset({
    ("approximate_time", "note_livelock_after_last_topic_overflow"),
    ("approximate_time", "overflow_of_topic0_recovers"),
})


def file_name(algorithm: str, vector: str) -> str:
    """The figure's file name under ``spec/figures/``."""
    return f"{PREFIX[algorithm]}_{vector}.svg"


def draw(algorithm: str, vector: str) -> bytes:
    """The SVG bytes of one figure, drawn from the shipped vector, with the zoom window
    and the flags its entry asks for."""
    import attrs

    from timealign.plot.draw import render
    from timealign.plot.timeline import from_vector

    [found] = vectors.load(ROOT / algorithm / f"{vector}.json")
    timeline = from_vector(found)
    timeline = attrs.evolve(timeline, zoom=ZOOMS.get((algorithm, vector)),
                            flags=timeline.flags if (algorithm, vector) in FLAGS else ())
    return render(timeline, "svg", width=8.0)


def main(argv: Sequence[str] | None = None) -> int:
    del argv
    FOLDER.mkdir(exist_ok=True)
    wanted = set()
    written = 0
    for _shows, algorithm, vector in FIGURES:
        name = file_name(algorithm, vector)
        wanted.add(name)
        target = FOLDER / name
        data = draw(algorithm, vector)
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)
            written += 1
            print(f"wrote {target.relative_to(ROOT.parent)}")
    for old in sorted(FOLDER.glob("*.svg")):
        if old.name not in wanted:
            old.unlink()
            print(f"removed {old.relative_to(ROOT.parent)}")
    # PL-R8: say what was done even when nothing changed
    print(f"figures: {len(wanted)} in {FOLDER.relative_to(ROOT.parent)}, {written} written, "
          f"{len(wanted) - written} already current")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
