"""``python -m timealign.rosbag.demo``: its options are parsed in
:mod:`timealign.commands.rosbag_demo`, the commands layer."""

import sys

from timealign.commands.rosbag_demo import main

sys.exit(main())
