"""`read_context` answers (and `agents-context read`): exactly the lines asked for, in one
`<context path section lines>` block within the budget; a cut says where to continue. The lines
are shown through `neutralise` (grammar.py), so none of them reads as a delimiter."""

from __future__ import annotations

from retrieval.render.grammar import (
    MAX_ATTRIBUTE_CHARS,
    Rendered,
    escape_attribute,
    freshness_fields,
    neutralise,
    rendered,
    with_status,
)
from retrieval.render.hits import fit_lines
from retrieval.search.reader import Excerpt
from retrieval.search.request import Freshness


def render_excerpt(excerpt: Excerpt, max_tokens: int, freshness: Freshness | None = None) -> Rendered[None]:
    """A `<context path section lines>` block of exactly what was asked for, within the budget;
    a cut says where to continue (`start_line=`)."""
    f, section = excerpt.file, excerpt.section
    heading = section.heading if section and section.heading else ""
    span = f"{excerpt.start_line}-{excerpt.end_line}"
    shown = escape_attribute(heading, MAX_ATTRIBUTE_CHARS)
    head = f'<context path="{escape_attribute(f.path)}" section="{shown}" lines="{span}">'
    fields: dict[str, object] = {"method": "read", "lines": span}
    if excerpt.others:
        fields["other_sections"] = " ".join(f"#{u.anchor}" for u in excerpt.others)
    if freshness is not None:
        fields.update(freshness_fields(freshness))
    whole = rendered(f"{head}\n{neutralise(excerpt.text)}\n</context>", fields, None)
    limit = max_tokens * 4
    if len(whole.text) <= limit:
        return whole
    lines = [neutralise(line) for line in excerpt.text.split("\n")]
    fields = {**fields, "truncated": 1, "next_line": excerpt.end_line}
    widest = f"[... cut at line {excerpt.end_line} of {span}; continue with start_line={excerpt.end_line}]"
    bare = with_status(f"{head}\n{widest}\n</context>", fields)
    kept = fit_lines(lines, limit - len(bare) - 12) or [lines[0][: max(limit - len(bare) - 12, 1)]]
    last = excerpt.start_line + len(kept) - 1
    fields["next_line"] = last + 1
    marker = f"[... cut at line {last} of {span}; continue with start_line={last + 1}]"
    return rendered(f"{head}\n" + "\n".join(kept) + f"\n{marker}\n</context>", fields, None)
