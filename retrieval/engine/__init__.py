"""Units to scores: the BM25F index over int32 postings segments (exact after any sequence of
updates), the fields and constants of a ranking, the proximity bonus, and the `Library` holding
the two indexes of a corpus."""
