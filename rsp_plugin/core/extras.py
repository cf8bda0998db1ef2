"""The optional parts of rsp_plugin, what each needs beyond the engine, and the one line that says so.

`pip install rsp_plugin` is the engine: LARS and DatalogMTL programs, RDFS / OWL 2 RL, continuous
queries, `rsp-plugin reason` and `rsp-plugin query`. The rest are extras (pyproject.toml), so that
running `reason` does not take a gigabyte of Spark, a solver and a plotting library:

    spark     pyspark, pandas                        --engine spark, rsp_plugin.spark
    service   starlette, uvicorn, websockets, httpx  rsp-plugin serve, rsp_plugin.service
    asp       clingo                                 --semantics answer-stream
    mqtt      paho-mqtt                              mqtt:// streams and --publish
    bench     matplotlib                             the benchmarks' plots

`require(extra, what)` is called where such a part starts (a command, a package's first import, a
benchmark before it runs), so that a missing package is one line naming the extra to install
rather than a traceback from deep inside:

>>> EXTRAS["asp"]
('clingo',)
>>> str(MissingExtra("asp", "--semantics answer-stream"))
"--semantics answer-stream needs the extra 'asp': pip install 'rsp_plugin[asp]'"

Nothing on the engine's path imports these packages at module level (tests/test_extras.py hides
them and runs `reason` and `query`).
"""

from __future__ import annotations

from importlib.util import find_spec

#: each extra of pyproject.toml -> the top-level modules it installs that we import
EXTRAS = {
    "spark": ("pyspark", "pandas"),
    "service": ("starlette", "uvicorn", "websockets", "httpx"),
    "asp": ("clingo",),
    "mqtt": ("paho",),
    "bench": ("matplotlib",),
}


class MissingExtra(ImportError):
    """A part of rsp_plugin whose extra is not installed: `WHAT needs the extra 'X': pip install ...`.

    An ImportError (the import is what failed), printed by the command line as one line, exit status 2."""

    def __init__(self, extra: str, what: str, module: str | None = None):
        super().__init__(f"{what} needs the extra '{extra}': pip install 'rsp_plugin[{extra}]'", name=module)
        self.extra = extra


def missing(extra: str) -> tuple[str, ...]:
    """The modules of `extra` that cannot be imported here (found without importing them)."""
    absent = []
    for module in EXTRAS[extra]:
        try:
            found = find_spec(module) is not None
        except (ImportError, ValueError):  # a finder that refuses it, or a module without a spec
            found = False
        if not found:
            absent.append(module)
    return tuple(absent)


def require(extra: str, what: str) -> None:
    """Raise MissingExtra unless every package of `extra` is installed; `what` names the part that needs
    it as the user asked for it (`--engine spark`, `rsp-plugin serve`)."""
    absent = missing(extra)
    if absent:
        raise MissingExtra(extra, what, absent[0])
