"""Guards bounded in their input (issue 30, part 4; VEC-R11, VEC-R15).

The pre-parse JSON scan must be linear in the text's length, asserted structurally (no timed
test): a string, once its opening quote is matched, is consumed to its closing quote or the
end of the text, so the scan never restarts inside it from a later quote. And a command
reading a named file reads only regular files: a FIFO named ``x.json`` would block forever.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from timealign import jsontext
from timealign.cli import main

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
def test_vec_r15_check_and_replay_refuse_a_fifo(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               command: str) -> None:
    """VEC-R15: a FIFO named like a vector file is refused by name (exit 2), never opened:
    opening it would block until a writer came."""
    fifo = tmp_path / "x.json"
    os.mkfifo(fifo)
    writer = threading.Thread(target=_write_quietly, args=(fifo,), daemon=True)
    writer.start()  # so that a reader that opens the FIFO ends instead of hanging the suite
    code = main([command, str(fifo)])
    captured = capsys.readouterr()
    err = captured.out + captured.err
    os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))  # lets a waiting writer go
    writer.join()
    assert code == 2, err
    assert str(fifo) in err and "not a regular file" in err and "VEC-R15" in err
