"""An explanation as indented text, for people (the JSON form is the tree itself).

    >>> tree = {"fact": "warning(b1)", "t": 4, "by": "rule", "rule": "warning(B) :- [RANGE 10] DIAMOND highTemp(B) .",
    ...         "at": "p.lars:2:1", "derived_at": 3, "fired_at": 4, "binding": {"B": "b1"}, "horizon": 13,
    ...         "bounded_by": 0, "body": [{"literal": "[RANGE 10] DIAMOND highTemp(b1)", "window": [0, 4],
    ...         "witness": [3], "horizon": 13, "because": [{"fact": "highTemp(b1)", "t": 3, "by": "data",
    ...         "source": {"file": "s.stream", "line": 7}}]}]}
    >>> print(render(tree))
    warning(b1) at 4, until 13: rule p.lars:2:1 (first derived at 3)
      warning(B) :- [RANGE 10] DIAMOND highTemp(B) .   with B = b1
      - [RANGE 10] DIAMOND highTemp(b1): at 3 (window 0..4), until 13 (bounds the horizon)
          highTemp(b1) at 3: stream element, s.stream:7
"""

from __future__ import annotations

INDENT = "  "


def render(tree: dict | None, *, fact: str = "", t: int | None = None, levels: int | None = None) -> str:
    """The tree as lines of text; a fact that does not hold says so. `levels`: how many levels of
    facts (or triples) to show, the root's being the first (None: all); what is below them is
    counted on one line."""
    if tree is None:
        return f"{fact} does not hold at {t}"
    if "why_not" in tree:
        return _why_not(tree)
    lines: list[str] = []
    _node(tree, 0, lines, levels)
    return "\n".join(lines)


def cut(tree, levels: int | None):
    """The tree (plain data) with only its first `levels` levels of facts; each body item that had
    more says how many facts below it are left out (`"more"`)."""
    if levels is None or not isinstance(tree, dict):
        return tree
    out = dict(tree)
    if "body" in out:
        body = []
        for item in out["body"]:
            item = dict(item)
            if "because" in item:
                if levels <= 1:
                    item["more"] = sum(_size(child) for child in item.pop("because"))
                else:
                    item["because"] = [cut(child, levels - 1) for child in item["because"]]
            body.append(item)
        out["body"] = body
    return out


def _size(node: dict) -> int:
    """How many fact nodes a subtree has (its root included)."""
    return 1 + sum(_size(child) for item in node.get("body", ()) for child in item.get("because", ()))


def _node(node: dict, depth: int, lines: list[str], levels: int | None = None) -> None:
    pad = INDENT * depth
    if node.get("by") == "query":
        answer = node.get("answer")
        if isinstance(answer, dict):
            answer = ", ".join(f"?{k} = {v}" for k, v in answer.items())
        count = node.get("matches", 0)
        shown = len(node.get("body", ()))
        more = f", {shown} shown" if shown < count else ""
        lines.append(f"{pad}{answer if answer is not None else 'the answer'} at {node.get('t')} in {node.get('query')}: "
                     f"{count} match{'es' if count != 1 else ''} of the pattern{more}")
        if node.get("note"):
            lines.append(f"{pad}{INDENT}({node['note']})")
        for missing in node.get("missing", ()):
            given = ", ".join(f"?{k} = {v}" for k, v in missing.get("with", {}).items())
            graph = f" in graph <{missing['graph']}>" if missing.get("graph") else ""
            lines.append(f"{pad}{INDENT}- missing: {missing['pattern']}" + (f" with {given}" if given else "") +
                         f": no triple{graph} at {node.get('t')}")
        for item in node.get("body", ()):
            _item(item, False, depth + 1, lines, levels)
        return
    name = node.get("triple") or node.get("fact", "?")
    head = f"{pad}{name} at {node.get('t')}"
    by = node.get("by")
    if by == "rule":
        if "placed" in node:
            head += f" (placed there by the rule fired at {node['fired_at']})"
            first = ""
        else:
            head += f", until {_horizon(node.get('horizon'))}"
            first = f" (first derived at {node['derived_at']})" if node.get("derived_at") != node.get("t") else ""
        named = f" {node['name']}" if node.get("name") else ""
        lines.append(f"{head}: rule{named} {node.get('at', '')}{first}".rstrip())
        binding = ", ".join(f"{k} = {v}" for k, v in node.get("binding", {}).items() if not k.startswith("_"))
        lines.append(f"{pad}{INDENT}{node.get('rule', '')}" + (f"   with {binding}" if binding else ""))
        if node.get("holds_until") is not None:
            lines.append(f"{pad}{INDENT}(holds until {node['holds_until']} by another derivation)")
        if node.get("truncated"):
            lines.append(f"{pad}{INDENT}... (the explanation is too large; stopped here)")
        for index, item in enumerate(node.get("body", ())):
            _item(item, index == node.get("bounded_by"), depth + 1, lines, levels)
        return
    if by == "data":
        lines.append(f"{head}: stream element{_source(node.get('source'))}")
    elif by == "stream":
        seen = f" at {node['timestamp']}" if node.get("timestamp") is not None else ""
        lines.append(f"{head}: element of <{node.get('stream')}>{seen}{_source(node.get('source'))}")
    elif by == "graph":
        lines.append(f"{head}: in graph {_graph(node.get('graph'))}{_source(node.get('source'))}")
    elif by == "unknown":
        lines.append(f"{head}: (its origin is not known)")
    elif by == "window":
        lines.append(f"{head}: in the window (arrived at {node.get('arrived')}, until {node.get('horizon')})"
                     f"{_source(node.get('source'))}")
    elif by == "background":
        lines.append(f"{head}: background{_source(node.get('source'))}")
    elif by == "same":
        lines.append(f"{head}: (explained above)")
    elif by == "forgotten":
        lines.append(f"{head}: (derived before what is kept; ask with a longer explain=)")
    else:
        lines.append(f"{head}: {by}")


