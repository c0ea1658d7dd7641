"""``python -m timealign.spark.ship FOLDER``: its options and exit codes; the work is
:func:`timealign.spark.ship.write_submit_files` (SP-R17)."""

from __future__ import annotations

import argparse
from pathlib import Path

from timealign.outputs import own
from timealign.spark.ship import COMMAND, OPTION, write_submit_files


def build_parser() -> argparse.ArgumentParser:
    """The options of ``python -m timealign.spark.ship``: the folder, required (with none
    it used to fill the current folder)."""
    parser = argparse.ArgumentParser(
        prog="python -m timealign.spark.ship",
        description="Write FOLDER/timealign.zip, FOLDER/timealign_submit.py and "
                    "FOLDER/log4j2.properties for spark-submit. FOLDER must be absent, empty "
                    "or an earlier output of this command.")
    parser.add_argument("folder", metavar=OPTION, help="the folder to fill")
    return parser


def main(argv: list[str]) -> int:
    """``python -m timealign.spark.ship FOLDER``: the exit codes of docs/commands.md, one line on
    failure (2 for a folder that cannot be written or holds the user's files), never a
    traceback."""
    from timealign.command import guarded
    from timealign.errors import EXIT_BAD_INPUT

    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # a usage error (2), or --help (0)
        return stop.code if isinstance(stop.code, int) else EXIT_BAD_INPUT

    def command() -> int:
        own(COMMAND, {}, {OPTION: args.folder})  # CLI-R5, CLI-R6: before anything is made
        for written in write_submit_files(Path(args.folder)):
            print(written)
        return 0

    return guarded(command, prog="timealign.spark.ship")
