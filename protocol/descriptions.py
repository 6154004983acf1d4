"""What each tool tells a model: its description, built per server from what it serves (the
folders as they are on disk, the pinned files, each docs root with its size), and its parameters:
their descriptions, the range each number advertises, and how each value is read
(`protocol.arguments`). The tools' input schemas are built from them (`protocol.schemas`)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Annotated, get_args

from pydantic import Field

from corpus.catalog import Corpus
from corpus.identity import file_uri
from protocol.arguments import Whole, choice, flag, strings
from retrieval.render import briefing
from retrieval.render.hits import MAX_MAX_TOKENS, MIN_MAX_TOKENS
from retrieval.search import request
from retrieval.search.fusion import MAX_QUERIES
from retrieval.search.request import SECTIONS, WINDOWS


@dataclass(frozen=True, slots=True)
class Descriptions:
    """The six tools' descriptions for one server."""

    context_search: str
    search_docs: str
    context_for_path: str
    read_context: str
    pinned_context: str
    context_status: str


NAMES_CHARS = 128
"""The most characters of names (folders, pinned files, docs roots) each list in a description
holds before it says `and N more`: whatever the project, `tools/list` stays within 16 KB."""
_LABEL_CHARS = 40


def describe(
    corpus: Corpus, indexing: Collection[str] = (), pinned_budget: int = briefing.PINNED_BUDGET_BYTES
) -> Descriptions:
    """The descriptions for a server over `corpus` as it is at start-up (`indexing`: labels of
    docs roots whose first indexing is still running, so their size is not known yet)."""
    served = briefing.served(corpus, NAMES_CHARS)
    names = briefing.pinned_names(corpus, chars=NAMES_CHARS)
    docs = briefing.listing(briefing.docs_roots(corpus, indexing), chars=NAMES_CHARS)
    agents = corpus.agents_root
    label = agents.label if agents is not None and len(agents.label) <= _LABEL_CHARS else ".AGENTS"
    example = (
        file_uri(agents, "security.md") if agents is not None and label == agents.label else "agents://security.md"
    )
    from_pinned = ' (pinned="true": from a pinned file)' if names else ""
    with_docs = f" and the documentation roots {docs}" if docs else ""
    no_docs = " This server has no documentation roots (--docs): prefer context_search." if not docs else ""
    pinned = (
        f"Return the pinned files ({names}: the rules for every task) in full, then"
        if names
        else "No file was pinned at start-up. Return any pinned files in full, then"
    )
    return Descriptions(
        context_search=f"""\
Search {served} for the sections that best match a query, each a <context path="..." section="..." \
score="..."> block to quote{from_pinned}.

Call it before guessing about a project rule, convention, term or design decision. A miss lists the \
nearest headings and files: retry with the words the documentation would use. The last line is \
the status line [agents-context method=... hits=... gen=...].""",
        search_docs=f"""\
Search {served} (pinned files included){with_docs} in passages of ~500 words. Each \
hit starts "--- <path>#<chunk> (score=...) ---"; a footer gives the cost. Prefer context_search for \
rules; use this for longer explanations and reference docs, with k=3 to 5 or detail="snippets". A \
miss says "(no results)" and lists the nearest files. The last line is a status line \
[agents-context ...].{no_docs}""",
        context_for_path="""\
Get the rules that apply to one source file before you edit it, most specific first: rules whose \
own paths or globs match it (Claude Code, Cursor, Windsurf, Copilot, Kiro, Cline, applies_to), \
AGENTS.md, CLAUDE.md and GEMINI.md files in its folders, a monorepo package's rules, and sections \
whose headings name its folders. Each block says why it applies (applies="claude paths: src/api/**").""",
        read_context=f"""\
Read a file, one section of it or a range of its lines: exactly the text on disk now. path is a \
display path from an answer ({label}/security.md), a URI ({example}#secrets for one section) or a \
path inside {label}/. A cut says where to continue (start_line=); an unknown path answers with the \
closest existing paths.""",
        pinned_context=f"""\
{pinned} the searchable files and their section headings. Call it at the start of a task unless \
the server instructions hold the pinned text, and again after your context was compacted; it is \
always current. Costs the pinned files' size (at most {pinned_budget // 1024} KB).""",
        context_status="""\
Check the index when answers look stale or empty: its health, each root's files, sections and \
windows, skipped files and why, the watcher, the last error, the generation and its freshness.""",
    )


# --- parameters -----------------------------------------------------------------------------
# Every number argument advertises its range as `minimum`/`maximum` (what a model should send),
# and is never refused for being out of it: `protocol.arguments.Whole` clamps it.

Query = Annotated[
    str,
    Field(description='One concept, in the docs\' words; "quoted phrases" match exactly; a file name finds it.'),
]
Queries = Annotated[
    list[str],
    strings(MAX_QUERIES - 1),
    Field(description="A variant or two: other words, the option's name.", max_length=MAX_QUERIES - 1),
]
MaxTokens = Annotated[
    int, Whole(MIN_MAX_TOKENS, MAX_MAX_TOKENS), Field(description="Budget in tokens, chars/4 (clamped).")
]
Detail = Annotated[
    request.Detail,
    choice(get_args(request.Detail)),
    Field(description="paths (cheapest), snippets (best lines) or sections (whole text)."),
]
Offset = Annotated[int, Whole(0), Field(description="Hits to skip (clamped): the status line's next_offset.")]
Generation = Annotated[
    Annotated[int, Whole(0)] | None, Field(description="The gen= of the page you continue (clamped).")
]
PathPrefix = Annotated[str | None, Field(description="Only files under this path ('services/').")]
SectionsK = Annotated[int, Whole(1, SECTIONS.max_k), Field(description="Most sections to return (clamped).")]
WindowsK = Annotated[int, Whole(1, WINDOWS.max_k), Field(description="Most passages to return (clamped).")]
Explain = Annotated[bool, flag, Field(description="Why each hit matched, term by term (structured).")]
AgentsRoot = Annotated[str | None, Field(description="Only this agents root (a display path's first part).")]
AnyRoot = Annotated[str | None, Field(description="Only this root (a display path's first part).")]
SourcePath = Annotated[
    str,
    Field(description="The source file to edit, relative to the project: src/api/auth.py."),
]
ReadPath = Annotated[
    str,
    Field(description="A display path, a URI (#anchor: one section) or a path inside a root."),
]
Section = Annotated[str | None, Field(description="A heading, a trail ('Security > Secrets') or an anchor.")]
StartLine = Annotated[
    Annotated[int, Whole(1)] | None, Field(description="First line (clamped); past the file's end is an error.")
]
EndLine = Annotated[
    Annotated[int, Whole(1)] | None,
    Field(description="Last line (clamped), not before start_line; past the end: the last."),
]
