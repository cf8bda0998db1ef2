"""RDFS and OWL 2 RL over windows: the rule sets (rdfs.lars, owl2rl.lars) and the materializer.

    from rsp_plugin.reasoning import Materializer
    m = Materializer("owl-rl", window=10, background="ontologies/transport.ttl")
    report = m.advance_to(t, id_triples)     # report.added, .removed, .inconsistencies
    m.holding(), m.expires(triple)
"""

from .background import (
    BackgroundError,
    intern_triples,
    load_background,
    term_key,
    to_graph,
)
from .materializer import (
    PROFILE_ALIASES,
    PROFILES,
    Inconsistency,
    MaterializationReport,
    Materializer,
)

__all__ = [
    "BackgroundError",
    "Inconsistency",
    "MaterializationReport",
    "Materializer",
    "PROFILES",
    "PROFILE_ALIASES",
    "intern_triples",
    "load_background",
    "term_key",
    "to_graph",
]
