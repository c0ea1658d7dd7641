"""The compiled build of the fast paths (``timealign.native``, ``setup.py``).

Whichever build runs (compiled with mypyc, or pure with ``TIMEALIGN_PURE=1``), the fast
paths must behave exactly like the rule text: every shipped vector through
``Algorithm.fast_path``, bad input refused with the rule text's ``InvalidInput`` (never a
``TypeError`` from typed compiled code), and the build that runs named by ``timealign
info``. The lockstep, differential and stateful tests of each algorithm check the rest
against the rule text in the same process, so they check whichever build is installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

import timealign
from timealign import native, registry, vectors
from timealign.algorithm import Algorithm
from timealign.approximate_time import ALGORITHM as AT
from timealign.approximate_time import Config as ATConfig
from timealign.approximate_time import End as ATEnd
from timealign.approximate_time import Message
from timealign.cli import main
from timealign.errors import InvalidInput
from timealign.event_time_batcher import ALGORITHM as ETB
from timealign.event_time_batcher import Config as ETBConfig
from timealign.event_time_batcher import Message as ETBMessage
from timealign.rate_aware_batcher import ALGORITHM as RB
from timealign.rate_aware_batcher import Config as RBConfig
from timealign.rate_aware_batcher import Poll, Polled

ROOT = Path(__file__).resolve().parent.parent
FAMILIES = [name for name in registry.names() if registry.get(name).machine.fast is not None]
GOOD_CONFIGS: dict[str, dict[str, Any]] = {
    "approximate_time": {"topics": 2, "queue_size": 3},
    "event_time_batcher": {"batching_window": 50, "max_message_delay": 20},
    "rate_aware_batcher": {},
}


@pytest.mark.parametrize("family", FAMILIES)
def test_every_vector_passes_through_the_fast_path(family: str) -> None:
    """VEC-R4, VEC-R5 on the fast path: same outputs and same error outputs as shipped."""
    checked = 0
    for path in vectors.files([ROOT / "vectors" / family]):
        for vector in vectors.load(path):
            assert vector.outputs is not None
            outputs = vectors.reference_outputs(vector, fast=True)
            difference = vectors.first_difference(vector.outputs, outputs)
            assert difference is None, f"{vector.name}: {difference}"
            checked += 1
    assert checked > 0


@pytest.mark.parametrize("family", FAMILIES)
def test_fast_path_conforms_to_the_rule_text_in_process(family: str) -> None:
    """The fast path of this build passes the conformance harness in process against the
    registered rule text (``timealign conform``'s checks: the shipped suite and fuzzed
    traces, CF-R6, CF-R7)."""
    from timealign import conformance
    from timealign.conformance.adapter import runner

    report = conformance.check(family, runner(registry.get(family).fast_path()), fuzz=40,
                               seed=16)
    assert report.ok, report.text()


def _outcome(algorithm: Algorithm[Any, Any, Any, Any], config: Any, state: Any,
             item: object) -> tuple[str, str] | str:
    try:
        algorithm.machine.step(config, state, item)
    except InvalidInput as error:
        return error.field, error.rule
    return "accepted"


AT_BAD: list[object] = [
    None, "m", 3, ATConfig(2, 3),
    Message("0", 1, "a"), Message(True, 1, "a"), Message(2, 1, "a"), Message(-1, 1, "a"),  # type: ignore[arg-type]
    Message(0, 1.5, "a"), Message(0, True, "a"), Message(0, -1, "a"), Message(0, 2**63, "a"),  # type: ignore[arg-type]
    Message(0, 2**64, "a"), Message(0, "1", "a"), Message(0, 1, 5), Message(0, 1, ""),  # type: ignore[arg-type]
    Message(0, 1, None),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("item", AT_BAD, ids=repr)
def test_at_fast_path_refuses_bad_input_like_the_rule_text(item: object) -> None:
    """AT-R2 on the fast path: the rule text's field and rule, compiled or not, from an
    empty state and from one holding messages (where the typed code would run)."""
    config = ATConfig(2, 3)
    fast = AT.fast_path()
    spec_state, fast_state = AT.machine.initial(config), fast.machine.initial(config)
    for good in (Message(0, 10, "x"), Message(1, 12, "y"), Message(0, 20, "z")):
        expected = _outcome(AT, config, spec_state, item)
        assert expected != "accepted"
        assert _outcome(fast, config, fast_state, item) == expected
        spec_state, _ = AT.machine.step(config, spec_state, good)
        fast_state, _ = fast.machine.step(config, fast_state, good)
    assert AT.machine.fast is not None and AT.machine.fast.to_spec(fast_state) == spec_state
    assert fast.machine.step(config, fast_state, ATEnd())[1] == \
        AT.machine.step(config, spec_state, ATEnd())[1]


def test_rb_poll_refuses_anything_but_messages() -> None:
    """RB-D3: a poll is built from messages only, so no step (rule text or compiled fast
    path) ever meets anything else."""
    with pytest.raises(InvalidInput) as raised:
        Poll((Polled("detector_events", "d", 1, "a"), None))  # type: ignore[arg-type]
    assert (raised.value.field, raised.value.rule) == ("messages[1]", "RB-D3")
    with pytest.raises(InvalidInput) as raised:
        Poll(None)  # type: ignore[arg-type]
    assert (raised.value.field, raised.value.rule) == ("messages", "RB-D3")


@pytest.mark.parametrize("item", [None, "poll", 3, RBConfig()], ids=repr)
def test_rb_fast_path_refuses_bad_input_like_the_rule_text(item: object) -> None:
    """RB-D3 on the fast path: the rule text's field and rule, before and after the
    first batch."""
    config = RBConfig()
    fast = RB.fast_path()
    spec_state, fast_state = RB.machine.initial(config), fast.machine.initial(config)
    for poll in (Poll((Polled("detector_events", "d", 10**9, "a"),)),
                 Poll((Polled("detector_events", "d", 10**9 + 10**8, "b"),))):
        expected = _outcome(RB, config, spec_state, item)
        assert expected == ("op", "RB-D3")
        assert _outcome(fast, config, fast_state, item) == expected
        spec_state, _ = RB.machine.step(config, spec_state, poll)
        fast_state, _ = fast.machine.step(config, fast_state, poll)


@pytest.mark.parametrize("item", [None, "tick", 3, ETBConfig(1, 1)], ids=repr)
def test_eb_fast_path_refuses_bad_input_like_the_rule_text(item: object) -> None:
    """EB-R2 on the fast path: the rule text's field and rule (messages and ticks check
    their own fields when built, before any step)."""
    config = ETBConfig(50, 20)
    fast = ETB.fast_path()
    spec_state, fast_state = ETB.machine.initial(config), fast.machine.initial(config)
    for good in (ETBMessage("a", 100, 100, "x"), ETBMessage("b", 101, 101, "y")):
        expected = _outcome(ETB, config, spec_state, item)
        assert expected == ("input", "EB-R2")
        assert _outcome(fast, config, fast_state, item) == expected
        spec_state, _ = ETB.machine.step(config, spec_state, good)
        fast_state, _ = fast.machine.step(config, fast_state, good)


@pytest.mark.parametrize("family", FAMILIES)
def test_fast_path_names_a_wrong_config_or_state(family: str) -> None:
    """A config or state of another type handed to the fast path's ``step`` is the same
    clear TypeError as from the rule text, compiled or not (not mypyc's own)."""
    algorithm = registry.get(family)
    fast = algorithm.fast_path()
    config = algorithm.codec.config_from_json(GOOD_CONFIGS[family])
    state = fast.machine.initial(config)
    with pytest.raises(TypeError, match="config must be a"):
        fast.machine.step(object(), state, algorithm.machine.end(config))
    with pytest.raises(TypeError, match="state must be a"):
        fast.machine.step(config, algorithm.machine.initial(config), algorithm.machine.end(config))


def test_describe_matches_what_was_imported() -> None:
    """``timealign info`` names, per fast path, the build that actually runs."""
    states = native.describe()
    assert sorted(states) == sorted(native.COMPILED)
    for name, state in states.items():
        assert (state == "compiled") == native.is_compiled(sys.modules[name])
    if native.pure_requested():
        assert native.build() == "pure"


def test_info_and_version_name_the_build(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"timealign {timealign.__version__} ({native.build()} build:")
    for name in native.COMPILED:
        assert name.removeprefix("timealign.") in line
    # main returns argparse's own exit code instead of raising it (CLI-R1)
    assert main(["--version"]) == 0 and capsys.readouterr().out.strip() == line


def _run(code: str, env: dict[str, str], path: str | None = None) -> str:
    """Run ``code`` in a fresh interpreter; return what it printed."""
    environment = {**os.environ, **env}
    if path is not None:
        environment["PYTHONPATH"] = path
    done = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True,
                          text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_timealign_pure_selects_the_pure_fast_paths() -> None:
    """``TIMEALIGN_PURE=1`` at run time: every fast path is the ``.py`` source."""
    printed = _run("from timealign import native; import json; "
                   "print(json.dumps(native.describe()))", {"TIMEALIGN_PURE": "1"})
    states = json.loads(printed)
    assert states == {name: "pure: TIMEALIGN_PURE=1" for name in native.COMPILED}


def test_a_stale_or_unrecorded_extension_is_refused(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """An extension runs only when the build record holds its source's current digest."""
    monkeypatch.delenv(native.PURE_VARIABLE, raising=False)
    source = tmp_path / "fast.py"
    source.write_text("X = 1\n")
    record = tmp_path / "_native.json"
    monkeypatch.setattr(native, "RECORD", record)
    name = native.COMPILED[0]
    assert "no build record" in str(native._refusal(name, source))
    record.write_text(json.dumps({"compiled": {}, "reason": "built with TIMEALIGN_PURE=1"}))
    assert "TIMEALIGN_PURE=1" in str(native._refusal(name, source))
    record.write_text(json.dumps({"compiled": {name: native.source_digest(source)}}))
    assert native._refusal(name, source) is None
    source.write_text("X = 2\n")
    assert "stale" in str(native._refusal(name, source))
    monkeypatch.setenv(native.PURE_VARIABLE, "1")
    record.write_text(json.dumps({"compiled": {name: native.source_digest(source)}}))
    assert native._refusal(name, source) == "TIMEALIGN_PURE=1"


def test_the_package_imported_from_a_zip_runs_the_pure_fast_paths(tmp_path: Path) -> None:
    """Spark ships the package to executors as a zip, extensions included when the build
    compiled them: Python cannot load an extension from a zip, so the zip's ``.py`` fast
    paths run, and they still pass the vectors."""
    folder = Path(timealign.__file__).resolve().parent
    archive = tmp_path / "timealign.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                handle.write(path, path.relative_to(folder.parent).as_posix())
    code = (
        "import json, timealign; from timealign import native, vectors\n"
        "assert '.zip' in timealign.__file__, timealign.__file__\n"
        f"failed = [v.name for p in vectors.files([{str(ROOT / 'vectors')!r}])\n"
        "          for v in vectors.load(p)\n"
        "          if vectors.first_difference(v.outputs, vectors.reference_outputs(v, True))]\n"
        "print(json.dumps([native.describe(), failed]))\n"
    )
    states, failed = json.loads(_run(code, {}, str(archive)))
    assert states == {name: "pure: imported from a zip (extensions cannot load from one)"
                      for name in native.COMPILED}
    assert failed == []
