"""Entailments as a join: each window triple's seed closure from its shape's template, in Spark, when read.

A triple's seed closure (`rsp_plugin.reasoning.templates.SeedReasoner`)
depends only on its shape: which of its terms the rules or B* name (kept as they are), which of the others
are equal, and which could be numbers (a comparison may read those). So the
windows keep only their triples (`content.window_rows`: Spark expressions, no
Python), each batch notes the shapes it holds while it is written
(`shape_columns`, observed), and a report joins the window's triples with a
small broadcast table of templates, one row per (shape, derived fact): a hash
join and a CASE per argument on the executors, no Python worker, and three
times fewer rows in the files than the closures (RDFS on sensor data).

What a report derives is cut to what can matter: with no join of two window
facts to run (`rules.JoinAnalysis`), each triple pattern of the query reads only
the facts it can match (by its constants), from the triples whose shapes make
them (by their predicates first: Parquet's own filter); with one, every fact. A shape whose
template is not reusable (a comparison read a number) goes through Python
(`content.stored_closures`); so do the profiles whose shapes need a literal's
value (`SeedReasoner.literal_predicates`: OWL 2 RL's datatypes), which keep
their closures in the files as they are written (`lazy` is False).
"""

from __future__ import annotations

from ...reasoning.templates import ANY_PREDICATE, LASTING, SeedReasoner
from .content import FACTS_SCHEMA, TRIPLE, WIDTH, stored_closures
from .plan import ALWAYS, DistributedPlan
from .sqltext import local_table, sql_string

#: the shape key of a triple (c0 c1 c2): its terms the rules or B* name ("" for the others), which are
#: equal, which could be numbers
SHAPE = ("ks", "kp", "ko", "e_sp", "e_so", "e_po", "n_s", "n_p", "n_o")
#: a `Present` predicate standing for any predicate (a derived triple whose predicate is the window
#: triple's subject or object: not known from the shapes alone)
ANY = ANY_PREDICATE

#: a template's fact: relation, each argument's source (a position of the triple, CONSTANT, ABSENT)
#: and constant, whether it lasts (k2 = ALWAYS)
FACT_COLUMNS = "rel STRING, s0 INT, a0 STRING, s1 INT, a1 STRING, s2 INT, a2 STRING, s3 INT, a3 STRING, lasting BOOLEAN"
TEMPLATE_SCHEMA = ("ks STRING, kp STRING, ko STRING, e_sp BOOLEAN, e_so BOOLEAN, e_po BOOLEAN, n_s BOOLEAN, "
                   "n_p BOOLEAN, n_o BOOLEAN, " + FACT_COLUMNS)
#: the facts of a predicate whose every shape makes the same
PREDICATE_TEMPLATE_SCHEMA = "kp STRING, " + FACT_COLUMNS
#: a template argument taken from the template itself / absent (an argument position past the arity)
CONSTANT, ABSENT = -1, -2


def lazy(reasoner: SeedReasoner | None) -> bool:
    """Can the windows keep only their triples (the closures joined when read)?"""
    return reasoner is None or not reasoner.literal_predicates


def shape_columns(schema, names=("c0", "c1", "c2")) -> list[str]:
    """The shape key of a row's triple (columns `names`), as Spark SQL expressions named by `SHAPE`
    (text: a plan built from text is one call to the JVM per column, not one per operator)."""
    known = ", ".join(sql_string(term) for term in sorted(schema))
    named = [f"({name} IN ({known}))" if known else "FALSE" for name in names]
    out = [f"CASE WHEN {is_named} THEN {name} ELSE '' END AS {key}"
           for name, is_named, key in zip(names, named, SHAPE[:3])]
    out += [f"({names[0]} = {names[1]}) AS e_sp", f"({names[0]} = {names[2]}) AS e_so", f"({names[1]} = {names[2]}) AS e_po"]
    # (a term in N-Triples form that is neither an IRI nor a blank node: a literal, or anything the
    # number reader might take: `terms.NUMERIC_START`, and more; a term taken for a number that is none
    # only sends its triple to the closure per triple; the cheap test first: an IRI skips the set)
    out += [f"(NOT (startswith({name}, '<') OR startswith({name}, '_:')) AND NOT {is_named}) AS {key}"
            for name, is_named, key in zip(names, named, SHAPE[6:])]
    return out


def shape_of(key) -> tuple[tuple, set[int]]:
    """(`SeedReasoner.shape`'s shape, the positions that could hold numbers) of a shape key."""
    named, equal, numeric = key[:3], {(0, 1): key[3], (0, 2): key[4], (1, 2): key[5]}, key[6:9]
    slots: dict[int, int] = {}
    shape = []
    for position in range(3):
        if named[position]:
            shape.append(("c", named[position]))
            continue
        slot = next((slots[before] for before in range(position) if before in slots and equal[(before, position)]),
                    None)
        if slot is None:
            slot = len(set(slots.values()))
        slots[position] = slot
        shape.append(("s", slot, ()))
    return tuple(shape), {position for position in range(3) if position in slots and numeric[position]}


