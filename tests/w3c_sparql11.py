"""The W3C SPARQL 1.1 query-evaluation tests as continuous queries (data: tests/data/w3c-sparql11/).

How a test is run (tests/data/w3c-sparql11/SOURCE.md): its default-graph data is
a one-element stream (every triple at t = 0, literals as written), its query gets
`FROM STREAM <...> [RANGE 1s STEP 1s]` before WHERE (each named graph a named
window on a stream of its own), and the evaluation at t = 1000 is compared with
the expected result: solutions as multisets with blank nodes up to renaming,
order where the query has ORDER BY, terms exactly (xsd:string = plain literal,
language tags case-insensitive), CONSTRUCT graphs by isomorphism.

A test with no data at all reads a one-triple clock stream through a named
window no pattern of it names (a stream with no element never reports).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

import rdflib
from rdflib import Graph, Namespace
from rdflib.compare import isomorphic

from rsp_plugin.core.rdfterms import term_key
from rsp_plugin.core.terms import canonical_literal

SUITE = Path(__file__).parent / "data" / "w3c-sparql11"
STREAM = "http://example.org/w3c/stream"
CLOCK = "http://example.org/w3c/clock"
CLOCK_TRIPLE = "<http://example.org/w3c/clock> <http://example.org/w3c/tick> <http://example.org/w3c/clock> ."
WINDOW = "[RANGE 1s STEP 1s]"
RS = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/result-set#")
_FORMATS = {".ttl": "turtle", ".rdf": "xml", ".nt": "nt"}


@dataclass(frozen=True)
class W3CTest:
    folder: str
    id: str
    name: str
    query: str
    data: tuple[str, ...]
    graph_data: tuple[str, ...]
    result: str

    def __str__(self) -> str:
        return f"{self.folder}/{self.id}"


def load_tests() -> tuple[str, list[W3CTest]]:
    manifest = json.loads((SUITE / "tests.json").read_text(encoding="utf-8"))
    tests = [W3CTest(t["folder"], t["id"], t["name"], t["query"], tuple(t["data"]), tuple(t["graphData"]), t["result"])
             for t in manifest["tests"]]
    return manifest["base"], tests


BASE, TESTS = load_tests()


@contextlib.contextmanager
def literals_as_written():
    """rdflib keeps lexical forms while parsing ("01"^^xsd:integer stays "01")."""
    before = rdflib.NORMALIZE_LITERALS
    rdflib.NORMALIZE_LITERALS = False
    try:
        yield
    finally:
        rdflib.NORMALIZE_LITERALS = before


def iri_of(path: str) -> str:
    return BASE + path


def read_graph(path: str) -> Graph:
    graph = Graph()
    with literals_as_written():
        graph.parse(SUITE / path, format=_FORMATS[Path(path).suffix], publicID=iri_of(path))
    return graph


def ntriples(graph: Graph) -> str:
    """The graph as N-Triples lines in the engine's written forms (lexical forms kept)."""
    return "".join(f"{term_key(s)} {term_key(p)} {term_key(o)} .\n" for s, p, o in graph)


