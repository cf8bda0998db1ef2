import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import os

# the suite is one process among others (pytest-xdist workers, Spark): polars on one core, as the command
# line sets it (rsp_plugin.columnar.one_core), before anything imports polars
os.environ.setdefault("POLARS_MAX_THREADS", "1")

import pytest


#: The Spark tests in three groups of about equal time (seconds measured in a whole run), each group run
#: by one worker sharing its Spark session: test ids by their beginnings. The local-cluster tests (their JVMs
#: take a minute to start) are all in the second, so one worker starts that cluster.
SPARK_GROUPS = {
    "tests/test_w3c_sparql11.py::test_every_one_through_spark": 1,  # 172 s: 235 streaming queries
    "tests/test_spark_query.py": 1, "tests/test_spark_source.py": 1, "tests/test_spark_http.py": 1,
    "tests/test_readme.py::test_a_shell_block_runs_as_written[docs/spark.md": 1,
    "tests/test_readme.py::test_a_python_block_runs_as_written[docs/spark.md": 1,
    "tests/test_spark_cluster.py": 2, "tests/test_spark_reason.py": 2, "tests/test_spark_checkpoint.py": 2,
    "tests/test_spark_keys.py": 1,
    "tests/test_spark_distributed.py": 3, "tests/test_spark_slices.py": 3, "tests/test_spark_partitioned.py": 3,
    "tests/test_mqtt_spark.py": 3, "tests/test_spark_safety.py": 3, "tests/test_spark_rules_distributed.py": 3,
}


def spark_group(nodeid: str) -> str | None:
    """The group of a test id (None: a test of its own)."""
    for beginning, group in SPARK_GROUPS.items():
        if nodeid.startswith(beginning):
            return f"spark-{group}"
    return None


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


def pytest_xdist_make_scheduler(config, log):
    """Under pytest-xdist, xdist's scheduling by scopes with the Spark groups as scopes (`spark_group`) and
    every other test a scope of its own: a group runs in one worker, as in a single process, and xdist
    hands out the scopes with the most tests first, so the long groups start at once and single tests
    fill the workers' ends. (Set here, on the controller: xdist's `xdist_group` marks, read on the
    workers, no longer reach the test ids under pytest 9.)"""
    if config.getvalue("dist") not in ("load", "loadgroup"):
        return None  # (another --dist asked for: xdist's own)
    from xdist.scheduler import LoadScopeScheduling

    class SparkGroups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return spark_group(nodeid) or nodeid

    return SparkGroups(config, log)


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one worker more than the cores, at most four. The Spark, broker, browser and service tests
    spend much of their time waiting on other processes (a whole run kept 0.65 of two cores busy with two
    workers): a third worker takes the third Spark group at once. (Each Spark or Chromium test starts a big
    process: more would crowd the memory.)"""
    return max(1, min(4, (os.cpu_count() or 1) + 1))
