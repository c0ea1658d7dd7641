"""The Spark adapter: batch and streaming jobs that drive the reference machines per source.

The jobs never re-implement a rule: rows become inputs through each machine's
``inputs_from_records``, ticks and the end of input follow ``timealign.drive`` (spec
``drivers.md``), and every outcome comes from ``Algorithm.account`` (spec ``spark.md``).
Importing this package imports neither pyspark nor pyarrow: the CLI registers its
sub-commands here and loads Spark only when one of them runs.
"""
