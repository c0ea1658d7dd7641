"""The conformance protocol's client side: talk to an implementation run as a command.

One process serves many traces (CF-R1): the harness writes one JSON line per trace (a
``timealign.vector/1`` object without ``outputs``) and reads one JSON line back,
``{"name": ..., "outputs": [...]}`` or ``{"name": ..., "error": "..."}`` (CF-R2, CF-R3).
Everything that can go wrong with the other process is turned into a :class:`Failed`
answer for that one trace, never a hang or a traceback of the harness (CF-R4, CF-R5): the
process dying (exit status and stderr tail), no answer within the per-trace timeout, a
line that is not a JSON object of the right shape, or one naming another trace. After any
failure the process is killed and started afresh for the next trace, so one bad answer
cannot shift every later one.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import selectors
import signal
import subprocess
import tempfile
import time
from typing import Any

import attrs

from timealign import jsontext

JSON = dict[str, Any]
STDERR_TAIL = 1500  # characters of the command's stderr quoted in a failure
STDERR_MARK = "; stderr: "  # where a failure message starts quoting that stderr (CF-R27)


@attrs.frozen
class Outputs:
    """The implementation's outputs for one trace (``input``-tagged JSON objects)."""

    outputs: tuple[JSON, ...]


@attrs.frozen
class Refused:
    """The implementation refused the trace as a whole (CF-R3), with its message."""

    message: str


@attrs.frozen
class Failed:
    """No usable answer (CF-R4, CF-R5): what went wrong, in one readable sentence.
    ``answered`` is true when the command did write a line (garbage, a wrong name, outputs
    that break the protocol): the report then says what it answered, never that the
    command did not answer (CF-R27)."""

    message: str
    answered: bool = False


Answer = Outputs | Refused | Failed

#: Terminal control sequences: CSI (colours, cursor moves), OSC (a window title, ended by
#: BEL or ST), two-character escapes, then every other control character but a newline
#: and a tab.
_CONTROLS = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
                       r"|\x1b[ -/]*[0-~]?|[\x00-\x08\x0b-\x1f\x7f\x9b]")


def plain(text: str) -> str:
    """``text`` as a report quotes it (CF-R4): a carriage return starts a line, terminal
    escapes and other control characters are gone, so a colourful stderr reads as text and
    cannot move or recolour the reader's terminal."""
    return _CONTROLS.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def parse(line: bytes, name: str, previous: str | None = None) -> Answer:
    """Decode one answer line for the trace ``name`` (CF-R2, CF-R3, CF-R5); a key twice in
    one object is malformed (CF-R36: which of the two would a reader take?). ``previous``
    is the name of the trace asked before, to say when an answer is a late extra line."""
    text = line.decode("utf-8", errors="replace").strip()
    shown = text if len(text) <= 200 else text[:200] + "..."
    try:
        body = jsontext.loads(text, unique_keys=True)
    except jsontext.JSONLimit as error:  # checked before parsing: never a RecursionError
        return Failed(f"answer over a limit (rule VEC-R11): {error}", answered=True)
    except jsontext.DuplicateKey as error:
        return Failed(f"malformed answer (CF-R36): {error}: {shown!r}", answered=True)
    except ValueError:
        return Failed(f"garbage answer (not JSON): {shown!r}", answered=True)
    if not isinstance(body, dict):
        return Failed(f"garbage answer (not a JSON object): {shown!r}", answered=True)
    if body.get("name") != name:
        late = (" (the trace asked before: more than one line for it?)"
                if previous is not None and body.get("name") == previous else "")
        return Failed(f"answer names trace {body.get('name')!r}, expected {name!r}{late}",
                      answered=True)
    if "error" in body:
        return Refused(str(body["error"]))
    outputs = body.get("outputs")
    if not isinstance(outputs, list) or not all(isinstance(o, dict) for o in outputs):
        return Failed(f"answer has no list of output objects: {shown!r}", answered=True)
    return Outputs(tuple(outputs))


