"""Sets of id triples with the indexes queries join over: a window's content, a static graph.

Every content answers the same few questions (datafrog's leapers: count,
propose, check): `match(s, p, o)` with None for an unbound position,
`estimate(s, p, o)` for join ordering, `contains(triple)`, and `timestamp(triple)`
(the latest time the triple was seen in the window, for C-SPARQL's timestamp
function; None for background and entailed triples).

>>> index = TripleIndex()
>>> index.add((1, 2, 3)), index.add((1, 2, 4)), index.add((1, 2, 3))
(True, True, False)
>>> sorted(index.match(1, 2, None)), index.estimate(None, 2, None), len(index)
([(1, 2, 3), (1, 2, 4)], 2, 2)
"""

from __future__ import annotations

from bisect import insort
from itertools import chain
from typing import Iterable, Iterator

Triple = tuple[int, int, int]


class TripleIndex:
    """A set of id triples, indexed s->p->{o}, p->o->{s} and o->s->{p}."""

    __slots__ = ("spo", "pos", "osp", "predicate_sizes", "predicate_subjects", "size")

    def __init__(self, triples: Iterable[Triple] = ()):
        self.spo: dict[int, dict[int, set[int]]] = {}
        self.pos: dict[int, dict[int, set[int]]] = {}
        self.osp: dict[int, dict[int, set[int]]] = {}
        self.predicate_sizes: dict[int, int] = {}
        #: predicate -> how many distinct subjects it has (for join estimates)
        self.predicate_subjects: dict[int, int] = {}
        self.size = 0
        for triple in triples:
            self.add(triple)

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"<TripleIndex triples={self.size}>"

    def add(self, triple: Triple) -> bool:
        """Add a triple; False if it was there already."""
        s, p, o = triple
        by_p = self.spo.get(s)
        if by_p is None:
            by_p = self.spo[s] = {}
        objects = by_p.get(p)
        if objects is None:
            objects = by_p[p] = set()
            self.predicate_subjects[p] = self.predicate_subjects.get(p, 0) + 1
        elif o in objects:
            return False
        objects.add(o)
        by_o = self.pos.get(p)
        if by_o is None:
            by_o = self.pos[p] = {}
        subjects = by_o.get(o)
        if subjects is None:
            by_o[o] = {s}
        else:
            subjects.add(s)
        by_s = self.osp.get(o)
        if by_s is None:
            by_s = self.osp[o] = {}
        predicates = by_s.get(s)
        if predicates is None:
            by_s[s] = {p}
        else:
            predicates.add(p)
        self.predicate_sizes[p] = self.predicate_sizes.get(p, 0) + 1
        self.size += 1
        return True

    def discard(self, triple: Triple) -> bool:
        """Remove a triple; False if it was not there."""
        s, p, o = triple
        by_p = self.spo.get(s)
        objects = by_p.get(p) if by_p else None
        if not objects or o not in objects:
            return False
        objects.discard(o)
        if not objects:
            del by_p[p]
            if not by_p:
                del self.spo[s]
            left = self.predicate_subjects[p] - 1
            if left:
                self.predicate_subjects[p] = left
            else:
                del self.predicate_subjects[p]
        by_o = self.pos[p]
        subjects = by_o[o]
        subjects.discard(s)
        if not subjects:
            del by_o[o]
            if not by_o:
                del self.pos[p]
        by_s = self.osp[o]
        predicates = by_s[s]
        predicates.discard(p)
        if not predicates:
            del by_s[s]
            if not by_s:
                del self.osp[o]
        left = self.predicate_sizes[p] - 1
        if left:
            self.predicate_sizes[p] = left
        else:
            del self.predicate_sizes[p]
        self.size -= 1
        return True

    def contains(self, triple: Triple) -> bool:
        by_p = self.spo.get(triple[0])
        if by_p is None:
            return False
        objects = by_p.get(triple[1])
        return objects is not None and triple[2] in objects

    __contains__ = contains

    def __iter__(self) -> Iterator[Triple]:
        for s, by_p in self.spo.items():
            for p, objects in by_p.items():
                for o in objects:
                    yield s, p, o

    def match(self, s: int | None, p: int | None, o: int | None) -> Iterator[Triple]:
        """The triples that agree with the bound positions (None: any)."""
        if s is not None:
            by_p = self.spo.get(s)
            if not by_p:
                return
            if p is not None:
                objects = by_p.get(p)
                if objects:
                    if o is None:
                        for obj in objects:
                            yield s, p, obj
                    elif o in objects:
                        yield s, p, o
                return
            if o is not None:
                predicates = self.osp.get(o, {}).get(s)
                if predicates:
                    for pred in predicates:
                        yield s, pred, o
                return
            for pred, objects in by_p.items():
                for obj in objects:
                    yield s, pred, obj
            return
        if p is not None:
            by_o = self.pos.get(p)
            if not by_o:
                return
            if o is not None:
                for subj in by_o.get(o, ()):
                    yield subj, p, o
                return
            for obj, subjects in by_o.items():
                for subj in subjects:
                    yield subj, p, obj
            return
        if o is not None:
            for subj, predicates in self.osp.get(o, {}).items():
                for pred in predicates:
                    yield subj, pred, o
            return
        yield from self

    def estimate(self, s: int | None, p: int | None, o: int | None) -> int:
        """About how many triples `match` would give (exact for one bound predicate)."""
        if s is not None:
            by_p = self.spo.get(s)
            if not by_p:
                return 0
            if p is not None:
                return len(by_p.get(p, ()))
            return sum(len(objects) for objects in by_p.values()) if len(by_p) < 8 else 8 * len(by_p)
        if p is not None:
            if o is not None:
                return len(self.pos.get(p, {}).get(o, ()))
            return self.predicate_sizes.get(p, 0)
        if o is not None:
            return len(self.osp.get(o, ()))
        return self.size

    def fanout(self, p: int | None, s_bound: bool, o_bound: bool) -> float:
        """About how many triples match per binding of the bound positions (join estimates)."""
        if p is None:
            size = self.size
            if s_bound and o_bound:
                return min(1.0, size / max(1, len(self.spo) * len(self.osp)) * 8)
            if s_bound:
                return size / max(1, len(self.spo))
            if o_bound:
                return size / max(1, len(self.osp))
            return float(size)
        size = self.predicate_sizes.get(p, 0)
        if not size:
            return 0.0
        subjects = self.predicate_subjects.get(p, 1)
        objects = len(self.pos.get(p, ())) or 1
        if s_bound and o_bound:
            return min(1.0, size / (subjects * objects))
        if s_bound:
            return size / subjects
        if o_bound:
            return size / objects
        return float(size)

    def timestamp(self, triple: Triple) -> int | None:
        return None

    def live_terms(self):
        """The ids this index holds (each at least once): subjects, predicates, objects."""
        return chain(self.spo.keys(), self.pos.keys(), self.osp.keys())


