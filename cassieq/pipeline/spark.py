"""A SparkSession that reads and writes Cassandra through the Spark Cassandra connector.

The connector and its dependencies are fetched once from Maven Central with ``mvn`` into
``$CASSIEQ_HOME/spark/`` (verified on every use) and passed as ``spark.jars``: nothing is
resolved over the network when a job runs. Connection settings are the server's
``CASSIEQ_*`` settings.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Literal

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

SparkLogLevel = Literal["WARN", "OFF"]
# The driver's log4j configuration, given to its JVM at launch. setLogLevel() alone comes
# too late: the JVM has logged its start (NativeCodeLoader...) and Spark its "Setting
# default log level" banner by then; a configuration of our own also ends the banner,
# which Spark prints only under its own default configuration. The level is a system
# property, so one file serves --quiet (OFF) and the default (WARN).
LOG_LEVEL_PROPERTY = "cassieq.spark.log.level"
LOG4J2_PROPERTIES = f"""\
# Written by cassieq (cassieq/pipeline/spark.py) for its Spark jobs' drivers.
status = error
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{yy/MM/dd HH:mm:ss}} %p %c{{1}}: %m%n%ex
rootLogger.level = ${{sys:{LOG_LEVEL_PROPERTY}:-WARN}}
rootLogger.appenderRef.stdout.ref = console
# pyspark's gateway starts logging as a shell does: Spark takes this logger's level (WARN
# when it is not configured) and announces it when it differs from the root's.
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = ${{sys:{LOG_LEVEL_PROPERTY}:-WARN}}
"""


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
    log_level: SparkLogLevel = "WARN",
) -> SparkSession:
    """Build (or join) the SparkSession for a job.

    Without ``master``: the master spark-submit was given when run under it, else
    ``local[*]``. Under spark-submit, pass the jars yourself
    (``--jars $(cassieq pipeline jars)``): the driver's classpath is fixed by then.
    ``log_level`` is the driver's Spark log level ("OFF" for --quiet): set before its JVM
    starts when this process starts it, else (spark-submit's JVM) as soon as it can be.
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
    if not under_submit:
        # The JVM this process launches reads these; spark-submit's is started already.
        conf["spark.driver.extraJavaOptions"] = (
            f'-Dlog4j.configurationFile="{_log4j_config()}" -D{LOG_LEVEL_PROPERTY}={log_level}'
        )
    # py4j logs its gateway's comings and goings; with no handler, Python's last resort
    # prints its warnings on stderr.
    quiet = log_level == "OFF"
    logging.getLogger("py4j").setLevel(logging.CRITICAL + 1 if quiet else logging.WARNING)
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
    spark.sparkContext.setLogLevel(log_level)
    # The connector's direct join binds a placeholder attribute with expression id 0
    # ("none#0"): when the first plan of a JVM gave id 0 to a column of the table it joins,
    # the job fails with "Couldn't find none#0" (an export of a partitioned queue, as the
    # first job of `cassieq pipeline export`, did). An empty range spends id 0 first.
    spark.range(0)
    return spark


def _log4j_config() -> Path:
    """The driver's log4j2 configuration, written once under $CASSIEQ_HOME."""
    path = maven.cassieq_home() / "spark" / "log4j2-cassieq.properties"
    if not path.exists() or path.read_text() != LOG4J2_PROPERTIES:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(LOG4J2_PROPERTIES)
        tmp.replace(path)  # atomic: two jobs starting at once never read half a file
    return path


def table(spark: SparkSession, keyspace: str, name: str) -> DataFrame:
    return spark.read.format(CASSANDRA_FORMAT).options(keyspace=keyspace, table=name).load()
