"""The stream's rows of a spool (MQ-R8), and the spool re-run without Spark (MQ-R9). Pure.

Every spool entry becomes rows in spool order: a measurement message one row per series
(MQ-R4), a message that is not a measurement one ``not`` row with its reason (MQ-R2), a
tick one ``tick`` row per source seen before it (MQ-R6: each source's machine is told the
clock), a redelivery nothing (MQ-R7). The row's ``position`` is the spool position, the
input order of SP-R2.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from timealign.algorithm import Algorithm, Record
from timealign.drive import check_record
from timealign.errors import InvalidInput
from timealign.mqtt.spool import Again, Entry, Tick
from timealign.mqtt.thinedge import REFUSED, NotMeasurement, Row, message_id, read_message
from timealign.spark.outcomes import COLUMNS, SourceRun

ROW, TICK, NOT = "row", "tick", "not"
#: (what, source, id, topic, stamp, arrival, position, reason)
SpoolRow = tuple[str, str, str, str, int, int, int, str | None]
DDL = ("what string, source string, id string, topic string, stamp long, arrival long, "
       "position long, reason string")
#: Why the algorithm refuses a message's rows as rows, or ``None`` (MQ-R2, :func:`row_check`).
RowCheck = Callable[[list[Row]], str | None]
#: The longest reason a ``not`` row carries (the detail quotes names cut short already).
MAX_REASON = 400


def row_check(algorithm: Algorithm[Any, Any, Any, Any], config: Any) -> RowCheck:
    """MQ-R2: the rows of one measurement checked by the algorithm's own row form (DRV-R9,
    then its mapping of rows to inputs: approximate_time refuses a series outside its
    ``topics``, AT-D21). A row it refuses would stop the stream at every restart (the spool
    replays it); the message is a not-a-measurement outcome, reason ``refused``, instead."""
    def check(rows: list[Row]) -> str | None:
        records = [Record(r.id, r.topic, r.stamp, r.arrival) for r in rows]
        try:
            for record in records:
                check_record(record)
            for _ in algorithm.feeding.inputs_from_records(config, records):
                pass
        except InvalidInput as refused:
            return str(refused)
        return None

    return check


def spool_rows(entries: Iterable[Entry], start: int = 0, check: RowCheck | None = None
               ) -> Iterator[SpoolRow]:
    """MQ-R8: the rows of the entries at positions ``>= start``; the entries before it are
    read only for the sources they name (a tick reaches every source seen so far). With
    ``check`` (:func:`row_check`), a measurement the algorithm refuses is a ``not`` row."""
    sources: dict[str, None] = {}
    for entry in entries:
        shown = entry.position >= start
        if isinstance(entry, Tick):
            if shown:
                for source in sources:
                    yield (TICK, source, f"tick#{entry.position}", "", entry.at, entry.at,
                           entry.position, None)
            continue
        if isinstance(entry, Again):
            continue
        found = read_message(entry.topic, entry.payload, entry.position, entry.arrival)
        refused = None if check is None or isinstance(found, NotMeasurement) else check(found)
        if refused is not None:
            assert isinstance(found, list)
            found = NotMeasurement(found[0].source, message_id(entry.topic, entry.position),
                                   REFUSED, refused)
        if isinstance(found, NotMeasurement):
            if shown:
                yield (NOT, found.source, found.id, entry.topic, entry.arrival, entry.arrival,
                       entry.position, f"{found.reason}: {found.detail}"[:MAX_REASON])
            continue
        for row in found:
            sources[row.source] = None
            if shown:
                yield (ROW, row.source, row.id, row.topic, row.stamp, row.arrival,
                       entry.position, None)


def rerun(algorithm: Algorithm[Any, Any, Any, Any], config: Any, rows: Iterable[SpoolRow]
          ) -> tuple[dict[str, list[Any]], list[tuple[str, str, str]], list[tuple[str, str]]]:
    """MQ-R9: the spool's rows replayed through the reference as the stream replays them
    (each source's rows in spool order, a tick as the clock reaching its instant), every
    source still open at the end: (the combined output columns, the ``not`` rows as
    (source, id, reason), the (source, id) still held by a machine)."""
    runs: dict[str, SourceRun] = {}
    columns: dict[str, list[Any]] = {name: [] for name in COLUMNS}
    refused: list[tuple[str, str, str]] = []
    for what, source, ident, topic, stamp, arrival, _position, reason in rows:
        if what == NOT:
            refused.append((source, ident, reason or ""))
            continue
        run = runs.get(source)
        if run is None:
            run = runs[source] = SourceRun(algorithm, config, source, recent=())
        if what == TICK:
            run.fire_until(stamp)
        else:
            run.feed_all([Record(ident, topic, stamp, arrival)])
        for name, values in run.take().items():
            columns[name].extend(values)
    held = [(source, ident) for source, run in runs.items() for ident in run.open]
    return columns, refused, held
