"""The upstream ESS batcher, loaded from a local checkout for a side-by-side figure.

No upstream code is in this repository: ``bench_rate_aware_batcher.py`` reads the folder of
an esslivedata checkout's ``src/`` (the one holding ``ess/livedata/core/``) from an
environment variable per profile, and skips that row when it is unset:

- ``TIMEALIGN_ESS_CARD``: scipp/esslivedata at the card revision (fb65e75e);
- ``TIMEALIGN_ESS_HEAD``: the head revision of the ``esslivedata-head`` profile (760944c8),
  which uses Python 3.12 syntax (``class Message[T]``), so it loads only under 3.12+.

Only the four modules the batcher needs are imported (``core/timestamp.py``,
``core/message.py``, ``core/constants.py``, ``core/message_batcher.py`` and
``core/rate_aware_batcher.py``), under empty parent packages, so ``ess.livedata``'s own
``__init__`` (which pulls in the whole service and its dependencies) never runs. Upstream
logs through ``structlog`` on rare paths; when it is not installed a no-op logger stands in.
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from pathlib import Path
from typing import Any

VARIABLES = {"card": "TIMEALIGN_ESS_CARD", "esslivedata-head": "TIMEALIGN_ESS_HEAD"}
_PACKAGES = ("ess", "ess.livedata", "ess.livedata.core")


class _NoLogger:
    def __getattr__(self, _name: str) -> Any:
        return lambda *args, **kwargs: None


def _structlog() -> None:
    try:
        import structlog  # noqa: F401
    except ImportError:
        stub = types.ModuleType("structlog")
        stub.get_logger = lambda *args, **kwargs: _NoLogger()  # type: ignore[attr-defined]
        sys.modules["structlog"] = stub


def load(profile: str) -> tuple[Any, str]:
    """``(module, "")``: upstream's ``rate_aware_batcher`` module for ``profile``, or
    ``(None, why)`` when it cannot be loaded here."""
    variable = VARIABLES[profile]
    folder = os.environ.get(variable, "")
    if not folder:
        return None, f"{variable} not set"
    root = Path(folder)
    if not (root / "ess" / "livedata" / "core" / "rate_aware_batcher.py").is_file():
        return None, f"{variable}={folder} has no ess/livedata/core/rate_aware_batcher.py"
    if profile == "esslivedata-head" and sys.version_info < (3, 12):
        return None, (f"the head revision needs Python >= 3.12 (class Message[T]); this is "
                      f"{sys.version_info.major}.{sys.version_info.minor}")
    for name in [m for m in sys.modules if m == "ess" or m.startswith("ess.")]:
        del sys.modules[name]  # the other profile's modules, if loaded before
    for name in _PACKAGES:
        package = types.ModuleType(name)
        package.__path__ = [str(root.joinpath(*name.split(".")))]
        sys.modules[name] = package
    _structlog()
    return importlib.import_module("ess.livedata.core.rate_aware_batcher"), ""


def calls(module: Any, polls: list[Any]) -> list[list[Any]]:
    """The trace as upstream ``batch()`` arguments: one list of upstream messages per poll."""
    message = importlib.import_module("ess.livedata.core.message")
    timestamp = importlib.import_module("ess.livedata.core.timestamp")
    streams: dict[tuple[str, str], Any] = {}
    out = []
    for poll in polls:
        call = []
        for m in poll.messages:
            key = (m.kind, m.name)
            if key not in streams:
                streams[key] = message.StreamId(kind=message.StreamKind(m.kind), name=m.name)
            call.append(message.Message(timestamp=timestamp.Timestamp.from_ns(m.timestamp),
                                        stream=streams[key], value=m.id))
        out.append(call)
    return out


def batcher(module: Any, profile: str, clock: list[float]) -> Any:
    """A fresh upstream batcher (1 s batches, default timeout); at head its wall clock reads
    ``clock[0]`` (seconds), which the benchmark sets to each poll's reading."""
    if profile == "esslivedata-head":
        return module.RateAwareMessageBatcher(batch_length_s=1.0, clock=lambda: clock[0])
    return module.RateAwareMessageBatcher(batch_length_s=1.0)
