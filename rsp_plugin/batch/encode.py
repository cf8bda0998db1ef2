"""Dictionary encoding in bulk: a column of written terms becomes a column of ids.

pyarrow's `dictionary_encode` finds the distinct terms of a column and the code
of each row in one native pass; the `Dictionary` is asked once per distinct
term (`intern_keys`), and numpy maps codes to ids. Per row there is no Python.

>>> from rsp_plugin.terms import Dictionary
>>> terms = Dictionary()
>>> before = terms.intern("<b>")
>>> encode(["<a>", "<b>", "<a>"], terms).tolist(), terms.key(int(encode(["<a>"], terms)[0]))
([1, 0, 1], '<a>')
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..terms import Dictionary

#: the keys that may have a numeric value (`number_of_key`): a number, or a literal of a numeric datatype
_MAYBE_NUMBER = (r'^[-+.0-9]|\^\^<http://www\.w3\.org/2001/XMLSchema#(integer|int|long|short|byte|'
                 r'nonNegativeInteger|positiveInteger|nonPositiveInteger|negativeInteger|unsignedLong|'
                 r'unsignedInt|unsignedShort|unsignedByte|decimal|double|float)>$')


def encode(column, terms: Dictionary) -> np.ndarray:
    """Ids (int64) of a column of N-Triples keys: a list, a pyarrow array or a polars Series."""
    if hasattr(column, "to_arrow"):  # polars
        column = column.to_arrow()
    elif not isinstance(column, (pa.Array, pa.ChunkedArray)):
        column = pa.array(column, type=pa.large_string())
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if len(column) == 0:
        return np.empty(0, dtype=np.int64)
    encoded = pc.dictionary_encode(column)
    distinct = encoded.dictionary
    import polars as pl  # (its regex engine is the faster one here)

    numeric = pl.from_arrow(distinct).str.contains(_MAYBE_NUMBER).to_numpy()
    ids, _ = terms.intern_distinct(distinct.to_pylist(), numeric)
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    return ids[codes]


def decode(ids: np.ndarray, terms: Dictionary) -> list[str]:
    """The written terms of a column of ids (one lookup per distinct id)."""
    distinct, codes = np.unique(ids, return_inverse=True)
    keys = terms.keys
    table = [keys[term] for term in distinct.tolist()]
    return [table[code] for code in codes.tolist()]
