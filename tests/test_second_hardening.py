"""The reproducers of the second hardening round (issue 22), one test per class of fault:
JSON limits and types (VEC-R11, VEC-R12), nothing checked is not a pass (VEC-R13), options
checked at parse time and one exit-code rule for every entry point (CLI-R1), Ctrl-C
(CLI-R2), folders a command fills (CLI-R3), the conformance session's process group (CF-R4).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from timealign import registry, vectors
from timealign.cli import guarded, main
from timealign.conformance.protocol import Command, Failed, parse
from timealign.errors import InvalidInput

ROOT = Path(__file__).resolve().parent.parent
ADAPTER = f"{sys.executable} -m timealign.conformance.adapter"
AT_VECTORS = ROOT / "vectors" / "approximate_time"


def _run(*argv: str, stdin: str = "", cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *argv], input=stdin, capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def _one_vector(tmp_path: Path, **changes: object) -> Path:
    [vector] = vectors.load(AT_VECTORS / "config_rejects_queue_size_zero.json")
    body = vector.to_json() | changes
    path = tmp_path / "v.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


# VEC-R11: limits checked before allocation or parsing

def test_vec_r11_nesting_depth_is_bounded_before_parsing() -> None:
    """VEC-R11: a text nested past the limit is refused by a linear scan, never a
    RecursionError, and the depth of strings' brackets does not count."""
    from timealign import jsontext

    assert jsontext.depth('{"a": "[[[[[[", "b": [[1]]}') == 3
    with pytest.raises(jsontext.JSONLimit, match="nested too deeply"):
        jsontext.loads("[" * 100_000 + "]" * 100_000)
    assert jsontext.loads("[" * 64 + "]" * 64) is not None


def test_vec_r11_deep_adapter_answer_is_a_failed_trace_not_a_crash() -> None:
    """VEC-R11, CF-R5: an adapter answering deeply nested JSON fails that trace."""
    answer = parse(b'{"name": "x", "outputs": ' + b"[" * 200_000 + b"]" * 200_000 + b"}", "x")
    assert isinstance(answer, Failed) and "VEC-R11" in answer.message


def test_vec_r11_at_r1_topic_count_is_bounded() -> None:
    """VEC-R11, AT-R1: {"topics": 10**15} is refused at once, not allocated."""
    started = time.monotonic()
    with pytest.raises(InvalidInput, match="at most 1024 topics"):
        registry.get("approximate_time").codec.config_from_json({"topics": 10**15, "queue_size": 1})
    assert time.monotonic() - started < 1.0


def test_vec_r11_huge_topic_count_in_a_vector_is_checked_quickly(tmp_path: Path) -> None:
    """VEC-R11: `check` of a vector with {"topics": 10**15} ends at once (its reference
    output is the config's error; the vector expects none: exit 1)."""
    path = _one_vector(tmp_path, config={"topics": 10**15, "queue_size": 1}, outputs=[])
    started = time.monotonic()
    assert main(["check", str(path)]) == 1
    assert time.monotonic() - started < 5.0


# VEC-R12: integers are integers

