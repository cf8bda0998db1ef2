"""Sinks: what each writes for a batch of results, and how the rewindable ones cut a half-written batch.

No Spark session: results come from the embeddable engine. The docstring
examples of the Spark package's modules run here too (test_doc.py leaves the
package out, since it needs PySpark).
"""

from __future__ import annotations

import doctest
import importlib
import json

import pytest

from rsp_plugin.runtime.engine import RSPEngine
from rsp_plugin.spark.sinks import (
    CallbackSink,
    ConsoleSink,
    DeadLetters,
    HTTPPostSink,
    JSONLinesSink,
    NTriplesSink,
    Sinks,
    TriGSink,
    sink_for,
)
from rsp_plugin.core.terms import Dictionary

EX = "http://ex/"


def results(form: str = "CONSTRUCT"):
    engine = RSPEngine()
    engine.register_stream(f"{EX}s")
    body = ("CONSTRUCT { ?o <http://ex/back> ?s }" if form == "CONSTRUCT" else "SELECT ?s ?o")
    engine.register_query(f"REGISTER RSTREAM <{EX}q> AS {body} FROM STREAM <{EX}s> [RANGE 1s STEP 1s] "
                          f"WHERE {{ ?s <{EX}p> ?o }}", name="q")
    terms = engine.terms
    ids = [terms.intern(f"<{EX}{name}>") for name in ("a", "p", "b")]
    engine.push_ids(f"{EX}s", [(500, tuple(ids)), (1200, (ids[2], ids[1], ids[0]))])
    return engine.finish()


def test_file_sinks_write_json_lines_n_triples_and_timestamped_graphs(tmp_path):
    found = results()
    jsonl, nt, tnt, trig = (sink_for(tmp_path / name) for name in ("r.jsonl", "r.nt", "r.tnt", "r.trig"))
    assert (type(jsonl), type(nt), type(trig)) == (JSONLinesSink, NTriplesSink, TriGSink)
    for sink in (jsonl, nt, tnt, trig):
        sink.write(0, found)
    assert [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()] == [
        {"t": 1000, "triples": [f"<{EX}b> <{EX}back> <{EX}a> ."]},
        {"t": 2000, "triples": [f"<{EX}a> <{EX}back> <{EX}b> ."]}]
    assert (tmp_path / "r.nt").read_text() == f"<{EX}b> <{EX}back> <{EX}a> .\n<{EX}a> <{EX}back> <{EX}b> .\n"
    assert (tmp_path / "r.tnt").read_text().splitlines()[1] == f"2000 <{EX}a> <{EX}back> <{EX}b> ."
    from rsp_plugin.io.formats import read_timestamped_graphs

    elements = list(read_timestamped_graphs((tmp_path / "r.trig").read_text(), Dictionary(), filename="r.trig"))
    assert [(element.time_point, str(element).split(" ", 1)[1]) for element in elements] == [
        (1000, f"<{EX}back>(<{EX}b>,<{EX}a>)"), (2000, f"<{EX}back>(<{EX}a>,<{EX}b>)")]


def test_bindings_are_not_triples(tmp_path):
    with pytest.raises(ValueError, match="is a SELECT query: N-Triples holds triples of CONSTRUCT results"):
        NTriplesSink(tmp_path / "r.nt").write(0, results("SELECT"))


def test_a_rewind_cuts_what_came_after_the_saved_position(tmp_path):
    sink = Sinks([JSONLinesSink(tmp_path / "r.jsonl"), DeadLetters(tmp_path / "dead.txt")])
    found = results("SELECT")
    sink.sinks[0].write(0, found[:1])
    sink.sinks[1].write(0, ["f:1: bad"])
    saved = sink.position()
    sink.sinks[0].write(1, found[1:])
    sink.sinks[1].write(1, ["f:2: bad"])
    sink.rewind(saved)
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) == 1
    assert (tmp_path / "dead.txt").read_text() == "f:1: bad\n"


def test_console_callback_and_http(tmp_path, capsys):
    found = results("SELECT")
    ConsoleSink(fmt="sparql-json").write(0, found[:1])
    assert json.loads(capsys.readouterr().out)["head"] == {"vars": ["s", "o"]}
    seen = []
    sink_for(seen.append).write(0, found)
    assert seen == found and isinstance(sink_for(seen.append), CallbackSink)
    assert isinstance(sink_for("https://example.org/results"), HTTPPostSink)
    with pytest.raises(ValueError, match="no sink for 'out.csv'"):
        sink_for("out.csv")


def test_a_console_on_a_file_appended_to_rewinds_like_a_file(tmp_path):
    path = tmp_path / "out.jsonl"
    with path.open("a") as out:
        sink = ConsoleSink(out=out)
        sink.write(0, results("SELECT")[:1])
        saved = sink.position()
        sink.write(1, results("SELECT")[1:])
        sink.rewind(saved)
    assert len(path.read_text().splitlines()) == 1


@pytest.mark.parametrize("name", ["sinks", "http", "partitioned", "source", "checkpoint"])
def test_docstring_examples(name):
    module = importlib.import_module(f"rsp_plugin.spark.{name}")
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert failures == 0
