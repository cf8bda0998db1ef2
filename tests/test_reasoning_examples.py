"""RDFS / OWL 2 RL materialization over windows: Barbieri et al.'s example and the rules one by one.

Triples are written short: `A isIn B` is <http://example.org/A> <http://example.org/isIn>
<http://example.org/B>; `a`, and the prefixes rdf:, rdfs:, owl:, xsd:, ex: work as in Turtle.
"""

import pytest
from rdflib import Dataset, Graph, URIRef

from rsp_plugin.core.errors import RuleSyntaxError
from rsp_plugin.io.documents import dataset_calls
from rsp_plugin.reasoning import BackgroundError, Materializer, intern_triples
from rsp_plugin.core.terms import Dictionary
from rsp_plugin.core.time import NEVER_EXPIRES

PREFIXES = {
    "rdf:": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs:": "http://www.w3.org/2000/01/rdf-schema#",
    "owl:": "http://www.w3.org/2002/07/owl#",
    "xsd:": "http://www.w3.org/2001/XMLSchema#",
    "ex:": "http://example.org/",
}
TURTLE_PREFIXES = "".join(f"@prefix {p} <{iri}> .\n" for p, iri in PREFIXES.items())


def key(word: str) -> str:
    if word == "a":
        return f"<{PREFIXES['rdf:']}type>"
    if word.startswith(("<", "_:")):
        return word
    if word.startswith('"'):
        text, _, datatype = word.partition("^^")
        return f"{text}^^{key(datatype)}" if datatype else text
    for prefix, iri in PREFIXES.items():
        if word.startswith(prefix):
            return f"<{iri}{word[len(prefix):]}>"
    return f"<http://example.org/{word}>"


def short(term: str) -> str:
    if term == key("a"):
        return "a"
    for prefix, iri in PREFIXES.items():
        if term.startswith(f"<{iri}"):
            local = term[len(iri) + 1 : -1]
            return local if prefix == "ex:" else prefix + local
    if "^^<" in term:
        text, _, datatype = term.partition("^^")
        return f"{text}^^{short(datatype)}"
    return term


def triple(terms: Dictionary, text: str) -> tuple:
    return tuple(terms.intern(key(word)) for word in text.split())


def shown(terms: Dictionary, ids) -> str:
    return " ".join(short(terms.key(i)) for i in ids)


def graph(turtle: str) -> Graph:
    return Graph().parse(data=TURTLE_PREFIXES + turtle, format="turtle")


# --------------------------------------------------------------------------------------------
# Barbieri et al. 2010, Fig. 4: the transitive closure of isIn over a window of 10 seconds
# (one time point = one second), every triple tagged with its expiration time.

FIG_4_STREAM = {1: ["A isIn B"], 2: ["B isIn C"], 3: ["C isIn D"], 4: ["A isIn E", "E isIn D"]}

#        TS    triples in the window, and entailments, each with its expiration time
FIG_4 = {
    1: {"A isIn B": 11},
    2: {"A isIn B": 11, "B isIn C": 12,
        "A isIn C": 11},                                    # expires with A isIn B
    3: {"A isIn B": 11, "B isIn C": 12, "C isIn D": 13,
        "A isIn C": 11, "B isIn D": 12, "A isIn D": 11},
    4: {"A isIn B": 11, "B isIn C": 12, "C isIn D": 13, "A isIn E": 14, "E isIn D": 14,
        "A isIn C": 11, "B isIn D": 12, "A isIn D": 14},    # re-derived: 14 replaces 11
    # 5 .. 11: as at 4
    12: {"B isIn C": 12, "C isIn D": 13, "A isIn E": 14, "E isIn D": 14,
         "B isIn D": 12, "A isIn D": 14},                   # A isIn B and A isIn C dropped
    13: {"C isIn D": 13, "A isIn E": 14, "E isIn D": 14, "A isIn D": 14},
    14: {"A isIn E": 14, "E isIn D": 14, "A isIn D": 14},
    15: {},
}


def fig_4_expected(t: int) -> dict:
    return FIG_4[t] if t in FIG_4 else FIG_4[4]


def run_fig_4(materializer: Materializer) -> dict:
    terms = materializer.terms
    is_in = terms.intern(key("isIn"))
    table = {}
    for t in range(1, 16):
        materializer.advance_to(t, [triple(terms, text) for text in FIG_4_STREAM.get(t, [])])
        table[t] = {
            shown(terms, fact): materializer.expires(fact) for fact in materializer.holding() if fact[1] == is_in
        }
    return table


def test_barbieri_fig_4_isIn_declared_transitive_in_owl_rl():
    terms = Dictionary()
    m = Materializer("owl-rl", window=10, background=[triple(terms, "isIn a owl:TransitiveProperty")], terms=terms)
    assert run_fig_4(m) == {t: fig_4_expected(t) for t in range(1, 16)}


