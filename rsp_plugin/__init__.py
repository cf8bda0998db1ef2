"""rsp_plugin: RDF stream processing with windows, RDFS / OWL 2 RL and LARS rules.

    from rsp_plugin import RSPEngine
    rt = RSPEngine()
    rt.register_stream("http://ex/sensors")
    q = rt.register_query(text)        # C-SPARQL or RSP-QL
    rt.push("http://ex/sensors", triples, timestamp=10_000)
    rt.advance_to(20_000)              # results to q.subscribe(...) callbacks and returned

The names below are imported on first use, so that `import rsp_plugin.lars...`
stays free of rdflib.
"""

from __future__ import annotations

_EXPORTS = {
    "RSPEngine": "rsp_plugin.runtime.engine",
    "RegisteredQuery": "rsp_plugin.runtime.queries",
    "TimestampedGraph": "rsp_plugin.runtime.queries",
    "QueryResult": "rsp_plugin.query.results",
    "ContinuousQuery": "rsp_plugin.query.model",
    "ReportPolicy": "rsp_plugin.query.model",
    "R2S": "rsp_plugin.query.model",
    "parse_query": "rsp_plugin.query.syntax",
    "parse_query_file": "rsp_plugin.query.syntax",
    "QuerySyntaxError": "rsp_plugin.core.errors",
    "RuleSyntaxError": "rsp_plugin.core.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rsp_plugin' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
