"""What the Spark jobs must produce, computed without Spark (SP-I2).

Each source's rows are read straight from the Parquet files with pyarrow, put in
(arrival, file path, row position) order (SP-R2), driven per spec/drivers.md, and the
resulting input list is folded by ``timealign.iter_outputs``; the outputs are accounted the way
spec/spark.md says. The Spark tables must equal this, row for row.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

import timealign
from timealign.algorithm import Algorithm, Grouped, Record
from timealign.drive import drive
from timealign.spark.outcomes import with_members

Groups = list[tuple[Any, ...]]
Outcomes = list[tuple[Any, ...]]


def source_records(folder: Path) -> dict[str, list[Record]]:
    """Every source's rows in replay order (SP-R2)."""
    keyed: dict[str, list[tuple[tuple[int, str, int], Record]]] = defaultdict(list)
    for path in sorted(folder.glob("*.parquet"), key=lambda p: p.resolve().as_uri()):
        table = pq.read_table(path).to_pylist()
        for position, row in enumerate(table):
            record = Record(row["id"], row["topic"], row["stamp"], row["arrival"],
                            row.get("kind"), row.get("poll"))
            keyed[row["source"]].append(((row["arrival"], path.resolve().as_uri(), position),
                                         record))
    return {source: [r for _, r in sorted(rows, key=lambda x: x[0])]
            for source, rows in keyed.items()}


def table(columns: dict[str, list[Any]], name: str) -> list[dict[str, Any]]:
    """The rows of one output table (``groups``/``outcomes``) in a SourceRun's columns,
    the outcomes of grouped messages derived from their groups (SP-R5)."""
    columns = with_members(columns)
    keys = list(columns)
    return [dict(zip(keys, values, strict=True)) for values in zip(*columns.values(), strict=True)
            if values[0] == name]


def inputs_of(algorithm: Algorithm[Any, Any, Any, Any], config: Any,
              records: list[Record]) -> list[Any]:
    """The machine inputs the driver delivers for one source (rows, ticks, end)."""
    return [item for _, item, _ in drive(algorithm, config, records)]


def expected_tables(algorithm: Algorithm[Any, Any, Any, Any], config: Any,
                    folder: Path) -> tuple[Groups, Outcomes]:
    """Sorted (source, seq, ids, start, end, input) and (source, id, outcome, seq, reason,
    input) rows, from ``timealign.iter_outputs`` of each source's driven inputs."""
    return expected_of_records(algorithm, config, source_records(folder))


def expected_of_records(algorithm: Algorithm[Any, Any, Any, Any], config: Any,
                        by_source: dict[str, list[Record]]) -> tuple[Groups, Outcomes]:
    """The same from each source's records in replay order (any reader, e.g. bags)."""
    groups: Groups = []
    outcomes: Outcomes = []
    for source, records in by_source.items():
        seq = 0
        inputs = inputs_of(algorithm, config, records)
        for index, output in timealign.iter_outputs(algorithm, config, inputs):
            account = algorithm.accounting.account(output)
            if isinstance(account, Grouped):
                groups.append((source, seq, list(account.ids), account.start, account.end,
                               index))
                outcomes.extend((source, i, "grouped", seq, None, index) for i in account.ids)
                seq += 1
            elif account is not None:
                outcomes.append((source, account.id, account.outcome, None, account.reason,
                                 index))
    return sorted(groups), sorted(outcomes, key=repr)


def spark_tables(groups: Any, outcomes: Any) -> tuple[Groups, Outcomes]:
    """The same shape from the Spark output tables (DataFrames)."""
    got_groups = sorted(
        (r["source"], r["seq"], list(r["ids"]), r["start"], r["end"], r["input"])
        for r in groups.collect())
    got_outcomes = sorted(
        ((r["source"], r["id"], r["outcome"], r["seq"], r["reason"], r["input"])
         for r in outcomes.collect()), key=repr)
    return got_groups, got_outcomes
