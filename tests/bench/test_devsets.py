"""The development sets: what issue 32 asks of them, every judged section real, and the benchmark's
table printed for them (the last two where the sets' documents are: a clone, not the sdist)."""

from __future__ import annotations

from collections import Counter

import pytest

from bench.datasets import read_jsonl
from bench.devsets import DEVSETS, KINDS, indexed, load_sets, main
from retrieval.engine.ranking import DEFAULT
from tests.bench import needs_documents


def test_the_sets_are_large_mixed_and_carry_their_source_and_licence() -> None:
    sets = load_sets()
    docs, agents = [s for s in sets if not s.agents], [s for s in sets if s.agents]
    assert len(docs) >= 4 and len(agents) >= 6
    assert sum(len(s.questions) for s in sets) >= 150
    kinds = Counter(q.kind for s in sets for q in s.questions)
    assert set(kinds) == set(KINDS)
    assert kinds["lookup"] <= sum(kinds.values()) / 2
    for s in sets:
        assert (DEVSETS / s.name / "LICENSE").read_text(encoding="utf-8").strip(), s.name
        source = (DEVSETS / s.name / "SOURCE.md").read_text(encoding="utf-8")
        assert "commit" in source.casefold(), s.name


def test_every_question_has_the_variants_it_is_also_asked_with() -> None:
    """`variants.jsonl` holds, for each question of its set and in the same order, the two to four
    other ways of asking it that the tools' `queries` get in the "with queries" runs."""
    for s in load_sets():
        written = list(read_jsonl(DEVSETS / s.name / "variants.jsonl"))
        assert [row["question"] for row in written] == [q.text for q in s.questions], s.name
        for q in s.questions:
            assert 2 <= len(q.variants) <= 4 and all(v.strip() for v in q.variants), (s.name, q.text)


@needs_documents
def test_every_judged_section_is_one_the_server_serves() -> None:
    """Each answer names a section as the server cuts the file (its heading as written), in a file
    the server serves from that folder: a judgment that cannot be found cannot be scored."""
    for s in load_sets():
        corpus, library = indexed(s, DEFAULT)
        served = {(f.rel, u.heading) for f in corpus.files.values() for u in library.sections.payloads(f.path)}
        missing = [(q.text, pair) for q in s.questions for pair in q.sections if pair not in served]
        assert not missing, (s.name, missing)


@needs_documents
def test_the_benchmark_prints_each_set_and_kind(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--only", "httpx"]) == 0
    out = capsys.readouterr().out
    n = len(next(s for s in load_sets() if s.name == "httpx").questions)
    assert f"| httpx | {n} | ours |" in out and f"| httpx | {n} | plain BM25 |" in out
    assert f"| httpx | {n} | ours, with queries |" in out
    assert "| kind: troubleshooting |" in out
