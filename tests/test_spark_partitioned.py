"""PARTITION BY: per-key engines in Spark's state store give the driver-side answers; other queries are refused.

At each report instant, the union over keys of their rows is the driver-side
(one engine) answer, for every instant where that answer has rows: the keys
report when their data arrive, when the watermark passes their next window (a
timeout), and at the end of the replay (each key's last windows).
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import re

import pytest

from rsp_plugin.cli.command_line import main
from rsp_plugin.spark.partitioned import NotKeyLocal, key_plan, split_partition_clause

EX = "http://ex/"
INT = "<http://www.w3.org/2001/XMLSchema#integer>"
HEAD = f"REGISTER RSTREAM <{EX}q> AS\n"
WINDOW = f"FROM STREAM <{EX}s> [RANGE 3s STEP 1s]"
PER_SENSOR = f"""PARTITION BY ?sensor
{HEAD}SELECT ?sensor (MAX(?v) AS ?hi) (COUNT(?h) AS ?n) {WINDOW}
WHERE {{ ?sensor <{EX}temperature> ?v . ?sensor <{EX}humidity> ?h FILTER(?v > 20) }} GROUP BY ?sensor
"""


def sensor_stream(seed: int, lines: int = 400) -> str:
    """Six sensors; sensor5 goes quiet after 2 s (its windows still report, by timeouts and at the end)."""
    draw = random.Random(seed)
    out = []
    for number in range(lines):
        stamp = number * 40
        sensor = draw.randrange(5 if stamp > 2000 else 6)
        kind = draw.choice(["temperature", "humidity"])
        out.append(f'{stamp} <{EX}sensor{sensor}> <{EX}{kind}> "{draw.randrange(100)}"^^{INT} .')
    return "\n".join(out) + "\n"


def local_reports(folder, stream) -> dict[int, list[str]]:
    """PER_SENSOR without its PARTITION BY, run by the local engine on `stream`: the reports by instant."""
    plain = folder / "plain.rq"
    plain.write_text(split_partition_clause(PER_SENSOR)[0])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["query", str(plain), "--stream", f"{EX}s={stream}"]) == 0
    return by_instant(json.loads(line) for line in out.getvalue().splitlines())


def by_instant(lines) -> dict[int, list[str]]:
    rows: dict[int, list[str]] = {}
    for line in lines:
        rows.setdefault(line["t"], []).extend(json.dumps(b, sort_keys=True) for b in line["bindings"])
    return {t: sorted(found) for t, found in rows.items() if found}


@pytest.mark.spark
def test_per_key_engines_in_the_state_store_give_the_driver_side_answers(tmp_path):
    from rsp_plugin.spark import run, spark_session

    spark = spark_session("local[2]")
    stream = tmp_path / "s.tnt"
    stream.write_text(sensor_stream(3))
    query = tmp_path / "q.rq"
    query.write_text(PER_SENSOR)
    expected = local_reports(tmp_path, stream)

    got = []
    done = run(spark, str(query), {f"{EX}s": str(stream)}, ["memory:partitioned", got.append], max_lines_per_trigger=100,
               checkpoint=tmp_path / "chk").wait()
    assert done.mode == "partitioned" and done.state.results == len(got) and done.set_aside == 0
    lines = [result.to_json() for result in got]
    assert by_instant(lines) == expected
    assert {line["key"] for line in lines} == {f"<{EX}sensor{k}>" for k in range(6)}
    quiet = [line["t"] for line in lines if line["key"] == f"<{EX}sensor5>"]
    assert max(quiet) >= 4000, "a key with no more data still reports the windows its data are in"
    table = spark.sql("SELECT t, result FROM partitioned").collect()
    assert sorted((row.t, json.loads(row.result)["key"]) for row in table) == sorted(
        (line["t"], line["key"]) for line in lines)


@pytest.mark.spark
def test_triples_behind_the_watermark_are_set_aside_with_their_place_and_change_no_report(tmp_path):
    """Spark's stateful operator drops a row behind its watermark without a word: the keys' function judges
    it by Spark's rule instead, and it goes to the dead letters once, with the stream, the triple and the
    late reason; the reports are those of the stream without it (a known key's triple would raise its
    MAX, a new key's would make it report). A triple far ahead of its key's time, set aside by
    the key's engine, goes to the dead letters too."""
    from rsp_plugin.spark import run, spark_session

    spark = spark_session("local[2]")
    lines = sensor_stream(11).splitlines()
    clean = tmp_path / "clean.tnt"
    clean.write_text("\n".join(lines) + "\n")
    late = [f'120 <{EX}sensor1> <{EX}temperature> "99"^^{INT} .', f'120 <{EX}sensor1> <{EX}humidity> "5"^^{INT} .',
            f'40 <{EX}sensor9> <{EX}temperature> "50"^^{INT} .', f'80 <{EX}sensor9> <{EX}humidity> "7"^^{INT} .']
    lines[250:250] = late[:2]  # batch 3 (100 lines a batch): the watermark is near 8 s, and was near 4 s
    lines[352:352] = late[2:]  # batch 4: a key that only ever had late triples
    ahead = f'{10 ** 13} <{EX}sensor1> <{EX}temperature> "98"^^{INT} .'
    lines.append(ahead)  # (the last batch: its key's engine sets it aside, far ahead of the key's time)
    stream = tmp_path / "s.tnt"
    stream.write_text("\n".join(lines) + "\n")
    query = tmp_path / "q.rq"
    query.write_text(PER_SENSOR)
    expected = local_reports(tmp_path, clean)

    got, dead = [], tmp_path / "dead.txt"
    done = run(spark, str(query), {f"{EX}s": str(stream)}, got.append, dead_letters=str(dead),
               max_lines_per_trigger=100).wait()
    assert by_instant(result.to_json() for result in got) == expected
    assert done.set_aside == 5
    records = dead.read_text().splitlines()
    assert len(records) == 5
    far = [record for record in records if record.startswith(f"{EX}s: {ahead.split(' ', 1)[1][:-2]}: ")]
    assert len(far) == 1 and "ahead" in far[0], records
    for line in late:
        stamp, triple = line.split(" ", 1)
        found = [record for record in records if record.startswith(f"{EX}s: {triple[:-2]}: ")]
        assert len(found) == 1, (line, records)
        assert re.fullmatch(rf"late: timestamp {stamp} is older than every window still to be reported "
                            r"\(watermark \d+\); set aside", found[0].split(": ", 2)[2])


@pytest.mark.spark
def test_a_state_store_written_with_another_key_is_refused_in_one_line(tmp_path):
    """The keys' engines in Spark's state store are authenticated with the checkpoint's key, checked on the
    executors: states the key does not authenticate stop the run with the executor's one line, not Spark's trace."""
    from rsp_plugin.spark import run, spark_session
    from rsp_plugin.runtime.state import KEY_FILE, StateError

    spark = spark_session("local[2]")
    stream = tmp_path / "s.tnt"
    stream.write_text(sensor_stream(5, lines=120))
    query = tmp_path / "q.rq"
    query.write_text(PER_SENSOR)
    checkpoint = tmp_path / "chk"
    first = run(spark, str(query), {f"{EX}s": str(stream)}, "memory:keyed", checkpoint=checkpoint).wait()
    assert first.state.results > 0
    key = checkpoint / KEY_FILE
    assert key.stat().st_mode & 0o777 == 0o600
    key.write_text("another key of the checkpoint, 16 bytes or more\n")
    with pytest.raises(StateError) as refused:
        run(spark, str(query), {f"{EX}s": str(stream)}, "memory:keyed", checkpoint=checkpoint).wait()
    said = str(refused.value)
    assert "\n" not in said and said.startswith(f"{checkpoint / 'spark'} (the state of key <{EX}sensor")
    assert said.endswith("the state does not authenticate with this checkpoint's key (changed after it was written, "
                         "written with another key, or cut short); refused")


@pytest.mark.spark
def test_a_run_killed_inside_a_batch_writes_each_report_and_dead_letter_once_after_the_restart(tmp_path):
    """The keys' engines are in Spark's state store, which Spark rolls back to the batch before one it had not
    committed, and runs that batch again: the driver's files are cut back to where its last saved state says
    they ended. Killed after writing batch 1's reports and dead letter (before saving): restarted, batch 1 is
    written once. Killed after saving batch 2 and before Spark committed it (its commit and the next batch's
    offsets removed, as a kill leaves them), with batch 3's reports written after it: restarted, batch 2 is
    not written again and batch 3 is cut back and written once. The files are an uninterrupted run's."""
    from rsp_plugin.spark import run, spark_session
    from rsp_plugin.spark.sinks import JSONLinesSink

    spark = spark_session("local[2]")
    lines = sensor_stream(7).splitlines()
    for number in (150, 350):  # a line set aside in batch 1 and one in batch 3 (100 lines a batch)
        lines[number] = f"{number * 40} <{EX}sensor1> <{EX}temperature> broken ."
    stream = tmp_path / "s.tnt"
    stream.write_text("\n".join(lines) + "\n")
    query = tmp_path / "q.rq"
    query.write_text(PER_SENSOR)

    class Notes:
        def __init__(self):
            self.lines = []

        def note(self, text):
            self.lines.append(text)

    def partitioned(sink, dead, checkpoint, progress=None):
        return run(spark, str(query), {f"{EX}s": str(stream)}, sink, dead_letters=str(dead), checkpoint=checkpoint,
                   max_lines_per_trigger=100, progress=progress).wait()

    def killed_after_writing(batch):
        class Killed(JSONLinesSink):
            def write(self, batch_id, results):
                super().write(batch_id, results)
                if batch_id == batch:
                    raise RuntimeError(f"killed after writing batch {batch}'s reports")
        return Killed(out)

    partitioned(JSONLinesSink(tmp_path / "want.jsonl"), tmp_path / "want-dead.txt", None)
    want, want_dead = (tmp_path / "want.jsonl").read_text(), (tmp_path / "want-dead.txt").read_text()
    assert [line.split(": ")[0] for line in want_dead.splitlines()] == [f"{stream}:151", f"{stream}:351"]

    out, dead, checkpoint = tmp_path / "out.jsonl", tmp_path / "dead.txt", tmp_path / "chk"
    with pytest.raises(Exception, match="killed after writing batch 1"):
        partitioned(killed_after_writing(1), dead, checkpoint)
    assert dead.read_text() == want_dead.splitlines(keepends=True)[0]
    first = out.read_text()
    assert first and want.startswith(first)

    with pytest.raises(Exception, match="killed after writing batch 3"):
        partitioned(killed_after_writing(3), dead, checkpoint)
    third = out.read_text()
    assert len(third) > len(first) and want.startswith(third) and dead.read_text() == want_dead
    spark_log = checkpoint / "spark"
    for name in ("commits/2", "commits/.2.crc", "offsets/3", "offsets/.3.crc"):
        (spark_log / name).unlink()

    notes = Notes()
    done = partitioned(JSONLinesSink(out), dead, checkpoint, notes)
    assert out.read_text() == want and dead.read_text() == want_dead
    assert done.driver.resumed and "batch 2: seen before (a restart re-runs it); nothing to do" in notes.lines
    assert done.state.results == len(want.splitlines()) and done.set_aside == 2


@pytest.mark.parametrize("where, reason", [
    (f"?sensor <{EX}temperature> ?v . ?obs <{EX}by> ?other",
     f"the pattern ?obs <{EX}by> ?other does not mention ?sensor"),
    ("?sensor ?p ?v", "the pattern ?sensor ?p ?v has no constant predicate"),
    (f"?sensor <{EX}near> ?x . ?x <{EX}near> ?sensor",
     f"?sensor is the subject of one <{EX}near> pattern and the object of another"),
    (f"?sensor <{EX}temperature> ?v OPTIONAL {{ ?sensor <{EX}humidity> ?h }}", "OPTIONAL works across keys"),
])
def test_a_query_that_is_not_key_local_is_refused_with_the_reason(where, reason):
    text = f"PARTITION BY ?sensor\n{HEAD}SELECT ?sensor {WINDOW} WHERE {{ {where} }}"
    with pytest.raises(NotKeyLocal) as refused:
        key_plan(text)
    assert str(refused.value).endswith(f"PARTITION BY ?sensor: the query is not key-local: {reason}")


@pytest.mark.parametrize("query, reason", [
    (f"{HEAD}SELECT ?v {WINDOW} WHERE {{ ?sensor <{EX}t> ?v }}",
     "?sensor is not selected (rows of different keys would not be told apart)"),
    (f"{HEAD}SELECT (COUNT(*) AS ?n) {WINDOW} WHERE {{ ?sensor <{EX}t> ?v }}",
     "the aggregates are not grouped by ?sensor"),
    (f"{HEAD}SELECT ?sensor (COUNT(*) AS ?n) {WINDOW} WHERE {{ ?sensor <{EX}t> ?v }} GROUP BY ?v",
     "the aggregates are not grouped by ?sensor"),
    (f"{HEAD}SELECT ?sensor {WINDOW} WHERE {{ ?sensor <{EX}t> ?v }} ORDER BY ?v LIMIT 3", "works across keys"),
    (f"{HEAD}SELECT ?sensor FROM STREAM <{EX}s> [RANGE TRIPLES 5] WHERE {{ ?sensor <{EX}t> ?v }}",
     "a count window counts the triples of all keys"),
    (f"{HEAD}SELECT ?sensor FROM <{EX}g> {WINDOW} WHERE {{ ?sensor <{EX}t> ?v }}",
     "static graphs (FROM without ENTAILMENT, FROM NAMED) are not split by key"),
])
def test_global_shapes_are_refused(query, reason):
    with pytest.raises(NotKeyLocal, match="not key-local: .*" + reason.replace("(", r"\(").replace(")", r"\)")
                       .replace("?", r"\?")):
        key_plan(query, key="sensor")


def test_the_key_is_named_in_the_query_or_given():
    assert key_plan(PER_SENSOR).positions == {f"<{EX}temperature>": "s", f"<{EX}humidity>": "s"}
    assert key_plan(split_partition_clause(PER_SENSOR)[0], key="?sensor").key == "sensor"
    with pytest.raises(NotKeyLocal, match="needs a key"):
        key_plan(split_partition_clause(PER_SENSOR)[0])


HOT_RULES = f"""@prefix ex: <{EX}> .
ex:hot(?s) :- [RANGE 2] DIAMOND ?s ex:temperature ?v, ?v > 60 .
?s ex:alarm ex:on :- ex:hot(?s), [RANGE 1] BOX ?s ex:humidity ?h .
"""
WITH_RULES = f"""PARTITION BY ?sensor
{HEAD}SELECT ?sensor (COUNT(?h) AS ?n) {WINDOW}
RULES <hot.lars>
WHERE {{ ?sensor <{EX}alarm> <{EX}on> . ?sensor <{EX}humidity> ?h }} GROUP BY ?sensor
"""


def test_rules_that_keep_to_one_key_are_accepted_and_route_what_they_read(tmp_path):
    (tmp_path / "hot.lars").write_text(HOT_RULES)
    plan = key_plan(WITH_RULES, filename=str(tmp_path / "q.rq"))
    assert plan.positions == {f"<{EX}alarm>": "s", f"<{EX}humidity>": "s", f"<{EX}temperature>": "s"}
    assert f"RULES <{(tmp_path / 'hot.lars').resolve().as_uri()}>" in plan.text


@pytest.mark.parametrize("rules, reason", [
    (f"<{EX}near>(?a, ?b) :- ?a <{EX}temperature> ?v, ?b <{EX}temperature> ?v .", "does not keep to one key"),
    (f"h(?s) :- [COUNT 3] DIAMOND ?s <{EX}temperature> ?v .", "tuple window"),
    (f"?s <{EX}alarm> <{EX}on> :- ?s ?p ?v .", "without a constant predicate"),
])
def test_rules_that_join_keys_are_refused_with_the_reason(tmp_path, rules, reason):
    (tmp_path / "hot.lars").write_text(rules)
    with pytest.raises(NotKeyLocal) as refused:
        key_plan(WITH_RULES, filename=str(tmp_path / "q.rq"))
    assert reason in str(refused.value)


@pytest.mark.spark
def test_per_key_engines_with_rules_give_the_driver_side_answers(tmp_path):
    from rsp_plugin.spark import run, spark_session

    spark = spark_session("local[2]")
    (tmp_path / "hot.lars").write_text(HOT_RULES)
    stream = tmp_path / "s.tnt"
    stream.write_text(sensor_stream(5))
    query = tmp_path / "q.rq"
    query.write_text(WITH_RULES)
    plain = tmp_path / "plain.rq"
    plain.write_text(split_partition_clause(WITH_RULES)[0])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["query", str(plain), "--stream", f"{EX}s={stream}"]) == 0
    expected = by_instant(json.loads(line) for line in out.getvalue().splitlines())
    assert expected, "the rules derive alarms in this stream"

    got = []
    run(spark, str(query), {f"{EX}s": str(stream)}, got.append, max_lines_per_trigger=100,
        checkpoint=tmp_path / "chk").wait()
    assert by_instant(result.to_json() for result in got) == expected


