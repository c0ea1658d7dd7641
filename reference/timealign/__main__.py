"""``python -m timealign``: the same as the ``timealign`` console script."""

import sys

from timealign.cli import main

sys.exit(main())
