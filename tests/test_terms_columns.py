"""`Dictionary.intern_keys` on columns new at both ends: all new, or not quite (the fast path undone)."""

import pytest

from rsp_plugin.terms import Dictionary


def _both(keys, known=("k1", "k2")):
    ours, theirs = Dictionary(), Dictionary()
    for terms in (ours, theirs):
        for key in known:
            terms.intern(key)
    got = ours.intern_keys(keys)
    assert got == [theirs.intern(key) for key in keys]
    assert ours.keys == theirs.keys and dict(ours.numbers) == dict(theirs.numbers)
    assert dict(ours._ids) == dict(theirs._ids) and ours.next_id == theirs.next_id and ours.made == theirs.made
    return ours


@pytest.mark.parametrize("keys", [
    ["a", "b", "c"],
    ["a", "k1", "c"],            # a known key between two new ones
    ["a", "b", "a", "c"],        # a new key twice
    ["a", "7", "2.5", "c"],      # numbers among them
    ["x", "k2", "x", "k1", "y"],
    ["solo"],
])
def test_columns_new_at_both_ends(keys):
    terms = _both(keys)
    assert terms._touched == {terms.find(key) for key in keys if key in ("k1", "k2")}