def test_barbieri_fig_4_with_the_papers_rule_R_as_a_lars_rule():
    # (R) isIn(x, z) :- isIn(x, y), isIn(y, z), and no entailment regime at all
    rule_r = "@prefix ex: <http://example.org/> .\n?x ex:isIn ?z :- ?x ex:isIn ?y, ?y ex:isIn ?z ."
    m = Materializer(None, window=10, rules=rule_r)
    assert run_fig_4(m) == {t: fig_4_expected(t) for t in range(1, 16)}


def test_barbieri_fig_4_changes_per_time_point():
    terms = Dictionary()
    m = Materializer("owl-rl", window=10, background=[triple(terms, "isIn a owl:TransitiveProperty")], terms=terms)
    is_in = terms.intern(key("isIn"))
    changes = {}
    for t in range(1, 16):
        report = m.advance_to(t, [triple(terms, text) for text in FIG_4_STREAM.get(t, [])])
        added = sorted(shown(terms, x) for x in report.added if x[1] == is_in)  # (at 1: the background's closure too)
        changes[t] = (added, sorted(shown(terms, x) for x in report.removed))
    assert changes == {
        1: (["A isIn B"], []),
        2: (["A isIn C", "B isIn C"], []),
        3: (["A isIn D", "B isIn D", "C isIn D"], []),
        4: (["A isIn E", "E isIn D"], []),  # A isIn D only holds longer: not a change
        5: ([], []), 6: ([], []), 7: ([], []), 8: ([], []), 9: ([], []), 10: ([], []), 11: ([], []),
        12: ([], ["A isIn B", "A isIn C"]),
        13: ([], ["B isIn C", "B isIn D"]),
        14: ([], ["C isIn D"]),
        15: ([], ["A isIn D", "A isIn E", "E isIn D"]),
    }


# --------------------------------------------------------------------------------------------
# What a few triples entail, rule by rule: background (Turtle) + triples streamed at 0, and the
# triples that hold beyond the input and beyond what holds with no input at all (the rule sets'
# facts: prp-ap, cls-thing, dt-type1, ... and their consequences).

RDFS_NOISE = ("a rdf:Property", "rdfs:subPropertyOf")  # rdfD2 and rdfs6, for every predicate in use


_WITH_NO_INPUT: dict = {}


def holding_with_no_input(profile: str, **options) -> set[str]:
    """What the rule set's own facts entail (computed once per profile and options)."""
    key = (profile, tuple(sorted(options.items())))
    if key not in _WITH_NO_INPUT:
        terms = Dictionary()
        baseline = Materializer(profile, terms=terms, **options)
        baseline.advance_to(0)
        _WITH_NO_INPUT[key] = {shown(terms, t) for t in baseline.holding()}
    return _WITH_NO_INPUT[key]


def entailed(profile: str, background: str, stream: list[str], **options) -> set[str]:
    terms = Dictionary()
    given = intern_triples(graph(background), terms)
    m = Materializer(profile, window=5, background=given, terms=terms, **options)
    arriving = [triple(terms, text) for text in stream]
    m.advance_to(0, arriving)
    new = {shown(terms, t) for t in set(m.holding()) - set(given) - set(arriving)}
    return new - holding_with_no_input(profile, **options)


def rdfs_entailed(background: str, stream: list[str]) -> set[str]:
    found = entailed("rdfs", background, stream)
    return {t for t in found if not (t.endswith(" a rdf:Property") or _reflexive_subproperty(t))}


def _reflexive_subproperty(text: str) -> bool:
    s, p, o = text.split()
    return p == "rdfs:subPropertyOf" and s == o


RDFS_CASES = [
    ("rdfs2 domain", "ex:p rdfs:domain ex:C .", ["x p y"], {"x a C"}),
    ("rdfs3 range", "ex:p rdfs:range ex:C .", ["x p y"], {"y a C"}),
    ("rdfs5 subPropertyOf is transitive", "ex:p rdfs:subPropertyOf ex:q . ex:q rdfs:subPropertyOf ex:r .", [],
     {"p rdfs:subPropertyOf r"}),
    ("rdfs7 subPropertyOf carries triples", "ex:p rdfs:subPropertyOf ex:q .", ["x p y"], {"x q y"}),
    ("rdfs9 subClassOf carries types", "ex:C rdfs:subClassOf ex:D .", ["x a C"], {"x a D"}),
    ("rdfs10 a class is its own subclass", "", ["C a rdfs:Class"], {"C rdfs:subClassOf C"}),
    ("rdfs11 subClassOf is transitive", "ex:C rdfs:subClassOf ex:D . ex:D rdfs:subClassOf ex:E .", [],
     {"C rdfs:subClassOf E"}),
    ("rdfs12 container membership", "", ["m a rdfs:ContainerMembershipProperty"], {"m rdfs:subPropertyOf rdfs:member"}),
    ("rdfs13 datatypes are literals", "", ["d a rdfs:Datatype"], {"d rdfs:subClassOf rdfs:Literal"}),
    ("domain of a superproperty, through rdfs7",
     "ex:p rdfs:subPropertyOf ex:q . ex:q rdfs:domain ex:C . ex:C rdfs:subClassOf ex:D .", ["x p y"],
     {"x q y", "x a C", "x a D"}),
    ("range over a literal types the literal", "ex:age rdfs:range ex:Number .", ['x age "5"^^xsd:integer'],
     {'"5"^^xsd:integer a Number'}),
]


