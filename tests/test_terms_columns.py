"""`Dictionary.intern_keys` on columns new at both ends: all new, or not quite (the fast path undone)."""

import pytest

from rsp_plugin.core.terms import Dictionary


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


@pytest.mark.parametrize("seed", range(80))
def test_retain_forgets_exactly_what_nothing_keeps(seed):
    import random

    draw = random.Random(seed)
    terms = Dictionary()
    for _ in range(draw.randint(1, 6)):
        batch = [draw.choice([f"n{draw.randrange(300)}", str(draw.randrange(200)), f"{draw.randrange(50)}.5"])
                 for _ in range(draw.randint(1, 120))]
        terms.intern_keys(batch) if draw.random() < 0.5 else [terms.intern(key) for key in batch]
        if draw.random() < 0.3:
            terms.pin(draw.sample(sorted(terms.ids()), k=min(3, len(terms))))
        before = dict(terms.keys)
        numbers = dict(terms.numbers)
        touched = set(terms._touched)
        live = draw.sample(sorted(before), k=draw.randint(0, len(before)))
        keep_since = draw.choice([None, terms.next_id, draw.randint(0, terms.next_id)])
        young = terms.next_id if keep_since is None else keep_since
        kept = {term for term in before
                if term in set(live) or term in terms.pinned or term in touched or term >= young}
        assert terms.retain(live, keep_since=keep_since) == len(before) - len(kept)
        assert terms.keys == {term: before[term] for term in kept}
        assert list(terms.keys) == sorted(kept)  # (in id order: what `retain` reads the young by)
        assert {key: terms.find(key) for key in terms.keys.values()} == {before[t]: t for t in kept}
        assert dict(terms.numbers) == {term: value for term, value in numbers.items() if term in kept}
        assert all(terms.find(before[term]) is None for term in before if term not in kept)
