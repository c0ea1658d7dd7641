"""The ``bags info`` sub-command of ``timealign`` (BAG-R14): only option parsing and output.

Registered through ``timealign.commands.main._EXTENSIONS``; the work is
:mod:`timealign.rosbag.info`, imported when the command runs, so ``timealign`` works without
the ``spark`` extra.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from timealign.command import add_debug
from timealign.spark import require_spark_extra

#: What ``bags info`` imports from the ``spark`` extra.
BAG_MODULES = ("rosbags", "numpy")


def _info(args: argparse.Namespace) -> int:
    require_spark_extra("bags info", BAG_MODULES)
    from timealign.rosbag.info import bags_info, damaged, render, total

    bags = bags_info(args.paths)
    every = total(bags)
    if args.json:
        print(json.dumps({"bags": [bag.as_json() for bag in bags], "all": every.as_json()},
                         indent=2))
    else:
        for bag in bags:
            print("\n".join(render(bag)))
            print()
        print("\n".join(render(every, all_bags=True)))
    bad = damaged(bags)  # BAG-R16: listed above, then the one-line error, exit 2
    if bad is not None:
        raise bad
    return 0


def register(commands: Any) -> None:
    """Add ``bags info`` to the ``timealign`` parser."""
    bags = commands.add_parser("bags", help="what ROS bags hold (topics, types, counts, span)")
    actions = bags.add_subparsers(dest="bags_command", required=True)
    info = actions.add_parser(
        "info", help="topics, types, counts, time span and header stamps of bags",
        description="Print, per bag and in all, the topics, message types, message counts, "
                    "time span and whether each type has a header stamp, from the bags' "
                    "indexes (no message is read).")
    info.add_argument("paths", nargs="+", metavar="PATH",
                      help="a bag or a folder searched for bags as --input is")
    info.add_argument("--json", action="store_true", help="machine-readable output")
    info.set_defaults(handler=_info)
    add_debug(info)
