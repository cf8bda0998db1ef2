"""Dictionary encoding in bulk: a column of written terms becomes a column of ids.

pyarrow's `dictionary_encode` finds the distinct terms of a column and the code
of each row in one native pass; the `Dictionary` is asked once per distinct
term (`intern_keys`), and numpy maps codes to ids. Per row there is no Python.
A column of at most `SMALL` rows (a live push, a short file) is encoded by a dict
in Python instead: the same distinct terms in the same order, and no
`pyarrow.compute` to import (~50 ms of CPU, its functions' wrappers made at
import) before the first report of a short stream.

>>> from rsp_plugin.core.terms import Dictionary
>>> terms = Dictionary()
>>> before = terms.intern("<b>")
>>> encode(["<a>", "<b>", "<a>"], terms).tolist(), terms.key(int(encode(["<a>"], terms)[0]))
([1, 0, 1], '<a>')
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..core.terms import Dictionary
from ..core.xsd import INTEGERS, NON_INTEGERS, XSD

_STRING_SUFFIX = '"^^<http://www.w3.org/2001/XMLSchema#string>'
#: the keys that may have a numeric value (`number_of_key`): a number, or a literal of a numeric datatype
_MAYBE_NUMBER = r'^[-+.0-9]|\^\^<' + XSD.replace(".", r"\.") + f"({'|'.join((*INTEGERS, *NON_INTEGERS))})>$"
#: a column of at most this many rows is dictionary-encoded in Python (`_dictionary_encoded`)
SMALL = 64


def encode(column, terms: Dictionary) -> np.ndarray:
    """Ids (int64) of a column of N-Triples keys: a list, a pyarrow array or a polars Series."""
    if len(column) == 0:
        return np.empty(0, dtype=np.int64)
    distinct, codes = _dictionary_encoded(column)
    numeric = distinct.str.contains(_MAYBE_NUMBER).to_numpy()  # (polars' regex engine is the faster one here)
    ids, _ = terms.intern_distinct(distinct.to_list(), numeric)
    return ids[codes]


def encode_checked(column, terms: Dictionary, pattern: str, *, canonical: bool = False, numbers: bool = True):
    """Ids of a column of written terms and which rows are well-formed: each distinct value is
    checked once against `pattern` (a polars regex) and only those that pass are interned; the
    rows of the others get id -1. `canonical`: literals typed xsd:string lose their datatype
    (RDF 1.1: "a"^^xsd:string is "a"), as the per-line readers write them. `numbers`: False when
    nothing `pattern` admits can be a number (IRIs, blank nodes): no value is looked for."""
    if len(column) == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=bool)
    distinct, codes = _dictionary_encoded(column)
    good = distinct.str.contains(pattern).fill_null(False).to_numpy()
    chosen = np.flatnonzero(good)
    ids = np.full(len(distinct), -1, dtype=np.int64)
    if len(chosen):
        keys = distinct.gather(chosen) if len(chosen) < len(distinct) else distinct
        numeric = keys.str.contains(_MAYBE_NUMBER).to_numpy() if numbers else np.zeros(len(keys), dtype=bool)
        key_list = keys.to_list()
        if canonical and keys.str.ends_with(_STRING_SUFFIX).any():
            key_list = [key[: -len(_STRING_SUFFIX) + 1] if key.endswith(_STRING_SUFFIX) else key for key in key_list]
            ids[chosen] = terms.intern_keys(key_list)
        else:
            ids[chosen] = terms.intern_distinct(key_list, numeric)[0]
    rows = np.append(ids, -1)[codes]  # (a missing value's code is len(distinct): not well-formed)
    return rows, rows >= 0


def series_of(array: pa.Array):
    """A pyarrow array as a polars Series, handed over through the Arrow PyCapsule interface: polars'
    `from_arrow` imports pyarrow.compute (~50 ms at a process's first call) for a check that only
    arrays in several chunks need."""
    import polars as pl

    return pl.Series(_ArrowArray(array))


class _ArrowArray:
    """A pyarrow array that shows polars only its `__arrow_c_array__` (see `series_of`)."""

    __slots__ = ("array",)

    def __init__(self, array: pa.Array) -> None:
        self.array = array

    def __arrow_c_array__(self, requested_schema=None):
        return self.array.__arrow_c_array__(requested_schema)


def _dictionary_encoded(column):
    """The distinct values of a column (a list, a pyarrow array or a polars Series; not empty) in the
    order they first appear, as a polars Series, and each row's place among them (an integer
    array; a null row's is len(distinct)). At most `SMALL` rows: by a dict, with no pyarrow (whose
    `array` of a list imports pandas)."""
    import polars as pl

    if len(column) <= SMALL:
        if isinstance(column, list):
            values = column
        else:
            values = column.to_list() if isinstance(column, pl.Series) else column.to_pylist()
        places: dict[str, int] = {}
        nulls = []
        codes = []
        for row, value in enumerate(values):
            if value is None:
                nulls.append(row)
                codes.append(0)
            else:
                codes.append(places.setdefault(value, len(places)))
        codes = np.array(codes, dtype=np.int64)
        codes[nulls] = len(places)
        return pl.Series(list(places), dtype=pl.String), codes
    import pyarrow.compute as pc

    if isinstance(column, pl.Series):
        column = column.to_arrow()
    elif not isinstance(column, (pa.Array, pa.ChunkedArray)):
        column = pa.array(column, type=pa.large_string())
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    encoded = pc.dictionary_encode(column)
    indices = encoded.indices
    if indices.null_count:
        indices = indices.fill_null(len(encoded.dictionary))
    return series_of(encoded.dictionary), _codes(indices)


_INDEX_TYPES = {pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64}


def _codes(indices: pa.Array) -> np.ndarray:
    """The codes of a dictionary encoding (no nulls) as numpy, read off the Arrow buffer: pyarrow's
    `to_numpy` imports pandas on its first call, a third of a second that a stream need not pay."""
    kind = _INDEX_TYPES.get(indices.type)
    if kind is None or indices.null_count:
        return indices.to_numpy(zero_copy_only=False)
    return np.frombuffer(indices.buffers()[1], dtype=kind, count=len(indices),
                         offset=indices.offset * np.dtype(kind).itemsize)


def decode(ids: np.ndarray, terms: Dictionary) -> list[str]:
    """The written terms of a column of ids (one lookup per distinct id)."""
    table, codes = _decoded(ids, terms)
    return [table[code] for code in codes.tolist()]


def decode_arrow(ids: np.ndarray, terms: Dictionary) -> pa.Array:
    """`decode` as an Arrow string array, taken from the distinct terms natively (no str per row)."""
    table, codes = _decoded(ids, terms)
    return pa.array(table, pa.string()).take(pa.array(codes.astype(np.int32)))


def _decoded(ids: np.ndarray, terms: Dictionary) -> tuple[list[str], np.ndarray]:
    """The distinct ids' written terms, and each row's place among them."""
    distinct, codes = np.unique(ids, return_inverse=True)
    keys = terms.keys
    return [keys[term] for term in distinct.tolist()], codes
