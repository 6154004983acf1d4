"""The vocabulary gives the ids a plain dictionary in order of first sight would give, whether its
terms are frozen (restored, merged, renumbered) or added since."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.engine import vocabulary
from retrieval.engine.vocabulary import Terms, Vocabulary

TERMS = st.text(st.characters(exclude_characters="\0"), min_size=1, max_size=12)  # lone surrogates too


def reference(words: list[str]) -> dict[str, int]:
    ids: dict[str, int] = {}
    for w in words:
        ids.setdefault(w, len(ids))
    return ids


@settings(deadline=None, max_examples=200)
@given(st.lists(TERMS, unique=True), st.lists(TERMS), st.lists(TERMS))
def test_frozen_then_added_terms_get_the_ids_of_first_sight(
    frozen: list[str], added: list[str], asked: list[str]
) -> None:
    vocab = Vocabulary(frozen)
    ids = list(map(vocab.adding(added), added))  # a term it lacks gets the next id
    want = reference(frozen + added)
    assert ids == [want[w] for w in added]
    assert len(vocab) == len(want) and list(vocab) == list(want)
    for w in asked:  # looking up never adds
        assert vocab.get(w) == want.get(w) and (w in vocab) == (w in want)
        assert vocab.get(w, -1) == want.get(w, -1)
    assert len(vocab) == len(want)
    assert [vocab.word(i) for i in range(len(vocab))] == list(want)


@settings(deadline=None, max_examples=200)
@given(st.lists(TERMS, unique=True), st.lists(TERMS), st.lists(TERMS, unique=True))
def test_merging_numbers_new_terms_after_the_old_and_leaves_the_old_one_alone(
    frozen: list[str], added: list[str], packed: list[str]
) -> None:
    vocab = Vocabulary(frozen)
    for w in added:  # one at a time, as updates come
        vocab.adding([w])(w)
    before = list(vocab)
    merged, ids = vocab.merged(packed)
    want = reference(before + packed)
    assert ids.tolist() == [want[w] for w in packed]
    assert list(merged) == list(want) and len(merged) == len(want)
    assert list(vocab) == before
    refrozen = vocab.frozen()
    assert list(refrozen) == before and [refrozen.get(w) for w in before] == list(range(len(before)))
    more = [w + "+" for w in packed]  # after a merge, new terms go on from its end
    assert list(map(merged.adding(more), more)) == [reference(list(merged) + more)[w] for w in more]


def test_terms_beyond_ascii_and_lookalikes_stay_apart() -> None:
    vocab = Vocabulary(["café", "cafe", "naïve", "日本語", "ß", "ss"])
    assert [vocab.get(w) for w in ("cafe", "café", "ss", "ß", "日本語", "naive")] == [1, 0, 5, 4, 3, None]
    assert vocab.adding(["naive"])("naive") == 6 and vocab.word(6) == "naive" and vocab.word(3) == "日本語"


def test_an_empty_vocabulary() -> None:
    vocab = Vocabulary()
    assert len(vocab) == 0 and list(vocab) == [] and vocab.get("a") is None and "a" not in vocab
    merged, ids = vocab.merged(["a", "b"])
    assert list(merged) == ["a", "b"] and ids.tolist() == [0, 1]


@settings(deadline=None, max_examples=100)
@given(st.lists(TERMS, unique=True), st.lists(TERMS), st.lists(TERMS, unique=True), st.lists(TERMS))
def test_terms_whose_hashes_collide_keep_their_own_ids(
    frozen: list[str], added: list[str], packed: list[str], asked: list[str]
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vocabulary, "_hash", lambda term: len(term) % 3)  # most terms share a hash
        patch.setattr(vocabulary, "_hashes", lambda blob: np.array([len(t) % 3 for t in Terms(blob)], dtype=np.int64))
        vocab = Vocabulary(frozen)
        for w in added:
            vocab.adding([w])(w)
        merged, ids = vocab.merged(packed)
        want = reference(frozen + added + packed)
        assert ids.tolist() == [want[w] for w in packed] and list(merged) == list(want)
        for w in asked:
            assert merged.get(w) == want.get(w)
        assert [merged.frozen().get(w) for w in want] == list(range(len(want)))


@settings(deadline=None, max_examples=200)
@given(st.lists(TERMS, unique=True), st.lists(TERMS), st.data())
def test_chosen_terms_come_as_one_blob_frozen_and_added_alike(
    frozen: list[str], added: list[str], data: st.DataObject
) -> None:
    vocab = Vocabulary(frozen)
    for w in added:
        vocab.adding([w])(w)
    everything = list(vocab)
    ids = sorted(data.draw(st.sets(st.integers(0, max(len(everything) - 1, 0)))) if everything else [])
    assert list(vocab.terms(np.array(ids, dtype=np.int64))) == [everything[i] for i in ids]


@settings(deadline=None, max_examples=200)
@given(st.lists(st.text(st.characters(exclude_characters="\0"), min_size=1, max_size=300)))
def test_a_blob_of_terms_hashes_as_each_term_alone(words: list[str]) -> None:
    """Restored terms are hashed from their bytes, a term asked for from its string: one hash."""
    assert vocabulary._hashes(Terms.of(words).blob).tolist() == [vocabulary._hash(w) for w in words]


def test_ascii_pairs_and_the_cjk_characters_stored_as_their_bytes_do_not_share_a_hash() -> None:
    """Python's string hash reads the code units as stored: "dk" and "此" (U+6B64, the bytes 64 6B)
    hash alike, so a multilingual docs root sent every bulk lookup down the one-by-one path."""
    pairs = [("dk", "此"), ("pe", "数"), ("o0", "は")]
    assert all(hash(a) == hash(b) for a, b in pairs)  # the quirk, still there
    assert all(vocabulary._hash(a) != vocabulary._hash(b) for a, b in pairs)
    words = [w for pair in pairs for w in pair]
    frozen = Vocabulary(words[::2]).frozen()
    merged, ids = frozen.merged(words)
    assert ids.tolist() == [0, 3, 1, 4, 2, 5] and [merged.get(w) for w in words] == ids.tolist()
