"""Query expansion from the corpus's own glossary: a query naming a term also searches its synonyms.

Glossary text is any section of a searchable `.AGENTS` file named `glossary.md` (any case, any
folder; `.markdown`, `.mdx`, `.mdc` too) and any section under a heading `Glossary`. Its entries
are read from what authors write there:
- `**Term**: definition`, `**Term:** definition`, `**Term** (aka X, Y) - definition`, `__Term__`,
  with or without a list marker; `**Term**` (or a plain `Term`) over a `: definition` line;
- list items `- Term — definition`, `- Term: definition`, `- Term - definition` (a term of at
  most five words);
- table rows `| Term | Definition |` (a column headed `Aliases`, `Synonyms` or `Also called` lists
  aliases);
- a heading `## Term` over its definition, for a section with no subsections whose first paragraph
  is not one of the above.

An entry's names are the term, the parts of `Term (ABBR)`, `A / B` and `A, B`, and the aliases its
definition gives ("also called X", "also known as X", "aka X", "short for X", "same as X",
"synonyms: X, Y", an abbreviation in parentheses after the term): at most `MAX_ALIASES`, each at most four words.
A query that contains every term of one name gets the other names' terms, each weighing
`SYNONYM_WEIGHT` of an original term (RM3's expansion terms are weighted below the query's too),
at most `MAX_EXPANSION` of them. Terms the query has already are not added again, and a query that
names no entry is searched exactly as written. The definition itself adds no terms: only the
names an author declared equivalent do.

The glossary is read from the sections index itself, again whenever the index's generation moves:
it follows every update of the live index (and a restart from the index cache) with no hook of its
own.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from retrieval.index import BM25Index
from retrieval.sections import INTRO, is_markdown
from retrieval.units import Unit

Tokenize = Callable[[str], Sequence[str]]
Name = tuple[str, ...]
"""A name's terms."""
Names = tuple[Name, ...]

GLOSSARY_HEADINGS = frozenset({"glossary"})
"""Headings (case-folded) whose sections, and subsections, are glossary text in any file."""
SYNONYM_WEIGHT = 0.5
MAX_ALIASES = 4
MAX_NAME_WORDS = 4
MAX_TERM_WORDS = 5
MAX_EXPANSION = 8
"""Expansion terms added to one query, at most."""

_FENCE = re.compile(r"^\s*(```|~~~)")
_LIST = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_BOLD = re.compile(r"^(\*\*|__)(?P<term>[^*]+?)(?P<colon>:?)\1(?P<rest>.*)$")
_PLAIN = re.compile(r"^(?P<term>[^:—–|]{1,80}?)\s*(?::|—|–|\s-\s)\s*(?P<rest>\S.*)$")
_DEFINITION_LINE = re.compile(r"^\s*:\s+(?P<rest>\S.*)$")
_SEPARATOR_ROW = re.compile(r"^\s*\|?\s*:?-{2,}")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_ALIAS = re.compile(
    r"\b(?:also\s+(?:called|known\s+as|written|spelled)|aka|a\.k\.a\.?|short\s+for|same\s+as|"
    r"synonyms?(?:\s+(?:for|of))?|alias(?:es)?|abbreviated(?:\s+as)?|formerly(?:\s+(?:called|known\s+as))?|"
    r"sometimes\s+called|often\s+called|or\s+simply)\b\s*:?\s*(?P<names>[^.;()\n]+)",
    re.IGNORECASE,
)
_ALIAS_COLUMNS = frozenset({"alias", "aliases", "synonym", "synonyms", "also called", "aka", "also known as"})
_SPLIT_NAMES = re.compile(r"\s*(?:,|\s/\s|\bor\b|\band\b)\s*", re.IGNORECASE)
_ABBREVIATION = re.compile(r"[A-Z0-9][A-Z0-9/&.+-]*s?")
_ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.IGNORECASE)
_MARKUP = str.maketrans("", "", '`*_"“”‘’')


@dataclass(frozen=True, slots=True)
class Entry:
    names: tuple[str, ...]
    """The term first, then its other names, as written."""
    definition: str


def is_glossary_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return is_markdown(name) and name.rsplit(".", 1)[0].casefold() == "glossary"


