"""Text to ranked, rendered answers, over a corpus snapshot. It starts no thread and opens no file
itself; but the index holds no docs file's text, so a docs unit's text is read from disk through
`corpus` (`CorpusFile.content`) when retrieval asks for it (`Unit.text`, `Unit.holding`).

A pipeline of five packages, each importing only those before it:
`text` (terms and queries) -> `chunks` (sections, windows) -> `engine` (BM25F postings and
scores) -> `search` (the retriever and the retrieval policy: the typed `Answer`) -> `render`
(the answer as text and as structured content).
"""
