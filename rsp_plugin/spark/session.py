"""A Spark session set up for rsp_plugin: the right Python in the workers, the `rdf` source registered.

Spark starts its Python workers with `python3` from PATH unless PYSPARK_PYTHON
says otherwise; in a virtualenv that Python lacks our packages and the job dies
with "Python worker failed to connect back". So the session helper points both
the driver and the workers at the interpreter that is running now.

Spark runs in a JVM: without Java the session is one line saying how to install
it (`UserError`), not the launcher's trace. Its log is ours from the first line
(`log4j2.properties`): errors only, unless `log_level` asks for more.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from ..core.errors import UserError

#: Spark's log levels, least to most (`spark_session(log_level=...)`, `--spark-log-level`)
LOG_LEVELS = ("OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL")
#: how a missing Java is installed, as the one line says it
INSTALL_JAVA = "install a Java runtime, 17 or later, e.g. apt-get install openjdk-17-jre-headless"
_LOG_CONFIG = Path(__file__).resolve().parent / "log4j2.properties"

from ..columnar import one_core

#: What a small local run needs: no UI, Arrow between the JVM and Python (shuffle partitions: as
#: many as the master has task slots, set once the session is up: `spark_session`).
LOCAL_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
    "spark.driver.memory": "1g",
    "spark.executor.memory": "1024m",
    # the throughput collector: on two CPUs the JVM picks G1, whose concurrent threads and barriers took
    # 12% of a distributed run's CPU (on one CPU it picks the serial collector itself)
    "spark.driver.extraJavaOptions": "-XX:+UseParallelGC",
    "spark.executor.extraJavaOptions": "-XX:+UseParallelGC",
}


def use_this_python() -> None:
    """Make Spark's Python workers run this interpreter (and so see this environment's packages)."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable


def java_problem() -> str | None:
    """Why Spark cannot start its JVM here, in one line (None: a `java` is there). Spark's launcher runs
    $JAVA_HOME/bin/java, else the `java` on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        java = Path(home) / "bin" / "java"
        if not (java.is_file() and os.access(java, os.X_OK)):
            return f"Spark runs on Java, and JAVA_HOME names no Java ({java} is not there): {INSTALL_JAVA} " \
                   "(or point JAVA_HOME at one)"
        return None
    if shutil.which("java") is None:
        return f"Spark runs on Java, and there is none here (no java on PATH, JAVA_HOME not set): {INSTALL_JAVA}"
    return None


def spark_session(master: str | None = None, *, app_name: str = "rsp-plugin", conf: dict | None = None,
                  log_level: str = "ERROR"):
    """The active session, or a new one on `master` (default `local[2]`), with the `rdf` source registered.

    A session that exists already is reused (its master wins): Spark allows one per process. No Java, or
    a JVM that exits at once, is a `UserError` (one line). `log_level`: Spark's own (one of `LOG_LEVELS`).
    """
    level = log_level.upper()
    if level not in LOG_LEVELS:
        raise ValueError(f"Spark log level {log_level!r}: expected one of {', '.join(LOG_LEVELS)}")
    submitted = under_spark_submit()
    if not submitted:
        use_this_python()
    from pyspark.sql import SparkSession

    if SparkSession.getActiveSession() is None:
        problem = java_problem()
        if problem is not None:
            raise UserError(problem)
    settings = {**LOCAL_CONF, **(conf or {})}
    logged = f"-Dlog4j.configurationFile={_quoted(_LOG_CONFIG.as_uri())} -Drsp_plugin.spark.log_level={level}"
    settings["spark.driver.extraJavaOptions"] = f"{settings.get('spark.driver.extraJavaOptions', '')} {logged}".strip()
    builder = SparkSession.builder.appName(app_name)
    if master is not None or not submitted:  # (under spark-submit, its --master and Python are the cluster's)
        builder = builder.master(master or "local[2]")
    # each Python worker is one task slot: polars on one core there too, unless the user set it
    settings.setdefault("spark.executorEnv.POLARS_MAX_THREADS", one_core(dict(os.environ)))
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as error:  # the JVM did not come up (PySpark's JAVA_GATEWAY_EXITED): its lines are above
        if "JAVA_GATEWAY_EXITED" not in str(error) and "Java gateway process exited" not in str(error):
            raise
        raise UserError(f"Spark's Java process exited as it started (its own lines are above); Spark needs "
                        f"Java 17 or later: {INSTALL_JAVA}") from None
    spark.sparkContext.setLogLevel(level)
    if "spark.sql.shuffle.partitions" not in (conf or {}):
        # Spark's 200 are for large shuffles; a micro-batch's are small: one partition per task slot
        # (2 on `local[2]`, 40 on ten executors of 4 cores), so that every core has a share
        spark.conf.set("spark.sql.shuffle.partitions", str(task_slots(spark)))
    register(spark)
    return spark


def under_spark_submit() -> bool:
    """Was this Python started by `spark-submit` (its JVM and gateway up, its --master, --archives and
    spark.pyspark.python in force)? Then the session is made with what it was given."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def _quoted(text: str) -> str:
    """A Java option's value as Spark splits the option string (a value with a space, in quotes)."""
    return f'"{text}"' if " " in text else text


def task_slots(spark) -> int:
    """How many tasks the session runs at once (at least 2): Spark's default parallelism."""
    return max(2, spark.sparkContext.defaultParallelism)


def register(spark) -> None:
    """Register the plugin's data sources on `spark` (`rdf`, `rdf-http`, `rdf-mqtt`)."""
    from .http import HTTPDataSource
    from .mqtt import MQTTDataSource
    from .source import RDFDataSource

    spark.dataSource.register(RDFDataSource)
    spark.dataSource.register(HTTPDataSource)
    spark.dataSource.register(MQTTDataSource)
