"""Reading ROS bags into Arrow rows (spec/formats.md, BAG-R4, BAG-D2).

Writes a rosbag2 MCAP bag of camera-sized messages (``sensor_msgs/msg/Image``, default
1,000,000 messages of 4 KB: a small camera frame; about 4.3 GB), three quarters on a camera
topic and a quarter on an IMU topic, receive times jittered out of order, then reads it
with :func:`timealign.rosbag.read.read_bag` on one core and prints messages per second
(CPU time of the reading process; the first read after writing also warms the page cache
and the library's imports, so the best of ``--repeat`` reads is reported), the peak
resident memory, and, for comparison, the same bag read through the library's own message
iterator with full deserialization of a sample.

    python benchmarks/bench_rosbag.py [--messages N] [--payload BYTES] [--keep DIR]
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from timealign.rosbag.discovery import Bag, Options
from timealign.rosbag.read import read_bag


def write_bag(path: Path, messages: int, payload: int) -> None:
    store = get_typestore(Stores.ROS2_HUMBLE)
    types = store.types
    image = types["sensor_msgs/msg/Image"](
        header=types["std_msgs/msg/Header"](
            stamp=types["builtin_interfaces/msg/Time"](sec=0, nanosec=0), frame_id="cam"),
        height=1, width=payload, encoding="mono8", is_bigendian=0, step=payload,
        data=np.zeros(payload, np.uint8))
    raw = bytearray(store.serialize_cdr(image, "sensor_msgs/msg/Image"))
    rng = random.Random(0)
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        camera = writer.add_connection("/camera/image", "sensor_msgs/msg/Image", typestore=store)
        other = writer.add_connection("/imu/image", "sensor_msgs/msg/Image", typestore=store)
        for k in range(messages):
            stamp = 1_000_000_000 + k * 1_000_000
            raw[4:8] = (stamp // 10**9).to_bytes(4, "little")
            raw[8:12] = (stamp % 10**9).to_bytes(4, "little")
            log = stamp + 2_000_000 + rng.randrange(-500_000, 500_000)
            writer.write(other if k % 4 == 3 else camera, log, bytes(raw))


def read_rate(path: Path) -> tuple[int, float]:
    bag = Bag(str(path), path.name, path.name, "")
    started = time.process_time()
    rows = sum(batch.num_rows for batch in read_bag(bag, Options()))
    return rows, time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--payload", type=int, default=4096, help="image bytes per message")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", help="write the bag here and keep it")
    args = parser.parse_args()
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-rosbag-"))
    path = base / "bag"
    try:
        if not path.exists():
            started = time.monotonic()
            write_bag(path, args.messages, args.payload)
            size = sum(f.stat().st_size for f in path.iterdir()) / 1e9
            print(f"wrote {args.messages:,} messages of {args.payload} B ({size:.2f} GB) in "
                  f"{time.monotonic() - started:.1f} s")
        best = None
        for _ in range(args.repeat):
            rows, seconds = read_rate(path)
            assert rows == args.messages, rows
            best = seconds if best is None else min(best, seconds)
            print(f"  read {rows:,} rows in {seconds:.2f} s CPU: {rows / seconds:,.0f} msgs/s")
        assert best is not None
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"rosbag MCAP -> Arrow, header stamps: {args.messages / best:,.0f} msgs/s per "
              f"core (best of {args.repeat}); peak RSS {peak:.0f} MB")
        from rosbags.highlevel import AnyReader

        started = time.process_time()
        sample = 0
        with AnyReader([path]) as reader:
            for connection, _, raw in reader.messages():
                reader.deserialize(raw, connection.msgtype)
                sample += 1
                if sample == 50_000:
                    break
        seconds = time.process_time() - started
        print(f"library iterator + full deserialization (first {sample:,}): "
              f"{sample / seconds:,.0f} msgs/s")
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
