"""SP-R54, SP-R53, SP-R45: the taken files' check at every poll, without Spark."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from timealign.spark import inventory, taken
from timealign.spark.outcomes import LossError
from timealign.spark.taken import TakenWatch


def _log(path: Path, *files: Path) -> None:
    """A file source log, ``sources/0/N``, as Spark writes it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["v1", *(json.dumps({"path": f.as_uri(), "timestamp":
                                 f.stat().st_mtime_ns // 1_000_000, "action": "add"})
                     for f in files)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _grow(file: Path) -> None:
    with file.open("ab") as grown:
        grown.write(b"more rows\n")
    os.utime(file, ns=(file.stat().st_mtime_ns + 5_000_000,) * 2)


def test_sp_r54_every_poll_checks_new_logs_by_stat_and_digests_only_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SP-R54: each poll reads only the log files written since the last one, stats every
    taken file and digests a file only when first seen or when its size or time changed; a
    file grown while the stream runs is refused at the next poll, by name (SP-R45)."""
    data, checkpoint = tmp_path / "in", tmp_path / "ck"
    data.mkdir()
    (data / "a.csv").write_text("source,id\ns,1\n", encoding="utf-8")
    (data / "b.csv").write_text("source,id\ns,2\n", encoding="utf-8")
    digested: list[str] = []
    real = inventory.digest  # the function taken.py imports and calls

    def counted(path: str) -> str:
        digested.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(taken, "digest", counted)
    watch = TakenWatch(str(checkpoint), None)
    assert watch.check() == []  # a new checkpoint: nothing taken
    _log(checkpoint / "sources" / "0" / "0", data / "a.csv")
    assert [Path(r["path"]).name for r in watch.check()] == ["a.csv"]
    _log(checkpoint / "sources" / "0" / "1", data / "b.csv")
    records = watch.check()
    assert [Path(r["path"]).name for r in records] == ["a.csv", "b.csv"]
    watch.check()
    assert digested == ["a.csv", "b.csv"]  # unchanged files are stat'ed, not digested

    resumed = TakenWatch(str(checkpoint), records)  # the manifest's records, next start
    assert resumed.check() == records and digested == ["a.csv", "b.csv"]
    (data / "b.csv").unlink()  # a taken file removed: no change in rows
    assert [Path(r["path"]).name for r in resumed.check()] == ["a.csv"]
    _grow(data / "a.csv")
    with pytest.raises(LossError, match=r"a\.csv changed after the stream took it \(14 "
                                        r"bytes, sha256 .* when taken; now 24 bytes.*SP-R45"):
        resumed.check()


def test_sp_r53_bag_files_from_the_offsets_listing(tmp_path: Path) -> None:
    """SP-R53: a stream of bags is checked from its newest offset's `listed` files (every
    file of each bag with its time when listed); older offsets without `listed` give none."""
    bag, checkpoint = tmp_path / "r2", tmp_path / "ck"
    bag.mkdir()
    for name in ("metadata.yaml", "r2_0.db3"):
        (bag / name).write_bytes(b"x" * 10)
    offsets = checkpoint / "offsets"
    offsets.mkdir(parents=True)
    (offsets / "0").write_text('v1\n{"batchWatermarkMs":0}\n{"bags": ["r2"]}\n',
                               encoding="utf-8")
    watch = TakenWatch(str(checkpoint), None, bags=True)
    assert watch.check() == []
    listed: dict[str, Any] = {os.path.realpath(p): p.stat().st_mtime_ns // 1_000_000
                              for p in bag.iterdir()}
    (offsets / "1").write_text(
        'v1\n{"batchWatermarkMs":0}\n' + json.dumps({"bags": ["r2"], "listed": listed})
        + "\n", encoding="utf-8")
    assert sorted(Path(r["path"]).name for r in watch.check()) == ["metadata.yaml",
                                                                    "r2_0.db3"]
    _grow(bag / "r2_0.db3")
    with pytest.raises(LossError, match=r"r2_0\.db3 changed after the stream took it"):
        watch.check()
