"""What each surface asks, one request type a question (`SearchRequest`, with its `SearchKind`
and `Scope`; `PathRequest`, `ReadRequest`, `PinnedRequest`), all answered by `live.answers`, and
the one typed result a search produces (`Answer`, with its `Freshness` and each partial root's
`RootCondition`, the `Method` that answered and, when nothing matched, the `Miss`): the text body
and the structured content are both rendered from it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Literal, NewType, get_args

from corpus.catalog import Change, Corpus
from corpus.files import CorpusFile
from corpus.identity import split_display
from retrieval.chunks.units import Unit
from retrieval.search.links import LinkTo
from retrieval.search.nearest import Nearest
from retrieval.search.retriever import RetrievedDocument
from retrieval.text.query import Query


class SearchKind(str, Enum):
    """What one search tool searches, and how many hits it may return."""

    SECTIONS = "sections"
    """Heading sections of the searchable `.AGENTS` files (`context_search`)."""
    WINDOWS = "windows"
    """~500-word windows of every file (`search_docs`)."""

    @property
    def default_k(self) -> int:
        return 3 if self is SearchKind.SECTIONS else 5

    @property
    def max_k(self) -> int:
        return 20 if self is SearchKind.SECTIONS else 10

    def clamp_k(self, k: int | None) -> int:
        """`k` within 1 and `max_k` (the default when not given)."""
        return clamp(self.default_k if k is None else k, 1, self.max_k)


SECTIONS, WINDOWS = SearchKind.SECTIONS, SearchKind.WINDOWS


class TextEnum(str, Enum):
    """An enum whose members are strings shown as they are written: `str()` and f-strings give
    the value on every Python (as 3.11's `StrEnum`, which 3.10 lacks, does)."""

    def __str__(self) -> str:
        return str(self.value)


class Method(TextEnum):
    """Which method answered a search (the retrieval policy, docs/retrieval.md): STATUS's and the
    structured result's `method`."""

    PATH = "path"
    """The query names a file: that file's units."""
    PHRASE = "phrase"
    """Only units holding the query's quoted phrases as written."""
    BM25_RELAXED = "bm25-relaxed"
    """The phrases matched nothing: their words, searched without the quotes."""
    BM25 = "bm25"
    """Ranked keyword search."""
    OUTLINE = "outline"
    """Nothing matched: the nearest headings and files."""
    APPLIES = "applies"
    """`context_for_path`: the sections that apply to a source path."""


class Miss(TextEnum):
    """Why an `outline` answer found nothing (`Answer.miss`), as its nearest-list header says it."""

    NO_MATCH = "no word of the query matched"
    NO_MATCH_FILTERED = "no word of the query matched within the filter"
    NO_WORDS = "the query has no searchable words"
    FILTER = "the filter excluded everything; these are from all files"
    DEADLINE = "the deadline passed before anything matched"


def clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


Detail = Literal["paths", "snippets", "sections"]
"""What each hit shows: where it is (cheapest), its best lines, or its whole text. The one list of
them: the tools' `detail` parameter, `agents-context search --detail` and `Page` all take it."""
DETAILS: tuple[Detail, ...] = get_args(Detail)
DEFAULT_DETAIL: Detail = "sections"
DEFAULT_MAX_TOKENS = 4000
DEADLINE_S = 5.0
"""A search still running after this long answers with its best results so far (`--deadline-ms`)."""
EMPTY_QUERY = "query is required: pass a non-empty 'query' string"
EMPTY_PATH = "path is required: pass the source file's path, e.g. 'src/api/auth.py'"


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchRequest:
    """One search, as `context_search`, `search_docs`, `agents-context search` and `eval` ask for
    it: what to search, and how to show what is found. Every search surface builds it; the
    policy, `live.answers` and the rendering all read it."""

    query: str
    kind: SearchKind = SearchKind.SECTIONS
    k: int | None = None
    """Hits per page: the kind's default when None, else within its range (`SearchKind.clamp_k`)."""
    offset: int = 0
    path_prefix: str | None = None
    root: str | None = None
    """Only this root (a label)."""
    detail: Detail = DEFAULT_DETAIL
    max_tokens: int = DEFAULT_MAX_TOKENS
    generation: int | None = None
    """The generation the caller's previous page came from: the answer says if it moved on."""
    explain: bool = False
    """The structured result says why each hit matched."""
    deadline_s: float = DEADLINE_S
    variants: tuple[str, ...] = ()
    """More ways to say `query` (the tools' `queries`): each is searched, and the lists are fused by
    reciprocal rank (`retrieval.search.fusion`)."""

    @property
    def scope(self) -> Scope:
        return Scope(self.kind, self.path_prefix, self.root)

    @property
    def page_size(self) -> int:
        return self.kind.clamp_k(self.k)


@dataclass(frozen=True, slots=True, kw_only=True)
class PathRequest:
    """`context_for_path`: the rules that apply to one source file, shown as a search's hits are.
    A relative `path` is taken from the server's working folder (`corpus.roots.relative_sources`,
    which the hook asks too)."""

    path: str
    detail: Detail = DEFAULT_DETAIL
    max_tokens: int = DEFAULT_MAX_TOKENS


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadRequest:
    """`read_context` and `agents-context read`: a file by any name an agent might use for it, then
    one section of it or a line range, read from disk now."""

    name: str
    section: str | None = None
    start: int | None = None
    end: int | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS


def _nothing_loaded(_: Corpus) -> Mapping[str, str]:
    return {}


@dataclass(frozen=True, slots=True, kw_only=True)
class PinnedRequest:
    """`pinned_context`, the tool and the prompt: the pinned files whole within `budget` bytes,
    then what can be searched. `loaded` gives the files the client put into the model's context
    itself (by display path, with how), named rather than repeated; `client` is its name."""

    budget: int
    client: str = ""
    loaded: Callable[[Corpus], Mapping[str, str]] = _nothing_loaded


@dataclass(frozen=True, slots=True)
class Scope:
    """What one search covers: sections or windows, filtered by path prefix and root label."""

    kind: SearchKind
    path_prefix: str | None = None
    root: str | None = None

    def allows(self, unit: Unit) -> bool:
        return self.allows_path(unit.path)

    def allows_file(self, f: CorpusFile) -> bool:
        if self.kind is SECTIONS and not f.searchable:
            return False
        return self.allows_path(f.path)

    @property
    def filtered(self) -> bool:
        return bool(self.path_prefix or self.root)

    def allows_path(self, path: str) -> bool:
        label, rel = split_display(path)
        if self.root is not None and label != self.root:
            return False
        if self.path_prefix:
            prefix = self.path_prefix.replace("\\", "/").removeprefix("./")
            return path.startswith(prefix) or (rel if "/" in path else path).startswith(prefix)
        return True


class Phase(Enum):
    """What a root's first indexing does (its value is how STATUS and `context_status` say it)."""

    INDEXING = "indexing"
    """Reading the files."""
    CHECKING = "checking"
    """Checking a cached index against the files' stat."""


@dataclass(frozen=True, slots=True)
class RootCondition:
    """Why answers from a root are partial: its first indexing runs (`phase`, with `done` of
    `total` files read once they are known), or its files change faster than they settle
    (`changing`: answers come from the last complete generation). Said as `label:12/30`,
    `label:checking` or `label:changing` only where it is rendered (`retrieval.render.grammar`)."""

    label: str
    phase: Phase | None = None
    """None once the root's first indexing is done."""
    done: int = 0
    total: int = 0
    """0 until the files to read are known."""
    changing: bool = False

    @property
    def building(self) -> bool:
        return self.phase is not None

    @property
    def counted(self) -> bool:
        """Whether the files to read are known, so it says how far it got (`done/total`)."""
        return self.total > 0


@dataclass(frozen=True, slots=True)
class Freshness:
    """How current an answer is: the STATUS fields `gen`, `fresh_as_of` and `changed`."""

    generation: int
    fresh_as_of: float | None
    """None while no searched root has been indexed once (then `indexing` names them)."""
    last: Change | None = None
    """The last update applied (None if nothing changed since start-up)."""
    indexing: tuple[RootCondition, ...] = ()
    """Each searched root still being indexed, then each whose files are still changing (the
    answer is partial)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """One search's result: the page of hits and everything its rendering says about them."""

    docs: list[RetrievedDocument]
    """The page: hits `offset` to `offset + k`."""
    method: Method
    fallback_reason: str | None = None
    candidates: int = 0
    """Units that matched (for a phrase query, that hold every phrase word), before `k` and
    `offset` cut the list."""
    partial: bool = False
    nearest: list[Nearest] = field(default_factory=list)
    elapsed_ms: float = 0.0
    clipped: bool = False
    """The query was longer than `MAX_QUERY_CHARS` or `MAX_QUERY_TERMS` and was cut."""
    more: bool = False
    """Hits exist after this page (counted after copies were skipped and the score floor)."""
    past_end: int | None = None
    """`offset` was past the last hit: how many hits there are in all."""
    miss: Miss | None = None
    """`outline` answers: why nothing matched, in a few words."""
    query: Query | None = None
    """The query as parsed (once): its terms pick snippet lines; its quoted phrases are what a
    `bm25-relaxed` answer dropped."""
    links: Mapping[str, tuple[LinkTo, ...]] = field(default_factory=dict)
    """The corpus sections each hit (by unit id) links to."""
    reasons: Mapping[str, str] | None = None
    """`context_for_path`: why each hit (by unit id) applies."""
    freshness: Freshness | None = None
    """Set by whoever searched a live index: the generation the answer comes from."""
    pinned: frozenset[str] = frozenset()
    """Display paths of the hits' files that are pinned (their blocks say `pinned="true"`)."""

    @property
    def dropped(self) -> tuple[str, ...]:
        """The quoted phrases a `bm25-relaxed` answer searched without their quotes."""
        return self.query.quoted if self.query is not None and self.method is Method.BM25_RELAXED else ()


Held = NewType("Held", Answer)
"""An `Answer` whose every hit holds its text. Only the live index makes one (`live.answers.holding`
reads a docs hit's lines from its file; `live.texts.in_memory` checks hits whose text is in memory),
and rendering takes nothing else: rendering before the text is held is a type error, not a
`NotHeld` at run time."""
