"""The source URL and its topic filter (MQ-R10, MQ-R12), the filter a checkpoint's session
holds (MQ-R13), and the stream command's options and failed start (MQ-R15, MQ-R16). No
broker, no Spark (the live checks are in ``test_mq_live.py`` and ``test_mq_stop_live.py``)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pytest

from tests.ports import free_port
from timealign.errors import InvalidInput
from timealign.mqtt.receiver import (
    Receiver,
    check_filter,
    check_subscription,
    parse_url,
    subscription_path,
)


@pytest.mark.parametrize(("url", "parsed"), [
    ("mqtt://127.0.0.1:1883/te/#", ("127.0.0.1", 1883, "te/#")),
    ("mqtt://h:1883/#", ("h", 1883, "#")),
    ("mqtt://h/te/device/#", ("h", 1883, "te/device/#")),
    ("mqtt://h:1/te/+/m/", ("h", 1, "te/+/m/")),
    ("mqtt://h:1/te/+/+/+/+/m/+", ("h", 1, "te/+/+/+/+/m/+")),
    ("mqtt://h:1/te/device/pump1///m/env", ("h", 1, "te/device/pump1///m/env")),
    ("mqtt://h:1/+", ("h", 1, "+")),
    ("mqtt://h:1//", ("h", 1, "/")),
    ("mqtt://h:1/a%23b", ("h", 1, "a%23b")),  # taken as written, never percent-decoded
    ("mqtt://[::1]:1884/te/#", ("::1", 1884, "te/#")),
    ("mqtt://h:0/x", ("h", 0, "x")),  # port 0 is port 0 (it was taken as 1883)
])
def test_mq_r12_the_filter_is_taken_exactly(url: str, parsed: tuple[str, int, str]) -> None:
    """MQ-R12: every character after the host's ``/`` is the filter: ``#`` is MQTT's
    wildcard, not a URL fragment (``te/#`` was subscribed to as ``te/``, ``/#`` refused)."""
    assert parse_url(url) == parsed


@pytest.mark.parametrize(("url", "rule", "says"), [
    ("mqtt://h:1/te/#/x", "MQ-R12", "'#' must be the last level"),
    ("mqtt://h:1/te/a#", "MQ-R12", "'#' must be the last level and alone"),
    ("mqtt://h:1/te/##", "MQ-R12", "'#' must be the last level and alone"),
    ("mqtt://h:1/te/a+/m", "MQ-R12", "'+' must be alone in its level"),
    ("mqtt://h:1/te/++", "MQ-R12", "'+' must be alone in its level"),
    ("mqtt://h:1/te/\x00", "MQ-R12", "U+0000"),
    ("mqtt://h:1/te/\ud800", "MQ-R12", "lone surrogate"),
    ("mqtt://h:1/" + "x" * 65536, "MQ-R12", "more than MQTT's 65535"),
    ("mqtt://h:1/te/#?qos=0", "MQ-R12", "a '?' (a URL query) is not taken"),
    ("mqtt://user@h:1/te/#", "MQ-R10", "user information"),
    ("mqtt://h:1/", "MQ-R10", "expected mqtt://HOST:PORT/TOPIC_FILTER"),
    ("mqtt://h:1", "MQ-R10", "expected mqtt://HOST:PORT/TOPIC_FILTER"),
    ("mqtt://:1/te", "MQ-R10", "expected mqtt://HOST:PORT/TOPIC_FILTER"),
    ("mqtts://h:1/te", "MQ-R10", "expected mqtt://HOST:PORT/TOPIC_FILTER"),
    ("mqtt://h:x/te", "MQ-R10", "the port must be a number"),
    ("mqtt://h:70000/te", "MQ-R10", "the port must be a number"),
])
def test_mq_r12_bad_filters_and_urls_are_refused(url: str, rule: str, says: str) -> None:
    """MQ-R12, MQ-R10: a filter MQTT refuses, a query, user information or a URL without
    host or filter is refused naming the option and the rule, before anything starts."""
    with pytest.raises(InvalidInput) as refused:
        parse_url(url, "--source")
    assert (refused.value.field, refused.value.rule) == ("--source", rule)
    assert says in refused.value.message


def test_mq_r12_filter_at_the_size_limit() -> None:
    """MQ-R12: 65535 bytes of UTF-8 is a filter; the bound counts bytes, not characters."""
    check_filter("x" * 65535)
    with pytest.raises(InvalidInput, match="65538 bytes"):
        check_filter("é" * 32769)


def test_mq_r13_a_stream_continues_with_its_filter(tmp_path: Path) -> None:
    """MQ-R13: the checkpoint records the filter its session subscribed to; a restart with
    another filter is refused naming both (the broker's session keeps the old one and the
    receiver does not subscribe again), the same filter passes."""
    check_subscription(tmp_path, "te/#")  # nothing recorded yet
    subscription_path(tmp_path).parent.mkdir(parents=True)
    subscription_path(tmp_path).write_text("te/device/#", encoding="utf-8")
    check_subscription(tmp_path, "te/device/#")
    with pytest.raises(InvalidInput) as refused:
        check_subscription(tmp_path, "te/#", "--source")
    assert (refused.value.field, refused.value.rule) == ("--source", "MQ-R13")
    assert "'te/device/#'" in refused.value.message


def test_mq_r12_a_refused_subscription_stops_the_stream(tmp_path: Path) -> None:
    """MQ-R12: a SUBACK refusing the filter (an ACL, a broker's own limits) is raised at the
    stream's next poll, naming the filter (the stream would receive nothing, forever), and
    the checkpoint records no subscription; a granted one is recorded."""
    pytest.importorskip("paho")
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.reasoncodes import ReasonCode

    from timealign.mqtt.spool import Spool, spool_path

    receiver = Receiver("mqtt://127.0.0.1:1/te/#", Spool(spool_path(tmp_path).parent),
                        str(tmp_path), 3600.0)
    receiver.check()  # nothing refused yet
    receiver._subscribed(None, None, 1, [ReasonCode(PacketTypes.SUBACK, identifier=0x80)],
                         None)
    with pytest.raises(InvalidInput) as refused:
        receiver.check()
    assert (refused.value.rule, refused.value.value) == ("MQ-R12", "te/#")
    assert "refused the subscription" in refused.value.message
    assert not receiver.ready.is_set() and not subscription_path(tmp_path).exists()
    receiver.refused = None
    receiver._subscribed(None, None, 2, [ReasonCode(PacketTypes.SUBACK, identifier=1)], None)
    assert receiver.ready.is_set()
    assert subscription_path(tmp_path).read_text(encoding="utf-8") == "te/#"


CONFIG = '{"batching_window": 500000000, "max_message_delay": 2000000000}'


def _unreachable(tmp_path: Path, option: list[str]) -> list[str]:
    """The words of an MQTT stream into ``tmp_path`` from a port where no broker listens."""
    return ["stream", "event_time_batcher", "--source", f"mqtt://127.0.0.1:{free_port()}/te/#",
            "--format", "thin-edge", "--output", str(tmp_path / "out"), "--checkpoint",
            str(tmp_path / "ck"), "--config", CONFIG, *option]


@pytest.mark.parametrize("option", [
    [], ["--summary", "SUMMARY.json"], ["--report", "REPORT"], ["--fail-on", "rejected>0"]])
def test_mq_r16_a_stream_whose_broker_cannot_be_reached_leaves_nothing_behind(
        tmp_path: Path, option: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """MQ-R16, MQ-R15: `--summary`, `--report` and `--fail-on` are taken with `--source
    mqtt://` (they were refused, MQ-R10, and before that silently ignored); a broker that
    cannot be reached is exit 2 naming it, before Spark starts, and the failed start leaves
    no manifest, checkpoint or summary behind."""
    pytest.importorskip("pyspark")
    pytest.importorskip("paho")
    from timealign.cli import main

    option = [part.replace("SUMMARY", str(tmp_path / "summary"))
              .replace("REPORT", str(tmp_path / "report")) for part in option]
    started = time.monotonic()
    code = main(_unreachable(tmp_path, option))
    assert code == 2
    err = capsys.readouterr().err
    assert "cannot reach the broker" in err and "MQ-R10" in err, err
    assert "starting Spark" not in err and time.monotonic() - started < 30
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_mq_r15_a_gate_the_algorithm_never_writes_is_refused_before_anything(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """MQ-R15, SP-R38: `--fail-on` is applied to an MQTT stream, so a gate naming what the
    event-time batcher never writes is refused at once, naming the option."""
    pytest.importorskip("pyspark")
    pytest.importorskip("paho")
    from timealign.cli import main

    code = main(["stream", "event_time_batcher", "--source", "mqtt://127.0.0.1:1/te/#",
                 "--format", "thin-edge", "--output", str(tmp_path / "out"),
                 "--checkpoint", str(tmp_path / "ck"), "--config", CONFIG,
                 "--fail-on", "late_arrival>0"])
    assert code == 2
    err = capsys.readouterr().err
    assert "--fail-on" in err and "late_arrival" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("option", [
    ["--column", "id=x"], ["--stamp", "log"], ["--source-from", "folder"], ["--available-now"],
    ["--max-files-per-trigger", "2"], ["--time-unit", "ms"]])
def test_mq_r10_a_file_stream_option_is_refused_before_the_broker(
        tmp_path: Path, option: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """MQ-R10: an option of a file stream with `--source mqtt://` is exit 2 naming it, before
    the broker is reached (none listens here) and before anything is written; `--time-unit`
    too, since a thin-edge `time` is RFC 3339 or Unix seconds (MQ-R3; it was ignored)."""
    pytest.importorskip("pyspark")
    pytest.importorskip("paho")
    from timealign.cli import main

    code = main(_unreachable(tmp_path, option))
    assert code == 2
    err = capsys.readouterr().err
    assert f"{option[0]}: not with --source mqtt://" in err and "MQ-R10" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_mq_r16_stream_help_lists_every_format() -> None:
    """MQ-R16: `stream --help` lists every `--format` the stream reads, thin-edge too."""
    from timealign.commands.main import build_parser

    parser = build_parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    [fmt] = [a for a in commands.choices["stream"]._actions if a.dest == "format"]
    assert fmt.help is not None
    for name in ("parquet", "csv", "json", "rosbag", "thin-edge"):
        assert name in fmt.help, fmt.help
