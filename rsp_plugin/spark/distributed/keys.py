"""The key split: a key-local query's reports, one engine per bucket of keys on the executors.

When every answer row of a query joins the triples of one key only (partitioned
mode's locality analysis, `rsp_plugin.spark.partitioned.key_plan`: every
pattern mentions the key variable with a constant predicate, in the same place
wherever the predicate is used, the key selected and grouped on; under
ENTAILMENT, every entailment a pattern can read keeps the key), the answer at
tau is the union over keys of the answer over each key's triples. So a batch the
time slices cannot take (elements out of time order, several sources merged by
time) need not go the general way: after the driver's admission (what is taken,
each late element's floor), the carry and the taken triples are routed to their
keys (`routes`: by predicate, the subject or the object), hashed into as many
buckets as there are task slots, and each bucket's task runs the embedded engine
(`slices.answers_over`, the local engine's code) over its rows: the raw answers
of the instants due, and its rows a later report reaches (the new carry). The
driver joins each instant's answers (`merge_payloads`: rows and triples
together, ASK true when a bucket's is) and applies RSTREAM / ISTREAM / DSTREAM to
the whole answer, as the one engine would.

A triple no pattern reads (its predicate not routed) is carried but fed to no
engine. Under ENTAILMENT a schema triple on the stream (a subclass axiom, a
domain) could join keys: a batch holding one goes the general way (the task
sees it first and says so: `SCHEMA`).

`DistributedDriver._process_keyed` is the driver's side; the carry is the time
slices' own, so a later batch in time order from one source goes back to them.
"""

from __future__ import annotations

import json

#: what each task sends back (`keyed_function`)
KEYED_SCHEMA = ("kind STRING, k BIGINT, ts BIGINT, s STRING, p STRING, o STRING, floor BIGINT, lane INT, "
                "text STRING")
#: a task's word that its rows hold a schema triple (the batch goes the general way)
SCHEMA = "schema"


def keyed_rows(plan, frame, buckets: int):
    """`frame` (ts, s, p, o, floor, lane, row) routed to its keys and hashed into `buckets` partitions, each
    row marked `read` (a pattern reads its predicate) and `schema` (under ENTAILMENT, a schema triple)."""
    from pyspark.sql import functions as F

    from ..partitioned import route_column, schema_column

    route = route_column(plan.routes)
    schema = schema_column(plan.schema_predicates, plan.schema_classes)
    return (frame.withColumn("key", route)
            .withColumn("read", F.col("key").isNotNull())
            .withColumn("schema", schema)
            # (a row no pattern reads goes with its subject: carried, fed to no engine)
            .withColumn("key", F.coalesce(F.col("key"), F.col("s")))
            .repartition(buckets, "key")
            .select("ts", "s", "p", "o", "floor", "lane", "row", "read", "schema"))


def keyed_function(plan, lanes: list[str], background, *, k_lo: int | None, k_hi: int | None, start: int | None,
                   carry_from: int | None):
    """mapInArrow over a bucket's rows (`lanes`: each lane's stream): the raw answers of instants [k_lo, k_hi]
    by one engine over the rows they read (from `start` on when the stream had elements before it:
    `slices.answers_over`), and the rows at or after `carry_from` (None: all of them) as the new carry
    (`KEYED_SCHEMA`)."""

    def run(batches):
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        from .slices import timeline_answers

        got = [batch for batch in batches if batch.num_rows]
        if not got:
            return
        table = pa.Table.from_batches(got)
        if pc.any(table.column("schema")).as_py():
            yield _rows("schema", text=["a schema triple"])
            return
        order = np.lexsort((table.column("row").to_numpy(), table.column("lane").to_numpy(),
                            table.column("ts").to_numpy()))
        table = table.take(pa.array(order))
        if k_lo is not None:
            answers = timeline_answers(plan, background.value if background is not None else "", lanes,
                                       table.filter(table.column("read")), plan.grid.instant(k_hi),
                                       lambda k: k_lo <= k <= k_hi, start, skip_empty=True)
            if answers:
                ks = sorted(answers)
                yield _rows("answer", k=ks, text=[answers[k] for k in ks])
        kept = table if carry_from is None else table.filter(pc.greater_equal(table.column("ts"), carry_from))
        if kept.num_rows:
            yield _carry_batch(kept)

    return run


def _schema():
    import pyarrow as pa

    return pa.schema([("kind", pa.string()), ("k", pa.int64()), ("ts", pa.int64()), ("s", pa.string()),
                      ("p", pa.string()), ("o", pa.string()), ("floor", pa.int64()), ("lane", pa.int32()),
                      ("text", pa.string())])


def _carry_batch(kept):
    import pyarrow as pa

    count = kept.num_rows
    columns = [pa.array(["carry"] * count, pa.string()), pa.nulls(count, pa.int64()),
               *(kept.column(name).combine_chunks() for name in ("ts", "s", "p", "o", "floor")),
               kept.column("lane").combine_chunks().cast(pa.int32()), pa.nulls(count, pa.string())]
    return pa.RecordBatch.from_arrays(columns, schema=_schema())


def _rows(kind: str, *, k=None, text=None):
    import pyarrow as pa

    count = len(text)
    return pa.RecordBatch.from_arrays(
        [pa.array([kind] * count, pa.string()), pa.array(k if k is not None else [None] * count, pa.int64()),
         pa.nulls(count, pa.int64()), pa.nulls(count, pa.string()), pa.nulls(count, pa.string()),
         pa.nulls(count, pa.string()), pa.nulls(count, pa.int64()), pa.nulls(count, pa.int32()),
         pa.array(text, pa.string())], schema=_schema())


def merge_payloads(texts: list[str]) -> str:
    """One instant's answer from its buckets' (`slices.answer_payload` texts): their rows together (a key's
    rows are one bucket's), their triples together once each, ASK true when one is; an error if one is.

    >>> merge_payloads(['{"f":"SELECT","v":["k"],"r":[["<a>"]],"o":false}', '{"f":"SELECT","v":["k"],"r":[["<b>"]],"o":false}'])
    '{"f":"SELECT","v":["k"],"r":[["<a>"],["<b>"]],"o":false}'
    >>> merge_payloads(['{"f":"ASK","b":false}', '{"f":"ASK","b":true}'])
    '{"f":"ASK","b":true}'
    """
    if len(texts) == 1:
        return texts[0]
    answers = [json.loads(text) for text in texts]
    for answer in answers:
        if "e" in answer:
            return json.dumps(answer, separators=(",", ":"))
    merged = dict(answers[0])
    if merged["f"] == "SELECT":
        merged["r"] = [row for answer in answers for row in answer["r"]]
    elif merged["f"] == "CONSTRUCT":
        merged["t"] = [list(triple) for triple in dict.fromkeys(tuple(t) for answer in answers for t in answer["t"])]
    else:
        merged["b"] = any(answer["b"] for answer in answers)
    return json.dumps(merged, separators=(",", ":"))


__all__ = ["KEYED_SCHEMA", "SCHEMA", "keyed_function", "keyed_rows", "merge_payloads"]
