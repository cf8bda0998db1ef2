"""A generated SOSA-style sensor stream, for `bench throughput` and `bench soak`.

Every observation is a new IRI with four triples (its type, its sensor, its
result, its result time as a unique xsd:dateTime literal), `rate` triples per
second of event time; `lines(count, rate)` yields `.tnt` lines (ms timestamps)
in blocks, so nothing needs the whole stream in memory.

    <http://ex.org/sosa/obs17> a sosa:Observation .
    <http://ex.org/sosa/obs17> sosa:madeBySensor <http://ex.org/sosa/sensor3> .
    <http://ex.org/sosa/obs17> sosa:hasSimpleResult "41"^^xsd:integer .
    <http://ex.org/sosa/obs17> sosa:resultTime "1970-01-01T00:00:00.170Z"^^xsd:dateTime .

>>> first = next(blocks(8, rate=100, block=8))
>>> len(first), first[4].split()[:3]
(8, ['40', '<http://ex.org/sosa/obs1>', '<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>'])
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

EX = "http://ex.org/sosa/"
SOSA = "http://www.w3.org/ns/sosa/"
STREAM = f"{EX}stream"
SENSORS = 50
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
XSD = "http://www.w3.org/2001/XMLSchema#"
TRIPLES_PER_OBSERVATION = 4

#: the 3-pattern aggregate of the benchmarks, over [RANGE 10s STEP 5s]
AGGREGATE = f"""REGISTER RSTREAM <{EX}q/aggregate> AS
PREFIX sosa: <{SOSA}>
PREFIX ex: <{EX}>
SELECT ?sensor (COUNT(?obs) AS ?n) (AVG(?v) AS ?avg) (MAX(?v) AS ?max)
FROM STREAM <{STREAM}> [RANGE 10s STEP 5s] {{extra}}
WHERE {{{{ ?obs a {{kind}} ; sosa:madeBySensor ?sensor ; sosa:hasSimpleResult ?v }}}}
GROUP BY ?sensor"""

#: a small ontology for the RDFS / OWL 2 RL workloads
ONTOLOGY = f"""@prefix sosa: <{SOSA}> .
@prefix ex: <{EX}> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
sosa:Observation rdfs:subClassOf ex:Event .
ex:Event rdfs:subClassOf ex:Thing .
sosa:madeBySensor rdfs:domain sosa:Observation ; rdfs:range sosa:Sensor .
sosa:Sensor rdfs:subClassOf ex:Device .
sosa:hasSimpleResult rdfs:subPropertyOf ex:result .
ex:madeObservation owl:inverseOf sosa:madeBySensor .
"""

PROFILES = {
    "off": ("", "sosa:Observation"),
    "rdfs": ("ENTAILMENT <http://www.w3.org/ns/entailment/RDFS>", "ex:Event"),
    "owl-rl": ("ENTAILMENT <http://www.w3.org/ns/owl-profile/RL>", "ex:Event"),
}


def query_text(profile: str = "off", ontology: str | None = None) -> str:
    """The aggregate under an entailment profile (`off`, `rdfs`, `owl-rl`), reading `ontology` (a file)."""
    extra, kind = PROFILES[profile]
    if profile != "off":
        extra = f"FROM <{ontology}>\n{extra}"
    return AGGREGATE.format(extra=extra, kind=kind)


def blocks(count: int, *, rate: int = 10_000, block: int = 50_000, seed: int = 7):
    """`count` .tnt lines of observations, `rate` triples per second, in lists of `block` lines."""
    draw = random.Random(seed)
    epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)
    made_by, result, time_ = f"<{SOSA}madeBySensor>", f"<{SOSA}hasSimpleResult>", f"<{SOSA}resultTime>"
    kind = f"<{SOSA}Observation>"
    integer, date_time = f"<{XSD}integer>", f"<{XSD}dateTime>"
    out: list[str] = []
    number = 0
    written = 0
    while written < count:
        stamp = written * 1000 // rate
        obs = f"<{EX}obs{number}>"
        moment = (epoch + timedelta(milliseconds=stamp)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        for triple in (f"{obs} {RDF_TYPE} {kind} .",
                       f"{obs} {made_by} <{EX}sensor{draw.randrange(SENSORS)}> .",
                       f'{obs} {result} "{draw.randrange(1000)}"^^{integer} .',
                       f'{obs} {time_} "{moment}"^^{date_time} .'):
            if written == count:
                break
            out.append(f"{written * 1000 // rate} {triple}\n")
            written += 1
            if len(out) == block:
                yield out
                out = []
        number += 1
    if out:
        yield out


def write(path, count: int, *, rate: int = 10_000, seed: int = 7) -> None:
    """The stream as a .tnt file."""
    with open(path, "w", encoding="utf-8") as handle:
        for lines in blocks(count, rate=rate, seed=seed):
            handle.writelines(lines)