@pytest.mark.parametrize("name, background, stream, expected", RDFS_CASES, ids=[c[0] for c in RDFS_CASES])
def test_rdfs_rule(name, background, stream, expected):
    assert rdfs_entailed(background, stream) == expected


def test_rdfs_d2_and_rdfs6_type_every_predicate_and_make_it_its_own_subproperty():
    assert entailed("rdfs", "", ["x p y"]) == {
        "p a rdf:Property", "p rdfs:subPropertyOf p",
        "a a rdf:Property", "a rdfs:subPropertyOf a",                # rdf:type is used by the first two
        "rdfs:subPropertyOf a rdf:Property", "rdfs:subPropertyOf rdfs:subPropertyOf rdfs:subPropertyOf",
    }


def test_rdfs_trivial_rules_are_off_by_default_and_on_when_asked():
    assert "x a rdfs:Resource" not in entailed("rdfs", "", ["x p y"])
    trivial = entailed("rdfs", "", ["x p y", "C a rdfs:Class"], trivial=True)
    assert {"x a rdfs:Resource", "y a rdfs:Resource", "C rdfs:subClassOf rdfs:Resource"} <= trivial


ONE = {'"1"^^xsd:nonNegativeInteger a xsd:nonNegativeInteger', '"1"^^xsd:nonNegativeInteger a xsd:integer',
       '"1"^^xsd:nonNegativeInteger a xsd:decimal'}  # dt-type2 on the cardinality
SAME_Y1_Y2 = {"y1 owl:sameAs y2", "y2 owl:sameAs y1", "y1 owl:sameAs y1", "y2 owl:sameAs y2"}

