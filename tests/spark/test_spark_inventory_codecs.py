"""SP-R50, SP-R52: the inventory of compressed text inputs, without Spark."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import zlib
from pathlib import Path
from typing import Any

import pytest

from timealign.spark import inventory, schema
from timealign.spark.inventory import take
from timealign.spark.paths import PathError

CSV = b"source,id,topic,stamp\ns,m0,a,0\n\ns,m1,b,10\ns,m2,a,20\n"
JSON = b'{"source":"s","id":"m0","topic":"a","stamp":0}\n\n{"source":"s","id":"m1",' \
       b'"topic":"a","stamp":5}\n'


def test_sp_r52_compressed_files_counted_in_one_read_with_their_digest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SP-R52: a `.gz`, `.bz2` and `.deflate` file is counted decompressed and digested (the
    SHA-256 of its bytes as stored) from one read of the file; SP-R1's whole-file check that
    follows reads no gzip file again. SP-R50: `.lz4`, `.snappy`, `.zst` are refused by name."""
    data = tmp_path / "in"
    data.mkdir()
    stored = {"a.csv.gz": gzip.compress(CSV), "b.csv.bz2": bz2.compress(CSV),
              "c.csv.deflate": zlib.compress(CSV), "d.csv": CSV}
    for name, body in stored.items():
        (data / name).write_bytes(body)
    opens: list[str] = []
    real_open = open

    def counted_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        opens.append(str(file))
        return real_open(file, *args, **kwargs)

    files = schema.input_files(str(data), "csv", read_whole=False)
    monkeypatch.setattr("builtins.open", counted_open)
    found = take(str(data), "csv", files=files)
    monkeypatch.undo()
    assert found is not None
    assert {u.name: u.rows for u in found.units} == dict.fromkeys(stored, 3)
    assert {u.name: u.files[0].sha256 for u in found.units} == {
        name: hashlib.sha256(body).hexdigest() for name, body in stored.items()}
    assert sorted(Path(o).name for o in opens) == sorted(stored)  # one open per file

    def no_gzip(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a gzip file decompressed a second time")

    monkeypatch.setattr(gzip, "open", no_gzip)
    assert schema.input_files(str(data), "csv") == files  # SP-R1: read whole already

    (data / "j.json.gz").write_bytes(gzip.compress(JSON))
    counted = take(str(data / "j.json.gz"), "json", files=[str(data / "j.json.gz")])
    assert counted is not None and counted.rows == 2

    (data / "c.csv.deflate").write_bytes(zlib.compress(CSV)[:-6])  # truncated: refused
    with pytest.raises(PathError, match=r"c\.csv\.deflate: it is damaged"):
        take(str(data), "csv", files=files)

    for codec in inventory.UNCOUNTED_CODECS:
        odd = tmp_path / f"odd{codec}"
        odd.mkdir()
        (odd / f"e.csv{codec}").write_bytes(b"\x00" * 8)
        with pytest.raises(PathError, match=rf"e\.csv\{codec}: Python has no reader for "
                                            r"its compression.*SP-R50"):
            schema.input_files(str(odd), "csv")
