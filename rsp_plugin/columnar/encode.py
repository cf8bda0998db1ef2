"""Dictionary encoding in bulk: a column of written terms becomes a column of ids.

pyarrow's `dictionary_encode` finds the distinct terms of a column and the code
of each row in one native pass; the `Dictionary` is asked once per distinct
term (`intern_keys`), and numpy maps codes to ids. Per row there is no Python.
A column of at most `SMALL` rows (a live push, a short file) is encoded by a dict
in Python instead: the same distinct terms in the same order. The values are
checked (well-formed, maybe a number) by pyarrow's regex kernels, once per
distinct value; no polars and no pandas are imported on the way (a third of a
second or more at a process's start: see "Arrow arrays" below).

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
from . import kernels

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
    numeric = booleans(kernels.matches(distinct, _MAYBE_NUMBER))
    ids, _ = terms.intern_distinct(distinct.to_pylist(), numeric)
    return ids[codes]


def encode_checked(column, terms: Dictionary, pattern: str, *, canonical: bool = False, numbers: bool = True):
    """Ids of a column of written terms and which rows are well-formed: each distinct value is
    checked once against `pattern` (an RE2 regex, pyarrow's) and only those that pass are interned;
    the rows of the others get id -1. `canonical`: literals typed xsd:string lose their datatype
    (RDF 1.1: "a"^^xsd:string is "a"), as the per-line readers write them. `numbers`: False when
    nothing `pattern` admits can be a number (IRIs, blank nodes): no value is looked for."""
    if len(column) == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=bool)
    distinct, codes = _dictionary_encoded(column)
    good = booleans(kernels.matches(distinct, pattern))
    chosen = np.flatnonzero(good)
    ids = np.full(len(distinct), -1, dtype=np.int64)
    if len(chosen):
        keys = kernels.take(distinct, int64_array(chosen)) if len(chosen) < len(distinct) else distinct
        numeric = booleans(kernels.matches(keys, _MAYBE_NUMBER)) if numbers \
            else np.zeros(len(keys), dtype=bool)
        key_list = keys.to_pylist()
        if canonical and booleans(kernels.ends_with(keys, _STRING_SUFFIX)).any():
            key_list = [key[: -len(_STRING_SUFFIX) + 1] if key.endswith(_STRING_SUFFIX) else key for key in key_list]
            ids[chosen] = terms.intern_keys(key_list)
        else:
            ids[chosen] = terms.intern_distinct(key_list, numeric)[0]
    rows = np.append(ids, -1)[codes]  # (a missing value's code is len(distinct): not well-formed)
    return rows, rows >= 0


# Arrow arrays to and from numpy without pandas: pyarrow imports it (a third of a second) to make an
# array of a list or of numpy, to take a Python scalar, and at `to_numpy`'s first call. Arrays are made
# from buffers and read off theirs instead.


#: the integer Arrow types `numbers` reads (a dictionary encoding's codes are the narrowest that fit)
_INDEX_TYPES = {pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64}


def int64_array(values: np.ndarray) -> pa.Array:
    """An Arrow int64 array over a numpy array's buffer."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def string_array(values: list) -> pa.Array:
    """An Arrow large_string array of Python strings (None: null), its bytes joined once.

    >>> string_array(["a", None, "é"]).to_pylist()
    ['a', None, 'é']
    """
    encoded = [b"" if value is None else value.encode("utf-8") for value in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(part) for part in encoded], out=offsets[1:])
    validity = None
    if any(value is None for value in values):
        validity = pa.py_buffer(np.packbits(np.array([value is not None for value in values]), bitorder="little"))
    return pa.LargeStringArray.from_buffers(len(encoded), pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded)),
                                            validity)


def booleans(array: pa.Array) -> np.ndarray:
    """A boolean Arrow array as numpy, a null as False (read off its bitmaps)."""
    count, offset = len(array), array.offset
    buffers = array.buffers()
    found = _bits(buffers[1], offset, count)
    if array.null_count and buffers[0] is not None:
        found &= _bits(buffers[0], offset, count)
    return found


def _bits(buffer, offset: int, count: int) -> np.ndarray:
    if not count:  # (an empty array may have no buffer)
        return np.zeros(0, dtype=bool)
    bits = np.unpackbits(np.frombuffer(buffer, dtype=np.uint8), bitorder="little")
    return bits[offset:offset + count].astype(bool)


def numbers(array: pa.Array) -> np.ndarray:
    """An integer Arrow array (8 to 64 bits) as int64 numpy, read off its buffer (a null reads as
    whatever its slot holds: the caller decides what nulls are)."""
    if not len(array):
        return np.zeros(0, dtype=np.int64)
    kind = _INDEX_TYPES[array.type]
    values = np.frombuffer(array.buffers()[1], dtype=kind, count=len(array), offset=array.offset * np.dtype(kind).itemsize)
    return values.astype(np.int64, copy=False)


def _dictionary_encoded(column):
    """The distinct values of a column (a list, a pyarrow array or a polars Series; not empty) in the
    order they first appear, as an Arrow array, and each row's place among them (an integer array;
    a null row's is len(distinct)). At most `SMALL` rows: by a dict, with no Arrow kernel."""
    if len(column) <= SMALL:
        if isinstance(column, list):
            values = column
        else:
            values = column.to_list() if hasattr(column, "to_list") else column.to_pylist()
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
        return string_array(list(places)), codes
    if isinstance(column, list):
        column = string_array(column)
    elif not isinstance(column, (pa.Array, pa.ChunkedArray)):
        column = column.to_arrow()  # (a polars Series)
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    encoded = kernels.dictionary_encode(column)
    codes = numbers(encoded.indices)
    if encoded.indices.null_count:
        codes = codes.copy()
        codes[~_bits(encoded.indices.buffers()[0], encoded.indices.offset, len(codes))] = len(encoded.dictionary)
    return encoded.dictionary, codes


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