OWL_CASES = [
    # table 4: equality
    ("eq-sym eq-trans", "", ["x owl:sameAs y", "y owl:sameAs z"],
     {"y owl:sameAs x", "z owl:sameAs y", "x owl:sameAs z", "z owl:sameAs x",
      "x owl:sameAs x", "y owl:sameAs y", "z owl:sameAs z"}),
    ("eq-rep-s eq-rep-o", "", ["x owl:sameAs y", "x p z"],
     {"y owl:sameAs x", "x owl:sameAs x", "y owl:sameAs y", "y p z"}),
    ("eq-rep-p", "", ["p owl:sameAs q", "x p y"], {"q owl:sameAs p", "p owl:sameAs p", "q owl:sameAs q", "x q y"}),
    # table 5: properties
    ("prp-dom prp-rng", "ex:p rdfs:domain ex:C ; rdfs:range ex:D .", ["x p y"], {"x a C", "y a D"}),
    ("prp-fp", "ex:p a owl:FunctionalProperty .", ["x p y1", "x p y2"], {"y1 owl:sameAs y2", "y2 owl:sameAs y1",
                                                                           "y1 owl:sameAs y1", "y2 owl:sameAs y2"}),
    ("prp-ifp", "ex:p a owl:InverseFunctionalProperty .", ["x1 p y", "x2 p y"],
     {"x1 owl:sameAs x2", "x2 owl:sameAs x1", "x1 owl:sameAs x1", "x2 owl:sameAs x2"}),
    ("prp-symp", "ex:p a owl:SymmetricProperty .", ["x p y"], {"y p x"}),
    ("prp-trp", "ex:p a owl:TransitiveProperty .", ["x p y", "y p z", "z p w"], {"x p z", "y p w", "x p w"}),
    ("prp-spo1", "ex:p rdfs:subPropertyOf ex:q .", ["x p y"], {"x q y"}),
    ("prp-spo2 chain of three", "ex:greatUncle owl:propertyChainAxiom ( ex:parent ex:parent ex:brother ) .",
     ["x parent y", "y parent z", "z brother w", "y brother v"], {"x greatUncle w"}),
    ("prp-eqp1 prp-eqp2 (and scm-eqp1, scm-eqp2)", "ex:p owl:equivalentProperty ex:q .", ["x p y", "u q v"],
     {"x q y", "u p v", "q owl:equivalentProperty p", "p rdfs:subPropertyOf q", "q rdfs:subPropertyOf p",
      "p rdfs:subPropertyOf p", "q rdfs:subPropertyOf q", "p owl:equivalentProperty p",
      "q owl:equivalentProperty q"}),
    ("prp-inv1 prp-inv2", "ex:p owl:inverseOf ex:q .", ["x p y", "u q v"], {"y q x", "v p u"}),
    ("prp-key", "ex:Person owl:hasKey ( ex:ssn ex:country ) .",
     ["x a Person", "y a Person", "z a Person", "x ssn n1", "y ssn n1", "z ssn n1",
      "x country c", "y country c", "z country d"],
     {"x owl:sameAs y", "y owl:sameAs x", "x owl:sameAs x", "y owl:sameAs y"}),
    # table 6: classes
    ("cls-int1 cls-int2 (and scm-int)", "ex:C owl:intersectionOf ( ex:D ex:E ) .", ["x a D", "x a E", "y a C"],
     {"x a C", "y a D", "y a E", "C rdfs:subClassOf D", "C rdfs:subClassOf E"}),
    ("cls-uni (and scm-uni)", "ex:C owl:unionOf ( ex:D ex:E ) .", ["x a D", "y a E"],
     {"x a C", "y a C", "D rdfs:subClassOf C", "E rdfs:subClassOf C"}),
    ("cls-svf1", "ex:R owl:someValuesFrom ex:D ; owl:onProperty ex:p .", ["x p y", "y a D", "u p v"], {"x a R"}),
    ("cls-svf2 (and scm-svf1 with owl:Thing rdfs:subClassOf owl:Thing)",
     "ex:R owl:someValuesFrom owl:Thing ; owl:onProperty ex:p .", ["x p y"],
     {"x a R", "R rdfs:subClassOf R", "R owl:equivalentClass R"}),
    ("cls-avf", "ex:R owl:allValuesFrom ex:D ; owl:onProperty ex:p .", ["x a R", "x p y", "u p v"], {"y a D"}),
    ("cls-hv1 cls-hv2", "ex:R owl:hasValue ex:v ; owl:onProperty ex:p .", ["x a R", "y p v"],
     {"x p v", "y a R"}),
    ("cls-maxc2", 'ex:R owl:maxCardinality "1"^^xsd:nonNegativeInteger ; owl:onProperty ex:p .',
     ["x a R", "x p y1", "x p y2"], SAME_Y1_Y2 | ONE),
    ("cls-maxqc3", 'ex:R owl:maxQualifiedCardinality "1"^^xsd:nonNegativeInteger ; owl:onProperty ex:p ; '
     "owl:onClass ex:C .", ["x a R", "x p y1", "x p y2", "x p y3", "y1 a C", "y2 a C"], SAME_Y1_Y2 | ONE),
    ("cls-maxqc4", 'ex:R owl:maxQualifiedCardinality "1"^^xsd:nonNegativeInteger ; owl:onProperty ex:p ; '
     "owl:onClass owl:Thing .", ["x a R", "x p y1", "x p y2"], SAME_Y1_Y2 | ONE),
    ("cls-oo", "ex:C owl:oneOf ( ex:x ex:y ) .", [], {"x a C", "y a C"}),
    # table 7: class axioms
    ("cax-sco", "ex:C rdfs:subClassOf ex:D .", ["x a C"], {"x a D"}),
    ("cax-eqc1 cax-eqc2 (and scm-eqc1, scm-eqc2, scm-sco)", "ex:C owl:equivalentClass ex:D .", ["x a C", "y a D"],
     {"x a D", "y a C", "C rdfs:subClassOf D", "D rdfs:subClassOf C", "D owl:equivalentClass C",
      "C rdfs:subClassOf C", "D rdfs:subClassOf D", "C owl:equivalentClass C", "D owl:equivalentClass D"}),
    # table 8: datatypes
    ("dt-type2 along the XSD hierarchy", "", ['x age "7"^^xsd:short'],
     {'"7"^^xsd:short a xsd:short', '"7"^^xsd:short a xsd:int', '"7"^^xsd:short a xsd:long',
      '"7"^^xsd:short a xsd:integer', '"7"^^xsd:short a xsd:decimal'}),
    # table 9: schema vocabulary
    ("scm-cls", "", ["C a owl:Class"], {"C rdfs:subClassOf C", "C owl:equivalentClass C",
                                        "C rdfs:subClassOf owl:Thing", "owl:Nothing rdfs:subClassOf C"}),
    ("scm-sco scm-eqc2", "ex:C rdfs:subClassOf ex:D . ex:D rdfs:subClassOf ex:E . ex:E rdfs:subClassOf ex:C .", [],
     {"C rdfs:subClassOf E", "D rdfs:subClassOf C", "E rdfs:subClassOf D",
      "C rdfs:subClassOf C", "D rdfs:subClassOf D", "E rdfs:subClassOf E",
      "C owl:equivalentClass D", "D owl:equivalentClass C", "C owl:equivalentClass E", "E owl:equivalentClass C",
      "D owl:equivalentClass E", "E owl:equivalentClass D",
      "C owl:equivalentClass C", "D owl:equivalentClass D", "E owl:equivalentClass E"}),
    ("scm-eqc1", "ex:C owl:equivalentClass ex:D .", [], {"C rdfs:subClassOf D", "D rdfs:subClassOf C",
                                                        "D owl:equivalentClass C", "C rdfs:subClassOf C",
                                                        "D rdfs:subClassOf D", "C owl:equivalentClass C",
                                                        "D owl:equivalentClass D"}),
    ("scm-op scm-dp", "", ["p a owl:ObjectProperty", "d a owl:DatatypeProperty"],
     {"p rdfs:subPropertyOf p", "p owl:equivalentProperty p", "d rdfs:subPropertyOf d",
      "d owl:equivalentProperty d"}),
    ("scm-eqp1 scm-eqp2 scm-spo", "ex:p owl:equivalentProperty ex:q .", [],
     {"p rdfs:subPropertyOf q", "q rdfs:subPropertyOf p", "q owl:equivalentProperty p",
      "p rdfs:subPropertyOf p", "q rdfs:subPropertyOf q", "p owl:equivalentProperty p",
      "q owl:equivalentProperty q"}),
    ("scm-dom1 scm-dom2 scm-rng1 scm-rng2",
     "ex:q rdfs:domain ex:C ; rdfs:range ex:D . ex:C rdfs:subClassOf ex:E . ex:D rdfs:subClassOf ex:F . "
     "ex:p rdfs:subPropertyOf ex:q .", [],
     {"q rdfs:domain E", "q rdfs:range F", "p rdfs:domain C", "p rdfs:domain E", "p rdfs:range D",
      "p rdfs:range F"}),
    ("scm-hv", "ex:R1 owl:hasValue ex:v ; owl:onProperty ex:p . ex:R2 owl:hasValue ex:v ; owl:onProperty ex:q . "
     "ex:p rdfs:subPropertyOf ex:q .", [], {"R1 rdfs:subClassOf R2"}),
    ("scm-svf1", "ex:R1 owl:someValuesFrom ex:C ; owl:onProperty ex:p . "
     "ex:R2 owl:someValuesFrom ex:D ; owl:onProperty ex:p . ex:C rdfs:subClassOf ex:D .", [],
     {"R1 rdfs:subClassOf R2"}),
    ("scm-svf2", "ex:R1 owl:someValuesFrom ex:C ; owl:onProperty ex:p . "
     "ex:R2 owl:someValuesFrom ex:C ; owl:onProperty ex:q . ex:p rdfs:subPropertyOf ex:q .", [],
     {"R1 rdfs:subClassOf R2"}),
    ("scm-avf1", "ex:R1 owl:allValuesFrom ex:C ; owl:onProperty ex:p . "
     "ex:R2 owl:allValuesFrom ex:D ; owl:onProperty ex:p . ex:C rdfs:subClassOf ex:D .", [],
     {"R1 rdfs:subClassOf R2"}),
    ("scm-avf2", "ex:R1 owl:allValuesFrom ex:C ; owl:onProperty ex:p . "
     "ex:R2 owl:allValuesFrom ex:C ; owl:onProperty ex:q . ex:p rdfs:subPropertyOf ex:q .", [],
     {"R2 rdfs:subClassOf R1"}),
    ("scm-int scm-uni", "ex:C owl:intersectionOf ( ex:D ex:E ) . ex:U owl:unionOf ( ex:F ex:G ) .", [],
     {"C rdfs:subClassOf D", "C rdfs:subClassOf E", "F rdfs:subClassOf U", "G rdfs:subClassOf U"}),
]


