"""Spark SQL as text: literals, and small tables as VALUES lists.

The distributed plans are built from SQL text where they can: a DataFrame
operator built from Column objects is a round trip to the JVM per function,
alias and literal (hundreds per report), one from text a round trip per column.
Strings go in as they are when nothing in them needs escaping, else as their UTF-8 bytes in
hex.
"""

from __future__ import annotations

import re


def sql_string(value: str) -> str:
    """A string as a Spark SQL literal: as it is when it is printable ASCII without a quote, a
    backslash or a dollar (an IRI, mostly: Spark reads a plain literal faster, and a schema's terms
    are read at every batch), else its UTF-8 bytes in hex (no escape to get right)."""
    if _PLAIN.fullmatch(value):
        return f"'{value}'"
    return f"CAST(X'{value.encode('utf-8').hex()}' AS STRING)"


#: printable ASCII but a quote, a backslash or a dollar (Spark substitutes ${name} in SQL text)
_PLAIN = re.compile(r"[\x20-\x23\x25\x26\x28-\x5b\x5d-\x7e]*")


def local_table(spark, rows: list, schema: str):
    """A small table as a SQL VALUES list: a local relation in the plan, so that broadcasting it is
    no Spark job (a DataFrame made from Python rows is an RDD, collected by a job to be broadcast)."""

    def literal(value) -> str:
        if value is None:
            return "NULL"
        if isinstance(value, bool):
            return "TRUE" if value else "FALSE"
        if isinstance(value, int):
            return str(value)
        return sql_string(str(value))

    fields = [field.strip().split(" ") for field in schema.split(",")]
    values = ", ".join("(" + ", ".join(literal(value) for value in row) + ")" for row in rows)
    names = ", ".join(f"c{number}" for number in range(len(fields)))
    columns = ", ".join(f"CAST(c{number} AS {kind}) AS {name}" for number, (name, kind) in enumerate(fields))
    return spark.sql(f"SELECT {columns} FROM VALUES {values} AS t({names})")


__all__ = ["sql_string", "local_table"]