class Command:
    """A long-lived implementation process, restarted after any failure (CF-R4).

    ``command`` runs through the shell from ``cwd`` (the current directory by default).
    Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, command: str, timeout: float = 10.0, cwd: str | None = None) -> None:
        self.command, self.timeout, self.cwd = command, timeout, cwd
        self.process: subprocess.Popen[bytes] | None = None
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the Command
        self.buffer = bytearray()
        self.starts = 0
        self.previous: str | None = None  # the name of the trace asked before (CF-R5)

    def __enter__(self) -> Command:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _start(self) -> subprocess.Popen[bytes]:
        self.stderr.seek(0)
        self.stderr.truncate()
        self.buffer = bytearray()
        self.starts += 1
        process = subprocess.Popen(
            self.command, shell=True, cwd=self.cwd, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.stderr, start_new_session=True)
        assert process.stdin is not None and process.stdout is not None
        os.set_blocking(process.stdin.fileno(), False)
        os.set_blocking(process.stdout.fileno(), False)
        self.process = process
        return process

    def ask(self, request: JSON) -> Answer:
        """Send one trace, wait for its answer line; any trouble is a :class:`Failed`.

        The timeout covers reading *and* parsing the answer (CF-R4): an answer whose parse
        ends after the deadline is a failed trace, like one that came too late. Reading
        and parsing are both linear in the line's length (VEC-R11), at most
        :data:`jsontext.MAX_TEXT_BYTES`."""
        process = self.process if self.process is not None else self._start()
        line = (json.dumps(request, separators=(",", ":")) + "\n").encode("utf-8")
        deadline = time.monotonic() + self.timeout
        reply = self._exchange(process, line, deadline)
        if isinstance(reply, Failed):
            self._kill()
            return reply
        answer = parse(reply, str(request.get("name")), self.previous)
        self.previous = str(request.get("name"))
        if not isinstance(answer, Failed) and time.monotonic() > deadline:
            answer = Failed(f"no answer within {self.timeout:g} s (reading and parsing "
                            f"a line of {len(reply)} bytes){self._tail()}")
        if isinstance(answer, Failed):
            self._kill()
        return answer

    def _exchange(self, process: subprocess.Popen[bytes], line: bytes,
                  deadline: float) -> bytes | Failed:
        assert process.stdin is not None and process.stdout is not None
        stdin, stdout = process.stdin.fileno(), process.stdout.fileno()
        pending = memoryview(line)
        searched = 0  # the buffer before this holds no newline: each byte is searched once
        with selectors.DefaultSelector() as selector:
            selector.register(stdout, selectors.EVENT_READ)
            selector.register(stdin, selectors.EVENT_WRITE)
            while True:
                newline = self.buffer.find(b"\n", searched)
                if newline >= 0:
                    reply = bytes(self.buffer[:newline])
                    del self.buffer[:newline + 1]
                    return reply
                searched = len(self.buffer)
                left = deadline - time.monotonic()
                if left <= 0:
                    return Failed(f"no answer within {self.timeout:g} s{self._tail()}")
                for key, _ in selector.select(left):
                    if key.fd == stdin:
                        try:
                            pending = pending[os.write(stdin, pending):]
                        except (BrokenPipeError, ConnectionResetError):
                            return self._died()
                        except BlockingIOError:
                            continue
                        if not pending:
                            selector.unregister(stdin)
                    else:
                        try:
                            chunk = os.read(stdout, 1 << 16)
                        except BlockingIOError:
                            continue
                        if not chunk:
                            return self._died()
                        self.buffer += chunk
                        if len(self.buffer) > jsontext.MAX_TEXT_BYTES:  # VEC-R11
                            return Failed(f"answer line over {jsontext.MAX_TEXT_BYTES} "
                                          "bytes without a newline (rule VEC-R11)")

    def _died(self) -> Failed:
        """The process closed its output: report its exit status and stderr tail."""
        assert self.process is not None
        try:
            status = self.process.wait(timeout=min(self.timeout, 2.0))
            how = f"exited with status {status}" if status >= 0 else f"killed by signal {-status}"
        except subprocess.TimeoutExpired:
            how = "closed its output"
        return Failed(f"the command {how} without answering{self._tail()}")

    def _tail(self) -> str:
        """The end of the command's stderr as a failure quotes it (CF-R4): at most
        :data:`STDERR_TAIL` characters, from the start of a line, as plain text."""
        self.stderr.flush()
        self.stderr.seek(0, os.SEEK_END)
        size = self.stderr.tell()
        start = max(0, size - STDERR_TAIL - 1)  # with the byte before: a line starts there?
        self.stderr.seek(start)
        raw = self.stderr.read()
        if start > 0:  # from the first line that starts inside the tail
            raw = raw[raw.index(b"\n") + 1:] if b"\n" in raw else raw[1:]
        text = plain(raw.decode("utf-8", errors="replace")).strip()
        return f"{STDERR_MARK}{text}" if text else "; no stderr"

    def _kill(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        # The whole process group, even when its leader (the shell) has exited: a child it
        # left in the background must not outlive the session (CF-R4). Linux does not reuse
        # the id of a group that still has members, so this reaches no other process.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def close(self) -> None:
        """Close the command's input (the end of the session), then make sure it is gone."""
        process = self.process
        if process is not None and process.stdin is not None and process.poll() is None:
            try:
                process.stdin.close()
                process.wait(timeout=1.0)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._kill()
        self.stderr.close()