@pytest.mark.parametrize("wrong", [0.0, True])
def test_vec_r12_conform_compares_json_types(tmp_path: Path, wrong: object,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """VEC-R12, CF-R36: an adapter writing `"input": 0.0` (or `true` for 1) never agrees:
    its answer is malformed (an input index is an integer), exit 6 (CF-R39)."""
    script = tmp_path / "float_adapter.py"
    script.write_text(textwrap.dedent(f"""
        import json, sys
        from timealign import registry
        from timealign.conformance.harness import run_reference
        REFERENCE = registry.get("approximate_time")
        for line in sys.stdin:
            trace = json.loads(line)
            outputs = run_reference(REFERENCE, trace["config"], trace["inputs"])
            for output in outputs:
                if output["input"] in (0, 1):
                    output["input"] = {wrong!r} if output["input"] == {int(bool(wrong))} \\
                        else output["input"]
            print(json.dumps({{"name": trace["name"], "outputs": outputs}}), flush=True)
        """), encoding="utf-8")
    code = main(["conform", "approximate_time", "--cmd", f"{sys.executable} {script}",
                 "--quiet"])
    out = capsys.readouterr().out
    assert code == 6 and "AGREES" not in out
    assert "malformed answer (CF-R36)" in out and "input must be the index" in out


def test_vec_r12_check_refuses_a_float_input_index(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """VEC-R12, VEC-R1: an expected output with `"input": 2.0` is malformed (exit 2)."""
    [vector] = vectors.load(AT_VECTORS / "config_rejects_queue_size_zero.json")
    outputs = [dict(o, input=2.0) for o in vectors.reference_outputs(vector)]
    path = _one_vector(tmp_path, outputs=outputs)
    assert main(["check", str(path)]) == 2
    assert "must be an integer input index" in capsys.readouterr().out
    from timealign import jsontext

    assert not jsontext.same({"input": 2}, {"input": 2.0})
    assert not jsontext.same([0], [False]) and jsontext.same((1, "a"), [1, "a"])


# VEC-R13: a run that checked nothing is not a pass

@pytest.mark.parametrize("command", ["check", "replay"])
def test_vec_r13_check_and_replay_of_no_vector_exit_2_naming_the_path(
        command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """VEC-R13: `check` or `replay` of an empty folder (a wrong path, say) or an empty
    `.jsonl` file prints no verdict (no `0 of 0 vectors passed`, no empty answer with exit
    0) but one stderr line naming the path and the rule; exit 2."""
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("not a vector")
    blank = tmp_path / "blank.jsonl"
    blank.write_text("")
    for path, hint in ((empty, ".jsonl"), (blank, None)):
        assert main([command, str(path)]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.startswith(f"timealign: error: {path}: nothing to check")
        assert "VEC-R13" in captured.err and len(captured.err.splitlines()) == 1
        assert hint is None or hint in captured.err  # a folder's error says what it looked for
    good = AT_VECTORS / "exact_match_publishes_at_once.json"
    assert main([command, str(empty), str(good)]) == 0  # one vector among the paths is enough
    assert "nothing to check" not in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--no-vectors"], ["--vectors", "EMPTY"],
                                  ["--vectors", str(AT_VECTORS), "--no-vectors"]])
def test_vec_r13_conform_that_runs_nothing_exits_2(argv: list[str], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """VEC-R13: no trace run is not AGREES but exit 2."""
    (tmp_path / "empty").mkdir()
    argv = [str(tmp_path / "empty") if a == "EMPTY" else a for a in argv]
    code = main(["conform", "approximate_time", "--cmd", f"{ADAPTER} approximate_time",
                 "--quiet", *argv])
    captured = capsys.readouterr()
    assert code == 2 and "AGREES" not in captured.out


def test_vec_r13_conform_whose_target_skips_every_vector_prints_no_verdict(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """VEC-R13: every vector skipped by the target (a nanosecond window is outside
    thin-edge's whole milliseconds) is no trace run: exit 2, no AGREES, no report file."""
    vector = ROOT / "vectors" / "event_time_batcher" / "config_leap_limit_defaults_to_zero.json"
    report = tmp_path / "report.json"
    code = main(["conform", "event_time_batcher", "--target", "thin-edge", "--cmd",
                 f"{sys.executable} -m timealign.conformance.adapter event_time_batcher",
                 "--vectors", str(vector), "--report", str(report), "--quiet"])
    captured = capsys.readouterr()
    assert code == 2 and "AGREES" not in captured.out and "nothing to check" in captured.err
    assert not report.exists()


def test_vec_r13_vec_r1_duplicate_vector_names_in_a_file_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """VEC-R13, VEC-R1: two vectors named alike in one .jsonl file do not pass check."""
    [vector] = vectors.load(AT_VECTORS / "config_rejects_queue_size_zero.json")
    line = json.dumps(vector.to_json())
    path = tmp_path / "twice.jsonl"
    path.write_text(f"{line}\n{line}\n", encoding="utf-8")
    assert main(["check", str(path)]) == 2
    assert "a second vector of this name" in capsys.readouterr().out


# CLI-R1: every option checked at parse time; one exit-code rule for every entry point

@pytest.mark.parametrize("argv", [
    ["conform", "approximate_time", "--cmd", "true", "--timeout", "nan"],
    ["conform", "approximate_time", "--cmd", "true", "--timeout", "inf"],
    ["conform", "approximate_time", "--cmd", "true", "--fuzz", "3", "--size", "100000"],
    ["generate", "--output", "OUT", "--jitter-ms", "nan"],
    ["generate", "--output", "OUT", "--jitter-ms", "inf"],
    ["generate", "--output", "OUT", "--seed", "-1"],
    ["plot", "V", "--out", "OUT.svg", "--width", "-3"],
    ["plot", "V", "--out", "OUT.svg", "--width", "nan"],
    ["plot", "V", "--out", "OUT.svg", "--width", "100000"],
    ["stream", "approximate_time", "--source", "S", "--output", "O", "--checkpoint", "C",
     "--max-files-per-trigger", "-3"],
])
def test_cli_r1_bad_option_values_exit_2_at_parse_time(
        argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R1: nan, inf, negative or absurd values are usage errors, before any work."""
    argv = [str(tmp_path / a) if a in {"OUT", "OUT.svg", "V", "S", "O", "C"} else a
            for a in argv]
    assert main(argv) == 2
    assert "Traceback" not in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("line", ["garbage", '{"name":"x"}', "[1]",
                                  "[" * 100_000 + "]" * 100_000])
def test_cli_r1_cf_r3_reference_adapter_answers_every_line(line: str) -> None:
    """CLI-R1, CF-R3: the reference adapter answers a line it cannot take with an error
    answer and goes on; no traceback."""
    result = _run("-m", "timealign.conformance.adapter", "approximate_time",
                  stdin=line + "\n")
    assert result.returncode == 0 and "Traceback" not in result.stderr
    answer = json.loads(result.stdout)
    assert "error" in answer


def test_cli_r1_adapter_unknown_algorithm_exits_2() -> None:
    """CLI-R1: an unknown or missing algorithm is bad usage: exit 2, no traceback, the usage
    and a line saying what is wrong; `--help` says what the adapter does, exit 0."""
    result = _run("-m", "timealign.conformance.adapter", "no_such_algorithm")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    prog = "python -m timealign.conformance.adapter"
    assert result.stderr.startswith(f"usage: {prog}")
    assert f"{prog}: error: argument algorithm: invalid choice: 'no_such_algorithm'" \
        in result.stderr
    missing = _run("-m", "timealign.conformance.adapter")
    assert missing.returncode == 2
    assert missing.stderr.splitlines()[-1] == (
        f"{prog}: error: the following arguments are required: algorithm")
    helped = _run("-m", "timealign.conformance.adapter", "--help")
    assert helped.returncode == 0 and "line protocol" in helped.stdout


def test_cli_r1_ship_on_a_file_or_proc_exits_2(tmp_path: Path) -> None:
    """CLI-R1: `python -m timealign.spark.ship` on a file or an unwritable place: exit 2,
    one line, no traceback."""
    pytest.importorskip("pyspark", reason="the spark extra is not installed")
    afile = tmp_path / "a-file"
    afile.write_text("mine", encoding="utf-8")
    for target in (str(afile), "/proc/x"):
        result = _run("-m", "timealign.spark.ship", target)
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr
    assert afile.read_text(encoding="utf-8") == "mine"


# CLI-R2: Ctrl-C

def test_cli_r2_interrupt_is_exit_130_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R2: KeyboardInterrupt in a command: exit 130, one line, no traceback."""

    def interrupted() -> int:
        raise KeyboardInterrupt

    assert guarded(interrupted) == 130
    err = capsys.readouterr().err
    assert err == "timealign: interrupted\n"


def test_cli_r2_a_clean_up_failing_after_ctrl_c_is_still_the_interrupt(
        capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R2: Ctrl-C reaches the JVM too, so a live stream's `query.stop()` then failed
    with "Py4JError: Gateway must be connected to send cancel cmd." and the command ended
    with exit 4; an error raised while the interrupt is handled is the interrupt."""

    def stopping() -> int:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("Gateway must be connected to send cancel cmd.") from None

    assert guarded(stopping) == 130
    assert capsys.readouterr().err == "timealign: interrupted\n"


def test_cli_r2_ctrl_c_of_a_command_exits_130_without_traceback(tmp_path: Path) -> None:
    """CLI-R2: SIGINT to a running `conform` session: exit 130, one line on stderr."""
    hang = tmp_path / "hang.py"
    hang.write_text("import time, sys\nfor line in sys.stdin:\n    time.sleep(600)\n",
                    encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "timealign", "conform", "approximate_time", "--cmd",
         f"{sys.executable} {hang}", "--quiet", "--timeout", "600"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(3)
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Traceback" not in err and err.strip().splitlines()[-1].endswith("interrupted")


# CLI-R3: folders a command fills

def test_cli_r3_generate_never_deletes_user_files(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """CLI-R3: `generate --output DIR` refuses a folder of the user's files (a finished
    run's table) and leaves it as it was; it replaces only its own earlier output."""
    pytest.importorskip("pyarrow", reason="the spark extra is not installed")
    mine = tmp_path / "groups"
    mine.mkdir()
    (mine / "part-important.parquet").write_bytes(b"precious")
    assert main(["generate", "--output", str(mine), "--messages", "100", "--robots", "1"]) == 2
    assert (mine / "part-important.parquet").read_bytes() == b"precious"
    err = capsys.readouterr().err
    assert "--output" in err and "CLI-R3" in err and "part-important.parquet" in err, err
    fresh = tmp_path / "fleet"
    for files in ("3", "2"):
        assert main(["generate", "--output", str(fresh), "--messages", "100",
                     "--robots", "1", "--files", files]) == 0
    names = sorted(p.name for p in fresh.iterdir())
    assert names == ["_timealign.json", "part-00000.parquet", "part-00001.parquet"]
    (fresh / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(["generate", "--output", str(fresh), "--messages", "100", "--robots", "1"]) == 2
    assert (fresh / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_cli_r3_ship_never_zips_its_own_output(tmp_path: Path) -> None:
    """CLI-R3, SP-R17: a target inside the package is refused before anything is written;
    elsewhere the zip holds no zip."""
    pytest.importorskip("pyspark", reason="the spark extra is not installed")
    import zipfile

    from timealign.spark.ship import package_folder, write_submit_files

    inside = package_folder() / "dist-test-hardening"
    with pytest.raises(InvalidInput, match="would contain itself"):
        write_submit_files(inside)
    assert not inside.exists()
    archive, entry, log_config = write_submit_files(tmp_path)
    names = zipfile.ZipFile(archive).namelist()
    assert not any(name.endswith(".zip") for name in names) and entry.is_file()
    assert log_config.is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == [  # CLI-R5: its manifest too
        "_timealign.json", "log4j2.properties", "timealign.zip", "timealign_submit.py"]


# CF-R4: the adapter's whole process group ends with the session

def test_cf_r4_session_ends_the_adapters_background_children(tmp_path: Path) -> None:
    """CF-R4: a child the adapter left in the background does not outlive the session."""
    marker = tmp_path / "child.pid"
    script = f"sleep 300 & echo $! > {marker}; exec {ADAPTER} approximate_time"
    [vector] = vectors.load(AT_VECTORS / "config_rejects_queue_size_zero.json")
    with Command(script, timeout=60) as command:
        command.ask(vector.to_json())
    child = int(marker.read_text().strip())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the adapter's background child is still running")


# SP-R12 with VEC-R11, VEC-R12: the checkpoint decoder refuses what it cannot trust

def _codec_and_blob() -> tuple[object, dict[str, object]]:
    pytest.importorskip("pyspark", reason="the spark extra is not installed")
    from timealign.drive import Checkpoint
    from timealign.spark.checkpoint_codec import StateCodec

    algorithm = registry.get("approximate_time")
    config = algorithm.codec.config_from_json({"topics": 2, "queue_size": 3})
    running = algorithm.fast_path()  # what a stream runs; the codec stores the spec's state
    state, _ = running.machine.step(config, running.machine.initial(config),
                            algorithm.codec.input_from_json({"op": "message", "topic": 0,
                                                       "stamp": 5, "id": "a"}))
    codec = StateCodec.for_algorithm(algorithm, config)
    blob = codec.encode(Checkpoint(state, (), 1, 5), 0, ["a"])
    return codec, json.loads(blob)


def _mutate_message(body: dict[str, object], field: str, value: object) -> None:
    def walk(node: object) -> None:
        if isinstance(node, dict):
            if node.get("c") == "Message":
                node["f"][field] = value
            for item in node.values():
                walk(item)
        elif isinstance(node, list):
            for item in node:
                walk(item)
    walk(body["state"])


@pytest.mark.parametrize("change", ["open_string", "seq_word", "index_negative",
                                    "topic_out_of_range", "stamp_string", "deep"])
def test_sp_r12_vec_r12_damaged_checkpoint_values_are_refused(change: str) -> None:
    """SP-R12, VEC-R12: `"open": "abc"`, `"seq": "zero"`, `"index": -5`, a message of topic 7
    in a 2-topic state, a stamp `"5"` and a deeply nested blob are InvalidInput, not ids
    ['a','b','c'], a later TypeError or a RecursionError."""
    codec, body = _codec_and_blob()
    if change == "open_string":
        body["open"] = "abc"
    elif change == "seq_word":
        body["seq"] = "zero"
    elif change == "index_negative":
        body["index"] = -5
    elif change == "topic_out_of_range":
        _mutate_message(body, "topic", 7)
    elif change == "stamp_string":
        _mutate_message(body, "stamp", "5")
    blob = json.dumps(body).encode()
    if change == "deep":
        blob = b'{"v": 2, "state": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with pytest.raises(InvalidInput):
        codec.decode(blob)  # type: ignore[attr-defined]


def test_sp_r12_intact_checkpoint_still_decodes() -> None:
    """SP-R12: the typed decoder accepts what the encoder wrote."""
    codec, body = _codec_and_blob()
    decoded = codec.decode(json.dumps(body).encode())  # type: ignore[attr-defined]
    checkpoint, seq, open_ids, recent = decoded
    assert (seq, open_ids, recent, checkpoint.index) == (0, ["a"], [], 1)


# Issue 22 item 20: an absent extra's tests are skipped with a reason, not collection errors

def test_cli_r1_suite_without_the_plot_extra_skips_its_tests(tmp_path: Path) -> None:
    """CLI-R1 (the test suite as an entry point): with matplotlib absent, `pytest` collects
    no picture test and says why, instead of failing at collection."""
    blocker = tmp_path / "matplotlib"
    blocker.mkdir()
    (blocker / "__init__.py").write_text("raise ImportError('matplotlib blocked for the test')\n",
                                         encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    result = subprocess.run([sys.executable, "-m", "pytest", "--co", "-q", "-p",
                             "no:cacheprovider", "tests/plot", "tests/test_vectors_format.py"],
                            capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "error" not in result.stdout.lower().replace("errors.py", "")
    assert "tests/plot/" not in result.stdout
    head = subprocess.run([sys.executable, "-m", "pytest", "--co", "-p", "no:cacheprovider",
                           "tests/test_vectors_format.py"], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=300).stdout
    assert "plot tests skipped" in head and "matplotlib" in head
