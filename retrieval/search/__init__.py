"""A query to an `Answer`: the retriever (ranking, phrases, copies, the score floor), the
retrieval policy (which method answers, paging, the nearest headings on a miss), the rules that
apply to a source file, links between files, and reading a file or section by any name."""
