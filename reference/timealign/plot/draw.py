"""Draw a :class:`~timealign.plot.timeline.Timeline` with matplotlib (PL-R2 to PL-R5, PL-D4).

One lane per topic, key or stream on the event-time axis; each message a mark coloured by
its group; sets drawn as a line through their members, every group's window as a shaded
span; dropped and rejected messages marked by reason, pending ones hollow; the slot grid
faint behind the lanes; below, arrival against event time. Only the ``Figure`` API is used
(no pyplot state), under fixed settings so that an SVG is the same bytes on every machine
with the pinned matplotlib (PL-R5): fixed hash salt, no date, the bundled DejaVu Sans,
text kept as text.
"""

from __future__ import annotations

import datetime
import io
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from timealign import reasons as reasons_of
from timealign.errors import InvalidInput
from timealign.plot.timeline import ARRIVAL_INDEX, GROUPED, OPEN, Flags, Mark, Timeline

FORMATS = ("svg", "png")
SETTINGS: dict[str, Any] = {
    "svg.hashsalt": "timealign",
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "legend.fontsize": 8,
    "savefig.dpi": 100,
}
#: Group colours, cycled in emission order (neighbours differ).
PALETTE = ("#1f77b4", "#2ca02c", "#8c564b", "#17becf", "#7f7f7f", "#bcbd22")
SHADES = ("#1f77b4", "#2ca02c")
OUTCOME_COLOURS = {"dropped": "#d62728", "rejected": "#9467bd"}
FLAG_COLOUR = "#d62728"  # a set flag of the state (PL-R20)
#: An outcome that is normal for the timeline's algorithm (PL-R14): not a warm colour.
NORMAL_COLOUR = "#b0b0b0"
#: Origins from this instant on (2000-01-01 UTC) are clock readings: the axis names the date.
EPOCH_DATES = 946_684_800 * 1_000_000_000
REASON_MARKERS = ("X", "D", "s", "^", "v", "P", "*", "<", ">")
LABEL_LIMIT = 40  # ids written next to their marks up to this many messages
GROUP_LABEL_LIMIT = 30
LABEL_SIZE = 7  # points
CHAR_WIDTH = 0.62  # of the font size: DejaVu Sans' average advance, for label extents
STACK_DISTANCE = 1 / 250  # of the axis: marks of a lane closer than this are stacked (PL-D4)
STACK_STEP = 0.2  # lane heights between stacked marks, shrunk to fit a tall stack
AXIS_MARGIN = 1.3  # inches of the figure's width outside the lane axis (lane names, padding)
UNITS = ((10_000, 1, "ns"), (10_000_000, 1_000, "µs"), (10_000_000_000, 1_000_000, "ms"))


class Scale:
    """Integer ns -> axis coordinates: a readable unit and, for absolute clocks, an origin.

    The offset is subtracted in integers, so large stamps keep their ns precision. A chosen
    origin is round (PL-R19): the shown times rounded down to a power of ten at least their
    span, so the axis reads ``ns after 999 µs`` rather than ``ns after 0.0009991 s``.
    """

    def __init__(self, values: Iterable[int], origin: int | None = None) -> None:
        values = list(values) or [0]
        low, high = min(values), max(values)
        span = high - low
        self.factor, self.unit = 1_000_000_000, "s"
        for limit, factor, unit in UNITS:
            if span <= limit:
                self.factor, self.unit = factor, unit
                break
        far = abs(low) > 100 * max(span, 1) and abs(low) >= self.factor
        if origin is not None:  # a given origin (PL-R14), written on the axis
            self.origin = origin
        else:
            self.origin = _round_origin(low, span, self.factor) if far else 0

    def __call__(self, value: int) -> float:
        return (value - self.origin) / self.factor

    def label(self, what: str) -> str:
        """The axis label; an origin that is a clock reading is written as its UTC date and
        time (PL-R14), any other as an instant in the unit that reads it best (PL-R19)."""
        if not self.origin:
            return f"{what} ({self.unit})"
        if self.origin >= EPOCH_DATES:
            seconds, rest = divmod(self.origin, 1_000_000_000)
            fraction = f".{rest:09d}".rstrip("0") if rest else ""
            day = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
            return f"{what} ({self.unit} after {day:%Y-%m-%d %H:%M:%S}{fraction} UTC)"
        return f"{what} ({self.unit} after {instant(self.origin)})"


