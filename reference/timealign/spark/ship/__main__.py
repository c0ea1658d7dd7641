"""``python -m timealign.spark.ship``: its options are parsed in
:mod:`timealign.commands.spark_ship`, the commands layer."""

import sys

from timealign.commands.spark_ship import main

sys.exit(main(sys.argv[1:]))
