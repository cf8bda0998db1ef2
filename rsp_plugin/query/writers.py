"""A query's reports written out: JSON lines, the W3C results formats, N-Triples and TriG.

One writer per output, fed every report in order, closed at the end:

    json         one line per evaluation: {"t", "bindings" | "triples" | "boolean"}
    sparql-json  one W3C SPARQL 1.1 JSON results document: the evaluation time is its
                 first variable (`t`, an xsd:integer of ms), one binding per solution
    sparql-jsonl JSON Lines: one W3C SPARQL 1.1 JSON results object per evaluation,
                 with the member "t"
    csv, tsv     W3C SPARQL 1.1 CSV / TSV results: one header, then one row per
                 solution, the evaluation time in the first column (`t`)
    sparql-xml   one W3C SPARQL results XML document; each <result> (or
                 <boolean>) carries the evaluation time as the attribute rsp:t
    nt           CONSTRUCT triples as N-Triples lines (the time is not kept)
    trig         CONSTRUCT results as timestamped graphs: one named graph per
                 evaluation, its time in prov:generatedAtTime as an xsd:dateTime
                 (RSP-QL's convention, which `formats.read_timestamped_graphs` reads back)

CSV, TSV, XML and the SPARQL JSON document hold solutions, so an evaluation with
no solution leaves no row; `json` and `sparql-jsonl` show every evaluation. A
`Readable` (`rsp_plugin.query.readable`) writes times as xsd:dateTime (`--time iso`,
every format) and terms with the query's prefixes (`--prefixes`: json and trig,
whose readers take prefixed names; the W3C formats keep their full terms).

>>> import io
>>> from rsp_plugin.core.terms import Dictionary
>>> from rsp_plugin.query.results import Answer, QueryResult
>>> terms = Dictionary()
>>> a, one = terms.intern("<http://ex/a>"), terms.intern('"1"^^<http://www.w3.org/2001/XMLSchema#integer>')
>>> out = io.StringIO()
>>> writer = writer_for("csv", out, form="SELECT", variables=("x", "n"))
>>> writer.write(QueryResult("q", 1000, Answer("SELECT", ("x", "n"), [(a, one)]), terms))
>>> writer.close()
>>> out.getvalue().splitlines()
['t,x,n', '1000,http://ex/a,1']
"""

from __future__ import annotations

import csv
import json
from typing import TextIO

from ..core.rdfterms import key_term
from .readable import XSD, XSD_DATETIME, XSD_INTEGER, Readable, iso_time, time_literal
from .results import sparql_json_term

#: --format values, and what each holds
FORMATS = {
    "json": "one JSON line per evaluation: {\"t\", \"bindings\" | \"triples\" | \"boolean\"}",
    "sparql-json": "one W3C SPARQL 1.1 JSON results document, the evaluation time as its first variable t",
    "sparql-jsonl": "JSON Lines: one W3C SPARQL 1.1 JSON results object per evaluation, with \"t\"",
    "sparql-xml": "one W3C SPARQL results XML document, each result with the attribute rsp:t",
    "csv": "W3C SPARQL 1.1 CSV results with the evaluation time as column t",
    "tsv": "W3C SPARQL 1.1 TSV results with the evaluation time as column ?t",
    "nt": "CONSTRUCT triples as N-Triples",
    "trig": "CONSTRUCT results as TriG, one named graph per evaluation with prov:generatedAtTime",
}
CONSTRUCT_ONLY = ("nt", "trig")
#: the formats whose readers take prefixed names (`--prefixes`)
COMPACTING = ("json", "trig")
RSP_NAMESPACE = "https://w3id.org/rsp-plugin/results#"
PROV_GENERATED_AT_TIME = "http://www.w3.org/ns/prov#generatedAtTime"
XSD_BOOLEAN = XSD + "boolean"


class FormatError(ValueError):
    """A format that cannot hold this query's results (N-Triples for a SELECT, say)."""


