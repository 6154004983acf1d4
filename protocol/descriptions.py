"""What each tool tells a model: its description, built per server from what it serves (the
folders as they are on disk, the pinned files, each docs root with its size), and the
descriptions of its parameters, from which the tools' input schemas are built. And each tool as
`tools/list` gives it (`listed`): what clients validate, without what only costs bytes."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any

from mcp.types import Tool
from pydantic import Field

from corpus.catalog import Corpus
from corpus.identity import file_uri
from retrieval.render import briefing
from retrieval.render.hits import MAX_MAX_TOKENS, MIN_MAX_TOKENS
from retrieval.search import answer
from retrieval.search.answer import SECTIONS, WINDOWS
from retrieval.search.fusion import MAX_QUERIES


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


# --- tools/list -----------------------------------------------------------------------------

_SUBSCHEMAS = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")
_NOTES = ("title", "description", "default", "examples")
"""Annotations: what a schema says about a value without constraining it."""
_DEFS = "#/$defs/"


def listed(tool: Tool) -> Tool:
    """The tool as `tools/list` gives it: its input schema without titles (each repeats its
    property's name) or null defaults; its output schema as clients validate structured content,
    types, `required` and every constraint, without annotations (every field is documented in
    docs/contracts.md), each subschema written once (`inline_defs`, `shared_defs`). Nothing a
    validator reads is lost, nor a description a model reads; a nullable value stays an `anyOf`
    with null (a `type` list is legal JSON Schema but less portable: the Inspector's --strict
    flags it). Computed once per schema (a search tool's takes milliseconds)."""
    inputs, outputs = _listed(json.dumps(tool.input_schema), json.dumps(tool.output_schema))  # key order kept
    return tool.model_copy(update={"input_schema": inputs, "output_schema": outputs})


@lru_cache(maxsize=64)
def _listed(inputs: str, outputs: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    output_schema = json.loads(outputs)
    return (
        bounds_inside(lean(json.loads(inputs), keep=("description", "default", "examples"))),
        shared_defs(lean(inline_defs(output_schema), keep=())) if output_schema is not None else None,
    )


_BOUNDS = {
    **dict.fromkeys(("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"), ("integer", "number")),
    **dict.fromkeys(("minItems", "maxItems"), ("array",)),
}
"""Each bound, and the types of the branch it belongs in."""


def bounds_inside(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each nullable value's bounds moved into the branch of the type they bound:
    `{"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]}`. Beside an `anyOf`, a
    bound applies to no type in particular, which strict validators (Gemini CLI's) warn about
    on every call."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return schema
    moved: dict[str, Any] = {}
    for name, prop in properties.items():
        options = prop.get("anyOf") if isinstance(prop, dict) else None
        bounds = {k: v for k, v in prop.items() if k in _BOUNDS} if isinstance(prop, dict) else {}
        if not isinstance(options, list) or not bounds:
            moved[name] = prop
            continue
        moved[name] = {k: v for k, v in prop.items() if k not in _BOUNDS} | {
            "anyOf": [_bounded(o, bounds) for o in options]
        }
    return {**schema, "properties": moved}


def _bounded(option: Any, bounds: Mapping[str, Any]) -> Any:
    """One `anyOf` branch with the bounds that apply to its type."""
    if not isinstance(option, dict):
        return option
    return option | {k: v for k, v in bounds.items() if option.get("type") in _BOUNDS[k]}


def lean(schema: Mapping[str, Any], keep: Collection[str]) -> dict[str, Any]:
    """`schema` without the annotations not in `keep`, and never a null default."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _NOTES and (key not in keep or (key == "default" and value is None)):
            continue
        if key in _SUBSCHEMAS and isinstance(value, Mapping):
            out[key] = lean(value, keep)
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [lean(v, keep) if isinstance(v, Mapping) else v for v in value]
        elif key in _SCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {name: lean(v, keep) if isinstance(v, Mapping) else v for name, v in value.items()}
        else:
            out[key] = value
    return out


def inline_defs(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each `$defs` entry that is used once, and refers to no definition itself,
    written where it is used, until none is left (a recursive definition stays)."""
    while True:
        defs: dict[str, Any] = schema.get("$defs", {})
        uses: dict[str, int] = {}
        _count_refs(schema, uses)
        name = next((n for n in defs if uses.get(n) == 1 and not _has_ref(defs[n])), None)
        if name is None:
            return schema
        rest = {k: v for k, v in defs.items() if k != name}
        body = {k: v for k, v in schema.items() if k != "$defs"}
        schema = _replace_ref(body, _DEFS + name, defs[name])
        if rest:
            schema["$defs"] = {k: _replace_ref(v, _DEFS + name, defs[name]) for k, v in rest.items()}


def shared_defs(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each subschema it repeats, where a reference is shorter than the copies,
    written once in `$defs` and referred to, the biggest saving first, until none is left:
    `{"anyOf": [{"type": "string"}, {"type": "null"}]}`, written five times, becomes the
    definition `nstr` and five references to it."""
    defs: dict[str, Any] = dict(schema.get("$defs", {}))
    body = {k: v for k, v in schema.items() if k != "$defs"}
    while True:
        counts: Counter[str] = Counter()
        for tree in (body, *defs.values()):
            for node in _subschemas(tree):
                if "$ref" not in node:
                    counts[_canonical(node)] += 1
        best: tuple[int, str, str] = (0, "", "")
        for text, n in counts.items():
            name = _name(json.loads(text), defs)
            saving = n * (len(text) - len(_canonical({"$ref": _DEFS + name}))) - len(text) - len(name) - 4
            if n > 1 and saving > best[0]:
                best = (saving, text, name)
        _, text, name = best
        if not text:
            break
        node = json.loads(text)
        body = _replace_node(body, node, {"$ref": _DEFS + name})
        defs = {k: _replace_node(v, node, {"$ref": _DEFS + name}) for k, v in defs.items()}
        defs[name] = node
    return {**body, "$defs": defs} if defs else body


_SHORT = {"integer": "int", "string": "str", "number": "num", "boolean": "bool", "object": "obj", "array": "list"}


def _name(node: Mapping[str, Any], taken: Collection[str]) -> str:
    """A short name saying what a shared subschema is: `nint` (an integer or null), `strs` (a list
    of strings), else `def`; numbered when taken."""
    options = node.get("anyOf")
    kind = node.get("type")
    base = "def"
    if isinstance(options, list) and len(options) == 2 and options[1] == {"type": "null"}:
        first = options[0]
        if isinstance(first, dict) and set(first) == {"type"} and first["type"] in _SHORT:
            base = f"n{_SHORT[first['type']]}"
    elif kind == "array" and set(node) == {"type", "items"}:
        items = node["items"]
        if isinstance(items, dict) and set(items) == {"type"} and items["type"] in _SHORT:
            base = f"{_SHORT[items['type']]}s"
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}{n}"
    return name


def _subschemas(node: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every schema inside `node` (not `node` itself), in the places a schema goes."""
    for key, value in node.items():
        inner: list[object] = []
        if key in _SUBSCHEMAS:
            inner = [value]
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            inner = list(value)
        elif key in _SCHEMA_MAPS and key not in ("$defs", "definitions") and isinstance(value, Mapping):
            inner = list(value.values())
        for sub in inner:
            if isinstance(sub, Mapping):
                yield sub
                yield from _subschemas(sub)


def _replace_node(node: Mapping[str, Any], old: object, new: dict[str, Any]) -> dict[str, Any]:
    """`node` with every subschema equal to `old` (not `node` itself) replaced by `new`."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _SUBSCHEMAS and isinstance(value, Mapping):
            out[key] = new if value == old else _replace_node(value, old, new)
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [new if v == old else _replace_node(v, old, new) if isinstance(v, Mapping) else v for v in value]
        elif key in _SCHEMA_MAPS and key not in ("$defs", "definitions") and isinstance(value, Mapping):
            out[key] = {
                n: new if v == old else _replace_node(v, old, new) if isinstance(v, Mapping) else v
                for n, v in value.items()
            }
        else:
            out[key] = value
    return out


def _canonical(node: object) -> str:
    return json.dumps(node, sort_keys=True, separators=(",", ":"))


def _count_refs(node: object, uses: dict[str, int]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_DEFS):
            uses[ref.removeprefix(_DEFS)] = uses.get(ref.removeprefix(_DEFS), 0) + 1
        for value in node.values():
            _count_refs(value, uses)
    elif isinstance(node, list):
        for value in node:
            _count_refs(value, uses)


def _has_ref(node: object) -> bool:
    if isinstance(node, dict):
        return "$ref" in node or any(_has_ref(v) for v in node.values())
    return isinstance(node, list) and any(_has_ref(v) for v in node)


def _replace_ref(node: Any, ref: str, definition: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if node.get("$ref") == ref:
            return {**definition, **{k: v for k, v in node.items() if k != "$ref"}}
        return {k: _replace_ref(v, ref, definition) for k, v in node.items()}
    if isinstance(node, list):
        return [_replace_ref(v, ref, definition) for v in node]
    return node


# --- parameters -----------------------------------------------------------------------------

Query = Annotated[
    str,
    Field(description='One concept, in the docs\' words; "quoted phrases" match exactly; a file name finds it.'),
]
Queries = Annotated[
    list[str],
    Field(description="A variant or two: other words, the option's name.", max_length=MAX_QUERIES - 1),
]
# Every number argument advertises its range as `minimum`/`maximum` (what a model should send),
# and is never validated against it: `protocol.arguments.whole_number` clamps a number outside it.
MaxTokens = Annotated[
    int,
    Field(
        description="Budget in tokens, chars/4 (clamped).",
        json_schema_extra={"minimum": MIN_MAX_TOKENS, "maximum": MAX_MAX_TOKENS},
    ),
]
Detail = Annotated[
    answer.Detail,
    Field(description="paths (cheapest), snippets (best lines) or sections (whole text)."),
]
Offset = Annotated[
    int,
    Field(
        description="Hits to skip (clamped): the status line's next_offset.",
        json_schema_extra={"minimum": 0},
    ),
]
Generation = Annotated[
    int | None,
    Field(
        description="The gen= of the page you continue (clamped).",
        json_schema_extra={"minimum": 0},
    ),
]
PathPrefix = Annotated[str | None, Field(description="Only files under this path ('services/').")]
SectionsK = Annotated[
    int,
    Field(
        description="Most sections to return (clamped).",
        json_schema_extra={"minimum": 1, "maximum": SECTIONS.max_k},
    ),
]
WindowsK = Annotated[
    int,
    Field(
        description="Most passages to return (clamped).",
        json_schema_extra={"minimum": 1, "maximum": WINDOWS.max_k},
    ),
]
Explain = Annotated[
    bool,
    Field(description="Why each hit matched, term by term (structured)."),
]
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
    int | None,
    Field(
        description="First line (clamped); past the file's end is an error.",
        json_schema_extra={"minimum": 1},
    ),
]
EndLine = Annotated[
    int | None,
    Field(
        description="Last line (clamped), not before start_line; past the end: the last.",
        json_schema_extra={"minimum": 1},
    ),
]
