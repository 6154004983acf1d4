"""Text to ranked, rendered answers, over a corpus snapshot. It starts no thread and reads no
file: it ranks positions and term ids, and a docs hit's text is read by the live index
(`live.texts`) before the answer is rendered (checked in `tests/promises/test_gates.py`).

A pipeline of five packages, each importing only those before it:
`text` (terms and queries) -> `chunks` (sections, windows) -> `engine` (BM25F postings and
scores) -> `search` (the retriever and the retrieval policy: the typed `Answer`) -> `render`
(the answer as text and as structured content).
"""
