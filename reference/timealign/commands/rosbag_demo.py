"""``python -m timealign.rosbag.demo``: its options and exit codes; the bags are written
by :func:`timealign.rosbag.demo.write_robot` (``make demo-bags``)."""

from __future__ import annotations

import argparse

from timealign import options
from timealign.rosbag.demo import COMMAND, OPTION, STORAGES, TOPICS, messages_per_robot, write_robot


def build_parser() -> argparse.ArgumentParser:
    """The options of ``python -m timealign.rosbag.demo``."""
    parser = argparse.ArgumentParser(prog="python -m timealign.rosbag.demo",
                                     description="write a small robot fleet as ROS bags")
    parser.add_argument(OPTION, required=True,
                        help="the folder to fill: absent, empty or an earlier output of this "
                             "command (CLI-R5)")
    parser.add_argument("--robots", type=options.integer(1, 1000), default=6)
    parser.add_argument("--seconds", type=options.number(most=3600.0, above=0), default=20.0)
    return parser


def main(argv: list[str] | None = None) -> int:
    """``python -m timealign.rosbag.demo``: the exit codes of docs/commands.md, never a
    traceback. The bags are written beside ``--output`` and moved in together, replacing an
    earlier demo's (CLI-R5); a length that gives no message is refused (CLI-R7)."""
    from timealign.command import guarded
    from timealign.errors import EXIT_BAD_INPUT
    from timealign.outputs import filled, nothing_written, own

    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # a usage error (2), or --help (0)
        return stop.code if isinstance(stop.code, int) else EXIT_BAD_INPUT

    def command() -> int:
        if messages_per_robot(args.seconds) == 0:  # CLI-R7: written as asked, or refused
            raise nothing_written("--seconds", "the busiest topic is "
                                  f"{max(hz for _, _, hz in TOPICS)} Hz", args.seconds)
        own(COMMAND, {}, {OPTION: args.output})  # CLI-R5, CLI-R6: before any bag
        total = 0
        with filled(args.output, "rosbag.demo", OPTION) as staging:
            for robot in range(args.robots):
                storage = STORAGES[robot % len(STORAGES)]
                name = f"robot{robot:02d}" + (".bag" if storage == "ros1" else "")
                total += write_robot(staging / name, storage, args.seconds, robot)
        print(f"wrote {total} messages from {args.robots} robots to {args.output}")
        return 0

    return guarded(command, prog="timealign.rosbag.demo")
