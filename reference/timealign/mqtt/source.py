"""The ``timealign_mqtt`` Spark data source: a spool as a stream (PySpark's Python data
source API; spec/mqtt.md MQ-R8).

Offsets are spool positions: a micro-batch ends just after the last tick spooled (the
receiver spools a tick once per trigger interval, MQ-R6), so every micro-batch carries its
ticks and a re-run of the spool cuts it alike. Spark's checkpoint keeps the last committed
offset: a restart continues there.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.types import StructType

from timealign import registry
from timealign.mqtt.rows import DDL, RowCheck, SpoolRow, row_check, spool_rows
from timealign.mqtt.spool import Tick, entries_between, read_entries
from timealign.spark.failures import marked

NAME = "timealign_mqtt"


class SpoolPartition(InputPartition):
    """The spool positions ``start <= p < end`` (picklable)."""

    def __init__(self, start: int, end: int) -> None:
        super().__init__((start, end))
        self.start, self.end = start, end


def rows_of(path: Path, start: int, end: int, check: RowCheck | None = None
            ) -> Iterator[SpoolRow]:
    """MQ-R8: the rows of positions ``start <= p < end`` (the earlier entries name the
    sources a tick reaches; MQ-R5: a spool cut behind the stream is refused; MQ-R2: with
    ``check``, a measurement the algorithm refuses is a ``not`` row)."""
    return spool_rows(entries_between(path, 0, end), start, check)


def checked_by(options: Any) -> RowCheck | None:
    """MQ-R2: the row check of the stream's algorithm and config, given to the data source
    as the options ``algorithm`` and ``config`` (JSON); none without them."""
    name, config = options.get("algorithm"), options.get("config")
    if name is None or config is None:
        return None
    algorithm = registry.get(str(name))
    return row_check(algorithm, algorithm.codec.config_from_json(json.loads(str(config))))


class SpoolStreamReader(DataSourceStreamReader):
    def __init__(self, path: Path, options: Any = None) -> None:
        self.path = path
        self.options = dict(options or {})

    def initialOffset(self) -> dict[str, Any]:
        return {"position": 0}

    def latestOffset(self, start: dict[str, Any] | None = None,
                     limit: Any = None) -> dict[str, Any]:
        with marked("", plain=True):
            entries, _ = read_entries(self.path)
        ticks = [e.position for e in entries if isinstance(e, Tick)]
        return {"position": ticks[-1] + 1 if ticks else 0}

    def partitions(self, start: dict[str, Any], end: dict[str, Any]
                   ) -> Sequence[InputPartition]:
        first, last = int(start["position"]), int(end["position"])
        return [SpoolPartition(first, last)] if last > first else []

    def read(self, partition: InputPartition) -> Iterator[SpoolRow]:
        assert isinstance(partition, SpoolPartition)
        with marked("", plain=True):
            yield from rows_of(self.path, partition.start, partition.end,
                               checked_by(self.options))

    def commit(self, end: dict[str, Any]) -> None:
        pass


class SpoolDataSource(DataSource):
    """``format("timealign_mqtt").load(spool file)``: the rows of MQ-R8 (``rows.DDL``)."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        return DDL

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return SpoolStreamReader(Path(str(self.options.get("path"))), self.options)


def register(spark: Any) -> None:
    """Make ``format("timealign_mqtt")`` available in ``spark``."""
    spark.dataSource.register(SpoolDataSource)