@pytest.mark.parametrize("name, background, stream, expected", OWL_CASES, ids=[c[0] for c in OWL_CASES])
def test_owl_rl_rule(name, background, stream, expected):
    assert entailed("owl-rl", background, stream) == expected


def test_owl_rl_eq_ref_is_off_by_default_and_on_when_asked():
    assert entailed("owl-rl", "", ["x p y"]) == set()
    assert entailed("owl-rl", "", ["x p y"], trivial=True) == {"x owl:sameAs x", "p owl:sameAs p", "y owl:sameAs y"}


def test_prp_ap_cls_thing_dt_type1_hold_with_no_input_and_never_expire():
    terms = Dictionary()
    m = Materializer("owl-rl", window=3, terms=terms)
    m.advance_to(0)
    holding = {shown(terms, t) for t in m.holding()}
    assert {"rdfs:label a owl:AnnotationProperty", "owl:Thing a owl:Class", "owl:Nothing a owl:Class",
            "xsd:integer a rdfs:Datatype", "owl:Nothing rdfs:subClassOf owl:Thing"} <= holding
    assert all(m.expires(t) == NEVER_EXPIRES for t in m.holding())


# --------------------------------------------------------------------------------------------
# Rules with a false head: an inconsistency event naming the rule and the triples; the stream goes on.

