"""``timealign verify OUT`` of an MQTT stream (MQ-R11): the spool re-run against the tables.

The stream's checkpoint names the spool and the last committed offsets; the spool up to
there is re-run (MQ-R9) and the written ``groups/``, ``outcomes/`` and ``not_measurements/``
must equal the re-run's, each id with exactly one outcome (or still held by a machine):
nothing lost, nothing twice. Read with pyarrow; no Spark job.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from timealign.algorithm import Algorithm
from timealign.errors import ConsistencyError, InvalidInput
from timealign.mqtt.rows import NOT, rerun, row_check, spool_rows
from timealign.mqtt.spool import read_entries, spool_path

MANIFEST = "_timealign_mqtt.json"


class SpoolVerificationError(ConsistencyError):
    """The written tables are not the spool's re-run (exit 3)."""


def committed_ends(checkpoint: Path) -> list[int]:
    """The spool positions the written tables may stop at: those of the last committed
    micro-batch and, when the stream stopped (Ctrl-C) after a micro-batch wrote its tables
    but before Spark committed it, those of the last planned one (one position per reader
    of the spool in the query), from Spark's ``commits/`` and ``offsets/`` logs."""
    ends: set[int] = set()
    for log in ("commits", "offsets"):
        done = [int(p.name) for p in (checkpoint / log).glob("*") if p.name.isdigit()]
        if not done:
            ends.add(0)
            continue
        lines = (checkpoint / "offsets" / str(max(done))).read_text().splitlines()[2:]
        ends |= {int(json.loads(line)["position"]) for line in lines if line.strip()}
    return sorted(ends)


def _table(output: Path, name: str) -> list[dict[str, Any]]:
    folder = output / name
    if not folder.is_dir():
        return []
    rows: list[dict[str, Any]] = pq.read_table(folder).to_pylist()
    return rows


def verify_spool(algorithm: Algorithm[Any, Any, Any, Any], config: Any, output: str,
                 checkpoint: str) -> dict[str, int]:
    """MQ-R11: raise :class:`SpoolVerificationError` unless the tables are the re-run."""
    entries, _ = read_entries(spool_path(checkpoint))
    ends = committed_ends(Path(checkpoint))
    if max(ends) > len(entries):
        raise InvalidInput("checkpoint", "MQ-R5", f"the spool holds {len(entries)} entries, "
                           f"the stream committed offset {max(ends)}: the spool was cut")
    out = Path(output)
    groups = Counter((r["source"], r["seq"], r["start"], r["end"], tuple(r["ids"]), r["at"],
                      r["input"]) for r in _table(out, "groups"))
    outcomes = Counter((r["source"], r["id"], r["outcome"], r["reason"], r["at"], r["input"])
                       for r in _table(out, "outcomes"))
    refused = Counter((r["source"], r["id"], r["reason"]) for r in _table(out, "not_measurements"))
    ids = Counter((key[0], key[1]) for key in [*outcomes, *refused])
    twice = [key for key, n in ids.items() if n > 1] + [
        key for key, n in [*outcomes.items(), *refused.items()] if n > 1]
    if twice:
        raise SpoolVerificationError(f"ids with more than one outcome: {twice[:5]}")
    check = row_check(algorithm, config)  # MQ-R2: as the stream's data source checks
    not_ok = any(Counter((r[1], r[2], r[7]) for r in spool_rows(entries[:end], check=check)
                         if r[0] == NOT) == refused for end in ends)
    if not not_ok:
        raise SpoolVerificationError("not_measurements/ differs from the spool's messages "
                                     "that are not measurements")
    problems = []
    for end in ends:  # each reader of the spool may stop at its own tick
        columns, _, held = rerun(algorithm, config, spool_rows(entries[:end], check=check))
        expected_groups, expected_outcomes = _expected(columns)
        if expected_groups == groups and expected_outcomes == outcomes:
            return {"rows": sum(outcomes.values()) + sum(refused.values()) + len(held),
                    "held": len(held)}
        problems.append(f"up to spool position {end}: groups {_diff(expected_groups, groups)}"
                        f", outcomes {_diff(expected_outcomes, outcomes)}")
    raise SpoolVerificationError("; ".join(problems))


def _expected(columns: dict[str, list[Any]]) -> tuple[Counter[Any], Counter[Any]]:
    """The groups and outcomes rows (as written: a ``grouped`` row per member) of a re-run."""
    groups: Counter[Any] = Counter()
    outcomes: Counter[Any] = Counter()
    for values in zip(*columns.values(), strict=True):
        r = dict(zip(columns, values, strict=True))
        if r["table"] == "groups":
            groups[(r["source"], r["seq"], r["start"], r["end"], tuple(r["ids"]), r["at"],
                    r["input"])] += 1
            for member in r["ids"]:
                outcomes[(r["source"], member, "grouped", None, r["at"], r["input"])] += 1
        else:
            outcomes[(r["source"], r["id"], r["outcome"], r["reason"], r["at"],
                      r["input"])] += 1
    return groups, outcomes


def _diff(expected: Counter[Any], written: Counter[Any]) -> str:
    return (f"{sum((expected - written).values())} row(s) of the re-run missing, "
            f"{sum((written - expected).values())} unexpected")


def refuse_input_options(given: Iterable[tuple[str, object]], ran: str, named: str | None,
                         output: str, session: Iterable[tuple[str, object]] = ()) -> None:
    """MQ-R18: verify of an MQTT stream takes what it re-runs from the spool and the
    manifest: an option naming a run's input (``given``: option and value), or an
    ``--algorithm`` (``named``) other than the one the stream ``ran``, is refused; so is an
    option of a Spark session (``session``: given without the gates, for which alone a
    session starts)."""
    for option, value in given:
        if value:
            raise InvalidInput(option, "MQ-R18", "not for an MQTT stream's output: verify "
                               "re-runs its spool with the algorithm and config of its "
                               "manifest", output)
    for option, value in session:
        if value:
            raise InvalidInput(option, "MQ-R18", "only with --fail-on for an MQTT stream's "
                               "output: verify re-runs its spool without Spark, whose "
                               "session starts only for the gates", output)
    if named not in (None, ran):
        raise InvalidInput("--algorithm", "MQ-R18", f"the stream ran {ran}", named)


def write_manifest(output: str, algorithm: str, config: Any, source: str,
                   checkpoint: str) -> None:
    """What ``verify`` needs to re-run an MQTT stream (MQ-R11)."""
    Path(output).mkdir(parents=True, exist_ok=True)
    (Path(output) / MANIFEST).write_text(json.dumps(
        {"algorithm": algorithm, "config": config, "source": source,
         "checkpoint": str(Path(checkpoint).resolve())}, indent=1) + "\n")


def read_manifest(output: str) -> dict[str, Any] | None:
    path = Path(output) / MANIFEST
    if not path.is_file():
        return None
    raw = json.loads(path.read_text())
    assert isinstance(raw, dict)
    return raw
