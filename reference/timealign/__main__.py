"""``python -m timealign``: the same as the ``timealign`` console script."""

import sys

from timealign.commands.main import main

sys.exit(main())
