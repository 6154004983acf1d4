"""The ablation steps of the ranking, in order: each row adds one thing to the row before."""

from __future__ import annotations

from retrieval.engine.ranking import DEFAULT, PLAIN, Ranking
from retrieval.text.stopwords import LUCENE
from retrieval.text.tokenize import Tokenizer


def steps() -> list[tuple[str, Ranking]]:
    folded = Tokenizer(stem=False, stop_words=LUCENE, identifiers=False)
    identifiers = Tokenizer(stem=False, stop_words=LUCENE)
    stemmed = Tokenizer(stop_words=LUCENE)
    tokens = DEFAULT.tokenize
    fields = PLAIN.but(tokenize=tokens, heading_weight=DEFAULT.heading_weight, path_weight=DEFAULT.path_weight)
    deduplicated = fields.but(body_b=DEFAULT.body_b, redundancy=DEFAULT.redundancy)
    return [
        ("plain BM25: one field, the plain tokenizer", PLAIN),
        ("+ NFKC, accent folding, CJK bigrams", PLAIN.but(tokenize=folded)),
        ("+ identifiers whole and split", PLAIN.but(tokenize=identifiers)),
        ("+ Snowball stemming (PyStemmer)", PLAIN.but(tokenize=stemmed)),
        ("+ English stop list (Snowball's, trimmed)", PLAIN.but(tokenize=tokens)),
        ("+ BM25F: heading trail x4, path x1", fields),
        ("+ body b 0.5 (k1 stays 1.5)", fields.but(body_b=DEFAULT.body_b)),
        ("+ redundancy removal (overlaps, near copies)", deduplicated),
        (
            "+ term proximity (BM25TP x0.5, top 30 re-scored)",
            deduplicated.but(proximity=DEFAULT.proximity, rerank_depth=DEFAULT.rerank_depth),
        ),
        ("+ score floor 0.3", DEFAULT.but(page_weight=0.0)),
        ("+ page bonus (x0.25, search_docs)", DEFAULT.but(link_weight=0.0)),
        ("+ links to a page (x0.25, search_docs) = the shipped default", DEFAULT),
        ("  default, no proximity (the default before it)", DEFAULT.but(proximity=0.0)),
        ("  default, proximity x0.25", DEFAULT.but(proximity=0.25)),
        ("  default, proximity x1 (as published)", DEFAULT.but(proximity=1.0)),
        ("  default, proximity over the top 10", DEFAULT.but(rerank_depth=10)),
        ("  default, proximity over the top 100", DEFAULT.but(rerank_depth=100)),
        ("  default + RM3 feedback (10 docs, 10 terms, 0.5)", DEFAULT.but(feedback=True)),
        ("  default, Lucene stop list", DEFAULT.but(tokenize=Tokenizer(stop_words=LUCENE))),
        ("  default, k1 1.2", DEFAULT.but(k1=1.2)),
        ("  default, heading x2", DEFAULT.but(heading_weight=2.0)),
        ("  default, no path field", DEFAULT.but(path_weight=0.0)),
    ]
