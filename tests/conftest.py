import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import os

# the suite is one process among others (pytest-xdist workers, Spark): polars on one core, as the command
# line sets it (rsp_plugin.columnar.one_core), before anything imports polars
os.environ.setdefault("POLARS_MAX_THREADS", "1")

import pytest


#: Spark tests in two halves of about equal time, each half in one worker with one Spark session
#: (the other half: the cluster, checkpoint, partitioned and safety tests)
SPARK_FIRST_HALF = {"test_w3c_sparql11", "test_spark_query", "test_spark_source", "test_spark_http", "test_readme"}


@pytest.fixture(scope="session")
def spark():
    """The worker's Spark session (`local[2]`), for the Spark tests that use one directly."""
    from rsp_plugin.spark import spark_session

    return spark_session("local[2]")


@pytest.fixture(scope="session")
def cluster():
    """The worker's `local-cluster[2,1,1024]` session in a child process (`spark_cluster.ClusterWorker`),
    shared by the cluster tests of queries and of reason (one start: its JVMs take a minute)."""
    from spark_cluster import ClusterWorker

    worker = ClusterWorker()
    yield worker
    worker.close()


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (`--dist loadgroup`), the Spark tests run in two workers, each half in one
    of them sharing its Spark session, as in a single process; the other workers take the rest."""
    for item in items:
        if item.get_closest_marker("spark") is not None:
            half = 1 if item.module.__name__.rpartition(".")[2] in SPARK_FIRST_HALF else 2
            item.add_marker(pytest.mark.xdist_group(f"spark-{half}"))


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one worker per core, at most four (each Spark or Chromium test starts a big process)."""
    return max(1, min(4, os.cpu_count() or 1))
