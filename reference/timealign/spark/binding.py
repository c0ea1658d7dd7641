"""A stream's checkpoint is bound to the algorithm and config that wrote it (SP-R24).

Spark's checkpoint holds each source's machine state, encoded for one algorithm and one
config; resuming it with reordered topics or another ``queue_size`` would silently change
what the state means (or crash inside the machine). So the first start writes
``CHECKPOINT/timealign.json``: the algorithm, its config as canonical JSON and the state
codec's version; every restart compares and stops (exit 2) naming what differs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from timealign import jsontext
from timealign.algorithm import Algorithm
from timealign.outputs import CHECKPOINT_BINDING
from timealign.spark.checkpoint_codec import VERSION, canonical_config
from timealign.spark.paths import PathError
from timealign.spark.publish import hadoop_fs

NAME = CHECKPOINT_BINDING
FORMAT = "timealign.checkpoint/1"
RULE = "SP-R24"


def binding(algorithm: Algorithm[Any, Any, Any, Any], config: Any) -> dict[str, Any]:
    return {"format": FORMAT, "algorithm": algorithm.name,
            "config": canonical_config(algorithm, config), "codec": VERSION}


def differences(stored: Any, wanted: dict[str, Any]) -> list[str]:
    """What differs between a stored binding and the wanted one, in words."""
    if not isinstance(stored, dict) or stored.get("format") != FORMAT:
        return [f"{NAME} is not a {FORMAT} binding"]
    found = []
    for key in ("algorithm", "codec"):
        if stored.get(key) != wanted[key]:
            found.append(f"{key}: checkpoint {stored.get(key)!r}, now {wanted[key]!r}")
    if stored.get("config") != wanted["config"]:
        try:
            old, new = json.loads(stored["config"]), json.loads(wanted["config"])
            found.extend(f"config.{k}: checkpoint {old.get(k)!r}, now {new.get(k)!r}"
                         for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k))
        except (TypeError, ValueError, AttributeError):
            found.append(f"config: checkpoint {stored.get('config')!r}, now {wanted['config']}")
    return found


def _refuse_irregular(checkpoint: str) -> None:
    """VEC-R16: a local checkpoint's binding must be a regular file when present (a FIFO
    there would block the restart forever)."""
    if "://" in checkpoint and not checkpoint.startswith("file:"):
        return
    local = Path(checkpoint.removeprefix("file://").removeprefix("file:")) / NAME
    if (local.exists() or local.is_symlink()) and not local.is_file():
        raise PathError("checkpoint", "VEC-R16", [
            f"holds a {NAME} that is not a regular file; use a new checkpoint folder"],
            checkpoint)


def bind(spark: SparkSession, checkpoint: str, algorithm: Algorithm[Any, Any, Any, Any],
         config: Any) -> None:
    """Write the binding on a first start; on a restart, raise :class:`PathError`
    (exit 2) when the algorithm, config or codec version differ, or when the checkpoint
    holds a stream but no binding (written by another program or an older version)."""
    _refuse_irregular(checkpoint)  # VEC-R16: before Hadoop opens it
    jvm: Any = spark.sparkContext._jvm
    fs, make = hadoop_fs(spark, checkpoint)
    path = make(f"{checkpoint.rstrip('/')}/{NAME}")
    wanted = binding(algorithm, config)
    if fs.exists(path):
        stream = fs.open(path)
        try:
            text = bytes(jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
        finally:
            stream.close()
        try:
            stored = jsontext.loads(text)  # size and depth bounded first (VEC-R11)
        except ValueError:
            stored = None
        changed = differences(stored, wanted)
        if changed:
            raise PathError("checkpoint", RULE, [
                "was written for another configuration (" + "; ".join(changed) + "); resume "
                "with the same algorithm and config, or start a new checkpoint folder"],
                checkpoint)
        return
    if fs.exists(make(f"{checkpoint.rstrip('/')}/offsets")):
        raise PathError("checkpoint", RULE, [
            f"holds a stream but no {NAME}: it was not written by this version of timealign; "
            "use a new checkpoint folder"], checkpoint)
    out = fs.create(path, True)
    try:
        out.write(bytearray(json.dumps(wanted, indent=1).encode()))
    finally:
        out.close()