def clean(text: str) -> str:
    """Markdown inline markup out: links keep their text, code and emphasis marks go."""
    return " ".join(_LINK.sub(r"\1", text).translate(_MARKUP).split())


def _names_in(text: str) -> list[str]:
    """`a tenant, org or workspace` -> ["tenant", "org", "workspace"]; items over four words are
    phrases, not names, and are dropped."""
    names = []
    for part in _SPLIT_NAMES.split(clean(text)):
        name = _ARTICLE.sub("", part.strip(" :-—–'"))
        if name and len(name.split()) <= MAX_NAME_WORDS:
            names.append(name)
    return names


def _spelled_out(term: str, definition: str) -> str | None:
    """`SLO` defined as "Service level objective: ..." -> "Service level objective"."""
    if not (_ABBREVIATION.fullmatch(term) and 2 <= len(term) <= MAX_NAME_WORDS + 1):
        return None
    letters = [c for c in term.casefold() if c.isalpha()]
    words = re.findall(r"[^\W_]+", definition)[: len(letters)]
    if len(words) == len(letters) and all(w[0].casefold() == c for w, c in zip(words, letters, strict=True)):
        return " ".join(words)
    return None


def entry(term: str, definition: str, aliases: Sequence[str] = ()) -> Entry | None:
    """An entry from a term as written (`Pull request (PR)`, `tenant / workspace`) and its
    definition, with the aliases the definition names."""
    term = clean(term).rstrip(":").strip()
    if not term or len(term.split()) > MAX_TERM_WORDS:
        return None
    head, paren, inside = term.partition("(")
    names = _names_in(head)
    if paren:
        names += _names_in(inside.rstrip(")"))
    definition = clean(definition)
    for match in _ALIAS.finditer(definition):
        names += _names_in(match.group("names"))
    spelled = _spelled_out(names[0] if names else "", definition)
    if spelled:
        names.append(spelled)
    lead = re.match(r"^\(([^)]*)\)", definition)  # **Pull request** (PR): ...
    if lead:
        names += [n for n in _names_in(lead.group(1)) if _ABBREVIATION.fullmatch(n)]
        definition = definition[lead.end() :]
    for alias in aliases:
        names += _names_in(alias)
    unique = list(dict.fromkeys(n for n in names if n))
    if not unique:
        return None
    return Entry(tuple(unique[: 1 + MAX_ALIASES]), definition.lstrip(":—–-) ").strip())


def _body(unit: Unit) -> list[str]:
    """The unit's lines after its heading (a setext underline too), fenced code left out."""
    lines = unit.text.split("\n")
    if unit.heading not in (None, INTRO) and lines:
        lines = lines[1:]
        if lines and re.fullmatch(r"\s*(=+|-+)\s*", lines[0]):
            lines = lines[1:]
    kept, fenced = [], False
    for line in lines:
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            kept.append(line)
    return kept


def _table_entries(rows: Sequence[str]) -> Iterator[Entry]:
    cells = [[c.strip() for c in row.strip().strip("|").split("|")] for row in rows]
    header: list[str] = []
    if len(cells) >= 2 and _SEPARATOR_ROW.match(rows[1]):
        header, cells = [clean(c).casefold() for c in cells[0]], cells[2:]
    alias_columns = [i for i, name in enumerate(header) if name in _ALIAS_COLUMNS]
    for row in cells:
        if len(row) < 2:
            continue
        aliases = [row[i] for i in alias_columns if i < len(row)]
        rest = [c for i, c in enumerate(row[1:], start=1) if i not in alias_columns]
        found = entry(row[0], " ".join(rest), aliases)
        if found:
            yield found


