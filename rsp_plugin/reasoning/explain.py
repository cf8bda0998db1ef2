"""Why an RDFS / OWL 2 RL entailment holds: rule applications down to window and background triples.

    m = Materializer("owl-rl", window=10, background=..., explain=True)
    m.advance_to(t, triples)
    m.explain((a, is_in, c))

The materializer is one LARS program (`reasoning/materializer.py`): two rules
lift window and background triples into the relation `triple`, the profile's
rules (rdfs.lars, owl2rl.lars) entail more. Its explanation is the engine's
(`lars.py`), with the lifting rules read as what they mean:

    {"triple": "<A> <isIn> <C> .", "t": 2, "by": "rule", "rule": "?x ?p ?z :- ...",
     "name": "prp-trp", "at": "owl2rl.lars:94:1", "horizon": 11, "bounded_by": 1,
     "body": [{"literal": "<isIn>(<A>,<B>)", "horizon": 11, "because": [
                 {"triple": "<A> <isIn> <B> .", "t": 2, "by": "window", "arrived": 1,
                  "horizon": 11}]}, ...]}

`by` "window": the triple arrived at time point `arrived` and holds until
`horizon` (arrived + the window); "background": background knowledge (or an
axiom of the rule set), never expiring. A rule's `name` is the W3C table's
(the comment above it in the rule file).
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..lars.explain import ExplanationUnavailable
from .rulesets import rule_file_text

_NAME = re.compile(r"%\s*([A-Za-z][\w-]*)\s*$")


def explain_triple(materializer, triple, t: int | None = None) -> dict | None:
    """Why `triple` holds at `t` (default: now), or None (see the module's text)."""
    engine = materializer.engine
    if engine.provenance is None:
        raise ExplanationUnavailable("this materializer keeps no explanations: make it with explain=True")
    if engine.now is None:
        return None
    tree = engine.explain((materializer._triple, tuple(triple)), engine.now if t is None else t)
    if tree is None:
        return None
    return Lifted(materializer).node(tree)


class Lifted:
    """Rewrites an engine explanation of a materializer's fact in the terms of RDF."""

    def __init__(self, materializer):
        self.lifts = {}
        for rule in materializer.program.rules:
            if rule.location is None or rule.location.filename != "<materializer>" or len(rule.body) != 1:
                continue
            lifted = materializer.terms.key(rule.body[0].atom.predicate)
            self.lifts[str(rule.location)] = "window" if lifted == "window_triple" else "background"

    def node(self, node: dict) -> dict:
        kind = self.lifts.get(node.get("at"))
        if node.get("by") == "rule" and kind is not None:
            leaf = {key: node[key] for key in ("fact", "triple", "t") if key in node}
            leaf["by"] = kind
            if kind == "window":
                (item,) = node["body"]
                leaf["arrived"] = item["witness"][0]
                leaf["horizon"] = item["horizon"]
                source = item["because"][0].get("source") if item["because"] else None
                if source is not None:
                    leaf["source"] = source
            return leaf
        if node.get("by") != "rule":
            return node
        out = dict(node)
        name = rule_name(node.get("at"))
        if name is not None:
            out["name"] = name
        out["body"] = [
            {**item, "because": [self.node(child) for child in item["because"]]} if "because" in item else item
            for item in node["body"]
        ]
        return out


def rule_name(location: str | None) -> str | None:
    """The name a shipped rule file gives the rule at `location` (`% prp-trp` above it)."""
    if not location:
        return None
    filename, _, rest = location.rpartition(":")
    filename, _, line = filename.rpartition(":")
    if not line.isdigit():
        return None
    return _names(filename).get(int(line))


@lru_cache(maxsize=None)
def _names(filename: str) -> dict[int, str]:
    try:
        lines = rule_file_text(filename).splitlines()
    except (FileNotFoundError, OSError, ValueError):
        return {}
    names = {}
    for number, line in enumerate(lines[1:], start=2):
        found = _NAME.match(lines[number - 2])
        if found and line.strip() and not line.lstrip().startswith("%"):
            names[number] = found.group(1)
    return names
