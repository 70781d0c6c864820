"""A SparkSession that reads and writes Cassandra through the Spark Cassandra connector.

The connector and its dependencies are fetched once from Maven Central with ``mvn`` into
``$CASSIEQ_HOME/spark/`` (verified on every use) and passed as ``spark.jars``: nothing is
resolved over the network when a job runs. Connection settings are the server's
``CASSIEQ_*`` settings.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cassieq.config import Settings
from cassieq.tools.devcluster import maven

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# The connector is built per Spark minor and Scala version: 3.5.x for Spark 3.5 on Scala
# 2.12, the build pyspark 3.5 ships. None exists for Spark 4 yet, hence pyspark < 3.6.
SPARK_MINOR = "3.5"
CONNECTOR = maven.Artifact("com.datastax.spark", "spark-cassandra-connector_2.12", "3.5.1")
# Spark ships its own Scala runtime and slf4j; second copies on the classpath would clash.
PROVIDED_BY_SPARK = ("scala-library", "scala-reflect", "slf4j-api")
CASSANDRA_FORMAT = "org.apache.spark.sql.cassandra"


class PipelineError(RuntimeError):
    """A job cannot run: a missing dependency, a bad argument, an unknown queue."""


def connector_jars(log: maven.Log | None = None) -> list[Path]:
    """The connector's jars (fetched on first use)."""
    dest = maven.cassieq_home() / "spark" / f"{CONNECTOR.artifact}-{CONNECTOR.version}"
    try:
        return maven.ensure_fetched([CONNECTOR], dest, exclude=PROVIDED_BY_SPARK, log=log)
    except maven.MavenError as exc:
        raise PipelineError(str(exc)) from exc


def _check_pyspark() -> None:
    try:
        import pyspark
    except ImportError as exc:
        raise PipelineError("the pipeline needs pyspark: pip install 'cassieq[pipeline]'") from exc
    if not pyspark.__version__.startswith(SPARK_MINOR + "."):
        raise PipelineError(
            f"pyspark {pyspark.__version__} is installed; the Spark Cassandra connector "
            f"{CONNECTOR.version} needs pyspark {SPARK_MINOR}.x"
        )


def session(
    settings: Settings,
    *,
    master: str | None = None,
    app_name: str = "cassieq",
    log: maven.Log | None = None,
) -> SparkSession:
    """Build (or join) the SparkSession for a job.

    Without ``master``: the master spark-submit was given when run under it, else
    ``local[*]``. Under spark-submit, pass the jars yourself
    (``--jars $(cassieq pipeline jars)``): the driver's classpath is fixed by then.
    """
    _check_pyspark()
    from pyspark.sql import SparkSession

    jars = connector_jars(log)
    under_submit = "PYSPARK_GATEWAY_PORT" in os.environ
    # Python workers must import cassieq: run them with this interpreter (this venv).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    chosen = master or (None if under_submit else "local[*]")
    if chosen:
        builder = builder.master(chosen)
    local = (chosen or "").startswith("local")
    if local:
        # Before the JVM starts: otherwise Spark binds to the host's first interface.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    conf = {
        "spark.jars": ",".join(str(j) for j in jars),
        "spark.sql.extensions": "com.datastax.spark.connector.CassandraSparkExtensions",
        "spark.cassandra.connection.host": ",".join(settings.cassandra_hosts),
        "spark.cassandra.connection.port": str(settings.cassandra_port),
        # Read what the engine committed at the consistency it writes with.
        "spark.cassandra.input.consistency.level": settings.consistency,
        "spark.cassandra.output.consistency.level": settings.consistency,
        "spark.sql.session.timeZone": "UTC",
        # A re-run ingest task would reserve a second monoton range and write its rows
        # twice: a failed task fails the job instead (its summary says what was written).
        "spark.task.maxFailures": "1",
        "spark.speculation": "false",  # a speculative copy of a task would write twice too
        "spark.ui.showConsoleProgress": "false",
    }
    if local:
        # One machine: stay on loopback, no web UI, few shuffle partitions.
        conf |= {
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "8",
        }
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def table(spark: SparkSession, keyspace: str, name: str) -> DataFrame:
    return spark.read.format(CASSANDRA_FORMAT).options(keyspace=keyspace, table=name).load()
