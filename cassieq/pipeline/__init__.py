"""The batch side of cassieq on Spark (PySpark): queue statistics, archive export, bulk ingest.

Needs the ``pipeline`` extra (``pip install 'cassieq[pipeline]'``): pyspark 3.5, whose
Scala 2.12 build matches the newest Spark Cassandra connector (3.5.1). The connector's
jars come from Maven Central through ``mvn`` (see :mod:`cassieq.pipeline.spark`).
"""