#: The units an instant is written in, largest first (PL-R19).
INSTANT_UNITS = ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "µs"), (1, "ns"))


def _round_origin(low: int, span: int, factor: int) -> int:
    """``low`` rounded down to a multiple of the smallest power of ten that is at least the
    span and the unit (PL-R19): the offsets then read from 0 to at most twice that."""
    step = factor
    while step < span:
        step *= 10
    return (low // step) * step


def instant(ns: int) -> str:
    """An instant in the largest unit that writes it exactly with at most three decimals
    and a whole part: ``999 µs``, ``1.5 s``, ``-20 ms`` (PL-R19)."""
    sign, size = ("-" if ns < 0 else ""), abs(ns)
    for unit, name in INSTANT_UNITS:
        whole, rest = divmod(size, unit)
        if whole and rest * 1000 % unit == 0:
            decimals = f".{rest * 1000 // unit:03d}".rstrip("0") if rest else ""
            return f"{sign}{whole}{decimals} {name}"
    return f"{sign}{size} ns"


def view(stamps: Iterable[int], bounds: Iterable[int] = ()) -> tuple[int, int]:
    """The event-time range drawn (PL-R2): the stamps and group bounds, except a cluster
    of stamps farther from the rest than ten times the rest's own span (a stamp a year
    ahead), which is drawn at the edge with its distance, so one outlier cannot squash the
    rest. The side with more stamps (then more group bounds) is kept; group bounds alone
    are never cut off."""
    points = sorted([(t, True) for t in stamps] + [(t, False) for t in bounds]) or [(0, True)]
    for _ in range(3):
        if len(points) < 2:
            break
        gap, at = max((b[0] - a[0], k) for k, (a, b) in enumerate(itertools.pairwise(points)))
        rest = points[-1][0] - points[0][0] - gap
        if rest <= 0 or gap <= 10 * rest:  # two instants are no cluster and an outlier
            break
        left, right = points[: at + 1], points[at + 1:]
        counts = [(sum(stamp for _t, stamp in side), len(side)) for side in (left, right)]
        if not counts[0][0] or not counts[1][0]:
            break  # one side is group bounds only: keep it in view
        points = left if counts[0] >= counts[1] else right  # ties: the side with the groups
    return points[0][0], points[-1][0]


def distance(ns: int) -> str:
    """A readable distance: ``+1.0 y``, ``+243 s``, ``-43 y``."""
    size = abs(ns)
    sign = "+" if ns >= 0 else "-"
    for limit, unit in ((31_557_600 * 10**9, "y"), (86_400 * 10**9, "d"), (3_600 * 10**9, "h"),
                        (10**9, "s"), (10**6, "ms"), (10**3, "µs")):
        if size >= limit:
            return f"{sign}{size / limit:.3g} {unit}"
    return f"{sign}{size} ns"


def outcome_colour(timeline: Timeline, outcome: str, other: str = "#ff7f0e") -> str:
    """A settled mark's colour (PL-R14): grey when the outcome is normal for the
    timeline's algorithm (ApproximateTime's drops), a warm colour when it needs a look."""
    if timeline.algorithm is not None and reasons_of.normal(timeline.algorithm, outcome):
        return NORMAL_COLOUR
    return OUTCOME_COLOURS.get(outcome, other)


def _marker(mark: Mark, reasons: dict[tuple[str, str | None], str], colour: str
            ) -> dict[str, Any]:
    """Matplotlib style of a mark that is not grouped."""
    if mark.outcome in ("pending", OPEN):
        edge = "black" if mark.outcome == "pending" else "#999999"
        return {"marker": "o", "markerfacecolor": "white", "markeredgecolor": edge}
    key = (mark.outcome, mark.reason)
    if key not in reasons:
        reasons[key] = REASON_MARKERS[len(reasons) % len(REASON_MARKERS)]
    return {"marker": reasons[key], "markerfacecolor": colour, "markeredgecolor": colour}


def _staggered(xs: Sequence[float], widths: Sequence[float],
               levels: int = 4) -> list[int | None]:
    """A level per label so that no two labels overlap (PL-D1, PL-R21): each label is
    centred on its x and ``widths`` wide and goes to the lowest level where it clears the
    labels already placed there; a label that clears none is left out (None), since
    labels written over each other (the event-time batcher's windows, one per key and
    first arrival, crowd a timeline) can be read as none of them."""
    placed: list[list[tuple[float, float]]] = [[] for _ in range(levels)]
    chosen: list[int | None] = []
    for x, width in zip(xs, widths, strict=True):
        left, right = x - width / 2, x + width / 2
        free = [k for k in range(levels)
                if all(right <= a or b <= left for a, b in placed[k])]
        level = free[0] if free else None
        if level is not None:
            placed[level].append((left, right))
        chosen.append(level)
    return chosen


def stacked(marks: Sequence[Mark], scale: Scale, row: dict[str, int],
            distance: float) -> list[tuple[float, bool]]:
    """The y of each mark (PL-D4): its lane's row, except that marks of one lane lying
    closer together than ``distance`` on the axis (the same stamp, or a few ns apart on an
    axis of seconds) are stacked across the lane, the first to arrive on top, so a mark is
    never hidden under another. Each mark's (y, whether it is stacked)."""
    ys = [(float(row[m.lane]), False) for m in marks]
    lanes: dict[str, list[int]] = {}
    for position, mark in enumerate(marks):
        lanes.setdefault(mark.lane, []).append(position)
    for positions in lanes.values():
        positions.sort(key=lambda k: (scale(marks[k].stamp), k))
        clusters: list[list[int]] = []
        for k in positions:
            x = scale(marks[k].stamp)
            if clusters and x - scale(marks[clusters[-1][-1]].stamp) <= distance:
                clusters[-1].append(k)
            else:
                clusters.append([k])
        for cluster in clusters:
            if len(cluster) < 2:
                continue
            cluster.sort()  # arrival order: the first on top
            step = min(STACK_STEP, 0.6 / (len(cluster) - 1))
            for place, k in enumerate(cluster):
                ys[k] = (ys[k][0] + ((len(cluster) - 1) / 2 - place) * step, True)
    return ys


def _off_scale(ax: Axes, marks: Sequence[Mark], bounds: tuple[int, int],
               row: dict[str, int], per_point: float) -> None:
    """Marks outside the view: one arrow per lane and side, with how far they lie. The axis
    is widened on that side by the width of the text, so the text lies between the last
    mark drawn and the arrow instead of over the marks."""
    sides: dict[tuple[str, bool], list[int]] = {}
    for mark in marks:
        ahead = mark.stamp > bounds[1]
        sides.setdefault((mark.lane, ahead), []).append(
            mark.stamp - bounds[1] if ahead else mark.stamp - bounds[0])
    texts: dict[tuple[str, bool], str] = {}
    for key, offsets in sides.items():
        near, far = min(offsets, key=abs), max(offsets, key=abs)
        texts[key] = (distance(near) if near == far
                      else f"{len(offsets)}× {distance(near)}…{distance(far)}")
    low, high = ax.get_xlim()
    for ahead in (False, True):
        longest = max((len(t) for (_lane, side), t in texts.items() if side == ahead), default=0)
        if longest:
            room = (longest * LABEL_SIZE * CHAR_WIDTH + 14) * per_point
            low, high = (low, high + room) if ahead else (low - room, high)
    ax.set_xlim(low, high)
    for (lane, ahead), text in texts.items():
        ax.annotate(text, (high if ahead else low, row[lane]), xytext=(-8 if ahead else 8, 0),
                    textcoords="offset points", ha="right" if ahead else "left", va="center",
                    fontsize=LABEL_SIZE, color="#444444")
        ax.plot([high if ahead else low], [row[lane]], marker=">" if ahead else "<",
                color="#444444", markersize=6, clip_on=False, zorder=4)


def _lanes(ax: Axes, timeline: Timeline, scale: Scale, size: float,
           bounds: tuple[int, int], axis_points: float) -> list[Any]:
    """The lane axes: slots, spans, set lines, marks; returns the legend handles.
    ``axis_points`` is the width of the axis in points (for label extents)."""
    row = {lane: len(timeline.lanes) - 1 - k for k, lane in enumerate(timeline.lanes)}
    grid_x: list[float] = []
    grid_y: list[float] = []
    for slots in timeline.slots:  # PL-R3: faint, behind everything; one path for all
        y = row[slots.lane]
        for instant in slots.instants:
            x = scale(instant)
            grid_x += [x, x, math.nan]
            grid_y += [y - 0.32, y + 0.32, math.nan]
    if grid_x:
        ax.plot(grid_x, grid_y, color="#d0d0d0", linewidth=0.7, zorder=0)
    low, high = bounds
    shown = [m for m in timeline.marks if low <= m.stamp <= high]
    width = ax.get_xlim()[1] - ax.get_xlim()[0]
    places = stacked(shown, scale, row, width * STACK_DISTANCE)
    at = {id(m): y for m, (y, _) in zip(shown, places, strict=True)}
    aside = {id(m) for m, (_, moved) in zip(shown, places, strict=True) if moved}
    by_id = {m.id: m for m in timeline.marks}
    for position, span in enumerate(timeline.groups):
        colour = PALETTE[position % len(PALETTE)]
        left, right = scale(span.start), scale(span.end)
        style: dict[str, Any] = {"zorder": 1}
        if not span.ids:  # an empty batch: an outline only
            style.update(fill=False, hatch="///", edgecolor="#999999", linewidth=0.6)
        else:
            style.update(color=SHADES[position % 2], alpha=0.12, linewidth=0)
        if right > left:
            ax.axvspan(left, right, **style)
        else:
            ax.axvline(left, color=colour, alpha=0.35, linewidth=1.2, zorder=1)
        members = [by_id[i] for i in span.ids
                   if i in by_id and bounds[0] <= by_id[i].stamp <= bounds[1]]
        if len(members) > 1 and len({m.lane for m in members}) == len(members):
            members.sort(key=lambda m: row[m.lane])
            ax.plot([scale(m.stamp) for m in members], [at[id(m)] for m in members],
                    color=colour, linewidth=1.0, alpha=0.8, zorder=2)
    reasons: dict[tuple[str, str | None], str] = {}
    points: dict[tuple[tuple[str, Any], ...], tuple[list[float], list[float]]] = {}
    _off_scale(ax, [m for m in timeline.marks if not low <= m.stamp <= high], bounds, row,
               width / axis_points)
    for mark in shown:  # one line object per style keeps the SVG small
        if mark.outcome == GROUPED and mark.group is not None:
            colour = PALETTE[mark.group % len(PALETTE)]
            style = {"marker": "o", "markerfacecolor": colour, "markeredgecolor": colour}
        else:
            style = _marker(mark, reasons, outcome_colour(timeline, mark.outcome))
        xs, ys = points.setdefault(tuple(style.items()), ([], []))
        xs.append(scale(mark.stamp))
        ys.append(at[id(mark)])
    for style_items, (xs, ys) in points.items():
        ax.plot(xs, ys, linestyle="none", markersize=size, zorder=3, **dict(style_items))
    _labels(ax, timeline, shown, at, aside, scale, axis_points)
    ax.set_yticks(range(len(timeline.lanes)), list(reversed(timeline.lanes)))
    ax.set_ylim(-0.7, len(timeline.lanes) - 0.2)
    ax.grid(axis="x", color="#eeeeee", linewidth=0.6)
    ax.set_axisbelow(True)
    return _legend(timeline, reasons)


def _labels(ax: Axes, timeline: Timeline, shown: Sequence[Mark], at: dict[int, float],
            aside: set[int], scale: Scale, axis_points: float) -> None:
    """Ids beside their marks and group numbers on top, when few enough (PL-D1). A label
    is as wide as its text; labels of one lane are raised to the level where they clear
    their neighbours; a stacked mark (PL-D4) is labelled on its right, at its own height."""
    low, high = ax.get_xlim()
    per_point = (high - low) / axis_points

    def extent(text: str) -> float:
        return (len(text) * LABEL_SIZE * CHAR_WIDTH + 4) * per_point

    if len(timeline.marks) <= LABEL_LIMIT:
        for lane in timeline.lanes:
            marks = sorted((m for m in shown if m.lane == lane), key=lambda m: m.stamp)
            alone = [m for m in marks if id(m) not in aside]
            for mark in marks:
                if id(mark) in aside:
                    ax.annotate(mark.id, (scale(mark.stamp), at[id(mark)]), xytext=(6, 0),
                                textcoords="offset points", ha="left", va="center",
                                fontsize=LABEL_SIZE, color="#333333")
            xs = [scale(m.stamp) for m in alone]
            levels = _staggered(xs, [extent(m.id) for m in alone])
            for mark, x, level in zip(alone, xs, levels, strict=True):
                if level is None:  # PL-R21: no room; never written over another
                    continue
                ax.annotate(mark.id, (x, at[id(mark)]), xytext=(0, 7 + 8 * level),
                            textcoords="offset points", ha="center", fontsize=LABEL_SIZE,
                            color="#333333")
    if len(timeline.groups) <= GROUP_LABEL_LIMIT:
        xs = [(scale(g.start) + scale(g.end)) / 2 for g in timeline.groups]
        top = len(timeline.lanes) - 0.2
        levels = _staggered(xs, [extent(f"#{g.seq}") for g in timeline.groups])
        for group, x, level in zip(timeline.groups, xs, levels, strict=True):
            if level is None:  # PL-R21
                continue
            ax.annotate(f"#{group.seq}", (x, top), xytext=(0, -9 - 8 * level),
                        textcoords="offset points", ha="center", fontsize=LABEL_SIZE,
                        color="#555555")


def _legend(timeline: Timeline, reasons: dict[tuple[str, str | None], str]) -> list[Any]:
    handles: list[Any] = []
    if any(m.outcome == GROUPED for m in timeline.marks):
        handles.append(Line2D([], [], marker="o", linestyle="none", color=PALETTE[0],
                              label="grouped (colour = group)"))
    if any(g.ids for g in timeline.groups):
        handles.append(Patch(color=SHADES[0], alpha=0.25, label="group window"))
    if any(not g.ids for g in timeline.groups):  # drawn hatched, as an outline (PL-R11)
        handles.append(Patch(fill=False, hatch="///", edgecolor="#999999", linewidth=0.6,
                             label="empty window (no message)"))
    for (outcome, reason), marker in reasons.items():
        colour = outcome_colour(timeline, outcome)
        handles.append(Line2D([], [], marker=marker, linestyle="none", color=colour,
                              label=f"{outcome}: {reason}" if reason else outcome))
    for outcome, edge, text in (("pending", "black", "pending at end"),
                                (OPEN, "#999999", "not settled yet")):
        if any(m.outcome == outcome for m in timeline.marks):
            handles.append(Line2D([], [], marker="o", linestyle="none", markerfacecolor="white",
                                  markeredgecolor=edge, label=text))
    if timeline.slots:
        handles.append(Line2D([], [], color="#d0d0d0", label="slot grid"))
    return handles


def _arrivals(ax: Axes, timeline: Timeline, scale: Scale, bounds: tuple[int, int]
              ) -> list[Any]:
    """Arrival against event time: late data sits high above the others (PL-R4)."""
    values = [m.arrival for m in timeline.marks if m.arrival is not None]
    values += [g.at for g in timeline.groups if g.at is not None]
    index = timeline.arrival == ARRIVAL_INDEX
    yscale = Scale([0]) if index else Scale(values)
    label = "input #" if index else yscale.label("arrival")
    if not index and yscale.origin and (yscale.unit, bool(scale.origin)) == (scale.unit, True):
        yscale, label = scale, f"arrival ({scale.unit}, same origin)"  # a shorter label
    points: dict[str, tuple[list[float], list[float]]] = {}
    for mark in timeline.marks:
        if mark.arrival is None or not bounds[0] <= mark.stamp <= bounds[1]:
            continue
        colour = (PALETTE[mark.group % len(PALETTE)] if mark.group is not None
                  else "#999999" if mark.outcome in ("pending", OPEN)
                  else outcome_colour(timeline, mark.outcome, "#999999"))
        xs, ys = points.setdefault(colour, ([], []))
        xs.append(scale(mark.stamp))
        ys.append(yscale(mark.arrival))
    for colour, (xs, ys) in points.items():
        ax.plot(xs, ys, marker=".", linestyle="none", color=colour, markersize=4)
    emitted = [g for g in timeline.groups
               if g.at is not None and bounds[0] <= g.end <= bounds[1]]
    ax.plot([scale(g.end) for g in emitted], [yscale(g.at) for g in emitted if g.at is not None],
            marker="_", linestyle="none", color="black", markersize=7)
    ax.set_ylabel(label, fontsize=8)
    if index:
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        if len(set(values)) == 1:  # one input: whole numbers around it, not ±0.05
            ax.set_ylim(values[0] - 0.5, values[0] + 0.5)
            ax.set_yticks([values[0]])
    ax.grid(color="#eeeeee", linewidth=0.6)
    if not emitted:
        return []
    return [Line2D([], [], marker="_", linestyle="none", color="black",
                   label="group emitted (at its end, by arrival)")]


def _bounds(timelines: Sequence[Timeline]) -> tuple[tuple[int, int], list[int]]:
    """The event-time view of one or more timelines (one scale for pictures side by side)."""
    bounds = view((m.stamp for t in timelines for m in t.marks),
                  (x for t in timelines for g in t.groups for x in (g.start, g.end)))
    times = [*bounds, *(x for t in timelines for g in t.groups for x in (g.start, g.end)
                        if bounds[0] <= x <= bounds[1])]
    return bounds, times


def _heights(timeline: Timeline, strip: bool) -> list[float]:
    lanes_height = 0.9 + 0.42 * max(len(timeline.lanes), 1)
    return [lanes_height, 1.3] if strip else [lanes_height]


def _draw(parent: Any, timeline: Timeline, strip: bool, width: float,
          view_of: Sequence[Timeline] = ()) -> list[Any]:
    """Draw ``timeline`` into a figure or subfigure, on the scale of ``view_of`` (itself by
    default); return its legend handles."""
    bounds, times = _bounds(view_of or [timeline])
    scale = Scale(times, timeline.origin)
    count = len(timeline.marks)
    size = 7.0 if count <= 60 else 5.0 if count <= 200 else 3.5
    heights = _heights(timeline, strip)
    axes = parent.subplots(len(heights), 1, sharex=True, squeeze=False,
                           gridspec_kw={"height_ratios": heights})[:, 0]
    main = axes[0]
    main.set_xlim(*_limits([scale(t) for t in times]))
    handles = _lanes(main, timeline, scale, size, bounds, (width - AXIS_MARGIN) * 72)
    main.set_title(timeline.title, loc="left")
    if timeline.zoom is not None:  # PL-R18: where the enlarged panel below looks
        main.axvspan(scale(timeline.zoom[0]), scale(timeline.zoom[1]), fill=False,
                     linestyle="--", edgecolor="#444444", linewidth=0.8, zorder=5)
    if strip:
        handles += _arrivals(axes[1], timeline, scale, bounds)
    axes[-1].set_xlabel(scale.label("event time"))
    if scale.unit == "ns":  # no fractions of a nanosecond on the axis
        axes[-1].xaxis.set_major_locator(MaxNLocator(integer=True))
    for note in timeline.notes:
        main.text(1.0, 1.02, note, transform=main.transAxes, ha="right", fontsize=7,
                  color="#555555")
    return handles


def _figure_legend(fig: Figure, handles: Sequence[Any]) -> None:
    if handles:
        fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 4),
                   frameon=False)