FALSE_CASES = [
    ("eq-diff1", "", ["x owl:sameAs y", "x owl:differentFrom y"],
     ("eq-diff1", {"x owl:sameAs y", "x owl:differentFrom y"})),
    ("eq-diff2", "ex:d a owl:AllDifferent ; owl:members ( ex:x ex:y ex:z ) .", ["y owl:sameAs z"], None),
    ("prp-irp", "ex:p a owl:IrreflexiveProperty .", ["x p x"],
     ("prp-irp", {"p a owl:IrreflexiveProperty", "x p x"})),
    ("prp-asyp", "ex:p a owl:AsymmetricProperty .", ["x p y", "y p x"],
     ("prp-asyp", {"p a owl:AsymmetricProperty", "x p y", "y p x"})),
    ("prp-pdw", "ex:p owl:propertyDisjointWith ex:q .", ["x p y", "x q y"],
     ("prp-pdw", {"p owl:propertyDisjointWith q", "x p y", "x q y"})),
    ("prp-adp", "ex:d a owl:AllDisjointProperties ; owl:members ( ex:p ex:q ex:r ) .", ["x p y", "x r y"], None),
    ("prp-npa1", "ex:n owl:sourceIndividual ex:x ; owl:assertionProperty ex:p ; owl:targetIndividual ex:y .",
     ["x p y"], ("prp-npa1", {"n owl:sourceIndividual x", "n owl:assertionProperty p",
                              "n owl:targetIndividual y", "x p y"})),
    ("prp-npa2", 'ex:n owl:sourceIndividual ex:x ; owl:assertionProperty ex:age ; owl:targetValue "3"^^xsd:integer .',
     ['x age "3"^^xsd:integer'], ("prp-npa2", {"n owl:sourceIndividual x", "n owl:assertionProperty age",
                                               'n owl:targetValue "3"^^xsd:integer', 'x age "3"^^xsd:integer'})),
    ("cls-nothing2", "", ["x a owl:Nothing"], ("cls-nothing2", {"x a owl:Nothing"})),
    ("cls-com", "ex:C owl:complementOf ex:D .", ["x a C", "x a D"],
     ("cls-com", {"C owl:complementOf D", "x a C", "x a D"})),
    ("cls-maxc1", 'ex:R owl:maxCardinality "0"^^xsd:nonNegativeInteger ; owl:onProperty ex:p .', ["x a R", "x p y"],
     ("cls-maxc1", {'R owl:maxCardinality "0"^^xsd:nonNegativeInteger', "R owl:onProperty p", "x a R", "x p y"})),
    ("cls-maxqc1", 'ex:R owl:maxQualifiedCardinality "0"^^xsd:nonNegativeInteger ; owl:onProperty ex:p ; '
     "owl:onClass ex:C .", ["x a R", "x p y", "y a C"], None),
    ("cls-maxqc2", 'ex:R owl:maxQualifiedCardinality "0"^^xsd:nonNegativeInteger ; owl:onProperty ex:p ; '
     "owl:onClass owl:Thing .", ["x a R", "x p y"], None),
    ("cax-dw", "ex:C owl:disjointWith ex:D .", ["x a C", "x a D"],
     ("cax-dw", {"C owl:disjointWith D", "x a C", "x a D"})),
    ("cax-adc", "ex:d a owl:AllDisjointClasses ; owl:members ( ex:C ex:D ex:E ) .", ["x a C", "x a E"], None),
    ("dt-not-type", "", ['x age "old"^^xsd:integer'], ("dt-not-type", {'x age "old"^^xsd:integer'})),
]


@pytest.mark.parametrize("name, background, stream, expected", FALSE_CASES, ids=[c[0] for c in FALSE_CASES])
def test_false_head_reports_an_inconsistency_and_the_stream_goes_on(name, background, stream, expected):
    terms = Dictionary()
    m = Materializer("owl-rl", window=2, background=graph(background), terms=terms)
    assert m.advance_to(0).inconsistencies == []
    events = m.advance_to(1, [triple(terms, text) for text in stream]).inconsistencies
    # one event per grounding: x sameAs y with x differentFrom y is also y sameAs x with y differentFrom x, ...
    assert {event.rule for event in events} == {name}
    if expected is not None:  # (rules over lists name a list cell: checked by rule name only)
        assert expected in [(event.rule, {shown(terms, t) for t in event.triples}) for event in events]
    assert {event.time_point for event in events} == {1}
    assert m.advance_to(2, [triple(terms, "more p data")]).inconsistencies == []  # found once, the stream goes on
    assert {e.rule for e in m.inconsistent()} == {name}                         # still holds (window 2)
    m.advance_to(4)
    assert m.inconsistent() == []                                                 # its triples expired


