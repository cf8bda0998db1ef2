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


class Sql:
    """An integer SQL expression, made with Python's operators: `//` is Python's floor division (SQL's
    `div` truncates toward zero; `pmod` is never negative), so that a formula written once for ints
    and numpy columns (`core.time.WindowGrid`) is also the SQL Spark runs on every row.

    >>> str((Sql("ts") - -7) // 4 * 2)
    '(((((ts - (-7))) - pmod(((ts - (-7))), 4)) div 4) * 2)'
    """

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Sql({self.text!r})"

    def __add__(self, other):
        return Sql(f"({self} + {_operand(other)})")

    def __radd__(self, other):
        return Sql(f"({_operand(other)} + {self})")

    def __sub__(self, other):
        return Sql(f"({self} - {_operand(other)})")

    def __rsub__(self, other):
        return Sql(f"({_operand(other)} - {self})")

    def __mul__(self, other):
        return Sql(f"({self} * {_operand(other)})")

    __rmul__ = __mul__

    def __neg__(self):
        return Sql(f"(-{self})")

    def __floordiv__(self, other: int):
        if type(other) is not int or other <= 0:
            raise TypeError(f"an SQL floor division by {other!r}: only by a positive int")
        return Sql(f"((({self}) - pmod(({self}), {other})) div {other})")


def _operand(value) -> str:
    if isinstance(value, Sql):
        return str(value)
    if type(value) is not int:
        raise TypeError(f"{value!r} in an integer SQL expression")
    return f"({value})" if value < 0 else str(value)  # (`ts - -7` would be a comment)


__all__ = ["Sql", "sql_string", "local_table"]
