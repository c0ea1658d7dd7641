"""A slice of the test fleet written as Parquet, CSV and JSON lines with renamed columns."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq


def write_formats(fleet: Path, target: Path) -> dict[str, str]:
    table = pq.read_table(fleet).drop(["size", "kind", "poll"]).slice(0, 3000)
    renamed = table.rename_columns(["robot", "msg", "topic", "t_ns", "arrival"])
    (target / "parquet").mkdir(parents=True)
    pq.write_table(renamed, target / "parquet" / "part.parquet")
    renamed.to_pandas().to_csv(target / "data.csv", index=False)
    renamed.to_pandas().to_json(target / "data.json", orient="records", lines=True)
    return {"parquet": str(target / "parquet"), "csv": str(target / "data.csv"),
            "json": str(target / "data.json")}
