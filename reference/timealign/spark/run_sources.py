"""The sources of a finished run, read from its local outcomes table without Spark, so a
command can check a ``--source`` before Spark starts (PL-R17)."""

from __future__ import annotations

from pathlib import Path

from timealign.errors import InvalidInput


def check_source(run: str, source: str) -> None:
    """PL-R17: ``--source`` must be a source of the run, checked from its local outcomes
    table (its ``source`` column, read with pyarrow) before Spark starts: an unknown source
    was said after 73 s of Spark work. A remote run is left to the picture's own check."""
    if "://" in run:
        return
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    try:
        table = ds.dataset(Path(run) / "outcomes", format="parquet",
                           partitioning="hive").to_table(columns=["source"])
    except (OSError, ValueError):
        return  # not readable here: Spark reads it and names what is wrong
    known = sorted(str(s) for s in pc.unique(table.column("source")).to_pylist())
    if source not in known:
        shown = ", ".join(repr(s) for s in known[:20]) + (" …" if len(known) > 20 else "")
        raise InvalidInput("--source", "PL-R17", f"the run has no source {source!r}; its "
                           f"{len(known)} sources: {shown}", source)