def _item(item: dict, bounds: bool, depth: int, lines: list[str], levels: int | None = None) -> None:
    pad = INDENT * depth
    below = item.get("because", ())
    if levels is not None and levels <= 1 and below:  # the facts below are not shown: counted
        item = {key: value for key, value in item.items() if key != "because"}
        item["more"] = sum(_size(child) for child in below)
    children = (lambda child_depth: _children(item, child_depth, lines, levels))
    literal = item.get("literal", "")
    if "absent" in item:
        low, high = item["absent"]
        span = f"{low}..{high}" if low != high else f"{high}"
        lines.append(f"{pad}- {literal}: none at {span}" + (" (bounds the horizon: now only)" if bounds else ""))
        return
    if "holds" in item:
        lines.append(f"{pad}- {literal}: {item['holds']}")
        return
    if "matched" in item:  # a solution of a query's pattern (`query.py`)
        lines.append(f"{pad}- {literal}")
        children(depth + 1)
        return
    witness = item.get("witness", [])
    low, high = item.get("window", [None, None])
    if len(witness) > 1:
        seen = f"at every point of {witness[0]}..{witness[-1]}"
    else:
        seen = f"at {witness[0]}" if witness else "nowhere"
        if low is not None and low != high:
            seen += f" (window {low}..{high})"
    if item.get("between"):
        seen += f", {item['between'][0]}..{item['between'][-1]} after it"
    until = item.get("horizon")
    text = f"{pad}- {literal}: {seen}, until {_horizon(until)}"
    lines.append(text + (" (bounds the horizon)" if bounds else ""))
    children(depth + 2)


def _children(item: dict, depth: int, lines: list[str], levels: int | None) -> None:
    for child in item.get("because", ()):
        _node(child, depth, lines, None if levels is None else levels - 1)
    if item.get("more"):
        count = item["more"]
        lines.append(f"{INDENT * depth}... ({count} more fact{'s' if count != 1 else ''} below; "
                     f"--explain-depth all shows them)")


def _graph(graph) -> str:
    if graph is None:
        return "(the default graph)"
    return graph if " " in graph else f"<{graph}>"


def _horizon(horizon) -> str:
    return "never expires" if horizon is None else str(horizon)


def _source(source) -> str:
    if not source:
        return ""
    if isinstance(source, dict):
        parts = []
        if source.get("file"):
            parts.append(f"{source['file']}:{source['line']}" if source.get("line") else str(source["file"]))
        elif source.get("stream"):
            parts.append(f"<{source['stream']}> #{source['arrival']}" if source.get("arrival") else
                         f"<{source['stream']}>")
        if source.get("graph"):
            parts.append(f"graph <{source['graph']}>")
        if source.get("timestamp") is not None:
            parts.append(f"timestamp {source['timestamp']}")
        return ", " + ", ".join(parts) if parts else ""
    return f", {source}"


def _why_not(tree: dict) -> str:
    """A fact that does not hold (`lars.why_not`): for each rule that could derive it, the first
    premise missing at that time point."""
    lines = [f"{tree.get('fact')} does not hold at {tree.get('t')}"]
    rules = tree.get("why_not", [])
    if not rules:
        lines.append(f"{INDENT}({tree.get('note', 'no rule derives it, and it is not in the stream then')})")
    _why_not_rules(rules, 1, lines)
    if tree.get("truncated"):
        lines.append(f"{INDENT}... (more rules; stopped here)")
    return "\n".join(lines)


def _why_not_rules(rules: list, depth: int, lines: list[str]) -> None:
    pad = INDENT * depth
    for rule in rules:
        binding = ", ".join(f"{k} = {v}" for k, v in rule.get("binding", {}).items() if not k.startswith("_"))
        lines.append(f"{pad}rule {rule.get('at', '')}: {rule.get('rule', '')}" +
                     (f"   with {binding}" if binding else ""))
        for met in rule.get("met", ()):
            lines.append(f"{pad}{INDENT}- {met}: holds")
        missing = rule.get("missing")
        if missing is not None:
            lines.append(f"{pad}{INDENT}- {missing['literal']}: {missing['why']}   <- missing")
            _why_not_rules(missing.get("why_not", ()), depth + 2, lines)
        if rule.get("note"):
            lines.append(f"{pad}{INDENT}({rule['note']})")
