"""``timealign generate``: a realistic recorded dataset for the jobs (no rule lives here).

A fleet of robots, each a source, publishes camera (30 Hz), lidar (10 Hz) and IMU (100 Hz)
messages. Stamps have Gaussian jitter around each sensor's nominal period and a random
phase per robot and topic; some messages are lost; each one is delivered after a
topic-dependent delay with a random tail, so topics overtake each other (cross-topic
reordering) while each topic stays first-in first-out, as over a real transport. The rows
are written as Parquet in arrival order, split into files by arrival time like a rotating
recorder, or one file per robot (``per_robot``: the layout ``timealign run
--sources-per-file`` reads). The same arguments and seed always give the same files.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from timealign.errors import InvalidInput, require
from timealign.outputs import check_fillable, filled, nothing_written
from timealign.progress import counted

EPOCH_NS = 1_767_225_600 * 10**9  # 2026-01-01T00:00:00Z


@attrs.frozen
class Sensor:
    """One topic: its rate, its delivery delay (median, ns) and its payload size (bytes)."""

    topic: str
    hz: int
    delay_ns: int
    payload: int


FLEET: tuple[Sensor, ...] = (
    Sensor("camera", 30, 12_000_000, 900_000),
    Sensor("lidar", 10, 35_000_000, 2_400_000),
    Sensor("imu", 100, 1_500_000, 64),
)


@attrs.frozen
class Plan:
    """What to generate."""

    robots: int = 10
    seconds: float = 60.0
    seed: int = 0
    loss: float = 0.01
    jitter_ns: int = 1_000_000
    files: int = 8
    per_robot: bool = False

    def __attrs_post_init__(self) -> None:
        """Bad sizes are refused with the option they came from (exit 2), not a traceback."""
        require(self.robots >= 1, "--robots", "SP-R1", "must be at least 1", self.robots)
        require(math.isfinite(self.seconds) and self.seconds > 0, "--seconds", "SP-R1",
                "must be a positive number", self.seconds)
        require(0.0 <= self.loss < 1.0, "--loss", "SP-R1", "must be in [0, 1)", self.loss)
        require(self.jitter_ns >= 0, "--jitter-ms", "SP-R1", "must be >= 0", self.jitter_ns)
        require(self.files >= 1, "--files", "SP-R1", "must be at least 1", self.files)

    @classmethod
    def for_messages(cls, messages: int, robots: int, **options: float | int) -> Plan:
        """A plan whose fleet sends about ``messages`` messages."""
        loss = float(options.get("loss", 0.01))
        require(robots >= 1, "--robots", "SP-R1", "must be at least 1", robots)
        require(0.0 <= loss < 1.0, "--loss", "SP-R1", "must be in [0, 1)", loss)
        require(messages >= 1, "--messages", "SP-R1", "must be at least 1", messages)
        per_second = sum(s.hz for s in FLEET) * robots * (1.0 - loss)
        return cls(robots=robots, seconds=messages / per_second, **options)  # type: ignore[arg-type]


#: The peak memory of :func:`generate` per planned message (bytes): every column is held
#: in memory, sorted, then converted to Arrow (measured: about 160 bytes at 10**6 and
#: 10**7 messages; the bound keeps a margin).
PEAK_BYTES_PER_MESSAGE = 200


def planned(plan: Plan) -> int:
    """How many messages ``plan`` draws (before losses), computed without drawing them."""
    return sum(int(plan.seconds * sensor.hz) for sensor in FLEET) * plan.robots


def _memory() -> int | None:
    """The memory available to this process now (bytes): Linux's ``MemAvailable`` (free
    memory plus what the page cache would give back), else the free pages; None where
    neither can be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return None


def check_fits(plan: Plan, asked: str) -> None:
    """CLI-R20: ``generate`` holds the whole dataset in memory (it sorts it by arrival across
    robots before writing), so a plan that cannot fit in the memory available is refused
    naming ``asked``, the option that sized it, before anything is allocated: inside the
    option's range, ``--messages 100000000000`` used to allocate gigabytes and fail."""
    messages = planned(plan)
    need = messages * PEAK_BYTES_PER_MESSAGE
    free = _memory()
    if free is not None and need > free:
        raise InvalidInput(asked, "CLI-R20", f"the plan draws about {messages} messages, "
                           f"which needs about {need / 2**30:.1f} GiB of memory where "
                           f"{free / 2**30:.1f} GiB is available; ask for fewer (or "
                           f"generate several smaller datasets)", None)