# the continuous query --------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<comment>\#[^\n]*)
  | (?P<string>'''(?:[^\\]|\\.)*?'''|\"\"\"(?:[^\\]|\\.)*?\"\"\"|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")
  | (?P<iri><[^<>"{}|^`\\\s]*>)
  | (?P<open>\{) | (?P<close>\})
  | (?P<word>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<other>.)""", re.X | re.S)


def _insertion_point(text: str) -> tuple[int, bool]:
    """Where the dataset clauses go (before WHERE or the WHERE group) and whether the query has FROM."""
    depth, groups, has_from, construct = 0, 0, False, False
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        if kind == "word" and depth == 0:
            word = match.group().upper()
            if word == "CONSTRUCT":
                construct = True
            elif word == "FROM":
                has_from = True
            elif word == "WHERE":
                return match.start(), has_from
        elif kind == "open":
            if depth == 0:
                groups += 1
                if groups == (2 if construct else 1):
                    return match.start(), has_from
            depth += 1
        elif kind == "close":
            depth -= 1
    raise ValueError("no WHERE group found")


def continuous_query(test: W3CTest) -> str:
    """The test's query with its windows: the default graph a window on STREAM, each named graph
    a named window on a stream of its own, a clock window when there is no data."""
    text = (SUITE / test.query).read_text(encoding="utf-8")
    at, has_from = _insertion_point(text)
    clauses = []
    if test.data:
        clauses.append(f"FROM STREAM <{STREAM}> {WINDOW}")
    if not has_from:
        for path in test.graph_data:
            clauses.append(f"FROM NAMED WINDOW <{iri_of(path)}> ON <{iri_of(path)}#stream> {WINDOW}")
    if needs_clock(test):
        clauses.append(f"FROM NAMED WINDOW <{CLOCK}> ON <{CLOCK}> {WINDOW}")
    base = "" if re.search(r"^\s*BASE\b", text, re.I | re.M) else f"BASE <{iri_of(test.query)}>\n"
    return base + text[:at] + "\n" + "\n".join(clauses) + "\n" + text[at:]


def streams(test: W3CTest) -> list[tuple[str, str]]:
    """(stream IRI, N-Triples text) of every stream the query reads."""
    text = (SUITE / test.query).read_text(encoding="utf-8")
    _, has_from = _insertion_point(text)
    out = []
    if test.data:
        graph = Graph()
        for path in test.data:
            graph += read_graph(path)
        out.append((STREAM, ntriples(graph)))
    if not has_from:
        for path in test.graph_data:
            out.append((f"{iri_of(path)}#stream", ntriples(read_graph(path))))
    if not any(text for _, text in out):
        out.append((CLOCK, CLOCK_TRIPLE + "\n"))
    return out


def needs_clock(test: W3CTest) -> bool:
    return any(iri == CLOCK for iri, _ in streams(test))


def static_graphs(test: W3CTest) -> list[tuple[str, str]]:
    """(graph IRI, path) of the graphs a query names with FROM (its own dataset)."""
    text = (SUITE / test.query).read_text(encoding="utf-8")
    _, has_from = _insertion_point(text)
    return [(iri_of(path), str(SUITE / path)) for path in test.graph_data] if has_from else []


# expected results ------------------------------------------------------------------------


def _key(term) -> str | None:
    if term is None:
        return None
    key = term_key(term)
    if key[0] == '"':
        key = canonical_literal(key)
        if "@" in key[key.rindex('"'):]:
            lexical, _, language = key.rpartition("@")
            key = f"{lexical}@{language.lower()}"
    return key


def normal_key(key: str | None) -> str | None:
    """Our written term, normalised as the expectations are (language tag case)."""
    if key is None or key[0] != '"':
        return key
    end = key.rindex('"')
    if key[end + 1:].startswith("@"):
        return key[:end + 1] + key[end + 1:].lower()
    return key


@dataclass
class Expected:
    form: str                        # SELECT | ASK | CONSTRUCT | CSV
    variables: tuple = ()
    rows: list | None = None         # tuples of keys (None: unbound), or of CSV strings
    ordered: bool = False
    boolean: bool | None = None
    graph: Graph | None = None


def _ordered(test: W3CTest) -> bool:
    return bool(re.search(r"ORDER\s+BY", (SUITE / test.query).read_text(encoding="utf-8"), re.I))


def expected(test: W3CTest) -> Expected:
    path = SUITE / test.result
    suffix = path.suffix
    query_text = (SUITE / test.query).read_text(encoding="utf-8")
    if suffix == ".csv":
        reader = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
        return Expected("CSV", tuple(reader[0]), [tuple(row) for row in reader[1:]], _ordered(test))
    if suffix in (".ttl", ".nt", ".rdf"):
        graph = Graph()
        with literals_as_written():
            graph.parse(path, format=_FORMATS[suffix], publicID=iri_of(test.result))
        result_sets = list(graph.subjects(rdflib.RDF.type, RS.ResultSet))
        if re.search(r"\bCONSTRUCT\b", query_text, re.I) or not result_sets:
            return Expected("CONSTRUCT", graph=graph)
        return _result_set(graph, result_sets[0], _ordered(test))
    with literals_as_written():
        result = rdflib.query.Result.parse(path.open("rb"), format={".srx": "xml", ".srj": "json",
                                                                    ".tsv": "tsv"}[suffix])
    if result.type == "ASK":
        return Expected("ASK", boolean=bool(result.askAnswer))
    variables = tuple(str(v) for v in result.vars)
    rows = [tuple(_key(row.get(rdflib.Variable(v))) if isinstance(row, dict) else _key(row[v]) for v in variables)
            for row in (result.bindings if hasattr(result, "bindings") else result)]
    return Expected("SELECT", variables, rows, _ordered(test))


def _result_set(graph: Graph, node, ordered: bool) -> Expected:
    variables = tuple(str(v) for v in graph.objects(node, RS.resultVariable))
    boolean = graph.value(node, RS.boolean)
    if boolean is not None:
        return Expected("ASK", boolean=str(boolean) == "true")
    solutions = []
    for solution in graph.objects(node, RS.solution):
        values = {}
        for binding in graph.objects(solution, RS.binding):
            values[str(graph.value(binding, RS.variable))] = _key(graph.value(binding, RS.value))
        index = graph.value(solution, RS.index)
        solutions.append((int(index) if index is not None else 0, tuple(values.get(v) for v in variables)))
    solutions.sort(key=lambda item: item[0])
    return Expected("SELECT", variables, [row for _, row in solutions], ordered)


# comparison ------------------------------------------------------------------------------


def _is_blank(value) -> bool:
    return isinstance(value, str) and value.startswith("_:")


def rows_match(expected_rows: list, actual_rows: list, ordered: bool) -> bool:
    """Multisets (sequences when ordered) equal up to a renaming of blank nodes."""
    if len(expected_rows) != len(actual_rows):
        return False
    if not any(_is_blank(v) for row in expected_rows + actual_rows for v in row):
        if ordered:
            return expected_rows == actual_rows
        return sorted(expected_rows, key=repr) == sorted(actual_rows, key=repr)

    def fits(a, b, mapping, used):
        added = []
        for x, y in zip(a, b):
            if _is_blank(x) != _is_blank(y):
                return None
            if _is_blank(x):
                if x in mapping:
                    if mapping[x] != y:
                        return None
                elif y in used:
                    return None
                else:
                    mapping[x] = y
                    used.add(y)
                    added.append(x)
            elif x != y:
                for name in added:
                    used.discard(mapping.pop(name))
                return None
        return added

    def search(index, remaining, mapping, used):
        if index == len(expected_rows):
            return True
        row = expected_rows[index]
        candidates = [remaining[0]] if ordered else remaining
        for candidate in list(dict.fromkeys(candidates)) if not ordered else candidates:
            added = fits(row, actual_rows[candidate], mapping, used)
            if added is None:
                continue
            rest = list(remaining)
            rest.remove(candidate)
            if search(index + 1, rest, mapping, used):
                return True
            for name in added:
                used.discard(mapping.pop(name))
        return False

    return search(0, list(range(len(actual_rows))), {}, set())


def _csv_value(key: str | None) -> str:
    if key is None:
        return ""
    if key[0] == "<":
        return key[1:-1]
    if key.startswith("_:"):
        return key
    from rsp_plugin.core.rdfterms import key_term

    return str(key_term(key))


def matches(test: W3CTest, want: Expected, line: dict) -> bool:
    """Does the result line at t = 1000 (the command line's JSON) give the expected result?"""
    if "error" in line:
        return False
    if want.form == "ASK":
        return line.get("boolean") == want.boolean
    if want.form == "CONSTRUCT":
        if "triples" not in line:
            return False
        graph = Graph()
        with literals_as_written():
            graph.parse(data="\n".join(line["triples"]), format="nt")
        return isomorphic(graph, want.graph)
    if "bindings" not in line:
        return False
    names = want.variables
    if want.form == "CSV":
        actual = [tuple(_csv_value(row.get(v)) for v in names) for row in line["bindings"]]
        expect = [tuple(v if v else "" for v in row) for row in want.rows]
        expect = [tuple(("_:" + v[2:]) if v.startswith("_:") else v for v in row) for row in expect]
        return rows_match(expect, actual, want.ordered)
    actual = [tuple(normal_key(row.get(v)) for v in names) for row in line["bindings"]]
    if line.get("vars") is not None and set(line["vars"]) != set(names):
        return False
    return rows_match(want.rows, actual, want.ordered)


def result_at(lines: list[dict], t: int = 1000) -> dict | None:
    for line in lines:
        if line.get("t") == t:
            return line
    return None


# running ---------------------------------------------------------------------------------


def command_line(test: W3CTest, workdir: Path, *, engine: str = "local") -> list[str]:
    """`rsp-plugin query`'s arguments for the test, its query and streams written under `workdir`."""
    workdir.mkdir(parents=True, exist_ok=True)
    query = workdir / "query.rq"
    query.write_text(continuous_query(test), encoding="utf-8")
    argv = ["query", str(query)]
    for number, (iri, text) in enumerate(streams(test)):
        path = workdir / f"stream{number}.nt"
        path.write_text(text, encoding="utf-8")
        argv += ["--stream", f"{iri}={path}"]
    for iri, path in static_graphs(test):
        argv += ["--background", f"{iri}={path}"]
    if engine != "local":
        argv += ["--engine", engine]
    return argv


def run_cli(test: W3CTest, workdir: Path, *, engine: str = "local") -> tuple[list[dict], str]:
    """`rsp-plugin query` in this process: the JSON lines it prints and its stderr."""
    from contextlib import redirect_stderr, redirect_stdout

    from rsp_plugin.cli.command_line import main

    argv = command_line(test, workdir, engine=engine)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(argv)
    if status != 0:
        err.write(f"exit status {status}\n")
    return [json.loads(line) for line in out.getvalue().splitlines() if line.strip()], err.getvalue()


def run_spark_cli(tests: list[W3CTest], workdir: Path, *, at_once: int = 4) -> dict[str, list[dict]]:
    """`rsp-plugin query ... --engine spark` for many tests in one Spark session: the command line's
    own arguments and code (`rsp_plugin.cli.spark_query.start`), `at_once` of them running together (each
    its own streaming query), each printing its JSON lines into its own buffer. Test id -> lines."""
    from rsp_plugin.cli.command_line import parse_options
    from rsp_plugin.cli.spark_query import start

    printed: dict[str, list[dict]] = {}
    for first in range(0, len(tests), at_once):
        running = []
        for test in tests[first:first + at_once]:
            options = parse_options(command_line(test, workdir / test.id, engine="spark") + ["-q"])
            out = io.StringIO()
            running.append((test, out, start(options, out=out)))
        for test, out, started in running:
            started.finish()
            printed[test.id] = [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]
    return printed


def run_engine(test: W3CTest) -> list[dict]:
    """The same through the embedded `RSPEngine`: pushes of rdflib triples, then the replay's end."""
    from rsp_plugin.runtime.engine import RSPEngine

    engine = RSPEngine()
    for iri, path in static_graphs(test):
        engine.add_graph(iri, path)
    pushes = []
    for iri, text in streams(test):
        engine.register_stream(iri)
        graph = Graph()
        with literals_as_written():
            graph.parse(data=text, format="nt")
        pushes.append((iri, graph))
    engine.register_query(continuous_query(test))
    for iri, graph in pushes:
        engine.push(iri, graph, timestamp=0)
    return [result.to_json() for result in engine.finish()]


def outcome(test: W3CTest, lines: list[dict]) -> str:
    """'pass', or why not."""
    line = result_at(lines)
    if line is None:
        return "no result at t=1000"
    if "error" in line:
        return f"error: {line['error']}"
    try:
        want = expected(test)
    except Exception as error:  # pragma: no cover - the expectations all parse
        return f"expected result unreadable: {error}"
    return "pass" if matches(test, want, line) else f"wrong answer: {json.dumps(line)[:300]}"


__all__ = ["TESTS", "W3CTest", "continuous_query", "streams", "expected", "matches", "run_cli", "run_spark_cli", "run_engine",
           "outcome"]