def figure(timeline: Timeline, strip: bool = True, width: float = 10.0) -> Figure:
    """The picture of ``timeline``; ``strip`` adds the arrival strip (PL-R4), a zoom window
    an enlarged panel of it (PL-R18), flags that are set a strip of them (PL-R20)."""
    height = sum(_heights(timeline, strip))
    panels = _panels(timeline)
    fig = Figure(figsize=(width, height + sum(h for h, _ in panels) + 1.2),
                 layout="constrained")
    if not panels:
        _figure_legend(fig, _draw(fig, timeline, strip, width))
        return fig
    parts = fig.subfigures(1 + len(panels), 1, height_ratios=[height, *(h for h, _ in panels)])
    handles = {str(h.get_label()): h for h in _draw(parts[0], timeline, strip, width)}
    for sub, (_height, panel) in zip(parts[1:], panels, strict=True):
        for handle in panel(sub, width):
            handles.setdefault(str(handle.get_label()), handle)
    _figure_legend(fig, list(handles.values()))
    return fig


Panel = Callable[[Any, float], list[Any]]


def _panels(timeline: Timeline) -> list[tuple[float, Panel]]:
    """The panels drawn below the timeline, with their heights: the zoom window (PL-R18),
    then the flags when one is set at some input (PL-R20)."""
    found: list[tuple[float, Panel]] = []
    if timeline.zoom is not None:
        found.append((0.9 + 0.42 * max(len(timeline.lanes), 1),
                      lambda parent, width: _zoom(parent, timeline, width)))
    if any(f.on for row in timeline.flags for f in row.flags):
        rows = len({(f.lane, f.name) for row in timeline.flags for f in row.flags})
        found.append((0.8 + 0.25 * rows,
                      lambda parent, width: _flag_strip(parent, timeline.flags,
                                                        timeline.arrival)))
    return found