class WindowContent(TripleIndex):
    """A window's triples as a set, and when each was seen (its occurrences, oldest first)."""

    __slots__ = ("stamps",)

    def __init__(self):
        super().__init__()
        self.stamps: dict[Triple, list[int]] = {}

    def __repr__(self) -> str:
        return f"<WindowContent triples={self.size} occurrences={sum(map(len, self.stamps.values()))}>"

    def insert(self, triple: Triple, timestamp: int) -> None:
        seen = self.stamps.get(triple)
        if seen is None:
            self.stamps[triple] = [timestamp]
            self.add(triple)
        elif timestamp >= seen[-1]:
            seen.append(timestamp)
        else:
            insort(seen, timestamp)

    def evict(self, triple: Triple, timestamp: int) -> None:
        """Remove one occurrence (the one seen at `timestamp`)."""
        seen = self.stamps.get(triple)
        if seen is None:
            return
        if seen[0] == timestamp:
            del seen[0]
        else:
            try:
                seen.remove(timestamp)
            except ValueError:
                return
        if not seen:
            del self.stamps[triple]
            self.discard(triple)

    def timestamp(self, triple: Triple) -> int | None:
        seen = self.stamps.get(triple)
        return seen[-1] if seen else None


class UnionContent:
    """Several contents read as one set (a query's default graph: windows and static graphs)."""

    __slots__ = ("parts",)

    def __init__(self, parts):
        self.parts = list(parts)

    def __len__(self) -> int:
        return sum(1 for _ in self.match(None, None, None)) if len(self.parts) > 1 else len(self.parts[0])

    def __repr__(self) -> str:
        return f"<UnionContent {self.parts!r}>"

    def contains(self, triple: Triple) -> bool:
        return any(part.contains(triple) for part in self.parts)

    __contains__ = contains

    def match(self, s, p, o) -> Iterator[Triple]:
        parts = self.parts
        for number, part in enumerate(parts):
            earlier = parts[:number]
            for triple in part.match(s, p, o):
                if not earlier or not any(seen.contains(triple) for seen in earlier):
                    yield triple

    def estimate(self, s, p, o) -> int:
        return sum(part.estimate(s, p, o) for part in self.parts)

    def fanout(self, p, s_bound: bool, o_bound: bool) -> float:
        return sum(part.fanout(p, s_bound, o_bound) for part in self.parts)

    def timestamp(self, triple: Triple) -> int | None:
        stamps = [stamp for part in self.parts if (stamp := part.timestamp(triple)) is not None]
        return max(stamps) if stamps else None

    def live_terms(self):
        return chain.from_iterable(part.live_terms() for part in self.parts)


EMPTY = TripleIndex()


def union(parts) -> object:
    """One content for several: the part itself when there is one, else a `UnionContent`."""
    parts = [part for part in parts if part is not None]
    if not parts:
        return EMPTY
    if len(parts) == 1:
        return parts[0]
    return UnionContent(parts)


class Snapshot:
    """What one evaluation reads: the default graph's parts and the named graphs."""

    __slots__ = ("default", "named")

    def __init__(self, default_parts=(), named=None):
        self.default = union(default_parts)
        self.named: dict[str, object] = dict(named or {})

    def graph(self, name: str | None):
        if name is None:
            return self.default
        return self.named.get(name, EMPTY)

    def is_empty(self) -> bool:
        return not len(self.default) and not any(len(content) for content in self.named.values())