def writer_for(fmt: str, out: TextIO, *, form: str, variables: tuple[str, ...] = (),
               readable: Readable | None = None) -> "ResultWriter":
    """The writer of `fmt` for a query of `form` ("SELECT", "CONSTRUCT", "ASK") projecting `variables`;
    `readable`: how terms and times are shown (default: as the contract writes them)."""
    if fmt not in FORMATS:
        raise FormatError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if fmt in CONSTRUCT_ONLY and form != "CONSTRUCT":
        raise FormatError(f"--format {fmt} writes the triples of a CONSTRUCT query; this is a {form} query "
                          f"(use json, sparql-json, sparql-jsonl, sparql-xml, csv or tsv)")
    readable = readable or Readable()
    if readable.compacts and fmt not in COMPACTING:
        raise FormatError(f"--prefixes writes prefixed names, which --format {fmt} cannot hold: it goes with "
                          f"{' or '.join(COMPACTING)}")
    kind = {"json": JSONLinesWriter, "sparql-json": SPARQLJSONWriter, "sparql-jsonl": JSONLinesWriter,
            "csv": CSVWriter, "tsv": TSVWriter, "sparql-xml": XMLWriter, "nt": NTriplesWriter,
            "trig": TriGWriter}[fmt]
    return kind(out, fmt=fmt, form=form, variables=tuple(variables), readable=readable)


class ResultWriter:
    """Writes each report as it comes; `close()` ends the document (the stream stays open)."""

    def __init__(self, out: TextIO, *, fmt: str, form: str, variables: tuple[str, ...],
                 readable: Readable | None = None):
        self.out = out
        self.readable = readable or Readable()
        self.fmt = fmt
        self.form = form
        self.variables = variables
        self.started = False

    def write(self, result) -> None:
        if not self.started:
            self.start(result)
            self.started = True
        self.body(result)

    def start(self, result) -> None:
        """Before the first report (a header)."""

    def body(self, result) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """After the last report (a footer; a header too when nothing was reported)."""
        if not self.started:
            self.start(None)
            self.started = True
        self.out.flush()

    def names(self, result) -> tuple[str, ...]:
        if self.form == "CONSTRUCT":
            return ("subject", "predicate", "object")
        if self.form == "ASK":
            return ("boolean",)
        if result is not None and result.variables:
            return tuple(result.variables)
        return self.variables

    @staticmethod
    def solutions(result) -> list[tuple]:
        """The report's rows as N-Triples keys (None: unbound); CONSTRUCT triples as rows of three."""
        if result.form == "CONSTRUCT":
            keys = result.terms.keys
            return sorted(tuple(keys[v] for v in triple) for triple in result.answer.triples)
        return result.rows()


class JSONLinesWriter(ResultWriter):
    def body(self, result) -> None:
        value = result.to_sparql_json() if self.fmt == "sparql-jsonl" else result.to_json()
        self.out.write(json.dumps(self.readable.report(value), ensure_ascii=False) + "\n")


class SPARQLJSONWriter(ResultWriter):
    """One W3C SPARQL 1.1 JSON results document for the whole run, written as the reports come:
    the head names the time variable first (as CSV's first column), then one binding per solution
    (per evaluation for ASK: its `boolean` an xsd:boolean), each with its evaluation time."""

    def start(self, result) -> None:
        self.columns = self.names(result)
        self.time_name = _time_column(self.columns)
        head = json.dumps({"vars": [self.time_name, *self.columns]}, ensure_ascii=False)
        self.out.write(f'{{"head": {head}, "results": {{"bindings": [')
        self.first = True

    def body(self, result) -> None:
        if result.form == "ASK":
            rows = [(f'"{"true" if result.boolean else "false"}"^^<{XSD_BOOLEAN}>',)]
        else:
            rows = self.solutions(result)
        if not rows:
            return
        stamp = {"type": "literal", "value": iso_time(result.t), "datatype": XSD_DATETIME} if self.readable.iso_time \
            else {"type": "literal", "value": str(result.t), "datatype": XSD_INTEGER}
        for row in rows:
            binding = {self.time_name: stamp}
            binding.update((name, sparql_json_term(key)) for name, key in zip(self.columns, row) if key is not None)
            self.out.write(("\n" if self.first else ",\n") + json.dumps(binding, ensure_ascii=False))
            self.first = False

    def close(self) -> None:
        if not self.started:
            self.start(None)
            self.started = True
        self.out.write("\n]}}\n")
        self.out.flush()


def _time_column(names: tuple[str, ...]) -> str:
    """`t`, unless the query has a variable of that name (then `t_`, `t__`, ...)."""
    name = "t"
    while name in names:
        name += "_"
    return name


class CSVWriter(ResultWriter):
    """W3C CSV: IRIs and literals as plain strings (no datatype or language), CRLF line ends."""

    def start(self, result) -> None:
        self.columns = self.names(result)
        self.csv = csv.writer(self.out, lineterminator="\r\n")
        self.csv.writerow([_time_column(self.columns), *self.columns])

    def body(self, result) -> None:
        if result.form == "ASK":
            self.csv.writerow([self.readable.time(result.t), "true" if result.boolean else "false"])
            return
        t = self.readable.time(result.t)
        for row in self.solutions(result):
            self.csv.writerow([t, *(_csv_value(key) for key in row)])