def _zoom(parent: Any, timeline: Timeline, width: float) -> list[Any]:
    """PL-R18: the lanes again over the zoom window only, on a scale of their own; the
    window is the dashed box of the lanes above."""
    assert timeline.zoom is not None
    low, high = timeline.zoom
    inside = attrs.evolve(timeline, marks=tuple(m for m in timeline.marks
                                                if low <= m.stamp <= high))
    scale = Scale([low, high])
    ax = parent.subplots()
    ax.set_xlim(scale(low), scale(high))
    count = len(inside.marks)
    size = 7.0 if count <= 60 else 5.0 if count <= 200 else 3.5
    handles = _lanes(ax, inside, scale, size, (low, high), (width - AXIS_MARGIN) * 72)
    ax.set_title(f"enlarged: event time {scale(low):g} to {scale(high):g} {scale.unit} "
                 "(the dashed box above)", loc="left", fontsize=9)
    ax.set_xlabel(scale.label("event time"))
    if scale.unit == "ns":
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    return handles


def _flag_strip(parent: Any, rows: Sequence[Flags], arrival: str) -> list[Any]:
    """PL-R20: each flag of the machine's state after each input, as the descriptor
    reports it (``Algorithm.pictures.flags_of``): filled where set, hollow where clear."""
    names: list[tuple[str, str]] = []
    for row in rows:
        for flag in row.flags:
            if (flag.lane, flag.name) not in names:
                names.append((flag.lane, flag.name))
    level = {name: len(names) - 1 - k for k, name in enumerate(names)}
    index = arrival == ARRIVAL_INDEX
    scale = Scale([0]) if index else Scale([row.at for row in rows])
    ax = parent.subplots()
    shown: dict[bool, tuple[list[float], list[float]]] = {True: ([], []), False: ([], [])}
    for row in rows:
        for flag in row.flags:
            xs, ys = shown[flag.on]
            xs.append(scale(row.at))
            ys.append(level[(flag.lane, flag.name)])
    style: dict[bool, dict[str, Any]] = {
        True: {"markerfacecolor": FLAG_COLOUR, "markeredgecolor": FLAG_COLOUR},
        False: {"markerfacecolor": "white", "markeredgecolor": "#999999"}}
    for on, (xs, ys) in shown.items():
        if xs:
            ax.plot(xs, ys, marker="s", linestyle="none", markersize=6, **style[on])
    ax.set_yticks(range(len(names)), [f"{lane}: {name}" for lane, name in reversed(names)])
    ax.set_ylim(-0.6, len(names) - 0.4)
    ax.set_xlabel("after input #" if index else scale.label("after the input at"))
    if index:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("the state's flags after each input", loc="left", fontsize=9)
    ax.grid(axis="x", color="#eeeeee", linewidth=0.6)
    return [Line2D([], [], marker="s", linestyle="none", label="flag set", **style[True]),
            Line2D([], [], marker="s", linestyle="none", label="flag clear", **style[False])]


