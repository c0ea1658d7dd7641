"""``python -m timealign.conformance.adapter``: its options are parsed in
:mod:`timealign.commands.conformance_adapter`, the commands layer."""

import sys

from timealign.commands.conformance_adapter import main

sys.exit(main())
