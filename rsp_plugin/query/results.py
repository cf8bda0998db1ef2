"""R2S and the result values: what one evaluation answers, and what a query reports.

An `Answer` is the relation one evaluation computes (rows of ids, triples of
ids, or a boolean). `ResultStream` turns the sequence of answers into the
query's stream: RSTREAM reports each answer, ISTREAM what is new since the
previous evaluation, DSTREAM what is gone (bag differences, as CQL defines them).
A `QueryResult` is one report, readable as rdflib terms, as the command line's
JSON line, or as W3C SPARQL 1.1 JSON results. An evaluation that failed is
reported as such, `{"t": 3000, "error": "..."}`, and leaves the R2S memory as it
was (the next window's ISTREAM / DSTREAM compare with the last good answer).
An evaluation cut short at a bound (`bounds.py`) is reported the same way,
marked with the bound: `{"t": 3000, "cut": "max-eval-ms", "error": "evaluation
stopped after 10000 ms (--max-eval-ms 10000)"}`.

>>> from rsp_plugin.core.terms import Dictionary
>>> terms = Dictionary()
>>> a, b = terms.intern("<http://ex/a>"), terms.intern("<http://ex/b>")
>>> stream = ResultStream(R2S.ISTREAM)
>>> first = stream.report(Answer("SELECT", ("x",), [(a,)]))
>>> second = stream.report(Answer("SELECT", ("x",), [(a,), (b,)]))
>>> QueryResult("q", 2000, second, terms).to_json()
{'t': 2000, 'bindings': [{'x': '<http://ex/b>'}]}
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..core.rdfterms import key_term
from .model import R2S


@dataclass(frozen=True)
class Answer:
    """One evaluation's relation: SELECT rows, CONSTRUCT triples or an ASK boolean (ids)."""

    form: str
    variables: tuple[str, ...] = ()
    rows: list[tuple] = field(default_factory=list)
    triples: list[tuple[int, int, int]] = field(default_factory=list)
    boolean: bool | None = None
    #: the query orders its rows (ORDER BY): keep them as they are
    ordered: bool = False
    #: why this evaluation failed (None: it did not)
    error: str | None = None
    #: the bound that stopped this evaluation ("max-eval-ms", "max-solutions"; `bounds.py`), with
    #: `error` saying so; None: it ran to its end
    cut: str | None = None

    def __len__(self) -> int:
        if self.form == "SELECT":
            return len(self.rows)
        if self.form == "CONSTRUCT":
            return len(self.triples)
        return int(bool(self.boolean))


class ResultStream:
    """RSTREAM / ISTREAM / DSTREAM over a query's successive answers."""

    def __init__(self, r2s: R2S):
        self.r2s = r2s
        self._previous: Counter | None = None
        self._previous_boolean = False

    def report(self, answer: Answer) -> Answer:
        if self.r2s is R2S.RSTREAM or answer.error is not None:
            return answer
        if answer.form == "ASK":
            before, now = self._previous_boolean, bool(answer.boolean)
            self._previous_boolean = now
            changed = (now and not before) if self.r2s is R2S.ISTREAM else (before and not now)
            return Answer("ASK", boolean=changed)
        items = answer.rows if answer.form == "SELECT" else answer.triples
        current = Counter(items)
        previous = self._previous or Counter()
        self._previous = current
        if self.r2s is R2S.ISTREAM and not answer.ordered:  # (one pass: each item the previous answer still
            kept = []  # counts is taken off it, the others are new; which copies of a repeated item stay
            take = previous.get  # does not matter where the rows are sorted after)
            for item in items:
                count = take(item)
                if count:
                    previous[item] = count - 1
                else:
                    kept.append(item)
            if answer.form == "SELECT":
                return Answer("SELECT", answer.variables, kept)
            return Answer("CONSTRUCT", triples=kept)
        if self.r2s is R2S.ISTREAM:
            difference, source = current - previous, items
        else:
            difference, source = previous - current, list(previous.elements())
        kept = []
        for item in source:
            if difference[item] > 0:
                difference[item] -= 1
                kept.append(item)
        if answer.form == "SELECT":
            return Answer("SELECT", answer.variables, kept, ordered=answer.ordered)
        return Answer("CONSTRUCT", triples=kept)