def test_inconsistency_found_when_a_window_triple_meets_the_background_again_later():
    terms = Dictionary()
    m = Materializer("owl-rl", window=1, background=graph("ex:C owl:disjointWith ex:D . ex:x a ex:C ."), terms=terms)
    assert m.advance_to(0, [triple(terms, "y a D")]).inconsistencies == []
    assert [e.rule for e in m.advance_to(5, [triple(terms, "x a D")]).inconsistencies] == ["cax-dw"]
    assert m.advance_to(6).inconsistencies == []
    assert m.advance_to(7).inconsistencies == [] and m.inconsistent() == []  # x a D expired
    # (a report is the net change since the last call: had we jumped from 6 to 9, nothing would be new)
    assert [e.rule for e in m.advance_to(9, [triple(terms, "x a D")]).inconsistencies] == ["cax-dw"]


# --------------------------------------------------------------------------------------------
# Expiration: background never expires, window triples expire, re-derivations extend, recursion converges.


def test_background_closure_never_expires_and_window_entailments_expire_with_their_premises():
    terms = Dictionary()
    m = Materializer("rdfs", window=3, background=graph("ex:C rdfs:subClassOf ex:D . ex:D rdfs:subClassOf ex:E ."),
                     terms=terms)
    m.advance_to(0, [triple(terms, "x a C")])
    assert m.expires(triple(terms, "C rdfs:subClassOf E")) == NEVER_EXPIRES
    assert m.expires(triple(terms, "x a E")) == 3
    assert m.advance_to(2, [triple(terms, "x a C")]).added == []       # seen again: holds longer, nothing new
    assert m.expires(triple(terms, "x a E")) == 5
    assert sorted(shown(terms, t) for t in m.advance_to(6).removed) == ["x a C", "x a D", "x a E"]
    assert m.expires(triple(terms, "C rdfs:subClassOf E")) == NEVER_EXPIRES


def test_schema_in_the_window_expires_and_takes_its_entailments_along():
    terms = Dictionary()
    m = Materializer("rdfs", window=2, background=graph("ex:x a ex:C ."), terms=terms)
    m.advance_to(0, [triple(terms, "C rdfs:subClassOf D")])
    assert m.expires(triple(terms, "x a D")) == 2
    m.advance_to(3)
    assert m.expires(triple(terms, "x a D")) is None
    assert m.expires(triple(terms, "x a C")) == NEVER_EXPIRES


def test_a_later_rederivation_replaces_the_earlier_one():
    terms = Dictionary()
    m = Materializer("owl-rl", window=10, background=graph("ex:p a owl:SymmetricProperty ; owl:inverseOf ex:q ."),
                     terms=terms)
    m.advance_to(0, [triple(terms, "x p y")])
    assert (m.expires(triple(terms, "y p x")), m.expires(triple(terms, "x q y"))) == (10, 10)
    m.advance_to(4, [triple(terms, "y q x")])  # entails x p y again, later
    assert (m.expires(triple(terms, "x p y")), m.expires(triple(terms, "y p x")),
            m.expires(triple(terms, "x q y"))) == (14, 14, 14)


def test_sameas_cliques_converge_and_expire_together():
    terms = Dictionary()
    m = Materializer("owl-rl", window=2, terms=terms)
    chain = [f"n{i} owl:sameAs n{i + 1}" for i in range(6)]
    m.advance_to(0, [triple(terms, t) for t in chain] + [triple(terms, "n0 color red")])
    same = {shown(terms, t) for t in m.holding() if shown(terms, t).split()[1] == "owl:sameAs"}
    assert len(same) == 7 * 7  # every pair of the 7 names, both ways and reflexive
    assert {f"n{i} color red" for i in range(7)} <= {shown(terms, t) for t in m.holding()}
    assert m.advance_to(3).removed and m.holding() == [t for t in m.holding() if m.expires(t) == NEVER_EXPIRES]


def test_a_window_of_none_never_expires():
    terms = Dictionary()
    m = Materializer("rdfs", window=None, background=graph("ex:C rdfs:subClassOf ex:D ."), terms=terms)
    m.advance_to(0, [triple(terms, "x a C")])
    assert m.advance_to(1000).removed == []
    assert m.expires(triple(terms, "x a D")) == NEVER_EXPIRES


# --------------------------------------------------------------------------------------------
# LARS rules on top of the materialized triples, in the same program.


