"""Conformance adapter (spec/conformance.md) around the real ESS ``RateAwareMessageBatcher``.

It imports ``ess.livedata.core.rate_aware_batcher`` from a checkout of scipp/esslivedata (the
package is not published), unmodified, and drives it trace by trace: one ``batch()`` call per
``poll`` input, ``set_batch_length()`` per ``set_batch_length`` input. Two revisions are
supported, told apart by the constructor: the card revision (fb65e75e) has no clock; the head
revision (760944c8) takes ``clock=``, which this adapter feeds from the polls' clock
readings (``"now"``, ns). See README.md next to this file.

    ESSLIVEDATA_SRC=/path/to/esslivedata/src \\
        timealign conform rate_aware_batcher --target esslivedata-head \\
        --cmd "python examples/esslivedata/adapter.py"

``--upstream PATH`` (or the environment variable ``ESSLIVEDATA_SRC``) names the checkout's
``src`` folder. Only the four modules the batcher needs are loaded (``rate_aware_batcher``,
``message``, ``timestamp``, ``message_batcher``, plus ``constants``); the package
``__init__`` files, which import the whole service, are bypassed. ``structlog`` must be
installed (``message_batcher`` logs through it).

``--exact-clock`` hands upstream the clock as exact ``fractions.Fraction`` seconds instead of
floats: upstream's stall test then has no float rounding (spec RB-D17).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import math
import os
import sys
import types
from fractions import Fraction
from pathlib import Path
from typing import Any, TextIO

PACKAGES = ("ess", "ess.livedata", "ess.livedata.core")
PROFILES = {"card": "card", "head": "esslivedata-head"}


def load(src: Path) -> types.ModuleType:
    """Import upstream's batcher module from ``src`` without running its package inits."""
    if not (src / "ess" / "livedata" / "core" / "rate_aware_batcher.py").is_file():
        raise SystemExit(f"no ess/livedata/core/rate_aware_batcher.py under {src} "
                         "(--upstream or ESSLIVEDATA_SRC must name the checkout's src folder)")
    for name in PACKAGES:  # bare namespace packages: their modules load, __init__ does not
        package = types.ModuleType(name)
        package.__path__ = [str(src.joinpath(*name.split(".")))]
        sys.modules[name] = package
    return importlib.import_module("ess.livedata.core.rate_aware_batcher")


def infinity(value: Any) -> Any:
    """JSON has no infinity: the vectors write ``"inf"`` for upstream's ``math.inf``."""
    return math.inf if value == "inf" else value


class Clock:
    """The head revision's clock: the latest reading of the trace, in seconds.

    Upstream reads its clock when constructed, before any poll; the reference takes a clock
    that has not been read yet to read its first reading (RB-D17), so the clock starts there.
    """

    def __init__(self, inputs: list[dict[str, Any]], exact: bool) -> None:
        self.exact = exact
        first = next((i["now"] for i in inputs if i.get("op") == "poll"
                      and i.get("now") is not None), 0)
        self.set(first)

    def set(self, ns: int) -> None:
        self.value: float | Fraction = Fraction(ns, 10**9) if self.exact else ns / 1e9

    def __call__(self) -> float | Fraction:
        return self.value


class Adapter:
    def __init__(self, module: types.ModuleType, exact_clock: bool) -> None:
        self.module = module
        self.batcher_class = module.RateAwareMessageBatcher
        self.head = "clock" in inspect.signature(self.batcher_class).parameters
        self.revision = "head" if self.head else "card"
        self.exact_clock = exact_clock

    def message(self, raw: dict[str, Any]) -> Any:
        m = self.module
        stream = m.StreamId(kind=m.StreamKind(raw["kind"]), name=raw["name"])
        return m.Message(timestamp=m.Timestamp.from_ns(raw["timestamp"]), stream=stream,
                         value=raw["id"])

    def build(self, config: dict[str, Any], clock: Clock) -> Any:
        profile = config.get("profile") or "card"
        if profile != PROFILES[self.revision]:
            raise ValueError(f"this checkout is the {self.revision} revision; the trace "
                             f"is for profile {profile!r}")
        args: dict[str, Any] = {"batch_length_s": config.get("batch_length_s", 1.0),
                                "timeout_s": infinity(config.get("timeout_s"))}
        if self.head:
            args["clock"] = clock
        batcher = self.batcher_class(**args)
        factor = config.get("timeout_factor")
        if args["timeout_s"] is None and factor is not None:  # RB-R1: timeout_s wins
            batcher.timeout_factor = infinity(factor)
        return batcher

    def answer(self, trace: dict[str, Any]) -> dict[str, Any]:
        inputs = trace["inputs"]
        clock = Clock(inputs, self.exact_clock)
        try:
            batcher = self.build(trace["config"], clock)
        except Exception as error:  # a config upstream cannot take: refuse the trace
            return {"name": trace["name"], "error": f"{type(error).__name__}: {error}"}
        outputs: list[dict[str, Any]] = []
        for index, item in enumerate(inputs):
            try:
                outputs += [{"input": index, **out} for out in self.feed(batcher, clock, item)]
            except Exception as error:  # upstream raised: report it, keep the batcher
                print(f"input {index}: {type(error).__name__}: {error}", file=sys.stderr)
                outputs.append({"input": index, "kind": "error", "field": "?", "rule": "?"})
        return {"name": trace["name"], "outputs": outputs}

    def feed(self, batcher: Any, clock: Clock, item: dict[str, Any]) -> list[dict[str, Any]]:
        op = item.get("op")
        if op == "poll":
            if item.get("now") is not None:
                clock.set(item["now"])
            batch = batcher.batch([self.message(raw) for raw in item["messages"]])
            if batch is None:
                return []
            return [{"kind": "batch", "start": batch.start_time.to_ns(),
                     "end": batch.end_time.to_ns(), "ids": [m.value for m in batch.messages]}]
        if op == "set_batch_length":
            batcher.set_batch_length(item["seconds"])
            return []
        if op == "end":  # upstream has no end: what it holds stays (pending is not compared)
            return []
        raise ValueError(f"unknown op {op!r}")


def protocol_channel() -> TextIO:
    """Keep the protocol on a descriptor of its own (CF-R1): a private copy of standard
    output answers the harness; descriptor 1 and ``sys.stdout`` then point at stderr, so
    whatever else writes to standard output (a library's print or logger) lands there."""
    sys.stdout.flush()
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return channel


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream", type=Path, default=os.environ.get("ESSLIVEDATA_SRC"),
                        help="the esslivedata checkout's src folder (default $ESSLIVEDATA_SRC)")
    parser.add_argument("--exact-clock", action="store_true",
                        help="clock readings as exact Fractions of a second (RB-D17)")
    args = parser.parse_args(argv)
    if args.upstream is None:
        parser.error("name the esslivedata checkout: --upstream SRC or ESSLIVEDATA_SRC")
    # Before upstream loads: head's batcher logs a structlog warning on its stall path, and
    # structlog's default logger prints to standard output.
    channel = protocol_channel()
    adapter = Adapter(load(args.upstream), args.exact_clock)
    print(f"esslivedata {adapter.revision} revision from {args.upstream}", file=sys.stderr)
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(adapter.answer(json.loads(line))), file=channel, flush=True)


if __name__ == "__main__":
    main()
