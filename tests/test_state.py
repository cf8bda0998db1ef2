"""Checkpoints as plain, versioned data (`rsp_plugin.runtime.state`): engines go on as if never stopped, and a
foreign, tampered, old or hostile checkpoint is refused with a clear message while none of its code runs.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import pickle
import random
import re
from collections import Counter, defaultdict, deque
from decimal import Decimal
from pathlib import Path

import pytest
from rdflib import Literal, URIRef

from rsp_plugin import RSPEngine
from rsp_plugin.runtime import state
from rsp_plugin.io.formats import format_fact, read_tnt
from rsp_plugin.lars.engine import IncrementalEngine
from rsp_plugin.lars.syntax import parse_program
from rsp_plugin.reasoning import Materializer
from rsp_plugin.spark.checkpoint import StateStore
from rsp_plugin.runtime.state import StateError
from rsp_plugin.core.terms import Dictionary

ROOT = Path(__file__).parent.parent
CSRBENCH = ROOT / "tests" / "data" / "csrbench" / "stream-6s.tnt"
QUERIES = sorted((ROOT / "queries" / "csrbench").glob("*.rq"))
EX = "http://ex.org/"
KEY = b"the tests' key: 16 bytes or more"


def dumps(value) -> bytes:
    return state.dumps(value, key=KEY)


def loads(data: bytes, source: str = "<state>"):
    return state.loads(data, key=KEY, source=source)


def roundtrip(value):
    return loads(dumps(value))


def rewrite(blob: bytes, change, key: bytes | None = KEY) -> bytes:
    """A state changed by someone who knows the format: the payload edited, then its MAC computed again with
    `key` (as if the key had leaked: what the checks behind the MAC still refuse), or with no key, its
    plain SHA-256 written where the MAC goes (all an editor without the key can do)."""
    header, payload = blob.split(b"\n", 1)
    document = json.loads(payload)
    change(document)
    payload = json.dumps(document).encode()
    header = json.loads(header)
    if key is None:
        header.update(hmac_sha256=hashlib.sha256(payload).hexdigest(), bytes=len(payload))
    else:
        mac = hmac.new(key, f"{state.FORMAT} {state.VERSION}\n".encode() + payload, hashlib.sha256).hexdigest()
        header.update(hmac_sha256=mac, bytes=len(payload))
    return json.dumps(header).encode() + b"\n" + payload


def entries(document, class_name: str) -> list:
    return [entry for entry in document["objects"] if entry and entry[0] == "o" and entry[1] == class_name]


# Engines go on where they stopped ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", QUERIES, ids=lambda p: p.stem)
@pytest.mark.parametrize("cut", [40, 150, 333])
def test_a_query_engine_restored_mid_stream_goes_on_as_if_never_stopped(path, cut):
    def engine():
        made = RSPEngine()
        made.register_stream("http://ex.org/csrbench")
        made.register_query(path.read_text(), filename=str(path), base=path.parent.resolve().as_uri() + "/")
        return made

    whole = engine()
    elements = list(read_tnt(CSRBENCH.open("rb"), whole.terms, tick_ms=1, filename="s.tnt"))
    whole.push("http://ex.org/csrbench", elements, source="s.tnt")
    expected = [r.to_json() for r in whole.finish()]

    first = engine()
    elements = list(read_tnt(CSRBENCH.open("rb"), first.terms, tick_ms=1, filename="s.tnt"))
    first.push("http://ex.org/csrbench", elements[:cut], source="s.tnt")
    before = [r.to_json() for r in first.advance_to(elements[cut // 2].time_point)]
    restored = roundtrip(first)
    restored.push("http://ex.org/csrbench", elements[cut:], source="s.tnt")
    after = [r.to_json() for r in restored.finish()]
    assert before + after == expected


@pytest.mark.parametrize("seed", range(25))
def test_a_lars_engine_restored_mid_stream_goes_on_as_if_never_stopped(seed):
    from lars_cases import ProgramGenerator, _facts

    generator = ProgramGenerator(seed, box_bias=0.4, chains=True)
    program_text, stream = generator.program(), generator.stream()
    last = max(stream)

    def outputs(engine, points, program):
        seen = {}
        for t in points:
            engine.advance_to(t, _facts(program, stream.get(t, []), t))
            seen[t] = {format_fact(f, program.terms) for f in engine.holding()}
        return seen

    program = parse_program(program_text)
    uninterrupted = outputs(IncrementalEngine(program, start=0), range(0, last + 1), program)
    program = parse_program(program_text)
    engine = IncrementalEngine(program, start=0)
    before = outputs(engine, range(0, last // 2 + 1), program)
    restored = roundtrip(engine)
    assert all(plan.full is not None for stratum in restored.strata for plan in stratum.plans)
    after = outputs(restored, range(last // 2 + 1, last + 1), restored.program)
    assert {**before, **after} == uninterrupted


def test_an_owl_rl_materialization_restored_goes_on():
    def triples(terms, names):
        return [tuple(terms.intern(f"<{EX}{n}>") for n in name.split()) for name in names]

    def run(m, steps):
        out = []
        for t, names in steps:
            report = m.advance_to(t, triples(m.terms, names))
            out.append((sorted(map(tuple, report.added)), sorted(map(tuple, report.removed))))
        return out

    steps = [(1, ["a p b"]), (2, ["b p c"]), (3, ["x type C"]), (6, ["c p d"]), (9, [])]
    background = [f"p {URIRef('http://www.w3.org/1999/02/22-rdf-syntax-ns#type')}"]
    whole = Materializer("owl-rl", window=3)
    expected = run(whole, steps)
    first = Materializer("owl-rl", window=3)
    before = run(first, steps[:2])
    restored = roundtrip(first)
    assert before + run(restored, steps[2:]) == expected and background


def test_subscribers_are_not_state_so_a_lambda_does_not_stop_a_checkpoint():
    engine = RSPEngine()
    engine.register_stream(f"{EX}s")
    query = engine.register_query(f"SELECT ?x FROM STREAM <{EX}s> [RANGE 1s STEP 1s] WHERE {{ ?x ?p ?o }}",
                                  on_result=lambda result: None)
    engine.subscribe(lambda result: None)
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        pickle.dumps(lambda: None)  # what used to stop it
    assert copy.deepcopy(engine)._callbacks == []  # in memory (a copy, Spark shipping it) too
    restored = roundtrip(engine)
    assert restored._callbacks == [] and restored.queries[query.name]._callbacks == []
    seen = []
    restored.subscribe(seen.append)
    restored.push(f"{EX}s", [(URIRef(f"{EX}a"), URIRef(f"{EX}p"), URIRef(f"{EX}o"))], timestamp=0)
    restored.finish()
    assert [r.t for r in seen] == [1000]


def test_plain_containers_of_any_shape_come_back_with_their_sharing():
    shared = {10**12: "far id", 3: "near id"}  # term ids need not be dense: dict keys
    value = {"ids": shared, "again": shared, "order": deque([(1, 2), (1, 2)], maxlen=5),
             "counts": Counter({"a": 2}), "lists": defaultdict(list, {1: [2]}), "decimal": Decimal("2.50"),
             "float": [float("inf"), -0.0, 1e-300], "bytes": b"\x00\xff", "frozen": frozenset({(1, "a")}),
             "terms": [URIRef(f"{EX}a"), Literal("x", lang="en"), Literal("5", datatype=URIRef(f"{EX}t"))]}
    back = roundtrip(value)
    assert back == value and back["ids"] is back["again"] and back["order"].maxlen == 5
    assert isinstance(back["lists"], defaultdict) and back["lists"][7] == []
    dictionary = Dictionary()
    ids = [dictionary.intern(key) for key in ("a", "<http://ex/b>", '"2.5"^^<http://www.w3.org/2001/XMLSchema#decimal>')]
    again = roundtrip(dictionary)
    assert [again.key(i) for i in ids] == [dictionary.key(i) for i in ids] and again.number(ids[2]) == Decimal("2.5")


def test_a_callable_is_never_stored():
    engine = RSPEngine()
    engine.term_roots.append(print)
    with pytest.raises(StateError, match="cannot store a callable"):
        dumps(engine)
    with pytest.raises(StateError, match="not a type a state may hold"):
        dumps({"file": open(__file__)})


# What is refused, and how it is said -------------------------------------------------------------------------


PROGRAM = "hot(X) :- [RANGE 3] DIAMOND temp(X, V), V > 30 .\nalarm :- hot(X), not ok .\n"


@pytest.fixture
def blob() -> bytes:
    program = parse_program(PROGRAM)
    engine = IncrementalEngine(program)
    terms = program.terms
    engine.advance_to(0, [(terms.intern("temp"), (terms.intern("s1"), terms.intern("31")))])
    return dumps(engine)


REFUSED = (r"^chk/state-3.json: the state does not authenticate with this checkpoint's key \(changed after it "
           r"was written, written with another key, or cut short\); refused$")


def test_a_state_changed_after_it_was_written_is_refused(blob):
    position = len(blob) - 20
    changed = blob[:position] + bytes([blob[position] ^ 1]) + blob[position + 1:]
    with pytest.raises(StateError, match=REFUSED):
        loads(changed, source="chk/state-3.json")
    with pytest.raises(StateError, match=REFUSED):
        loads(blob[:-5], source="chk/state-3.json")


def test_a_state_edited_and_its_plain_sha256_written_again_is_refused(blob, tmp_path):
    """What a checksum allowed (issue 32): edit the payload, compute its SHA-256 again. Without the key the
    MAC cannot be made, whatever the edit."""
    mark = tmp_path / "code-ran"

    def harmless(document):
        document["objects"].append(["l", 1])

    def hostile(document):
        for entry in document["objects"]:
            if entry and entry[0] == "o" and entry[1] == "rsp_plugin.lars.program:Origin":
                entry[2][1]["text"] += f"\n__import__('pathlib').Path({str(mark)!r}).touch()\n"

    for change in (harmless, hostile, lambda document: None):
        with pytest.raises(StateError, match=REFUSED):
            loads(rewrite(blob, change, key=None), source="chk/state-3.json")
    assert not mark.exists()


def test_a_state_written_with_another_key_or_read_without_one_is_refused(blob):
    with pytest.raises(StateError, match=REFUSED):
        state.loads(blob, key=b"another key, 16 bytes or more", source="chk/state-3.json")
    with pytest.raises(StateError, match=r"^chk/state-3.json: no key to authenticate the state with"):
        state.loads(blob, key=None, source="chk/state-3.json")
    with pytest.raises(StateError, match="at least 16 bytes"):
        state.dumps({}, key=b"short")


@pytest.mark.parametrize("data", [b"", b"hello", b'{"format": "something else"}\n{}', b"\x00" * 10,
                                  json.dumps({"root": 1}).encode()])
def test_a_foreign_file_is_refused(data):
    with pytest.raises(StateError, match="not an rsp-plugin state"):
        loads(data, source="x")


class Boom:
    """Unpickling this would create a file: it must never happen."""

    def __init__(self, mark):
        self.mark = mark

    def __reduce__(self):
        return (Path.touch, (Path(self.mark),))


def test_an_old_pickle_checkpoint_is_refused_naming_both_versions_and_never_unpickled(tmp_path):
    mark = tmp_path / "code-ran"
    store = StateStore(tmp_path / "chk")
    store.directory.mkdir(parents=True)
    (store.directory / "state-4.pickle").write_bytes(pickle.dumps(Boom(mark)))
    with pytest.raises(StateError) as refused:
        store.load()
    assert "state-4.pickle: a pickle (state format 0, written by rsp-plugin 0.1.0 before format 1)" in str(refused.value)
    assert "reads state format 2 only" in str(refused.value)
    assert not mark.exists()


def test_a_state_of_another_format_version_is_refused_naming_both(blob):
    header, payload = blob.split(b"\n", 1)
    other = json.loads(header)
    other.update(version=3, written_by="rsp-plugin 0.3.0")
    with pytest.raises(StateError, match=r"state format 3 \(written by rsp-plugin 0.3.0\); this rsp-plugin reads "
                                         r"state format 2 only"):
        loads(json.dumps(other).encode() + b"\n" + payload)
    other.update(version=1, written_by="rsp-plugin 0.2.0", sha256=hashlib.sha256(payload).hexdigest())
    with pytest.raises(StateError, match=r"state format 1 \(written by rsp-plugin 0.2.0, not authenticated\); "
                                         r"this rsp-plugin reads state format 2 only: start from a new checkpoint"):
        loads(json.dumps(other).encode() + b"\n" + payload)


# What the checks behind the MAC refuse (a state written with the key, as if it had leaked) ----------------------


@pytest.mark.parametrize("name", ["os:system", "builtins:eval", "subprocess:Popen", "posix:system",
                                  "rsp_plugin.cli:main", "rsp_plugin.core.errors:QuerySyntaxError", "rsp_plugin:__class__",
                                  "rsp_plugin.lars.engine:IncrementalEngine.__init__.__globals__",
                                  "rsp_plugin.nowhere:Thing", "rsp_plugin.lars.engine:os",
                                  "rsp_plugin.spark.checkpoint:StateStore", "rsp_plugin.lars.program:Atom",
                                  "rsp_plugin.lars.program:ExtendedAtom", "rsp_plugin.lars.plan:_Writer"])
def test_a_class_the_schema_does_not_name_is_refused(blob, name):
    """A class is stored because `state_schema` lists it, not because it can be found by name in the package."""
    def change(document):
        first = next(entry for entry in document["objects"] if entry and entry[0] == "o")
        first[1] = name

    with pytest.raises(StateError, match=rf"^<state>: {re.escape(repr(name))} is not a class a state may hold "
                                         r"\(rsp_plugin.runtime.state_schema\); refused$"):
        loads(rewrite(blob, change))


def test_a_class_the_schema_does_not_name_is_never_written():
    from rsp_plugin.lars.program import Atom

    with pytest.raises(StateError, match="cannot store a rsp_plugin.lars.program:Atom: not a class a state may hold"):
        dumps([Atom(1, (2, 3))])


def test_an_unknown_field_or_a_value_of_another_kind_is_refused(blob):
    def extra_field(document):
        entries(document, "rsp_plugin.core.terms:Dictionary")[0][2][1]["hook"] = "os.system"

    def other_kind(document):
        entries(document, "rsp_plugin.core.terms:Dictionary")[0][2][1]["next"] = "__import__('os')"

    def another_object(document):  # a plan's rule that is the dictionary
        dictionary = next(index for index, entry in enumerate(document["objects"])
                          if entry[:2] == ["o", "rsp_plugin.core.terms:Dictionary"])
        entries(document, "rsp_plugin.lars.plan:RulePlan")[0][2][1]["rule"] = ["r", dictionary]

    with pytest.raises(StateError, match=r"a rsp_plugin.core.terms:Dictionary has no field 'hook' "
                                         r"\(rsp_plugin.runtime.state_schema\); refused$"):
        loads(rewrite(blob, extra_field))
    with pytest.raises(StateError, match=r"rsp_plugin.core.terms:Dictionary.next holds a str, not a kind "
                                         r"rsp_plugin.runtime.state_schema names for it; refused$"):
        loads(rewrite(blob, other_kind))
    with pytest.raises(StateError, match=r"rsp_plugin.lars.plan:RulePlan.rule holds a rsp_plugin.core.terms:Dictionary, "
                                         r"not a kind"):
        loads(rewrite(blob, another_object))


def test_a_field_the_schema_does_not_name_is_never_written():
    engine = RSPEngine()
    engine.note = "not state"
    with pytest.raises(StateError, match=r"^cannot store the state: a rsp_plugin.runtime.engine:RSPEngine has no field "
                                         r"'note' \(rsp_plugin.runtime.state_schema\)$"):
        dumps(engine)


def test_a_reconstructor_entry_is_refused(blob, tmp_path):
    def change(document):
        document["objects"].append(["c", "rsp_plugin.query.syntax:reparse", ["SELECT * {}", "q", None, "auto"]])
        document["root"] = ["r", len(document["objects"]) - 1]

    with pytest.raises(StateError, match="an unknown entry tag 'c'"):
        loads(rewrite(blob, change))


def test_the_schema_names_classes_that_exist_and_stores_its_own_way_only_what_the_codec_knows():
    import enum

    from rsp_plugin.runtime.state_schema import CUSTOM, ENUM, SCHEMA

    for name, spec in SCHEMA.items():
        found = state._resolve(name)
        assert isinstance(found, type) and f"{found.__module__}:{found.__qualname__}" == name
        assert (spec is ENUM) == issubclass(found, enum.Enum), name
    assert {name for name, spec in SCHEMA.items() if spec is CUSTOM} == set(state._CUSTOM)


# Rules: parsed again from their program's text, never rebuilt from a stored structure --------------------------


def test_a_rule_is_stored_as_its_programs_text_and_number_and_parsed_again(blob):
    document = json.loads(blob.split(b"\n", 1)[1])
    (origin,) = entries(document, "rsp_plugin.lars.program:Origin")
    assert origin[2][1]["text"] == PROGRAM and origin[2][1]["kind"] == "lars"
    rules = entries(document, "rsp_plugin.lars.program:Rule")
    assert sorted((rule[2][1]["number"], rule[2][1]["text"], tuple(rule[2][1]["place"][2:])) for rule in rules) == [
        (0, "hot(X) :- [RANGE 3] DIAMOND temp(X, V), V > 30 .", (1, 1)), (1, "alarm :- hot(X), not ok .", (2, 1))]
    assert {rule[2][1]["place"][1] for rule in rules} == {"<program>"}  # (["l", file, line, column])
    stored = {name for entry in document["objects"] if entry and entry[0] == "o" for name in [entry[1]]}
    assert not stored & {f"rsp_plugin.lars.program:{name}" for name in
                         ("Atom", "ExtendedAtom", "Comparison", "Arithmetic", "Var", "Location")}
    engine = loads(blob)
    (hot, alarm) = engine.program.rules
    assert engine.strata[0].plans[0].rule is hot and hot.origin[1] == 0 and str(hot.location) == "<program>:1:1"


def test_a_rule_stored_under_another_class_or_as_a_structure_is_refused(blob, tmp_path):
    """Issue 32: the check on stored rules was keyed on the class name; a rule stored as a Program skipped it.
    Now a Program has a Program's fields, and a rule is its program's text and number, whatever it claims."""
    mark = tmp_path / "code-ran"
    code = f"__import__('pathlib').Path({str(mark)!r}).touch()"

    def as_a_program(document):
        for entry in entries(document, "rsp_plugin.lars.program:Rule"):
            entry[1] = "rsp_plugin.lars.program:Program"

    def as_a_structure(document):  # the old form, with a text that was code in the plans' comment line
        for entry in entries(document, "rsp_plugin.lars.program:Rule"):
            entry[2] = ["m", {"head": ["r", 0], "body": ["t"], "head_time": None, "text": f"p .\n{code}\n",
                              "location": None, "origin": None}]

    with pytest.raises(StateError, match=r"a rsp_plugin.lars.program:Program has no field '(origin|number|text|place)'"):
        loads(rewrite(blob, as_a_program))
    with pytest.raises(StateError, match="a rule that is not its program's text, its number and place; refused$"):
        loads(rewrite(blob, as_a_structure))
    assert not mark.exists()


@pytest.mark.parametrize("where", ["origin", "rule"])
def test_code_in_a_rules_text_never_runs_it_is_parsed_again(blob, tmp_path, where):
    mark = tmp_path / "code-ran"
    injected = f"\n__import__('pathlib').Path({str(mark)!r}).touch()\n"

    def change(document):
        if where == "origin":
            entries(document, "rsp_plugin.lars.program:Origin")[0][2][1]["text"] += injected
        else:
            for entry in entries(document, "rsp_plugin.lars.program:Rule"):
                entry[2][1]["text"] += injected

    says = (r"the program <program> no longer parses as it did \(<program>:4:\d+: unexpected"
            if where == "origin" else r"rule \d of <program> \(<program>:\d:1\) is not the one stored")
    with pytest.raises(StateError, match=says):
        loads(rewrite(blob, change))
    assert not mark.exists()


def test_a_rule_of_another_program_text_is_refused(blob):
    def change(document):
        entries(document, "rsp_plugin.lars.program:Origin")[0][2][1]["text"] = "hot(X) :- temp(X, V) .\n"

    with pytest.raises(StateError, match=r"rule 0 of <program> \(<program>:1:1\) is not the one stored: the program "
                                         r"parses to other rules now; refused$"):
        loads(rewrite(blob, change))


def test_a_rules_text_is_never_compiled(tmp_path):
    """Plans are code: made of generated names, term ids and operators of the compiler's, never of a rule's text,
    variable names or constants. A program's text with Python in a comment, a hand-made rule whose text is code,
    and one whose constant is text: nothing runs."""
    from rsp_plugin.lars.plan import PlanError, compile_rule
    from rsp_plugin.lars.program import Atom, ExtendedAtom, Rule, Var

    mark = tmp_path / "code-ran"
    code = f"__import__('pathlib').Path({str(mark)!r}).touch()"
    program = parse_program(f"hot(X) :- temp(X, V) % {code}\n  , V > 30 .\n")
    engine = IncrementalEngine(program)
    terms = program.terms
    engine.advance_to(0, [(terms.intern("temp"), (terms.intern("s1"), terms.intern("31")))])
    plan = engine.strata[0].plans[0]
    assert code in plan.sources["full"].splitlines()[0] and plan.sources["full"].startswith("# <program>:1:1  hot(X)")
    assert all(code not in line for source in plan.sources.values() for line in source.splitlines()[1:])
    assert {format_fact(f, terms) for f in engine.holding()} == {"hot(s1)"}

    x = Var("X\n" + code)  # a variable's name is never written either
    temp, hot = terms.intern("temp"), terms.intern("hot")
    rule = Rule(Atom(hot, (x,)), (ExtendedAtom(Atom(temp, (x, Var("V"))), "plain"),), text=f"hot .\n{code}\n")
    views = IncrementalEngine(parse_program("hot(X) :- temp(X, V) .", terms=terms)).views
    made = compile_rule(rule, views, terms)
    assert "v0" in made.sources["full"] and code not in made.sources["full"].split("\n", 1)[1]
    with pytest.raises(PlanError, match="a rule plan takes term ids"):
        compile_rule(Rule(Atom(hot, (code,)), rule.body, text="hot"), views, terms)
    with pytest.raises(PlanError, match="is not an operator a rule plan knows"):
        from rsp_plugin.lars.program import Comparison

        compile_rule(Rule(Atom(hot, (x,)), (*rule.body, Comparison(f"<{code}#", x, 1)), text="hot"), views, terms)
    assert not mark.exists()


def test_a_malformed_payload_is_refused_not_a_traceback(blob):
    def change(document):
        document["objects"][3] = ["r", 10**9]

    for damage in (change, lambda d: d["objects"].append(["?"]) or d.update(root=["r", len(d["objects"]) - 1]),
                   lambda d: d.update(root={"not": "tagged"}), lambda d: d.update(root=["m", [1, 2]])):
        with pytest.raises(StateError, match="refused"):
            loads(rewrite(blob, damage))


# The store in the checkpoint directory -----------------------------------------------------------------------


def test_the_store_keeps_two_states_falls_back_over_a_torn_one_and_stops_at_a_tampered_one(tmp_path):
    store = StateStore(tmp_path)
    for batch in range(4):
        store.save(batch, {"batch": batch})
    assert sorted(p.name for p in store.directory.iterdir()) == ["state-2.json", "state-3.json"]
    assert store.load() == {"batch": 3}
    latest = store.directory / "state-3.json"
    latest.write_bytes(latest.read_bytes()[:-3])  # a crash mid-write
    assert store.load() == {"batch": 2}
    data = bytearray((store.directory / "state-2.json").read_bytes())
    data[-2] ^= 1
    (store.directory / "state-2.json").write_bytes(bytes(data))
    with pytest.raises(StateError, match="state-2.json: the state does not authenticate"):
        store.load()


def test_the_store_makes_a_private_key_at_the_first_write_and_refuses_states_without_it(tmp_path):
    store = StateStore(tmp_path)
    assert store.load() is None and not (tmp_path / state.KEY_FILE).exists()
    store.save(0, {"batch": 0})
    key_file = tmp_path / state.KEY_FILE
    assert key_file.stat().st_mode & 0o777 == 0o600 and len(key_file.read_bytes().strip()) == 64
    assert StateStore(tmp_path).load() == {"batch": 0}
    key_file.unlink()
    with pytest.raises(StateError, match=r"state-0.json: no key to authenticate the state with \(its checkpoint's "
                                         r"rsp-plugin.key is missing"):
        StateStore(tmp_path).load()


def test_a_key_file_others_may_read_or_write_is_refused_saying_how_to_fix_it(tmp_path, monkeypatch):
    given = tmp_path / "secret.key"
    given.write_text("0123456789abcdef0123456789abcdef\n")
    for mode in (0o644, 0o620, 0o604, 0o660):
        given.chmod(mode)
        with pytest.raises(StateError) as refused:
            StateStore(tmp_path / "chk", given).load()
        assert str(refused.value) == (f"{given}: the checkpoint key may be read or written by group or others "
                                      f"(mode {mode:o}); make it private: chmod 600 {given}")
    given.chmod(0o600)
    store = StateStore(tmp_path / "chk", given)
    store.save(1, {"batch": 1})
    assert not (tmp_path / "chk" / state.KEY_FILE).exists(), "a key given: none is made"
    assert StateStore(tmp_path / "chk", given).load() == {"batch": 1}
    with pytest.raises(StateError, match="state-1.json: no key to authenticate the state with"):
        StateStore(tmp_path / "chk").load()  # the key given is not kept in the checkpoint
    monkeypatch.setenv(state.KEY_ENV, str(given))  # the environment names the key as --checkpoint-key does
    assert StateStore(tmp_path / "chk").load() == {"batch": 1}
    given.write_text("short\n")
    with pytest.raises(StateError, match="a checkpoint key of 5 bytes; it needs at least 16"):
        StateStore(tmp_path / "chk").load()


def test_a_key_file_of_another_user_or_behind_a_link_is_refused(tmp_path, monkeypatch):
    given = tmp_path / "secret.key"
    given.write_text("0123456789abcdef0123456789abcdef\n")
    given.chmod(0o600)
    link = tmp_path / "link.key"
    link.symlink_to(given)
    with pytest.raises(StateError, match=rf"^{re.escape(str(link))}: the checkpoint key cannot be read"):
        StateStore(tmp_path / "chk", link).load()
    owner = given.stat().st_uid
    monkeypatch.setattr("os.getuid", lambda: owner + 1)  # as another user would run it
    with pytest.raises(StateError, match=rf"^{re.escape(str(given))}: the checkpoint key belongs to another user "
                                         rf"\(uid {owner}\); use a key file of your own"):
        StateStore(tmp_path / "chk", given).load()


def test_the_codec_is_fast_enough_for_a_checkpoint_per_micro_batch():
    draw = random.Random(1)
    engine = RSPEngine()
    engine.register_stream(f"{EX}s")
    engine.register_query(f"SELECT ?s (COUNT(?o) AS ?n) FROM STREAM <{EX}s> [RANGE 60s STEP 1s] "
                          "WHERE { ?s ?p ?o } GROUP BY ?s")
    ids = [engine.terms.intern(f"<{EX}e{k}>") for k in range(2000)]
    engine.push_ids(f"{EX}s", [(t * 10, (draw.choice(ids), ids[0], draw.choice(ids))) for t in range(5000)])
    engine.advance_to(30_000)
    data = dumps(engine)
    assert loads(data).advance_to(40_000)[-1].to_json() == engine.advance_to(40_000)[-1].to_json()


def test_a_query_with_rules_restored_mid_stream_goes_on_as_if_never_stopped():
    """A RULES program's triples (numbers of the rule language among them) are state like the rest."""
    from rdflib import Literal, URIRef

    rules = "@prefix ex: <http://ex.org/> .\n?s a ex:Hot :- ?s ex:temp ?v, ?v > 30 .\n?s ex:limit 30 :- ?s ex:temp ?v .\n"
    text = ("REGISTER RSTREAM <http://ex.org/q> AS PREFIX ex: <http://ex.org/> SELECT ?s ?l "
            "FROM STREAM <http://ex.org/s> [RANGE 2s STEP 1s] RULES <http://ex.org/r> WHERE { ?s a ex:Hot ; ex:limit ?l }")

    def engine():
        made = RSPEngine()
        made.register_stream("http://ex.org/s")
        made.add_rules("http://ex.org/r", rules)
        made.register_query(text)
        return made

    def push(made, t, value):
        made.push("http://ex.org/s", [(URIRef(f"{EX}a{t}"), URIRef(f"{EX}temp"), Literal(value))], timestamp=t)

    readings = [(500, 31), (1500, 20), (2500, 35), (3500, 40)]
    whole = engine()
    for t, value in readings:
        push(whole, t, value)
    expected = [r.to_json() for r in whole.finish()]
    first = engine()
    for t, value in readings[:2]:
        push(first, t, value)
    before = [r.to_json() for r in first.advance_to(2000)]
    restored = roundtrip(first)
    for t, value in readings[2:]:
        push(restored, t, value)
    assert before + [r.to_json() for r in restored.finish()] == expected
    assert any(r["bindings"] for r in expected)