ONTOLOGY = [f"<{EX}TemperatureObservation> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <{EX}Observation> .",
            f"<{EX}observedBy> <http://www.w3.org/2000/01/rdf-schema#domain> <{EX}Observation> .",
            f"<{EX}observedBy> <http://www.w3.org/2000/01/rdf-schema#range> <{EX}Sensor> .",
            f"<{EX}hasTemp> <http://www.w3.org/2000/01/rdf-schema#subPropertyOf> <{EX}hasValue> ."]
RDFS = "ENTAILMENT <http://www.w3.org/ns/entailment/RDFS>"


def test_entailment_within_a_key_routes_what_the_query_reads_through_the_rules():
    plan = key_plan(f"SELECT ?o ?v {WINDOW} {RDFS} WHERE {{ ?o a <{EX}Observation> . ?o <{EX}hasValue> ?v }}",
                    key="o", background=ONTOLOGY)
    rdf_type = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
    # hasTemp (a subproperty of hasValue) and observedBy (whose domain types the subject) by their subject
    assert plan.positions == {rdf_type: "s", f"<{EX}hasValue>": "s", f"<{EX}hasTemp>": "s", f"<{EX}observedBy>": "s"}
    assert "<http://www.w3.org/2000/01/rdf-schema#subClassOf>" in plan.locality.schema_predicates
    assert plan.locality.set_aside("<http://www.w3.org/2000/01/rdf-schema#subClassOf>", f"<{EX}X>")
    assert plan.locality.set_aside(f"<{EX}hasTemp>", '"1"') is None


