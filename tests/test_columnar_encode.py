"""Dictionary encoding (`rsp_plugin/columnar/encode.py`): a short column, encoded by a dict in Python,
gets what pyarrow's `dictionary_encode` gives a long one: the same distinct terms in the same order,
the same codes, the same ids."""

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from rsp_plugin.columnar import encode as encoding
from rsp_plugin.core.terms import Dictionary

KEYS = ["<http://ex/b>", '"5"^^<http://www.w3.org/2001/XMLSchema#integer>', "<http://ex/a>", "<http://ex/b>",
        '"x"^^<http://www.w3.org/2001/XMLSchema#string>', "_:b1", "-3.5", "<http://ex/a>", '"é"@fr']
WITH_NULLS = [KEYS[0], None, KEYS[2], KEYS[0], None, '"x"^^<http://www.w3.org/2001/XMLSchema#string>']
FORMS = {"list": list, "arrow": lambda keys: pa.array(keys, type=pa.large_string()),
         "chunked": lambda keys: pa.chunked_array([keys[:2], keys[2:]], type=pa.string()),
         "polars": lambda keys: pl.Series(keys, dtype=pl.String)}


def _both_ways(monkeypatch, run):
    """`run()` with every column short (dict) and with every column long (pyarrow)."""
    monkeypatch.setattr(encoding, "SMALL", 1 << 30)
    short = run()
    monkeypatch.setattr(encoding, "SMALL", 0)
    return short, run()


@pytest.mark.parametrize("form", FORMS)
def test_a_short_column_encodes_as_a_long_one(form, monkeypatch):
    def run():
        terms = Dictionary()
        ids = encoding.encode(FORMS[form](KEYS), terms)
        return ids.tolist(), [terms.key(i) for i in ids.tolist()]

    short, long = _both_ways(monkeypatch, run)
    assert short == long and short[1] == KEYS


@pytest.mark.parametrize("form", ["arrow", "polars"])
@pytest.mark.parametrize("canonical", [False, True])
def test_a_short_column_is_checked_as_a_long_one(form, canonical, monkeypatch):
    def run():
        terms = Dictionary()
        rows, good = encoding.encode_checked(FORMS[form](WITH_NULLS), terms, r"^(<[^>]*>|\"[^\"]*\"(\^\^<[^>]*>)?)$",
                                             canonical=canonical)
        return rows.tolist(), good.tolist(), [terms.key(i) if i >= 0 else None for i in rows.tolist()]

    short, long = _both_ways(monkeypatch, run)
    assert short == long
    assert short[1] == [True, False, True, True, False, True]  # (a missing value is not well-formed)


def test_the_distinct_values_come_in_the_order_they_first_appear(monkeypatch):
    def run():
        distinct, codes = encoding._dictionary_encoded(pa.array(WITH_NULLS, type=pa.large_string()))
        return distinct.to_pylist(), np.asarray(codes).tolist()

    short, long = _both_ways(monkeypatch, run)
    assert short == long == ([KEYS[0], KEYS[2], WITH_NULLS[5]], [0, 3, 1, 0, 3, 2])
