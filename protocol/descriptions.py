"""What each tool tells a model: its description and the descriptions of its parameters. The
tools' input schemas are built from these `Annotated` types."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from retrieval.render.hits import DEFAULT_MAX_TOKENS, MAX_MAX_TOKENS, MIN_MAX_TOKENS
from retrieval.search.answer import SECTIONS, WINDOWS

CONTEXT_SEARCH_DESCRIPTION = f"""\
Search this project's .AGENTS/ documentation (rules, security policy, architecture, glossary, \
per-service notes) and get the best-matching sections, each in a <context path="..." \
section="..." score="..."> block you can quote; the structured result adds a citation \
(path:lines (heading trail)) and a section URI for each hit.

Call it before guessing about a project rule, convention, term or design decision. Use a few \
specific words ("secrets policy", "deploy rollback"); put "exact phrases" in double quotes; a file \
name (security.md) returns that file's sections. If nothing matches you get the nearest headings \
and files instead: try the words the documentation would use. The pinned files (overview, \
conventions) are not searched here: call pinned_context for them.

Cost: k (default {SECTIONS.default_k}, 1-{SECTIONS.max_k}) is the most sections returned; each is usually \
50-500 words. max_tokens (default {DEFAULT_MAX_TOKENS}) caps the whole answer; detail="paths" (where each \
hit is) or "snippets" (its best lines) costs far less than "sections". If hits were left out, the status line says \
next_offset=K: call again with offset=K and generation=<gen> for the next page. The last line is \
a status line [agents-context method=... hits=... gen=... fresh_as_of=...]."""

SEARCH_DOCS_DESCRIPTION = f"""\
Search all of this project's documentation in overlapping passages of about 500 words: every \
.AGENTS/ file (pinned ones included) and any documentation folders the server was started with \
(--docs). Each hit starts with "--- <path>#<chunk> (score=...) ---"; a footer says what the \
answer cost, e.g. [3 hits, ~9000 chars (~2250 tokens)].

Prefer context_search for project rules and conventions: its sections are smaller. Use \
search_docs for longer explanations and reference documentation. One passage is ~500 words, \
about 700 tokens: prefer k=3 or 5 (default {WINDOWS.default_k}, 1-{WINDOWS.max_k}), or detail="snippets" / \
"paths", and synthesise rather than search again. root= and path_prefix= narrow the search; "quoted phrases" \
must match as written; offset= pages (see next_offset in the status line). A miss says \
"(no results)" and lists the nearest files. The last line is a status line [agents-context ...]."""

CONTEXT_FOR_PATH_DESCRIPTION = f"""\
Get the project rules that apply to one source file before you edit it: sections of rule files \
whose front matter globs match it (Cursor's globs/applies_to), AGENTS.md files in its folders, \
the package rules of a monorepo package that contains it, and sections whose headings or file \
names name its folders, most specific first. Each block says why it applies \
(applies="globs: src/api/**"). One call replaces several searches when you start work on a \
file; max_tokens (default {DEFAULT_MAX_TOKENS}) caps the answer and detail="paths" lists them cheaply."""

READ_CONTEXT_DESCRIPTION = f"""\
Read a documentation file, one section of it, or a range of its lines: exactly the text on disk \
now. path is a display path from a search answer (.AGENTS/security.md), a URI \
(agents://security.md, or agents://security.md#secrets for one section) or a path inside \
.AGENTS; section is a heading, a heading trail ("Security > Secrets") or an anchor; start_line \
and end_line pick lines. Use it to read more around a search hit or a heading from the \
instructions' list. max_tokens (default {DEFAULT_MAX_TOKENS}) caps the answer; a cut says where to continue \
(start_line=). An unknown path answers with the closest existing paths."""

PINNED_CONTEXT_DESCRIPTION = """\
Return the project's pinned .AGENTS/ files (overview and conventions: the rules that apply to \
every task) in full, then the list of searchable files and their section headings. Call it once \
at the start of a task unless the server instructions already contain the pinned text; it is \
always current, while the instructions are a start-up snapshot. Costs the size of the pinned \
files (at most 32 KB)."""


CONTEXT_STATUS_DESCRIPTION = """\
Check the index before relying on it (or when answers look stale or empty): whether search is \
enabled and healthy, each root's files, sections and windows, skipped files and why, the file \
watcher's mode and health, the last error, the index generation and how fresh it is. Cheap; no \
arguments. Every search answer's status line already carries gen= and fresh_as_of=."""


Query = Annotated[
    str,
    Field(description='A few specific words. "Quoted phrases" must match as written; a file name returns that file.'),
]
# Every number argument advertises its range as `minimum`/`maximum` (what a model should send),
# and is never validated against it: `protocol.arguments.whole_number` clamps a number outside it.
MaxTokens = Annotated[
    int,
    Field(
        description="Budget for the whole answer in tokens (characters / 4), 200-10000 (clamped).",
        json_schema_extra={"minimum": MIN_MAX_TOKENS, "maximum": MAX_MAX_TOKENS},
    ),
]
Detail = Annotated[
    Literal["paths", "snippets", "sections"],
    Field(description="paths: where each hit is (cheapest); snippets: its best lines; sections: its whole text."),
]
Offset = Annotated[
    int,
    Field(
        description="Skip this many hits, 0 or more (clamped): the next_offset of the last STATUS line.",
        json_schema_extra={"minimum": 0},
    ),
]
Generation = Annotated[
    int | None,
    Field(
        description="The gen= of the page you are continuing, 0 or more (clamped); the answer says if the index "
        "changed since.",
        json_schema_extra={"minimum": 0},
    ),
]
PathPrefix = Annotated[
    str | None, Field(description="Only files under this path, e.g. 'services/' or '.AGENTS/services/'.")
]
SectionsK = Annotated[
    int,
    Field(
        description=f"Most sections to return, 1-{SECTIONS.max_k} (clamped).",
        json_schema_extra={"minimum": 1, "maximum": SECTIONS.max_k},
    ),
]
WindowsK = Annotated[
    int,
    Field(
        description=f"Most passages to return, 1-{WINDOWS.max_k} (clamped).",
        json_schema_extra={"minimum": 1, "maximum": WINDOWS.max_k},
    ),
]
AgentsRoot = Annotated[str | None, Field(description="Only this .AGENTS root, by label (several roots: a monorepo).")]
AnyRoot = Annotated[str | None, Field(description="Only this root, by label: '.AGENTS' or a docs root's name.")]
SourcePath = Annotated[
    str,
    Field(description="The source file you are about to edit, relative to the project: src/api/auth.py."),
]
ReadPath = Annotated[
    str,
    Field(
        description="A display path (.AGENTS/security.md), a URI (agents://security.md#secrets) "
        "or a path inside .AGENTS."
    ),
]
Section = Annotated[str | None, Field(description="A heading, a trail ('Security > Secrets') or an anchor.")]
StartLine = Annotated[
    int | None,
    Field(
        description="First line to return, 1 or more (clamped); a line past the file's end is an error.",
        json_schema_extra={"minimum": 1},
    ),
]
EndLine = Annotated[
    int | None,
    Field(
        description="Last line to return (inclusive), 1 or more (clamped), not before start_line; past the "
        "file's end means its last line.",
        json_schema_extra={"minimum": 1},
    ),
]
