"""The Arrow compute kernels the block reader uses, called by name.

`pyarrow.compute` writes a documented Python function for each of Arrow's ~300
kernels when it is imported: 25-30 ms of every process that reads a block,
more than the reader then spends on a short file. These are the same calls
(`call_function`, which those functions wrap) without that import. Array
methods such as `take`, `cast` and `unique` import `pyarrow.compute` too, so
the reader calls the kernels here instead.

>>> from rsp_plugin.columnar.encode import string_array
>>> ends_with(string_array(["<a> .\\n", "<b>"]), " .\\n").to_pylist()
[True, False]
"""

from __future__ import annotations

import pyarrow as pa
from pyarrow import _compute

_call = _compute.call_function


def split_pattern(strings: pa.Array, pattern: str, max_splits: int) -> pa.Array:
    """Each string cut at its first `max_splits` occurrences of `pattern` (a list array)."""
    return _call("split_pattern", [strings], _compute.SplitPatternOptions(pattern, max_splits=max_splits))


def list_element(lists: pa.Array, index: pa.Scalar) -> pa.Array:
    """The `index`-th element of each list (`index` an Arrow scalar)."""
    return _call("list_element", [lists, index])


def list_flatten(lists: pa.Array) -> pa.Array:
    return _call("list_flatten", [lists])


def take(values: pa.Array, indices: pa.Array) -> pa.Array:
    return _call("take", [values, indices], _compute.TakeOptions(boundscheck=True))


def ends_with(strings: pa.Array, suffix: str) -> pa.Array:
    return _call("ends_with", [strings], _compute.MatchSubstringOptions(suffix))


def matches(strings: pa.Array, regex: str) -> pa.Array:
    """Whether each string has a match of `regex` (RE2 syntax)."""
    return _call("match_substring_regex", [strings], _compute.MatchSubstringOptions(regex))


def slice_codeunits(strings: pa.Array, start: int, stop: int) -> pa.Array:
    return _call("utf8_slice_codeunits", [strings], _compute.SliceOptions(start, stop))


def to_int64(strings: pa.Array) -> pa.Array:
    """Decimal integer strings as int64 (an error if one is not)."""
    return _call("cast", [strings], _compute.CastOptions(pa.int64()))


def unique(values: pa.Array) -> pa.Array:
    return _call("unique", [values])


def dictionary_encode(values: pa.Array) -> pa.DictionaryArray:
    """The distinct values in the order they first appear, and each row's index among them."""
    return _call("dictionary_encode", [values], _compute.DictionaryEncodeOptions())
