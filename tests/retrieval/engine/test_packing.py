"""The persistent form of an index's groups: packed groups unpack into any index and score like a
fresh build, and what is restored owns its memory instead of viewing the buffer it was read from."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval.engine import packing
from retrieval.engine.packing import Packed, owned
from tests.retrieval.engine.support import (
    FIELD_SETS,
    WORDS,
    Corpus,
    assert_scores_like,
    corpora,
    docs_of,
    fresh,
)


@given(
    files=corpora,
    others=corpora,
    picked=st.lists(st.sampled_from([f"f{i}.md" for i in range(12)]), max_size=12),
    config=st.sampled_from(sorted(FIELD_SETS)),
)
def test_packed_groups_unpack_into_any_index_and_score_like_a_fresh_build(
    files: Corpus, others: Corpus, picked: list[str], config: str
) -> None:
    """What the persistent cache relies on: pack some files of one index, unpack them into an
    index that holds other files (other term ids), and every score is that of a fresh build."""
    fields = FIELD_SETS[config]
    source = fresh(files, fields)
    for name in list(files)[::2]:  # dead slots and several segments in the source
        source.replace(name, docs_of(name, files[name], fields))
    chosen = [n for n in dict.fromkeys(picked) if n in files]
    target = fresh({f"other/{n}": d for n, d in others.items()}, fields)
    target.unpack(source.pack(chosen))
    expected = fresh({**{n: files[n] for n in chosen}, **{f"other/{n}": d for n, d in others.items()}}, fields)
    assert sorted(map(str, target.groups())) == sorted(map(str, expected.groups()))
    for term in WORDS:
        assert target.df(term) == expected.df(term)
    assert_scores_like(target, expected, (["ab"], ["cd", "ef"], ["gh", "gh", "ij"], WORDS))
    for name in chosen:  # and removing an unpacked file later is exact too
        target.remove(name)
    assert_scores_like(target, fresh({f"other/{n}": d for n, d in others.items()}, fields), (WORDS,))


def in_one_buffer(packed: Packed[str]) -> Packed[str]:
    """The packed arrays as views of one shared buffer, as a cache entry is read."""
    names = ("indptr", "docs", "tfs", "fwd", "counts", "lengths", "text")
    arrays: list[npt.NDArray[np.generic]] = [getattr(packed, name) for name in names]
    buffer = np.zeros(sum(a.nbytes for a in arrays), dtype=np.uint8)
    views: dict[str, Any] = {}
    at = 0
    for name, a in zip(names, arrays, strict=True):
        view = buffer[at : at + a.nbytes].view(a.dtype).reshape(a.shape)
        view[...] = a
        views[name], at = view, at + a.nbytes
    return dataclasses.replace(packed, **views)


def test_unpacked_postings_own_their_memory_not_the_buffer_they_were_read_from() -> None:
    files: Corpus = {f"f{i}.md": [[["ab", "cd"] * i, ["ef"], ["gh"]]] for i in range(1, 6)}
    fields = FIELD_SETS["default"]
    packed = in_one_buffer(fresh(files, fields).pack(list(files)))
    assert packed.indptr.base is not None and packed.tfs.base is not None
    # Into an empty index (the packed rows kept as they are) and into one with other term ids.
    for others in ({}, {"other.md": [[["ij", "ab"], [], []]]}):
        target = fresh(others, fields)
        target.unpack(packed)
        restored = target._segments[-1]
        for array in (restored.term_ids, restored.indptr, restored.docs, restored.tfs):
            assert array.base is None
        assert_scores_like(target, fresh({**files, **others}, fields), (WORDS,))


def test_owned_copies_only_a_view() -> None:
    whole = np.arange(10)
    assert owned(whole) is whole
    part = owned(whole[2:5])
    assert part.base is None and part.tolist() == [2, 3, 4]


@given(files=corpora, config=st.sampled_from(sorted(FIELD_SETS)))
def test_a_whole_fresh_index_packs_as_the_general_path_packs_it(files: Corpus, config: str) -> None:
    """A freshly built index packed whole (one segment, every slot and term) lends its arrays to
    the pack instead of copying them; what the pack holds is what the general path makes."""
    fields = FIELD_SETS[config]
    index = fresh(files, fields)
    lent = index.pack(list(files))
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(packing, "_whole", lambda *_: None)
        made = index.pack(list(files))
    assert lent.groups == made.groups and list(lent.words) == list(made.words)
    assert list(lent.payloads) == list(made.payloads) and list(lent.orders) == list(made.orders)
    for name in ("indptr", "docs", "tfs", "fwd", "counts", "lengths", "text"):
        got, want = getattr(lent, name), getattr(made, name)
        assert got.shape == want.shape and got.tolist() == want.tolist(), name
    if len(index._segments) == 1 and len(lent.docs):
        assert np.shares_memory(lent.docs, index._segments[0].docs)  # lent, not copied
    target = fresh({}, fields)
    target.unpack(lent)
    assert_scores_like(target, fresh(files, fields), (["ab"], ["cd", "ef"], WORDS))
