"""Rules with two ABox premises in Spark: semi-naive joins within the window, run only when the window can feed them.

The seed closures (`rsp_plugin.reasoning.templates`) hold every entailment
that needs one window triple and the background B*. What is left are
derivations whose premises come from two or more window triples (a schema
triple streamed in, owl:sameAs between individuals, a functional property's
two values): those need a join of the window with itself, expiration = min of
the premises. Which rules can have two window facts meet in them is
`templates.JoinAnalysis`'s (for RDFS over instance data: none, and no join is
run).

The joins, when needed, are Spark DataFrame plans (`StageB`) of the profile's
compiled positive rules (`rsp_plugin.reasoning.positive`): semi-naive rounds
over the window's facts and B*, each fact carrying its instant interval [k1,
k2], a join intersecting them; what is new (not within a known fact's
interval) goes to the next round, until a round finds nothing.
"""

from __future__ import annotations

from ...reasoning.templates import TRIPLE_REL, JoinAnalysis, Present, inert_reflexive


class StageB:
    """Semi-naive rounds of the rules over a batch's window facts and B*, in Spark.

    Round one reads the window's facts as the delta, for the rules `JoinAnalysis.joining` names (the
    other rules' derivations are in the seed closures already); later rounds read what the round before
    found new, for every rule. A fact is new when no known fact with its arguments covers its instant
    interval. Stops when a round finds nothing (one small Spark job per round)."""

    def __init__(self, spark, reasoner, analysis: JoinAnalysis, max_rounds: int = 100):
        self.spark = spark
        self.reasoner = reasoner
        self.analysis = analysis
        self.max_rounds = max_rounds
        self.rounds = 0

    def close(self, content, joining: list[tuple[int, list[int]]], k_lo: int, k_hi: int):
        from pyspark.sql import functions as F

        from .plan import ALWAYS, NEVER

        content = content.localCheckpoint()  # read once (the files and B*), then by every join of the rounds
        facts = content.where(F.col("w") >= 0)
        others = content.where(F.col("w") < 0)
        delta = facts.where(~((F.col("k1") == NEVER) & (F.col("k2") == ALWAYS)))
        work = [(number, positions) for number, positions in joining]
        known = facts
        for _ in range(self.max_rounds):
            self.rounds += 1
            heads = None
            for number, positions in work:
                for position in positions:
                    derived = self._evaluate(number, position, delta, known)
                    if derived is not None:
                        heads = derived if heads is None else heads.unionByName(derived)
            if heads is None:
                break
            heads = heads.distinct()
            keys = ["w", "rel", "c0", "c1", "c2", "c3"]
            cover = known.select(*[F.col(k).alias(f"_{k}") for k in keys], F.col("k1").alias("_k1"),
                                 F.col("k2").alias("_k2"))
            condition = [heads[k].eqNullSafe(cover[f"_{k}"]) for k in keys]
            condition.append(cover["_k1"] <= heads["k1"])
            condition.append(cover["_k2"] >= heads["k2"])
            fresh = heads.join(cover, on=condition, how="left_anti").localCheckpoint()
            present = _present(fresh)
            if not present:
                break
            known = known.unionByName(fresh).localCheckpoint()
            delta = fresh
            # the next round: only the rules (and body positions) the new facts can match, so that the
            # plan stays as small as what changed (a union over every rule and position is slow to plan)
            work = []
            for number, rule in enumerate(self.analysis.rules):
                positions = [i for i in range(len(rule.atoms)) if self.analysis.matchable(number, i, present)]
                if positions:
                    work.append((number, positions))
        return known.unionByName(others)

    def _evaluate(self, number: int, position: int, delta, known):
        """The heads of rule `number` with its atom `position` read from `delta`, the others from `known`."""
        from pyspark.sql import functions as F

        from ...lars.program import Var

        rule = self.analysis.rules[number]
        keys = self.reasoner.terms.keys
        frame, bound = None, set()
        order = [position] + [i for i in range(len(rule.atoms)) if i != position]
        comparisons = list(rule.comparisons)
        for index in order:
            predicate, args = rule.atoms[index]
            source = delta if index == position else known
            table, names = _atom_table(source, keys[predicate], args, keys)
            if index == position and inert_reflexive(rule, index, self.reasoner.terms):
                table = table.where(F.col(f"x_{args[0].name}") != F.col(f"x_{args[2].name}"))
            if frame is None:
                frame = table
            else:
                shared = ["w", *sorted(f"x_{name}" for name in names & bound)]
                right = table.withColumnRenamed("k1", "k1r").withColumnRenamed("k2", "k2r")
                frame = (frame.join(right, on=shared, how="inner")
                         .withColumn("k1", F.greatest("k1", "k1r")).withColumn("k2", F.least("k2", "k2r"))
                         .drop("k1r", "k2r").where(F.col("k1") <= F.col("k2")))
            bound |= names
            for comparison in list(comparisons):
                sides = [side for side in comparison[1:] if isinstance(side, Var)]
                if all(side.name in bound for side in sides):
                    comparisons.remove(comparison)
                    frame = frame.where(_compare_column(comparison, keys))
        head_predicate, head_args = rule.head
        columns = [F.col("w"), F.lit(keys[head_predicate]).alias("rel")]
        for slot in range(4):
            if slot < len(head_args):
                arg = head_args[slot]
                value = F.col(f"x_{arg.name}") if isinstance(arg, Var) else F.lit(keys[arg])
            else:
                value = F.lit(None).cast("string")
            columns.append(value.alias(f"c{slot}"))
        return frame.select(*columns, "k1", "k2")