def _robot(plan: Plan, rng: np.random.Generator, robot: int) -> dict[str, np.ndarray]:
    columns: dict[str, list[np.ndarray]] = {k: [] for k in ("topic", "k", "stamp", "arrival",
                                                              "size")}
    start = EPOCH_NS + int(rng.integers(0, 10**9))
    for code, sensor in enumerate(FLEET):
        period = 10**9 // sensor.hz
        count = int(plan.seconds * sensor.hz)
        k = np.arange(count, dtype=np.int64)
        phase = int(rng.integers(0, period))
        jitter = np.rint(rng.normal(0.0, plan.jitter_ns, count)).astype(np.int64)
        stamp = start + phase + k * period + jitter
        tail = rng.exponential(0.5, count) * sensor.delay_ns
        arrival = stamp + (sensor.delay_ns // 2 + tail).astype(np.int64)
        arrival = np.maximum.accumulate(arrival)  # each topic is FIFO
        kept = rng.random(count) >= plan.loss
        columns["topic"].append(np.full(int(kept.sum()), code, dtype=np.int8))
        columns["k"].append(k[kept])
        columns["stamp"].append(stamp[kept])
        columns["arrival"].append(arrival[kept])
        columns["size"].append(np.full(int(kept.sum()), sensor.payload, dtype=np.int32))
    merged = {name: np.concatenate(parts) for name, parts in columns.items()}
    merged["robot"] = np.full(len(merged["k"]), robot, dtype=np.int32)
    return merged


def generate(plan: Plan, output: str | Path, asked: str = "--seconds") -> int:
    """Write the dataset as ``output/part-NNNNN.parquet`` (or ``output/robot-NNN.parquet``
    with ``per_robot``); return the number of rows. A folder holding anything but an
    earlier output of ``generate`` is refused before any work, and the files are moved into
    place only when all are written (CLI-R3). A plan that gives no message is refused
    naming ``asked``, the option that sized it, before anything is written (CLI-R7), and so
    is one too large for the memory available (CLI-R20)."""
    require(plan.robots >= 1, "--robots", "SP-R1", "must be >= 1", plan.robots)
    require(plan.seconds > 0, "--seconds", "SP-R1", "must be > 0", plan.seconds)
    require(0.0 <= plan.loss < 1.0, "--loss", "SP-R1", "must be in [0, 1)", plan.loss)
    require(plan.files >= 1, "--files", "SP-R1", "must be >= 1", plan.files)
    check_fits(plan, asked)  # CLI-R20, before any allocation
    check_fillable(output, "generate", "--output")  # before any work (CLI-R3)
    rng = np.random.default_rng(plan.seed)
    parts = [_robot(plan, rng, robot) for robot in range(plan.robots)]
    data = {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}
    order = np.lexsort((data["k"], data["topic"], data["robot"], data["arrival"]))
    data = {name: column[order] for name, column in data.items()}
    width = max(3, len(str(plan.robots - 1)))
    robots = pa.array([f"robot-{r:0{width}d}" for r in range(plan.robots)])
    topics = pa.array([s.topic for s in FLEET])
    source = pa.DictionaryArray.from_arrays(pa.array(data["robot"]), robots).cast(pa.string())
    topic = pa.DictionaryArray.from_arrays(pa.array(data["topic"]), topics).cast(pa.string())
    ids = pc.binary_join_element_wise(topic, pc.cast(pa.array(data["k"]), pa.string()), "-")
    table = pa.table({
        "source": source, "id": ids, "topic": topic,
        "stamp": data["stamp"], "arrival": data["arrival"], "size": data["size"],
    })
    rows = int(table.num_rows)
    if rows == 0:  # CLI-R7: a command writes what was asked, or refuses
        rate = sum(s.hz for s in FLEET) * plan.robots * (1.0 - plan.loss)
        raise nothing_written(asked, f"{counted(plan.robots, 'robot')} send about {rate:.0f} "
                              f"messages a second, over {plan.seconds:.3g} s",
                              plan.seconds if asked == "--seconds" else None)
    # Only an earlier output of generate is replaced, whole; a user's file is never deleted.
    with filled(output, "generate", "--output") as folder:
        if plan.per_robot:  # a stable sort by robot keeps each robot's rows in arrival order
            by_robot = table.take(pa.array(np.argsort(data["robot"], kind="stable")))
            counts = np.bincount(data["robot"], minlength=plan.robots)
            offsets = np.concatenate([[0], np.cumsum(counts)])
            for robot, name in enumerate(robots.to_pylist()):
                mine = by_robot.slice(int(offsets[robot]), int(counts[robot]))
                pq.write_table(mine, folder / f"{name}.parquet")
            return rows
        per_file = max(1, math.ceil(rows / plan.files))
        for number, offset in enumerate(range(0, max(rows, 1), per_file)):
            pq.write_table(table.slice(offset, per_file), folder / f"part-{number:05d}.parquet")
    return rows
