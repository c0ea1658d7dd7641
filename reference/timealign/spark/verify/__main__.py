"""``python -m timealign.spark.verify``: the command line of :mod:`timealign.spark.verify`
(its options are parsed in :mod:`timealign.commands.spark`, the commands layer)."""

import sys

from timealign.commands.spark import verify_main

sys.exit(verify_main())
