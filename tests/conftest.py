import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import os

import pytest


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist, every Spark test runs in one worker (`--dist loadgroup`): they share one
    Spark session there, as in a single process, while the other workers take the rest."""
    for item in items:
        if item.get_closest_marker("spark") is not None:
            item.add_marker(pytest.mark.xdist_group("spark"))


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one worker per core, at most four (each Spark or Chromium test starts a big process)."""
    return max(1, min(4, os.cpu_count() or 1))
