"""Spark's own text sources (files, socket, Kafka values...) as `.tnt` lines: parsed into the `rdf` columns.

    lines = spark.readStream.format("socket").option("host", "localhost").option("port", 9999).load()
    triples = tnt_lines(lines, "http://ex/sensors")          # stream, s, p, o, ts, rejected

The lines are parsed in the executors with the local engine's reader
(`rsp_plugin.io.formats.read_tnt`); a line that cannot be read becomes a dead
letter naming the source and the line's place in its micro-batch partition.
"""

from __future__ import annotations

from typing import Iterator

from .source import COLUMNS, SCHEMA


def tnt_lines(frame, stream: str, *, column: str = "value", name: str | None = None):
    """A DataFrame of `.tnt` text lines (column `value`) as the `rdf` source's columns."""
    where = name or stream

    def parse(batches: Iterator) -> Iterator:
        import pyarrow as pa

        from ..core.terms import Dictionary
        from ..io.formats import Rejected, read_tnt

        seen = 0
        for batch in batches:
            lines = batch.column(batch.schema.get_field_index(column)).to_pylist()
            terms = Dictionary()
            keys = terms.keys
            out = {name: [] for name in COLUMNS}
            for element in read_tnt(("" if line is None else line for line in lines), terms, tick_ms=1,
                                    filename=where):
                if isinstance(element, Rejected):
                    row = (None, None, None, None, f"{where}:{element.line + seen}: {element.reason}")
                else:
                    s, p, o = element.fact[1]
                    row = (keys[s], keys[p], keys[o], element.time_point, None)
                for name, value in zip(COLUMNS[1:], row):
                    out[name].append(value)
            seen += len(lines)
            out["stream"] = [stream] * len(out["s"])
            yield pa.RecordBatch.from_arrays(
                [pa.array(out[name], type=pa.int64() if name == "ts" else pa.string()) for name in COLUMNS],
                names=list(COLUMNS))

    return frame.select(column).mapInArrow(parse, SCHEMA)
