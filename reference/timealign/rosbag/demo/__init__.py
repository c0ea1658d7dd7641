"""``python -m timealign.rosbag.demo``: write a small robot fleet as ROS bags (``make
demo-bags``): per robot a camera (``sensor_msgs/msg/CameraInfo``, 30 Hz), an IMU
(``sensor_msgs/msg/Imu``, 100 Hz) and a ``std_msgs/msg/String`` status topic (1 Hz, no
header), stamps jittered, log times a few ms later and out of order; robots alternate
between rosbag2 MCAP, rosbag2 SQLite 3 and ROS 1 bags. Its options are parsed in
:mod:`timealign.commands.rosbag_demo`.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

STORAGES = ("mcap", "sqlite3", "ros1")
TOPICS = (("/camera/camera_info", "sensor_msgs/msg/CameraInfo", 30),
          ("/imu", "sensor_msgs/msg/Imu", 100), ("/status", "std_msgs/msg/String", 1))


def _message(store: Any, msgtype: str, stamp: int) -> Any:
    import numpy as np  # the spark extra: imported when bags are written, not for --help

    t = store.types
    if msgtype == "std_msgs/msg/String":
        return t[msgtype](data=f"ok {stamp}")
    header = t["std_msgs/msg/Header"](**({"seq": 0} if "seq" in dict(
        store.fielddefs["std_msgs/msg/Header"][1]) else {}), stamp=t[
        "builtin_interfaces/msg/Time"](sec=stamp // 10**9, nanosec=stamp % 10**9),
        frame_id="base")
    vector, zeros9 = t["geometry_msgs/msg/Vector3"](x=0.0, y=0.0, z=9.8), np.zeros(9)
    if msgtype == "sensor_msgs/msg/Imu":
        return t[msgtype](header=header, orientation=t["geometry_msgs/msg/Quaternion"](
            x=0.0, y=0.0, z=0.0, w=1.0), orientation_covariance=zeros9,
            angular_velocity=vector, angular_velocity_covariance=zeros9,
            linear_acceleration=vector, linear_acceleration_covariance=zeros9)
    roi = t["sensor_msgs/msg/RegionOfInterest"](x_offset=0, y_offset=0, height=0, width=0,
                                                do_rectify=False)
    fields = dict(store.fielddefs[msgtype][1])
    names = ("d", "k", "r", "p") if "k" in fields else ("D", "K", "R", "P")
    arrays = dict(zip(names, (np.zeros(5), zeros9, zeros9, np.zeros(12)), strict=True))
    return t[msgtype](header=header, height=480, width=640, distortion_model="plumb_bob",
                      binning_x=0, binning_y=0, roi=roi, **arrays)


def write_robot(path: Path, storage: str, seconds: float, seed: int) -> int:
    """One robot's bag; returns the number of messages."""
    from rosbags.rosbag1 import Writer as Writer1
    from rosbags.rosbag2 import StoragePlugin
    from rosbags.rosbag2 import Writer as Writer2
    from rosbags.typesys import Stores, get_typestore

    rng = random.Random(seed)
    ros1 = storage == "ros1"
    store = get_typestore(Stores.ROS1_NOETIC if ros1 else Stores.ROS2_HUMBLE)
    messages = []
    for topic, msgtype, hz in TOPICS:
        for k in range(int(seconds * hz)):
            stamp = 10**9 + round(k * 1e9 / hz) + rng.randrange(2_000_000)
            log = stamp + 3_000_000 + rng.randrange(4_000_000)
            messages.append((log, topic, msgtype, stamp))
    writer: Any = Writer1(path) if ros1 else Writer2(
        path, version=9, storage_plugin=StoragePlugin.MCAP if storage == "mcap"
        else StoragePlugin.SQLITE3)
    with writer:
        connections = {topic: writer.add_connection(topic, msgtype, typestore=store)
                       for topic, msgtype, _ in TOPICS}
        for log, topic, msgtype, stamp in sorted(messages):
            message = _message(store, msgtype, stamp)
            raw = store.serialize_ros1(message, msgtype) if ros1 else store.serialize_cdr(
                message, msgtype)
            writer.write(connections[topic], log, raw)
    return len(messages)


#: The command and the option of ``python -m timealign.rosbag.demo`` in outputs.WRITES.
COMMAND, OPTION = "demo", "--output"


def messages_per_robot(seconds: float) -> int:
    """The messages one robot's bag holds (what :func:`write_robot` writes)."""
    return sum(int(seconds * hz) for _, _, hz in TOPICS)