def _csv_value(key: str | None) -> str:
    if key is None:
        return ""
    term = key_term(key)
    if key.startswith("_:"):
        return key
    return str(term)


class TSVWriter(ResultWriter):
    """W3C TSV: terms in their SPARQL / N-Triples form, variables as ?name in the header."""

    def start(self, result) -> None:
        self.columns = self.names(result)
        self.out.write("\t".join(f"?{name}" for name in (_time_column(self.columns), *self.columns)) + "\n")

    def body(self, result) -> None:
        t = time_literal(result.t) if self.readable.iso_time else str(result.t)
        if result.form == "ASK":
            self.out.write(f"{t}\t{'true' if result.boolean else 'false'}\n")
            return
        for row in self.solutions(result):
            self.out.write("\t".join([t, *("" if key is None else _tsv_value(key) for key in row)]) + "\n")


def _tsv_value(key: str) -> str:
    return key.replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


class XMLWriter(ResultWriter):
    """W3C SPARQL Query Results XML; every <result> / <boolean> with rsp:t, the evaluation time (ms,
    or its xsd:dateTime with `--time iso`)."""

    def start(self, result) -> None:
        # (saxutils imported here and in `body`, `_xml_term`: the other formats do not pay for its import)
        from xml.sax.saxutils import quoteattr

        self.columns = self.names(result)
        self.out.write('<?xml version="1.0"?>\n'
                       f'<sparql xmlns="http://www.w3.org/2005/sparql-results#" xmlns:rsp="{RSP_NAMESPACE}">\n'
                       "  <head>\n")
        if self.form != "ASK":
            for name in self.columns:
                self.out.write(f"    <variable name={quoteattr(name)}/>\n")
        self.out.write("  </head>\n")
        if self.form != "ASK":
            self.out.write("  <results>\n")

    def body(self, result) -> None:
        from xml.sax.saxutils import quoteattr

        t = self.readable.time(result.t)
        if result.form == "ASK":
            self.out.write(f'  <boolean rsp:t="{t}">{"true" if result.boolean else "false"}</boolean>\n')
            return
        for row in self.solutions(result):
            self.out.write(f'    <result rsp:t="{t}">\n')
            for name, key in zip(self.columns, row):
                if key is not None:
                    self.out.write(f"      <binding name={quoteattr(name)}>{_xml_term(key)}</binding>\n")
            self.out.write("    </result>\n")

    def close(self) -> None:
        if not self.started:
            self.start(None)
            self.started = True
        if self.form != "ASK":
            self.out.write("  </results>\n")
        self.out.write("</sparql>\n")
        self.out.flush()


def _xml_term(key: str) -> str:
    from xml.sax.saxutils import escape, quoteattr

    from rdflib import BNode, Literal, URIRef

    term = key_term(key)
    if isinstance(term, URIRef):
        return f"<uri>{escape(str(term))}</uri>"
    if isinstance(term, BNode):
        return f"<bnode>{escape(str(term))}</bnode>"
    assert isinstance(term, Literal)
    if term.language:
        return f"<literal xml:lang={quoteattr(term.language)}>{escape(str(term))}</literal>"
    if term.datatype is not None:
        return f"<literal datatype={quoteattr(str(term.datatype))}>{escape(str(term))}</literal>"
    return f"<literal>{escape(str(term))}</literal>"


class NTriplesWriter(ResultWriter):
    def body(self, result) -> None:
        self.out.write("".join(line + "\n" for line in result.triples()))


class TriGWriter(ResultWriter):
    """One named graph per evaluation, `<urn:x-rsp-plugin:result:QUERY:T>` (T in ms), its time in the
    default graph as PROV-O says: `prov:generatedAtTime "1970-01-01T00:00:05Z"^^xsd:dateTime`. With
    `--prefixes`, terms are prefixed names and each prefix is declared before its first use."""

    def body(self, result) -> None:
        shown = self.readable
        graph = f"<urn:x-rsp-plugin:result:{result.query}:{result.t}>"
        lines = "".join(f"  {shown.text(line)}\n" for line in result.triples())
        stamp = f"{graph} {shown.text(f'<{PROV_GENERATED_AT_TIME}> {time_literal(result.t)}')} .\n"
        declared = "".join(line + "\n" for line in shown.declarations())
        self.out.write(f"{declared}{graph} {{\n{lines}}}\n{stamp}")


__all__ = ["FORMATS", "FormatError", "ResultWriter", "writer_for"]