class Expansion:
    """The driver's side: templates of the shapes a window holds, what they make present, and the plan
    that derives a report's facts from the stored triples."""

    def __init__(self, spark, plan: DistributedPlan, reasoner: SeedReasoner, background):
        self.spark = spark
        self.plan = plan
        self.reasoner = reasoner
        self.background = background
        self.schema = sorted(reasoner.schema)
        self._columns = None
        self._held = None
        self._arguments = None
        self._templates: dict[tuple, object] = {}

    def columns(self) -> list:
        """The shape key's expressions (made once: each is a round trip to the JVM per term)."""
        if self._columns is None:
            self._columns = shape_columns(self.schema)
        return self._columns

    def held(self, frame, observation):
        """`frame` (rows s, p, o, rejected...) observed by `observation` as it is read: the
        shape keys of its triples, each with its predicate (`shapes_of` reads them). (The key is
        computed in a projection of its own, which Spark compiles; the observation only collects.)"""
        from pyspark.sql import functions as F

        if self._held is None:
            shape = ", ".join(shape_columns(self.schema, ("s", "p", "o")))
            self._held = f"CASE WHEN rejected IS NULL THEN struct({shape}, p AS p) END AS shape"
        return (frame.selectExpr("*", self._held).observe(observation, F.expr("collect_set(shape)").alias("shapes"))
                .drop("shape"))

    @staticmethod
    def shapes_of(summary: dict) -> list:
        """The shape keys (and predicates) `held` collected, as lists in a stable order."""
        return sorted(([row[name] for name in SHAPE] + [row["p"]] for row in summary["shapes"]), key=repr)

    def template(self, key) -> tuple[tuple, bool, dict[int, int]]:
        """(facts with slots, reusable, slot -> the triple's position holding it) of a shape key."""
        shape, numeric = shape_of(key)
        facts, reusable = self.reasoner.template(shape, numeric_positions=numeric)
        position_of: dict[int, int] = {}
        for position, part in enumerate(shape):
            if part[0] == "s":
                position_of.setdefault(part[1], position)
        return facts, reusable, position_of

    def present(self, shapes: list) -> list[list]:
        """What the window triples of these shapes (keys followed by the triple's predicate) make
        present, as `StoredBatch.present` holds it: [relation, predicate or None or ANY, reflexive]."""
        out = set()
        for entry in shapes:
            key, predicate = tuple(entry[:9]), entry[9]
            facts, reusable, position_of = self.template(key)
            if not reusable:  # computed per triple: whatever the rules derive, any predicate, reflexive or not
                keys = self.reasoner.terms.keys
                for rule in self.reasoner.rules:
                    relation = keys[rule.head[0]]
                    if relation == TRIPLE:
                        out.update({(TRIPLE, ANY, True), (TRIPLE, ANY, False)})
                    else:
                        out.add((relation, None, False))
            for (relation, args), _ in facts:
                if relation != TRIPLE:
                    out.add((relation, None, False))
                    continue
                kind, value = args[1]
                if kind == "c":
                    named = value
                else:
                    named = predicate if position_of[value] == 1 else ANY
                out.add((TRIPLE, named, args[0] == args[2]))
        return sorted([list(item) for item in out], key=lambda item: (item[0], item[1] or "", item[2]))

    def arguments(self) -> list[str]:
        """A template row joined with a triple -> the fact's columns (SQL, made once)."""
        if self._arguments is None:
            def argument(position: int) -> str:
                source = f"s{position}"
                cases = " ".join(f"WHEN {source} = {index} THEN r{index}" for index in range(3))
                return (f"CASE WHEN {source} = {CONSTANT} THEN a{position} {cases} "
                        f"ELSE CAST(NULL AS STRING) END AS c{position}")

            self._arguments = ["w", "rel", *[argument(position) for position in range(WIDTH)], "k1",
                               f"CASE WHEN lasting THEN {ALWAYS} ELSE k2 END AS k2"]
        return self._arguments

    @staticmethod
    def _matches(pattern, relation: str, args: tuple) -> bool:
        """Can a fact of a template match a triple pattern (by the pattern's constants)?"""
        return relation == TRIPLE and all(kind != "c" or arg[0] == "s" or arg[1] == value
                                          for (kind, value), arg in zip(pattern, args))

    def facts(self, stored, shapes: list, pattern=None):
        """The facts of the stored window triples (fact rows): each triple's seed closure, or, for a
        triple pattern ([(kind, value)] * 3), only the facts it can match; and whether a fact may
        come from many triples (a sensor's type from each observation: worth a distinct first).

        The triples of a predicate whose every shape makes the same facts (instance data) are
        joined with those facts on the predicate alone; the others with their shapes' templates."""
        from pyspark.sql import functions as F

        by_predicate: dict[str, list] = {}
        python = False
        keys_of: dict[str, set] = {}
        for key in sorted({tuple(entry[:9]) for entry in shapes}, key=repr):
            keys_of.setdefault(key[1], set()).add(key)
            facts, reusable, position_of = self.template(key)
            if not reusable:
                by_predicate.setdefault(key[1], []).append((*key, None, *([CONSTANT, None] * WIDTH), False))
                python = True
                continue
            for (relation, args), tag in facts:
                if pattern is not None and not self._matches(pattern, relation, args):
                    continue
                parts = []
                for position in range(WIDTH):
                    if position >= len(args):
                        parts += [ABSENT, None]
                    elif args[position][0] == "s":
                        parts += [position_of[args[position][1]], None]
                    else:
                        parts += [CONSTANT, args[position][1]]
                by_predicate.setdefault(key[1], []).append((*key, relation, *parts, tag == LASTING))
        if not by_predicate:
            return None, False
        derived = any(not _is_the_triple(row) for rows in by_predicate.values() for row in rows)
        # a predicate whose every shape makes the same facts (instance data: the shape is the predicate's
        # alone) is joined with them on its name, not on each triple's shape key
        projected = sorted(predicate for predicate, rows in by_predicate.items()
                           if predicate and not any(row[9] is None for row in rows)
                           and {row[:9] for row in rows} == keys_of[predicate]
                           and len({_fact_part(row) for row in rows}) * len(keys_of[predicate]) == len(rows))
        joined_predicates = sorted(predicate for predicate in by_predicate if predicate not in projected)
        out = None
        if projected:  # one pass: the triples joined with their predicate's facts
            rows = []
            for predicate in projected:
                facts = {_fact_part(row) for row in by_predicate[predicate]}
                rows += [(predicate, *fact) for fact in sorted(facts, key=repr)]
            out = self._joined(stored.where(F.col("c1").isin(projected)), rows, False, by_shape=False)
        if joined_predicates:
            rows = [row for p in joined_predicates for row in by_predicate[p]]
            if "" in joined_predicates:  # some shape names no predicate: every other triple
                chosen = stored.where(~F.col("c1").isin(projected)) if projected else stored
            else:  # (the files' own filter first)
                chosen = stored.where(F.col("c1").isin(joined_predicates))
            made = self._joined(chosen, rows, python)
            out = made if out is None else out.unionByName(made)
        return out, derived

    def _joined(self, stored, rows: list, python: bool, by_shape: bool = True):
        """The triples joined with template rows (broadcast): on their shape key, or (`by_shape`
        False, rows keyed by the predicate alone) on their predicate."""
        from pyspark.sql import functions as F

        key = (by_shape, tuple(rows))
        templates = self._templates.get(key)
        if templates is None:
            if len(self._templates) > 64:
                self._templates.clear()
            schema = TEMPLATE_SCHEMA if by_shape else PREDICATE_TEMPLATE_SCHEMA
            templates = self._templates[key] = F.broadcast(local_table(self.spark, rows, schema))
        keys = self.columns() if by_shape else ["c1 AS kp"]
        keyed = stored.selectExpr("w", "c0 AS r0", "c1 AS r1", "c2 AS r2", "k1", "k2", *keys)
        joined = keyed.join(templates, on=list(SHAPE) if by_shape else ["kp"])
        derived = joined.where("rel IS NOT NULL").selectExpr(*self.arguments())
        if not python:
            return derived
        by_triple = joined.where(F.col("rel").isNull()).select(
            "w", F.lit(TRIPLE).alias("rel"), F.col("r0").alias("c0"), F.col("r1").alias("c1"), F.col("r2").alias("c2"),
            F.lit(None).cast("string").alias("c3"), "k1", "k2")
        return derived.unionByName(by_triple.mapInArrow(stored_closures(self.plan, self.background), FACTS_SCHEMA))


def _fact_part(row: tuple) -> tuple:
    """A template row (`TEMPLATE_SCHEMA`) without its shape key: the fact it makes."""
    return tuple(row[9:])


def _is_the_triple(row: tuple) -> bool:
    """Is a template row (`TEMPLATE_SCHEMA`) the window triple itself: each argument its own position
    (a slot there, or the shape's term), for as long as the triple is seen?"""
    key, relation, parts, lasting = row[:9], row[9], row[10:18], row[18]
    if relation != TRIPLE or lasting:
        return False
    sources = parts[0::2]
    if sources[3] != ABSENT:
        return False
    return all(source == position or (source == CONSTANT and parts[2 * position + 1] == key[position])
               for position, source in enumerate(sources[:3]))


__all__ = ["Expansion", "lazy", "shape_columns", "shape_of", "SHAPE", "ANY"]
