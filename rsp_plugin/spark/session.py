"""A Spark session set up for rsp_plugin: the right Python in the workers, the `rdf` source registered.

Spark starts its Python workers with `python3` from PATH unless PYSPARK_PYTHON
says otherwise; in a virtualenv that Python lacks our packages and the job dies
with "Python worker failed to connect back". So the session helper points both
the driver and the workers at the interpreter that is running now.
"""

from __future__ import annotations

import os
import sys

#: What a small local run needs: no UI, two shuffle partitions, Arrow between the JVM and Python.
LOCAL_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
    "spark.driver.memory": "1g",
    "spark.executor.memory": "1024m",
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
    for key, value in {**LOCAL_CONF, **(conf or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def register(spark) -> None:
    """Register the plugin's data sources on `spark` (`rdf`, `rdf-http`)."""
    from .http import HTTPDataSource
    from .source import RDFDataSource

    spark.dataSource.register(RDFDataSource)
    spark.dataSource.register(HTTPDataSource)
