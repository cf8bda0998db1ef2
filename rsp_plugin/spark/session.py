"""A Spark session set up for rsp_plugin: the right Python in the workers, the `rdf` source registered.

Spark starts its Python workers with `python3` from PATH unless PYSPARK_PYTHON
says otherwise; in a virtualenv that Python lacks our packages and the job dies
with "Python worker failed to connect back". So the session helper points both
the driver and the workers at the interpreter that is running now.
"""

from __future__ import annotations

import os
import sys

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


def spark_session(master: str | None = None, *, app_name: str = "rsp-plugin", conf: dict | None = None):
    """The active session, or a new one on `master` (default `local[2]`), with the `rdf` source registered.

    A session that exists already is reused (its master wins): Spark allows one per process.
    """
    use_this_python()
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name).master(master or "local[2]")
    # each Python worker is one task slot: polars on one core there too, unless the user set it
    threads = {"spark.executorEnv.POLARS_MAX_THREADS": one_core(dict(os.environ))}
    for key, value in {**LOCAL_CONF, **threads, **(conf or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if "spark.sql.shuffle.partitions" not in (conf or {}):
        # Spark's 200 are for large shuffles; a micro-batch's are small: one partition per task slot
        # (2 on `local[2]`, 40 on ten executors of 4 cores), so that every core has a share
        spark.conf.set("spark.sql.shuffle.partitions", str(task_slots(spark)))
    register(spark)
    return spark


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