def side_by_side(left: Timeline, right: Timeline, strip: bool = True,
                 width: float = 12.0, above: bool = False) -> Figure:
    """Two timelines of one trace side by side on one event-time scale, one legend (PL-R11):
    what ``timealign diff`` shows of each difference; with ``above``, ``left`` above
    ``right`` at full width: a saved conformance difference, expected over observed
    (PL-R16)."""
    heights = (sum(_heights(left, strip)), sum(_heights(right, strip)))
    height = (sum(heights) if above else max(heights)) + 1.2
    fig = Figure(figsize=(width, height), layout="constrained")
    handles: dict[str, Any] = {}
    parts = fig.subfigures(2, 1, height_ratios=heights) if above else fig.subfigures(1, 2)
    for sub, timeline in zip(parts, (left, right), strict=True):
        for handle in _draw(sub, timeline, strip, width if above else width / 2,
                            (left, right)):
            handles.setdefault(str(handle.get_label()), handle)
    _figure_legend(fig, list(handles.values()))
    return fig


def _limits(xs: Sequence[float]) -> tuple[float, float]:
    low, high = (min(xs), max(xs)) if xs else (0.0, 1.0)
    pad = (high - low) * 0.04 or 1.0
    return low - pad, high + pad


def render(timeline: Timeline, fmt: str = "svg", strip: bool = True,
           width: float = 10.0) -> bytes:
    """The picture as SVG or PNG bytes; the same timeline gives the same SVG bytes, so the
    spec's figures can be compared with a fresh rendering (PL-R5, PL-R8)."""
    if fmt not in FORMATS:
        raise InvalidInput("format", "PL-R5", f"must be one of {FORMATS}", fmt)
    with rc_context(SETTINGS):
        return _saved(figure(timeline, strip, width), fmt)


def _saved(fig: Figure, fmt: str) -> bytes:
    buffer = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    fig.savefig(buffer, format=fmt, metadata=metadata)
    return buffer.getvalue()


def render_side_by_side(left: Timeline, right: Timeline, fmt: str = "svg",
                        width: float = 12.0, strip: bool = True, above: bool = False) -> bytes:
    """:func:`side_by_side` as SVG or PNG bytes, the same bytes for the same timelines."""
    if fmt not in FORMATS:
        raise InvalidInput("format", "PL-R5", f"must be one of {FORMATS}", fmt)
    with rc_context(SETTINGS):
        return _saved(side_by_side(left, right, strip, width, above), fmt)
