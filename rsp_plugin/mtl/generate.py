"""Streams and programs of the paper's two benchmarks, generated (for tests and `rsp-plugin bench datalogmtl`).

SUMO "short stop" (Section 7.2): vehicles in a traffic jam report, every
second, whether they are positioned on the map (`Pos`), not (`NotPos`) or
off it (`NotOnMap`), their heading and whether they speed up or slow down.
`sumo_stream` follows the shape of MeTeoR-Str's stream S1: the number of
vehicles on the road rises and falls in waves (46 s long, 19 to 68 vehicles),
a vehicle on the road misses a report now and then, and each report's facts
are drawn uniformly. At scale 1 it has about S1's 24,000 facts over 200 time
points; S2 is about 3.4 times denser.

LUBM-temporal (Section 7.1): a university in the style of the Lehigh
University Benchmark (faculty, students, courses, degrees), each of its facts
given one or two random time points, as MeTeoR's `add_intervals --punctual`
does, then sorted into a stream.

Lines are in MeTeoR's dataset syntax (`Pos(veh3)@[12,12]`).
"""

from __future__ import annotations

import random

#: The short-stop program of the paper (Section 7.2), in MeTeoR's syntax.
SHORT_STOP = """\
NotPos(V):-NotOnMap(V)
ShortStop(V):-NotPos(V), Boxminus[1,1]Pos(V), Boxminus[2,2]NotPos(V)
ShortStop(V):-NotPos(V), Boxminus[1,1]Pos(V), Boxminus[2,2]Pos(V), Boxminus[3,3]NotPos(V)
ShortStop(V):-NotPos(V), Boxminus[1,1]Pos(V), Boxminus[2,2]Pos(V), Boxminus[3,3]Pos(V), Boxminus[4,4]NotPos(V)
ShortStop(V):-NotPos(V), Boxminus[1,1]Pos(V), Boxminus[2,2]Pos(V), Boxminus[3,3]Pos(V), Boxminus[4,4]Pos(V), Boxminus[5,5]NotPos(V)
"""

#: The LUBM-temporal queries' relevant fragments (Section 7.1): non-recursive and recursive.
LUBM_NONRECURSIVE = """\
a1:AssistantProfessorCandidate(X):-Diamondminus[1,1]a1:Lecturer(X)
a1:AssociateProfessorCandidate(X):-a1:doctoralDegreeFrom(X,Y),Boxminus[1,1]a1:University(Y)
a1:AssociateProfessorCandidate(X):-Boxminus[1,1]a1:AssistantProfessorCandidate(X)
"""
LUBM_RECURSIVE = """\
a1:ScientistCandidate(X):-Diamondminus[1,1]a1:doctoralDegreeFrom(X,Y)
a1:Scientist(X):-Boxminus[1,1]a1:ScientistCandidate(X)
a1:Scientist(X):-Diamondminus[1,1]a1:FullProfessor(X)
a1:FullProfessor(X):-Diamondminus[1,1]a1:Scientist(X)
"""

_STATUS = ("Pos", "NotPos", "NotOnMap")
_HEADING = ("NorthHeading", "SouthHeading", "EastHeading", "WestHeading")
_SPEED = ("Acceleration", "SlowDown")


def _on_road(t: int, low: int, high: int) -> int:
    """Vehicles on the road at t: waves of 46 time points, up for 15, down for 31."""
    phase = (t - 1) % 46
    share = phase / 14 if phase < 15 else (45 - phase) / 31
    return low + round((high - low) * share)


def sumo_stream(seed: int = 1, *, time_points: int = 200, scale: float = 1.0, skip: float = 0.08) -> list[str]:
    """A SUMO-like stream in the shape of S1 (scale 1) or S2 (scale ~3.4), one fact per line, in time order."""
    rng = random.Random(seed)
    low, high = round(19 * scale), round(68 * scale)
    lines = []
    for t in range(1, time_points + 1):
        for vehicle in range(_on_road(t, low, high)):
            if rng.random() < skip:
                continue
            name = f"veh{vehicle}"
            for kinds in (_STATUS, _HEADING, _SPEED):
                lines.append(f"{rng.choice(kinds)}({name})@[{t},{t}]")
    return lines


def lubm_stream(seed: int = 1, *, facts: int = 20_000, time_points: int = 300, universities: int = 1,
                intervals: int = 2) -> list[str]:
    """A LUBM-style temporal stream: `facts` punctual facts over [0, time_points], in time order."""
    rng = random.Random(seed)
    atemporal = _university_facts(rng, universities)
    timed = []
    while len(timed) < facts:
        fact = rng.choice(atemporal)
        for _ in range(rng.randint(1, intervals)):
            timed.append((rng.randint(0, time_points), fact))
            if len(timed) >= facts:
                break
    timed.sort(key=lambda item: item[0])
    return [f"{fact}@[{t},{t}]" for t, fact in timed]


def _university_facts(rng: random.Random, universities: int) -> list[str]:
    facts = []
    world = [f"University{u}" for u in range(universities + 20)]  # degrees from elsewhere too
    facts.extend(f"a1:University({u})" for u in world)
    person = 0
    for u in range(universities):
        for d in range(rng.randint(12, 18)):
            department = f"Department{d}.University{u}"
            facts.append(f"a1:Department({department})")
            facts.append(f"a1:subOrganizationOf({department},University{u})")
            courses = [f"Course{c}.{department}" for c in range(rng.randint(10, 20))]
            facts.extend(f"a1:Course({c})" for c in courses)
            faculty = []
            for rank, count in (("FullProfessor", (7, 10)), ("AssociateProfessor", (10, 14)),
                                ("AssistantProfessor", (8, 11)), ("Lecturer", (5, 7))):
                for _ in range(rng.randint(*count)):
                    person += 1
                    who = f"ID{person}"
                    faculty.append(who)
                    facts.append(f"a1:{rank}({who})")
                    facts.append(f"a1:worksFor({who},{department})")
                    facts.append(f"a1:name({who},Name{person})")
                    facts.append(f"a1:teacherOf({who},{rng.choice(courses)})")
                    if rank != "Lecturer" or rng.random() < 0.3:
                        facts.append(f"a1:doctoralDegreeFrom({who},{rng.choice(world)})")
                    facts.append(f"a1:undergraduateDegreeFrom({who},{rng.choice(world)})")
            for kind, count in (("UndergraduateStudent", (80, 120)), ("GraduateStudent", (20, 30))):
                for _ in range(rng.randint(*count)):
                    person += 1
                    who = f"ID{person}"
                    facts.append(f"a1:{kind}({who})")
                    facts.append(f"a1:memberOf({who},{department})")
                    facts.append(f"a1:takesCourse({who},{rng.choice(courses)})")
                    if kind == "GraduateStudent":
                        facts.append(f"a1:advisor({who},{rng.choice(faculty)})")
                        facts.append(f"a1:undergraduateDegreeFrom({who},{rng.choice(world)})")
    return facts