def inline_entries(lines: Sequence[str]) -> Iterator[Entry]:
    """Entries written as bold terms, list items, definition lists and table rows."""
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("|"):
            j = i
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                j += 1
            yield from _table_entries(lines[i:j])
            i = j
            continue
        listed = _LIST.match(line)
        text = line[listed.end() :] if listed else line.strip()
        following = lines[i + 1] if i + 1 < len(lines) else ""
        after = _DEFINITION_LINE.match(following)
        found: Entry | None = None
        bold = _BOLD.match(text)
        if bold:
            rest = bold.group("rest").strip()
            below = not rest.lstrip("(:—–- ") and after is not None  # **Term** over ": definition"
            if below and after:
                rest, i = f"{rest} {after.group('rest')}".strip(), i + 1
            if below or bold.group("colon") or rest[:1] in ("(", ":", "—", "–", "-") or not rest:
                found = entry(bold.group("term"), rest)
        elif after and text and not _DEFINITION_LINE.match(line):  # Term over ": definition"
            found, i = entry(text, after.group("rest")), i + 1
        elif listed:
            plain = _PLAIN.match(text)
            if plain:
                found = entry(plain.group("term"), plain.group("rest"))
        if found:
            yield found
        i += 1


def _first_paragraph(lines: Sequence[str]) -> list[str]:
    paragraph: list[str] = []
    for line in lines:
        if not line.strip():
            if paragraph:
                break
            continue
        paragraph.append(line)
    return paragraph


def entries(units: Sequence[Unit], headings: frozenset[str] = GLOSSARY_HEADINGS) -> list[Entry]:
    """The glossary entries of one file's sections (none unless it has glossary text)."""
    whole = bool(units) and is_glossary_file(units[0].path)
    parents = {u.trail[:-1] for u in units if len(u.trail) > 1}
    found: list[Entry] = []
    for unit in units:
        if not (whole or any(h.casefold() in headings for h in unit.trail)):
            continue
        body = _body(unit)
        found += inline_entries(body)
        heading = unit.heading
        if heading in (None, INTRO) or unit.trail in parents or heading.casefold() in headings:
            continue
        first = _first_paragraph(body)
        defined = None if any(inline_entries(first)) else entry(heading, " ".join(first))
        if defined:
            found.append(defined)
    return found


class Glossary:
    """The expansions of an index's glossary text, rebuilt when the index changes."""

    def __init__(
        self,
        sections: BM25Index[Unit],
        tokenize: Tokenize,
        headings: frozenset[str] = GLOSSARY_HEADINGS,
    ) -> None:
        self.sections = sections
        self.tokenize = tokenize
        self.headings = headings
        self._built: tuple[int, dict[str, list[tuple[Name, Names]]]] = (-1, {})
        self._lock = threading.Lock()

    def entries(self) -> list[Entry]:
        """Every entry of the index's glossary text, file by file in index order."""
        found: list[Entry] = []
        for group in self.sections.groups():
            units = self.sections.payloads(group)
            if units and (
                is_glossary_file(units[0].path) or any(h.casefold() in self.headings for u in units for h in u.trail)
            ):
                found += entries(units, self.headings)
        return found

    def _lookup(self) -> dict[str, list[tuple[Name, Names]]]:
        """First term of each name -> (the name's terms, every name of its entry)."""
        generation, lookup = self._built
        if generation == self.sections.generation:
            return lookup
        with self._lock:
            generation = self.sections.generation
            lookup = {}
            for e in self.entries():
                names = tuple(dict.fromkeys(t for n in e.names if (t := tuple(self.tokenize(n)))))
                if len(names) < 2:
                    continue  # a term with no other name: nothing to expand to
                for name in names:
                    lookup.setdefault(name[0], []).append((name, names))
            self._built = (generation, lookup)
            return lookup

    def expand(self, query: Sequence[str]) -> tuple[list[str], list[float]]:
        """The query's terms (weight 1), then the terms of what the glossary says they mean."""
        terms, weights = list(query), [1.0] * len(query)
        lookup = self._lookup()
        if not lookup:
            return terms, weights
        present = set(query)
        added: dict[str, float] = {}
        for first in dict.fromkeys(query):
            for name, names in lookup.get(first, ()):
                if not present.issuperset(name):
                    continue
                for term in (t for other in names if other != name for t in other):
                    if term not in present:
                        added[term] = SYNONYM_WEIGHT
        for term, weight in list(added.items())[:MAX_EXPANSION]:
            terms.append(term)
            weights.append(weight)
        return terms, weights

    def __call__(self, index: BM25Index[Unit], query: Sequence[str]) -> tuple[list[str], list[float]]:
        """An `Expander`: the glossary is always the sections index's, whichever index is searched."""
        return self.expand(query)