def test_lars_rules_see_entailed_triples_and_their_windows():
    rules = """
        @prefix ex: <http://example.org/> .
        hot(?r)  :- ?s ex:in ?r, ?s ex:temperature ?v, ?v > 30, ?r a ex:Room .
        alarm(?r) :- [RANGE 2] BOX hot(?r) .
        ?r a ex:Watched :- alarm(?r) .
    """
    background = "ex:Office rdfs:subClassOf ex:Room . ex:in rdfs:range ex:Office ."
    terms = Dictionary()
    m = Materializer("rdfs", window=1, background=graph(background), rules=rules, terms=terms)
    hot = [triple(terms, "s1 in r1"), triple(terms, 's1 temperature "35"^^xsd:integer')]
    derived = {}
    for t in range(0, 9):
        m.advance_to(t, hot if 2 <= t <= 5 else [])
        derived[t] = sorted(shown(terms, x) for x in m.holding() if shown(terms, x).endswith("Watched"))
    # r1 is a Room only through the range of ex:in and subClassOf; hot(r1) holds on 2..6 (window 1),
    # alarm when [t - 2, t] is all hot
    assert derived == {t: ["r1 a Watched"] if 4 <= t <= 6 else [] for t in range(0, 9)}


def test_rules_from_a_file(tmp_path):
    path = tmp_path / "rules.lars"
    path.write_text("@prefix ex: <http://example.org/> .\n?x a ex:Busy :- ?x ex:hosts ?e .\n")
    terms = Dictionary()
    m = Materializer("rdfs", window=1, rules=path, background=graph("ex:Busy rdfs:subClassOf ex:Room ."),
                     terms=terms)
    m.advance_to(0, [triple(terms, "r1 hosts e1")])
    assert {"r1 a Busy", "r1 a Room"} <= {shown(terms, t) for t in m.holding()}


# --------------------------------------------------------------------------------------------
# Mistakes.


def test_unknown_profile():
    with pytest.raises(ValueError, match="unknown reasoning profile 'owl-full'; expected 'rdfs', 'owl-rl' or None"):
        Materializer("owl-full")


def test_profile_by_entailment_iri():
    assert Materializer("http://www.w3.org/ns/owl-profile/RL").profile == "owl-rl"
    assert Materializer("http://www.w3.org/ns/entailment/RDFS").profile == "rdfs"


def test_a_syntax_error_in_the_rules_is_located():
    with pytest.raises(RuleSyntaxError) as error:
        Materializer("rdfs", rules="ok(?x) :- ?x a <http://ex/C> .\nbad(?x :- q(?x) .")
    assert str(error.value).startswith("<rules>:2:")


def test_a_tuple_window_over_materialized_triples_is_refused():
    with pytest.raises(RuleSyntaxError, match="tuple window"):
        Materializer("rdfs", rules="q(?x) :- [COUNT 3] DIAMOND ?x <http://ex/p> ?y .")


def test_an_unreadable_background_file_is_one_located_error(tmp_path):
    bad = tmp_path / "bad.ttl"
    bad.write_text("@prefix ex: <http://example.org/> .\nex:a ex:b .\n")
    with pytest.raises(BackgroundError) as error:
        Materializer("rdfs", background=bad)
    assert str(error.value).startswith(str(bad) + ":")
    with pytest.raises(BackgroundError, match="no such file"):
        Materializer("rdfs", background=tmp_path / "missing.ttl")


def test_before_the_first_time_point_what_holds_is_the_background_closure():
    terms = Dictionary()
    m = Materializer("rdfs", window=0, background=graph("ex:C rdfs:subClassOf ex:D . ex:x a ex:C ."), terms=terms)
    assert "x a D" in {shown(terms, t) for t in m.holding()}
    assert m.expires(triple(terms, "x a D")) == NEVER_EXPIRES
    m.advance_to(5, [triple(terms, "y a C")])
    assert {"x a D", "y a D"} <= {shown(terms, t) for t in m.holding()}
    assert m.expires(triple(terms, "y a D")) == 5


@pytest.mark.parametrize("suffix, rdflib_format", [(".nt", "nt"), (".rdf", "xml"), (".jsonld", "json-ld"),
                                                    (".trig", "trig"), (".nq", "nquads")])
def test_background_in_any_rdflib_format(tmp_path, suffix, rdflib_format):
    path = tmp_path / f"schema{suffix}"
    schema = graph("ex:C rdfs:subClassOf ex:D . ex:D rdfs:subClassOf ex:E .")
    if rdflib_format in ("trig", "nquads"):  # a dataset: its graphs are merged
        dataset = Dataset()
        for number, t in enumerate(schema):
            dataset.graph(URIRef(f"http://example.org/g{number}")).add(t)
        with dataset_calls():  # (rdflib's quad writers use its own deprecated Dataset.contexts)
            dataset.serialize(path, format=rdflib_format)
    else:
        schema.serialize(path, format=rdflib_format, encoding="utf-8")
    terms = Dictionary()
    m = Materializer("rdfs", window=1, background=path, terms=terms)
    m.advance_to(0, [triple(terms, "x a C")])
    assert {"C rdfs:subClassOf E", "x a E"} <= {shown(terms, t) for t in m.holding()}
    assert m.expires(triple(terms, "C rdfs:subClassOf E")) == NEVER_EXPIRES
