"""The command line under `spark-submit`: `spark-submit [--master spark://HOST:7077 ...] .../rsp_plugin/cli/submit.py
query QUERY --stream IRI=FILE ... --engine spark [--mode distributed]` (docs/spark.md, "On a real cluster").

spark-submit runs a Python file, not a module: this file is `rsp-plugin`'s entry point for it. The session
is then the one spark-submit describes (its --master, --archives and spark.pyspark.python), not local[2]
(`rsp_plugin.spark.session.under_spark_submit`).
"""

import sys

from rsp_plugin.cli.command_line import main

if __name__ == "__main__":
    sys.exit(main())
