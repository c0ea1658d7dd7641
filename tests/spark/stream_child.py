"""``python -m tests.spark.stream_child ARGS``: the ``timealign`` CLI with the test-only
algorithms registered, run as a separate process by the kill-and-restart test."""

from __future__ import annotations

import sys

from timealign import registry
from timealign.cli import main

registry._ENTRIES.setdefault("pairs", "tests.pairs_toy:PAIRS")
registry._ENTRIES.setdefault("timed_pairs", "tests.pairs_toy:TIMED_PAIRS")

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
