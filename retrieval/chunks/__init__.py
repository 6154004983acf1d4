"""Files to units: heading sections (what `context_search` returns), ~500-word windows (what
`search_docs` returns), their anchors and citations."""
