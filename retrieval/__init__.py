"""Text to ranked, rendered answers, over a corpus snapshot: no threads, no file system access.

A pipeline of five packages, each importing only those before it:
`text` (terms and queries) -> `chunks` (sections, windows) -> `engine` (BM25F postings and
scores) -> `search` (the retriever and the retrieval policy: the typed `Answer`) -> `render`
(the answer as text and as structured content).
"""
