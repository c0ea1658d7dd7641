"""ROS bags as job input (spec/formats.md, ``BAG-…``): rosbag2 (MCAP, SQLite 3) and ROS 1
bags read with the ``rosbags`` library into Arrow record batches of SP-R1 rows.

This package needs ``rosbags``, ``numpy`` and ``pyarrow`` but not Spark; the Spark data
source registered as ``rosbag`` is :mod:`timealign.spark.rosbag_source`.
"""
