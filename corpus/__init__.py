"""What is on disk, read-only: the roots and their labels, which files a root serves and which it
refuses (secrets, ignore rules, links that leave it), safe reads of UTF-8 text, the markdown a
file starts with (front matter, lines), and each file's identities (display path, URI).

The bottom layer: it imports nothing else of the project. It never writes, moves or deletes.
"""