@pytest.mark.parametrize("where, key, reason", [
    # the range of observedBy types the object: read by ?o, observedBy would go by subject and by object
    (f"?o <{EX}observedBy> ?s . ?o a <{EX}Sensor>", "o",
     f"<{EX}observedBy> would be routed by subject (the query's pattern) and by object"),
    # every triple makes its predicate an rdf:Property: no key holds that
    ("?p a <http://www.w3.org/1999/02/22-rdf-syntax-ns#Property>", "p", "is about the triple's predicate"),
    (f"?c <http://www.w3.org/2000/01/rdf-schema#subClassOf> <{EX}Observation>", "c",
     "could come from the background alone"),
])
def test_entailment_that_joins_keys_is_refused_with_the_reason(where, key, reason):
    with pytest.raises(NotKeyLocal) as refused:
        key_plan(f"SELECT * {WINDOW} {RDFS} WHERE {{ {where} }}", key=key, background=ONTOLOGY)
    assert reason in str(refused.value)


def test_construct_and_ask_are_split_by_key():
    for text in (f"CONSTRUCT {{ ?sensor <{EX}seen> ?v }} {WINDOW} WHERE {{ ?sensor <{EX}t> ?v }}",
                 f"ASK {WINDOW} WHERE {{ ?sensor <{EX}t> ?v FILTER(?v > 3) }}"):
        assert key_plan(text, key="sensor").positions == {f"<{EX}t>": "s"}
