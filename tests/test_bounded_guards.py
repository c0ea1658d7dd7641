"""Guards bounded in their input (issue 30, part 4; VEC-R11, VEC-R16).

The pre-parse JSON scan must be linear in the text's length, asserted structurally (no timed
test): a string, once its opening quote is matched, is consumed to its closing quote or the
end of the text, so the scan never restarts inside it from a later quote. And a command
reading a named file reads only regular files: a FIFO named ``x.json`` would block forever.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from timealign import jsontext
from timealign.cli import main
from timealign.conformance import protocol
from timealign.conformance.protocol import Command, Failed

HOSTILE = '{"name": "' + '"\\' * 1_000_000  # 2 MB: hours under the old quadratic scan


@given(st.text())
def test_vec_r11_a_string_once_opened_is_consumed_in_one_match(body: str) -> None:
    """VEC-R11: the string pattern cannot fail after its opening quote, so the depth scan
    examines each character a bounded number of times (linear), whatever follows."""
    match = jsontext._STRING.match('"' + body)
    assert match is not None
    rest = ('"' + body)[match.end():]
    # it stops only at a closing quote or at the end of the text
    assert rest == "" or match.group().endswith('"')


@given(st.text())
def test_vec_r11_the_string_pattern_agrees_with_the_parser(body: str) -> None:
    """VEC-R11: a JSON string the parser reads is one match of the scan's pattern, so the
    depth the scan finds is the depth the parser would meet."""
    encoded = json.dumps(body)
    match = jsontext._STRING.match(encoded + "]]")
    assert match is not None and match.group() == encoded


def test_vec_r11_escaped_quotes_line_is_refused_by_the_parser_not_hung() -> None:
    """VEC-R11: the issue's hostile line (``"\\`` repeated) is scanned once; its depth is 1
    and the parser refuses it as not JSON. Under the old scan, 2 MB took hours."""
    assert jsontext.depth(HOSTILE) == 1
    with pytest.raises(json.JSONDecodeError):
        jsontext.loads(HOSTILE)


def test_vec_r11_unterminated_string_hides_no_brackets_the_parser_would_meet() -> None:
    """VEC-R11: brackets after an unterminated string are never reached by the parser (it
    fails at the string), so skipping them keeps the depth bound sound."""
    assert jsontext.depth('[[1, "abc') == 2
    assert jsontext.depth('[["a\\"]]", [[["') == 5
    with pytest.raises(json.JSONDecodeError):
        jsontext.loads('[[1, "abc[[[[')


def _write_quietly(fifo: Path) -> None:
    with contextlib.suppress(OSError):
        fifo.write_text("{}")


@pytest.mark.parametrize("command", ["check", "replay"])
def test_vec_r16_check_and_replay_refuse_a_fifo(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               command: str) -> None:
    """VEC-R16: a FIFO named like a vector file is refused by name (exit 2), never opened:
    opening it would block until a writer came."""
    fifo = tmp_path / "x.json"
    os.mkfifo(fifo)
    writer = threading.Thread(target=_write_quietly, args=(fifo,), daemon=True)
    writer.start()  # so that a reader that opens the FIFO ends instead of hanging the suite
    code = main([command, str(fifo)])
    captured = capsys.readouterr()
    err = captured.out + captured.err
    while writer.is_alive():  # lets the writer go, also one that reaches open() only now
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        writer.join(0.1)
    assert code == 2, err
    assert str(fifo) in err and "not a regular file" in err and "VEC-R16" in err


def _answering(tmp_path: Path, line_expression: str) -> Command:
    """A command answering every trace with the line ``line_expression`` evaluates to."""
    script = tmp_path / "adapter.py"
    script.write_text(
        "import sys\n"
        "for _ in sys.stdin:\n"
        f"    sys.stdout.write({line_expression} + '\\n')\n"
        "    sys.stdout.flush()\n")
    return Command(f"{sys.executable} {script}", timeout=60.0)


def test_vec_r11_cf_r5_a_hostile_answer_line_is_read_and_parsed_linearly(
        tmp_path: Path) -> None:
    """VEC-R11, CF-R5: an answer line of 4 MB of escaped quotes is a failed trace ("not
    JSON"), read once (the newline search never re-reads the buffer) and scanned once."""
    hostile = "'{\"name\": \"' + '\"\\\\' * 2_000_000"
    with _answering(tmp_path, hostile) as command:
        answer = command.ask({"name": "t", "algorithm": "approximate_time"})
    assert isinstance(answer, Failed) and "not JSON" in answer.message


def test_cf_r4_the_timeout_covers_parsing_the_answer(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """CF-R4: an answer whose parsing ends after the per-trace timeout fails the trace as a
    late answer would, naming the line's size: `--timeout` bounds reading and parsing."""
    real = protocol.parse

    def slow(line: bytes, name: str, previous: str | None = None) -> protocol.Answer:
        time.sleep(command.timeout + 0.2)  # stands in for a parse that outlasts the deadline
        return real(line, name, previous)

    monkeypatch.setattr(protocol, "parse", slow)
    with _answering(tmp_path, "'{\"name\": \"t\", \"outputs\": []}'") as command:
        command.timeout = 0.5
        answer = command.ask({"name": "t", "algorithm": "approximate_time"})
    assert isinstance(answer, Failed), answer
    assert "no answer within 0.5 s (reading and parsing a line of" in answer.message
