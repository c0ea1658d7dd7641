"""verify of an MQTT stream without Spark: the spool re-run against tables (MQ-R11)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.mqtt.test_mq_rows import CONFIG, EB, _spool
from timealign.mqtt.rows import NOT, rerun, spool_rows
from timealign.mqtt.spool import read_entries
from timealign.mqtt.verify import SpoolVerificationError, verify_spool
from timealign.spark.schema import GROUP_COLUMNS, OUTCOME_COLUMNS


def _written(tmp_path: Path, end: int) -> tuple[Path, Path]:
    """A checkpoint that committed spool position ``end`` and the tables a stream that
    read that far wrote (as the stream job writes them: grouped rows per member)."""
    ck = tmp_path / "ck"
    ck.mkdir()
    _spool(ck / "mqtt")
    (ck / "commits").mkdir()
    (ck / "offsets").mkdir()
    (ck / "commits" / "0").write_text("v1\n{}\n")
    (ck / "offsets" / "0").write_text(f'v1\n{{}}\n{{"position": {end}}}\n'
                                      f'{{"position": {end}}}\n')
    entries, _ = read_entries(ck / "mqtt" / "spool.jsonl")
    columns, refused, _ = rerun(EB, CONFIG, spool_rows(entries[:end]))
    rows = [dict(zip(columns, v, strict=True)) for v in zip(*columns.values(), strict=True)]
    groups = [{c: r[c] for c in GROUP_COLUMNS} for r in rows if r["table"] == "groups"]
    outcomes = [{c: r[c] for c in OUTCOME_COLUMNS} for r in rows if r["table"] == "outcomes"]
    outcomes += [{"source": g["source"], "id": m, "outcome": "grouped", "seq": g["seq"],
                  "reason": None, "at": g["at"], "input": g["input"]}
                 for g in groups for m in g["ids"]]
    out = tmp_path / "out"
    for name, table in (("groups", groups), ("outcomes", outcomes), ("not_measurements", [
            {"source": s, "id": i, "reason": r} for s, i, r in refused])):
        (out / name / "batch=0").mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(table), out / name / "batch=0" / "part.parquet")
    assert [r for r in spool_rows(entries[:end]) if r[0] == NOT]
    return out, ck


def test_mq_r11_verify_accepts_the_rerun(tmp_path: Path) -> None:
    """MQ-R11: tables equal to the spool's re-run up to the committed offset verify."""
    out, ck = _written(tmp_path, 7)
    assert verify_spool(EB, CONFIG, str(out), str(ck)) == {"rows": 5, "held": 0}


def test_mq_r11_verify_finds_a_lost_or_doubled_outcome(tmp_path: Path) -> None:
    """MQ-R11: an outcome missing, or one id twice, is a failed check (exit 3)."""
    out, ck = _written(tmp_path, 7)
    part = out / "outcomes" / "batch=0" / "part.parquet"
    table = pq.read_table(part)
    pq.write_table(table.slice(1), part)
    with pytest.raises(SpoolVerificationError, match="missing"):
        verify_spool(EB, CONFIG, str(out), str(ck))
    pq.write_table(pa.concat_tables([table, table.slice(0, 1)]), part)
    with pytest.raises(SpoolVerificationError, match="more than one outcome"):
        verify_spool(EB, CONFIG, str(out), str(ck))


@pytest.mark.parametrize(("option", "named"), [
    (["--input", "elsewhere"], "--input"), (["--config", "{}"], "--config"),
    (["--format", "csv"], "--format"), (["--column", "id=x"], "--column"),
    (["--time-unit", "ms"], "--time-unit"), (["--algorithm", "approximate_time"], "--algorithm"),
    (["--fail-on", "late_arrival>0"], "--fail-on"),
    (["--conf", "spark.sql.shuffle.partitions=3"], "--conf"),
    (["--master", "local[1]"], "--master")])
def test_mq_r18_verify_refuses_what_an_mqtt_output_does_not_take(
        tmp_path: Path, option: list[str], named: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    """MQ-R18: `verify OUT` of an MQTT stream re-runs its spool with its manifest's algorithm
    and config: an option naming a run's input (it was ignored), another algorithm, a
    gate the algorithm never writes, or a Spark setting without a gate (no session starts:
    it was ignored) is exit 2 naming it, before the re-run."""
    pytest.importorskip("pyspark")
    from timealign.cli import main
    from timealign.mqtt.verify import write_manifest

    out, ck = _written(tmp_path, 7)
    write_manifest(str(out), EB.name, EB.codec.config_to_json(CONFIG),
                   "mqtt://127.0.0.1:1883/te/#", str(ck))
    assert main(["verify", str(out), *option]) == 2
    err = capsys.readouterr().err
    assert named in err and ("MQ-R18" in err or "SP-R38" in err), err
