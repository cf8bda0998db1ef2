"""The embeddable engine: streams, queries and graphs registered, elements pushed, reports made.

    from rsp_plugin.runtime import RSPEngine
"""

from .engine import RegisteredQuery, RSPEngine, TimestampedGraph

__all__ = ["RSPEngine", "RegisteredQuery", "TimestampedGraph"]
