"""Publishing the batch job's tables only once the job has succeeded (SP-R21).

The tables are written to hidden staging siblings (``output/.groups-staging-<token>``;
Spark and most readers skip names that start with a dot), reconciled there, and only then
moved into place: the previous table, if any, is renamed aside, the staged one renamed to
its name, and the old one deleted. A job that fails before the move leaves the previous
tables exactly as they were and removes its staging folders. Moves go through the Hadoop
file system of the session, so the same code serves local folders and cluster stores.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

import attrs
from pyspark.sql import SparkSession


@attrs.frozen
class Staging:
    """Where one run writes its tables before they are published."""

    output: str
    token: str = attrs.field(factory=lambda: uuid.uuid4().hex[:12])

    def path(self, table: str) -> str:
        return f"{self.output.rstrip('/')}/.{table}-staging-{self.token}"

    def final(self, table: str) -> str:
        return f"{self.output.rstrip('/')}/{table}"

    def aside(self, table: str) -> str:
        return f"{self.output.rstrip('/')}/.{table}-previous-{self.token}"


def _fs(spark: SparkSession, path: str) -> tuple[Any, Any]:
    """The Hadoop file system holding ``path`` and a function making Hadoop paths."""
    jvm: Any = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    make = jvm.org.apache.hadoop.fs.Path
    return make(path).getFileSystem(conf), make


def publish(spark: SparkSession, staging: Staging, tables: Iterable[str]) -> None:
    """Move every staged table into place (previous tables are replaced, then deleted)."""
    fs, make = _fs(spark, staging.output)
    for table in tables:
        final, aside = make(staging.final(table)), make(staging.aside(table))
        if fs.exists(final) and not fs.rename(final, aside):
            raise OSError(f"cannot move {staging.final(table)} aside to publish the new table")
        if not fs.rename(make(staging.path(table)), final):
            raise OSError(f"cannot move {staging.path(table)} to {staging.final(table)}")
        fs.delete(aside, True)


def discard(spark: SparkSession, staging: Staging, tables: Iterable[str]) -> None:
    """Remove the staging folders of a failed run (the published tables are untouched)."""
    fs, make = _fs(spark, staging.output)
    for table in tables:
        fs.delete(make(staging.path(table)), True)
