"""A Python environment with this one's libraries but without ``timealign`` (SP-R17)."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path


def bare_python(folder: Path) -> Path:
    """A venv whose only extra path is this environment's site-packages, added by a ``.pth``
    line: Python does not process the ``.pth`` files inside a folder added that way, so the
    editable install of ``timealign`` (itself a ``.pth``) is not visible there."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    site = next(folder.glob("lib/python*/site-packages"))
    (site / "main.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return folder / "bin" / "python"
