"""The input readers under generated inputs (SP-R41, SP-R42, SP-R70 to SP-R73, BAG-R30,
SP-I1): for every generated input of every file format, the inventory's count equals an
independent reader's count, and `run` gives every row exactly one outcome, or refuses the
input naming a file (exit 2).

Each format is a :class:`Format` in :data:`FORMATS`: how to write a generated input into a
folder (rows with hostile text: quotes, commas, backslashes, any Unicode; blank lines, CRLF,
several files, subfolders, row groups; now and then a defect the run must refuse, such as two
objects on a JSON line or a storage file a bag's metadata does not list) and how to count it
with a reader that shares no code with the inventory (pandas, pyarrow's dataset, the rosbags
library reading every message). Another input (the MQTT payloads of a spool) joins the fuzz
by adding a :class:`Format` there.

An accepted example costs a Spark job on the shared session, so `make test` runs a handful
(Hypothesis's ``ci`` profile) and `make proofs` many more (``nightly``).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import attrs
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from tests.rosbag.bags import plan, write_ros1, write_rosbag2
from tests.spark.test_spark_cli_fuzz import SPARK_FUZZ
from timealign.cli import main
from timealign.errors import InvalidInput

AT = {"topics": ["a", "b"], "queue_size": 2}
BAG_CONFIG = {"topics": ["/imu", "/camera_info"], "queue_size": 10,
              "max_interval_duration": 8_000_000}

#: Ids as people write them, hostile to a text format: quotes, commas, backslashes, braces,
#: spaces, any letter; no control character (a CSV line break inside quotes is SP-R73's
#: limit: Spark reads CSV line by line).
IDS = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1,
              max_size=12).filter(lambda text: text.strip() == text)


@attrs.frozen
class Written:
    """What a generated input holds: the ids of its rows (None for bags: ``TOPIC#N``), the
    rows a run replays (configured topics only), and a defect it carries that the run must
    refuse (None: a clean input), with the file a refusal must name."""

    ids: frozenset[str] | None
    replayed: int
    defect: str | None = None
    names: str = ""


@attrs.frozen
class Format:
    """One input format of the fuzz: the ``--format`` of `run`, its config, how to write a
    generated input into a folder, and an independent count of its rows."""

    fmt: str
    config: dict[str, object]
    write: Callable[[Path, st.DataObject], Written]
    count: Callable[[Path], int]


def _table(data: st.DataObject) -> pd.DataFrame:
    ids = data.draw(st.lists(IDS, min_size=1, max_size=14, unique=True), label="ids")
    sources = data.draw(st.lists(st.sampled_from(["s", "r-1", "007", "7"]),
                                 min_size=len(ids), max_size=len(ids)), label="sources")
    return pd.DataFrame({"source": sources, "id": ids,
                         "topic": [("a", "b")[k % 2] for k in range(len(ids))],
                         "stamp": [1_000 * k for k in range(len(ids))]})


def _split(frame: pd.DataFrame, data: st.DataObject) -> list[pd.DataFrame]:
    cut = data.draw(st.integers(0, len(frame)), label="split")
    return [part for part in (frame.iloc[:cut], frame.iloc[cut:]) if len(part)]


def _place(folder: Path, index: int, suffix: str, data: st.DataObject) -> Path:
    nested = data.draw(st.booleans(), label=f"subfolder {index}")
    where = folder / "day2" if nested else folder
    where.mkdir(parents=True, exist_ok=True)
    return where / f"part-{index}{suffix}"


def _write_parquet(folder: Path, data: st.DataObject) -> Written:
    frame = _table(data)
    for index, part in enumerate(_split(frame, data)):
        groups = data.draw(st.integers(1, 4), label="row group size")
        pq.write_table(pa.Table.from_pandas(part, preserve_index=False),
                       _place(folder, index, ".parquet", data), row_group_size=groups)
    return Written(frozenset(frame["id"]), len(frame))


def _write_csv(folder: Path, data: st.DataObject) -> Written:
    import csv

    frame = _table(data)
    quoting = data.draw(st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]), label="quoting")
    ending = data.draw(st.sampled_from(["\n", "\r\n"]), label="line ending")
    for index, part in enumerate(_split(frame, data)):
        text = part.to_csv(index=False, quoting=quoting, lineterminator=ending)
        if data.draw(st.booleans(), label="blank line"):
            text += ending
        _place(folder, index, ".csv", data).write_text(text, encoding="utf-8", newline="")
    return Written(frozenset(frame["id"]), len(frame))


#: Defects of a JSON line the run must refuse (SP-R72), each a line from two rows' objects.
JSON_DEFECTS: dict[str, Callable[[str, str], str]] = {
    "two objects": lambda a, b: f"{a} {b}",
    "glued objects": lambda a, b: f"{a}{b}",
    "an array": lambda a, b: f"[{a}, {b}]",
}


def _write_json(folder: Path, data: st.DataObject) -> Written:
    frame = _table(data)
    ending = data.draw(st.sampled_from(["\n", "\r\n"]), label="line ending")
    ascii_only = data.draw(st.booleans(), label="ensure_ascii")
    lines = [json.dumps(row, ensure_ascii=ascii_only) for row in frame.to_dict("records")]
    defect = data.draw(st.sampled_from([None, *JSON_DEFECTS]), label="defect") \
        if len(lines) > 1 else None
    if defect is not None:
        lines[-2:] = [JSON_DEFECTS[defect](lines[-2], lines[-1])]
    if data.draw(st.booleans(), label="blank lines"):
        lines.insert(data.draw(st.integers(0, len(lines)), label="blank at"), "  ")
    path = _place(folder, 0, ".jsonl", data)
    path.write_text(ending.join(lines) + ending, encoding="utf-8", newline="")
    return Written(frozenset(frame["id"]), len(frame), defect, path.name)


def _write_bags(folder: Path, data: st.DataObject) -> Written:
    kind = data.draw(st.sampled_from(["mcap", "sqlite3", "ros1"]), label="bag")
    count = data.draw(st.integers(3, 30), label="messages")
    seed = data.draw(st.integers(0, 99), label="seed")
    rows = plan(seed, count)
    folder.mkdir()
    defect = None
    if kind == "ros1":
        write_ros1(folder / "r1.bag", rows, seed)
    else:
        bag = write_rosbag2(folder / "r1", rows, kind, seed)
        if data.draw(st.booleans(), label="extra storage file"):
            other = write_rosbag2(folder.parent / "other", plan(seed + 1, 5), kind, seed)
            storage = next(p for p in other.iterdir() if p.name != "metadata.yaml")
            shutil.copy(storage, bag / f"extra{storage.suffix}")
            shutil.rmtree(other)
            defect = "a storage file metadata.yaml does not list"
    topics = set(BAG_CONFIG["topics"])  # type: ignore[call-overload]
    return Written(None, sum(1 for topic, *_ in rows if topic in topics), defect,
                   "extra")


def _count_parquet(folder: Path) -> int:
    return int(ds.dataset(folder, format="parquet").count_rows())


def _count_csv(folder: Path) -> int:
    return sum(len(pd.read_csv(path, dtype=str, keep_default_na=False))
               for path in folder.rglob("*.csv"))


def _count_json(folder: Path) -> int:
    return sum(len(pd.read_json(path, lines=True, dtype=False))
               for path in folder.rglob("*.jsonl"))


def _count_bags(folder: Path) -> int:
    from rosbags.highlevel import AnyReader

    total = 0
    for bag in sorted(p for p in folder.iterdir() if not p.name.startswith(".")):
        with AnyReader([bag]) as reader:
            total += sum(1 for _ in reader.messages())
    return total


FORMATS: dict[str, Format] = {
    "parquet": Format("parquet", AT, _write_parquet, _count_parquet),
    "csv": Format("csv", AT, _write_csv, _count_csv),
    "json": Format("json", AT, _write_json, _count_json),
    "rosbag": Format("rosbag", BAG_CONFIG, _write_bags, _count_bags),
}


def _inventory_rows(folder: Path, fmt: str) -> int:
    """The inventory's count of ``folder`` (SP-R41), taken as `run` takes it."""
    from timealign.spark.inputs import RunInput, take_inventory
    from timealign.spark.inventory import take

    taken = take(str(folder), fmt) if fmt == "rosbag" else take_inventory(
        RunInput(str(folder), fmt))
    assert taken is not None
    return taken.rows


@settings(SPARK_FUZZ, max_examples=max(4, settings().max_examples // 25))
@given(name=st.sampled_from(sorted(FORMATS)), data=st.data())
def test_sp_r41_r42_sp_i1_every_generated_input_is_counted_read_or_refused(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
        data: st.DataObject) -> None:
    """SP-R41, SP-R42, SP-R70, SP-R72, SP-R73, BAG-R30, SP-I1: a generated input of every
    format is either refused, exit 2, naming a file (a defect it carries must be refused),
    or its inventory count equals an independent reader's count, `run` exits 0, and every
    row has exactly one outcome: the outcome ids are the ids written (text formats), the
    rows replayed plus the unconfigured topics' rows are the rows held (bags)."""
    form = FORMATS[name]
    tmp = Path(tempfile.mkdtemp(dir=tmp_path))
    folder, out, summary = tmp / "in", tmp / "out", tmp / "summary.json"
    written = form.write(folder, data)
    code = main(["run", "approximate_time", "--input", str(folder), "--output", str(out),
                 "--config", json.dumps(form.config), "--format", form.fmt, "--summary",
                 str(summary), "--quiet"])
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    if written.defect is not None:
        assert code == 2, (written.defect, code, err)
        assert len(err.strip().splitlines()) == 1 and written.names in err, err
        with pytest.raises(InvalidInput):
            _inventory_rows(folder, form.fmt)
        return
    assert code == 0, err
    held = form.count(folder)
    assert _inventory_rows(folder, form.fmt) == held
    outcomes = pq.read_table(out / "outcomes").to_pandas()
    assert len(outcomes) == written.replayed
    assert not outcomes.duplicated(["source", "id"]).any()
    if written.ids is not None:
        assert held == len(written.ids)
        assert set(outcomes["id"]) == written.ids
    report = json.loads(summary.read_text(encoding="utf-8"))
    unconfigured = sum(t["rows"] for t in report.get("not_configured", []))
    assert report["rows"] + unconfigured == held, report
