"""PySpark's own discovery of the ``rosbag`` data source (BAG-R12).

PySpark 4 looks, at the first data-source lookup of a session, for top-level modules whose
name starts with ``pyspark_`` on the Python path and registers each one's ``DefaultSource``
(a :class:`pyspark.sql.datasource.DataSource`) under its ``name()``: apache/spark
(v4.0 and later), ``python/pyspark/sql/worker/lookup_data_sources.py``, ``_main``. So with
the package installed, ``spark.read.format("rosbag")`` works in a fresh session without
calling :func:`timealign.spark.rosbag_source.register`.
"""

from timealign.spark.rosbag_source import RosbagDataSource as DefaultSource

__all__ = ["DefaultSource"]
