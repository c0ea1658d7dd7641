"""The README's `bags info` session, replayed: a reader who writes the demo's bags and runs
the command shown sees the output shown (BAG-R14). The demo is seeded, so the figures are
the same on every machine; a change of the demo or of the listing shows up here."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_readme import code_blocks
from timealign.cli import main


def _session() -> list[tuple[str, str]]:
    """The README block holding the `bags info` session: (command, its output) pairs."""
    [block] = [b for b in code_blocks("") if b.startswith("$ python -m timealign.rosbag.demo")]
    pairs = re.findall(r"^\$ (.*)\n((?:(?!\$ ).*\n)*)", block, re.MULTILINE)
    return [(command, output) for command, output in pairs]


def test_bag_r14_readme_bags_info_session_prints_what_it_shows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """BAG-R14: the README's `python -m timealign.rosbag.demo --output bags` then
    `timealign bags info bags/robot00 bags/robot02.bag` print, verbatim, what it shows."""
    [(demo, demo_out), (info, info_out)] = _session()
    assert demo.startswith("python -m timealign.rosbag.demo ")
    written = subprocess.run([sys.executable, *demo.split()[1:]], cwd=tmp_path,
                             capture_output=True, text=True, timeout=300, check=False)
    assert written.returncode == 0, written.stderr
    assert written.stdout == demo_out
    assert info.startswith("timealign bags info ")
    monkeypatch.chdir(tmp_path)
    assert main(info.split()[1:]) == 0
    assert capsys.readouterr().out == info_out
