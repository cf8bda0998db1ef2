"""`pip install rsp_plugin` is the engine: with every extra's packages hidden, `reason` and `query` run on the
bundled examples, each other part says in one line which extra to install (exit status 2), and no module of
the package imports an extra's package at module level without saying so (rsp_plugin/core/extras.py).

The packages are hidden from the import system in a child interpreter (a finder first on sys.meta_path that
refuses them), as they would be missing in a lean virtualenv."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rsp_plugin.core.extras import EXTRAS

ROOT = Path(__file__).resolve().parent.parent
HIDDEN = sorted({module for modules in EXTRAS.values() for module in modules})

HIDE = f"""
import importlib.abc, sys

HIDDEN = {HIDDEN!r}


class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {{name!r}} (hidden by the test)", name=name)
        return None


sys.meta_path.insert(0, Hide())
"""

RUN = HIDE + """
from rsp_plugin.cli import main

status = main(sys.argv[1:])
assert not [name for name in sys.modules if name.partition(".")[0] in HIDDEN]
sys.exit(status)
"""


def lean(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", RUN, *argv], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_extras_are_those_of_pyproject():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    assert set(EXTRAS) <= set(extras)
    assert set(extras) - set(EXTRAS) == {"test"}
    assert all(f"rsp_plugin[{','.join(EXTRAS)}]" in extras["test"] for _ in [0])
    for module in HIDDEN:  # none of them is a dependency of the engine
        assert not [d for d in project["dependencies"] if d.lower().startswith(module.replace("paho", "paho-mqtt"))]


@pytest.mark.parametrize("argv, expected", [
    (["reason", "examples/hightemp.lars", "--stream", "examples/hightemp.stream", "--from", "1", "--to", "15"],
     "examples/hightemp.expected.jsonl"),
    (["reason", "examples/short-stop.mtl", "--stream", "examples/short-stop.txt"], "examples/short-stop.expected.jsonl"),
    (["query", "queries/barbieri-fig2-rdfs.rq", "-q",
      "--stream", "http://mobileservice.org/positions.trdf=queries/data/positions.tnt",
      "--background", "http://mobileservice.org/meansOfTransportation.rdf=queries/data/meansOfTransportation.ttl"],
     "queries/barbieri-fig2-rdfs.expected.jsonl"),
], ids=["reason", "datalogmtl", "query-rdfs"])
def test_the_engine_runs_without_any_extra(argv, expected):
    done = lean(*argv)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (ROOT / expected).read_text(encoding="utf-8")


def test_a_query_with_an_aggregate_runs_without_any_extra():
    done = lean("query", "queries/csrbench/max-temperature.rq", "-q",
                "--stream", "http://ex.org/csrbench=tests/data/csrbench/stream-6s.tnt")
    assert done.returncode == 0, done.stderr
    reports = [json.loads(line) for line in done.stdout.splitlines()]
    assert reports and all("bindings" in report for report in reports)


@pytest.mark.parametrize("argv, message", [
    (["query", "queries/barbieri-fig2.rq", "--stream", "http://ex/s=queries/data/positions.tnt", "--engine", "spark"],
     "--engine spark needs the extra 'spark': pip install 'rsp_plugin[spark]'"),
    (["serve", "--port", "1"], "rsp-plugin serve needs the extra 'service': pip install 'rsp_plugin[service]'"),
    (["reason", "examples/ticker-content.lars", "--stream", "examples/ticker-content.stream",
      "--semantics", "answer-stream"],
     "--semantics answer-stream needs the extra 'asp': pip install 'rsp_plugin[asp]'"),
    (["query", "queries/csrbench/max-temperature.rq", "--stream", "http://ex.org/csrbench=mqtt://127.0.0.1:1/t"],
     "reading or publishing MQTT needs the extra 'mqtt': pip install 'rsp_plugin[mqtt]'"),
    (["bench", "throughput", "--quick"],
     "the plot of rsp-plugin bench throughput (--plot - for none) needs the extra 'bench': "
     "pip install 'rsp_plugin[bench]'"),
    (["bench", "spark", "--quick"], "rsp-plugin bench spark needs the extra 'spark': pip install 'rsp_plugin[spark]'"),
], ids=["spark", "serve", "asp", "mqtt", "bench-plot", "bench-spark"])
def test_a_part_whose_extra_is_missing_says_which_to_install(argv, message):
    done = lean(*argv)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"rsp-plugin: {message}\n")


def test_no_module_imports_an_extra_unannounced():
    """Every module of the package imports with the extras hidden, or raises MissingExtra naming its extra
    (an ImportError, for Python callers); the engine's modules all import."""
    script = HIDE + """
import importlib, json, pkgutil
import rsp_plugin
from rsp_plugin.core.extras import MissingExtra

found = {}
for info in pkgutil.walk_packages(rsp_plugin.__path__, "rsp_plugin."):
    if info.name.endswith("__main__"):
        continue
    try:
        importlib.import_module(info.name)
        found[info.name] = "ok"
    except MissingExtra as error:
        found[info.name] = f"extra {error.extra}: {error}"
    except ImportError as error:
        found[info.name] = f"unannounced: {error}"
print(json.dumps(found))
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert not {name: what for name, what in found.items() if what.startswith("unannounced")}
    engine = ("core", "io", "lars", "reasoning", "mtl", "query", "columnar", "runtime", "cli")
    parts = {"rsp_plugin.cli.spark_query": "spark", "rsp_plugin.cli.answers": "asp"}  # a command's part, not the engine
    assert {name: what for name, what in found.items()
            if name.split(".")[1] in engine and what != "ok" and not what.startswith(f"extra {parts.get(name)}:")} == {}
    assert found["rsp_plugin.spark"].startswith("extra spark: rsp_plugin.spark needs the extra 'spark'")
    assert found["rsp_plugin.service.app"].startswith("extra service:")
    assert found["rsp_plugin.asp.solve"].startswith("extra asp:")


def test_importing_the_engine_sets_nothing_in_the_environment():
    """No import-time side effects: polars' threads are set where an engine is configured (the command line,
    Spark's session: rsp_plugin.columnar.one_core), never by importing the package."""
    script = """
import importlib, json, os, pkgutil
before = dict(os.environ)
import rsp_plugin
for info in pkgutil.walk_packages(rsp_plugin.__path__, "rsp_plugin."):
    if info.name.split(".")[1] not in ("spark", "bench") and not info.name.endswith("__main__"):
        importlib.import_module(info.name)
print(json.dumps(sorted(key for key, value in os.environ.items() if before.get(key) != value)))
"""
    environment = {key: value for key, value in os.environ.items() if key != "POLARS_MAX_THREADS"}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, env=environment,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    changed = set(json.loads(done.stdout)) - {"_RJEM_MALLOC_CONF"}  # (polars' own allocator setting)
    assert changed == set()
    from rsp_plugin.columnar import one_core

    configured: dict[str, str] = {}
    assert one_core(configured) == "1" and configured == {"POLARS_MAX_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    users = {"POLARS_MAX_THREADS": "2", "OPENBLAS_NUM_THREADS": "3"}
    assert one_core(users) == "2" and users == {"POLARS_MAX_THREADS": "2", "OPENBLAS_NUM_THREADS": "3"}  # theirs win