class QueryResult:
    """One report of a continuous query at time t (ms)."""

    __slots__ = ("query", "t", "answer", "terms")

    def __init__(self, query: str, t: int, answer: Answer, terms):
        self.query = query
        self.t = t
        self.answer = answer
        # the answer's terms, kept with it: a result outlives the dictionary's memory of them
        self.terms = terms.resolved(_answer_terms(answer)) if hasattr(terms, "resolved") else terms

    def __repr__(self) -> str:
        return f"<QueryResult {self.query} t={self.t} {self.form} size={len(self.answer)}>"

    @property
    def form(self) -> str:
        return self.answer.form

    @property
    def variables(self) -> tuple[str, ...]:
        return self.answer.variables

    @property
    def boolean(self) -> bool | None:
        return self.answer.boolean

    @property
    def error(self) -> str | None:
        """Why this window's evaluation failed (None: it did not)."""
        return self.answer.error

    @property
    def cut(self) -> str | None:
        """The bound that cut this window's evaluation short (None: it ran to its end)."""
        return self.answer.cut

    def _keys(self, row) -> list:
        keys = self.terms.keys
        return [None if value is None else keys[value] for value in row]

    def rows(self) -> list[tuple]:
        """SELECT rows as N-Triples keys (None: unbound), in the contract's order."""
        name = self.terms.keys.__getitem__
        unbound = False
        rows = []
        for row in self.answer.rows:
            if None in row:
                unbound = True
                rows.append(tuple(self._keys(row)))
            else:
                rows.append(tuple(map(name, row)))
        if self.answer.ordered:
            return rows
        if unbound:
            return sorted(rows, key=_row_order)
        return sorted(rows)  # (no unbound value: the rows' own order is _row_order's)

    def triples(self) -> list[str]:
        """CONSTRUCT triples as N-Triples lines, sorted."""
        keys = self.terms.keys
        return sorted(f"{keys[s]} {keys[p]} {keys[o]} ." for s, p, o in self.answer.triples)

    @property
    def bindings(self) -> list[dict]:
        """SELECT rows as {variable: rdflib term} (unbound variables left out)."""
        return [
            {name: key_term(key) for name, key in zip(self.answer.variables, row) if key is not None}
            for row in self.rows()
        ]

    @property
    def graph(self):
        """CONSTRUCT triples as an rdflib Graph."""
        from rdflib import Graph

        graph = Graph()
        keys = self.terms.keys
        for s, p, o in self.answer.triples:
            graph.add((key_term(keys[s]), key_term(keys[p]), key_term(keys[o])))
        return graph

    def to_json(self) -> dict:
        """The command line's line: {"t", "bindings"} / {"t", "triples"} / {"t", "boolean"};
        {"t", "error"} for an evaluation that failed, {"t", "cut", "error"} for one cut at a bound."""
        if self.answer.error is not None:
            return _failure(self.t, self.answer)
        if self.form == "SELECT":
            names = self.answer.variables
            return {"t": self.t, "bindings": [
                dict(zip(names, row)) if None not in row else
                {name: key for name, key in zip(names, row) if key is not None} for row in self.rows()
            ]}
        if self.form == "CONSTRUCT":
            return {"t": self.t, "triples": self.triples()}
        return {"t": self.t, "boolean": bool(self.answer.boolean)}

    def to_sparql_json(self) -> dict:
        """W3C SPARQL 1.1 Query Results JSON (with the time as an extra member "t"; "error"
        instead of results for an evaluation that failed, with "cut" for one cut at a bound)."""
        if self.answer.error is not None:
            return _failure(self.t, self.answer)
        if self.form == "ASK":
            return {"t": self.t, "head": {}, "boolean": bool(self.answer.boolean)}
        if self.form == "CONSTRUCT":
            names = ("subject", "predicate", "object")
            keys = self.terms.keys
            rows = sorted(tuple(keys[v] for v in triple) for triple in self.answer.triples)
        else:
            names = self.answer.variables
            rows = self.rows()
        return {"t": self.t, "head": {"vars": list(names)}, "results": {"bindings": [
            {name: sparql_json_term(key) for name, key in zip(names, row) if key is not None} for row in rows
        ]}}


def _failure(t: int, answer: Answer) -> dict:
    if answer.cut is not None:
        return {"t": t, "cut": answer.cut, "error": answer.error}
    return {"t": t, "error": answer.error}


def _answer_terms(answer: Answer):
    from itertools import chain

    if answer.form == "SELECT":
        return chain.from_iterable(answer.rows)
    return chain.from_iterable(answer.triples)


def _row_order(row: tuple) -> tuple:
    return tuple("" if key is None else key for key in row)


def sparql_json_term(key: str) -> dict:
    """A term (its N-Triples key) as W3C SPARQL 1.1 JSON results write it."""
    from rdflib import BNode, Literal, URIRef

    term = key_term(key)
    if isinstance(term, URIRef):
        return {"type": "uri", "value": str(term)}
    if isinstance(term, BNode):
        return {"type": "bnode", "value": str(term)}
    assert isinstance(term, Literal)
    out = {"type": "literal", "value": str(term)}
    if term.language:
        out["xml:lang"] = term.language
    elif term.datatype is not None:
        out["datatype"] = str(term.datatype)
    return out