def _present(facts) -> set[Present]:
    """What relations (and triple predicates, reflexive or not) a DataFrame of facts holds: one small job."""
    from pyspark.sql import functions as F

    rows = (facts.select("rel", F.when(F.col("rel") == TRIPLE_REL, F.col("c1")).alias("pred"),
                         ((F.col("rel") == TRIPLE_REL) & (F.col("c0") == F.col("c2"))).alias("refl"))
            .distinct().collect())
    return {Present(row["rel"], row["pred"], bool(row["refl"])) for row in rows}


def _atom_table(source, relation: str, args: tuple, keys):
    """The facts of `source` matching an atom: w, one column per variable (x_NAME), k1, k2."""
    from pyspark.sql import functions as F

    from ...lars.program import Var

    condition = F.col("rel") == relation
    chosen: dict[str, str] = {}
    for slot, arg in enumerate(args):
        column = f"c{slot}"
        if isinstance(arg, Var):
            if arg.name in chosen:
                condition = condition & (F.col(column) == F.col(chosen[arg.name]))
            else:
                chosen[arg.name] = column
        else:
            condition = condition & (F.col(column) == keys[arg])
    for slot in range(len(args), 4):
        condition = condition & F.col(f"c{slot}").isNull()
    table = source.where(condition).select("w", *[F.col(c).alias(f"x_{n}") for n, c in chosen.items()], "k1", "k2")
    return table, set(chosen)


def _compare_column(comparison, keys):
    """A rule's comparison as a Spark column, with the engine's meaning (numbers by value,
    other terms equal only to themselves, no order among them)."""
    from pyspark.sql import functions as F

    from ...lars.program import Var

    op, left, right = comparison

    def side(term):
        return F.col(f"x_{term.name}") if isinstance(term, Var) else F.lit(keys[term])

    return _comparison_udf(op)(side(left), side(right))


def _comparison_udf(op: str):
    from pyspark.sql.functions import pandas_udf

    @pandas_udf("boolean")
    def compared(left, right):
        import pandas as pd

        from ...core.terms import Dictionary
        from ...lars.builtins import compare

        terms = Dictionary()
        intern = terms.intern
        return pd.Series([compare(op, intern(a), intern(b), terms.numbers) for a, b in zip(left, right)])

    return compared


__all__ = ["StageB"]
