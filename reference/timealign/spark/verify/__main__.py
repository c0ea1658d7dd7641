"""``python -m timealign.spark.verify``: the command line of :mod:`timealign.spark.verify`
(its options are parsed in :mod:`timealign.spark.cli`)."""

import sys

from timealign.spark.cli import verify_main

sys.exit(verify_main())
