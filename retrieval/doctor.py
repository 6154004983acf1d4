"""`agents-context doctor`: lint a corpus along seed 000's failure modes.

Each finding names the file and lines and says how to fix it. Errors (exit status 1) are what
breaks an agent's work: text that looks like a credential, links that point nowhere, pinned files
cut by their budget. Everything else is a warning: it makes the corpus harder to retrieve from.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Callable, Sequence
from urllib.parse import unquote

from pydantic import BaseModel, Field

from corpus.catalog import Corpus, CorpusFile
from retrieval import briefing
from retrieval.index import BM25Index
from retrieval.library import Library
from retrieval.links import hrefs
from retrieval.sections import INTRO
from retrieval.units import Unit, sections_of

LARGE_WORDS = 800
"""A section longer than this is a poor search unit: it costs ~1,000 tokens each time it is hit."""
SMALL_WORDS = 5
"""A leaf section with fewer words than this carries too little to be found or to be useful."""
VAGUE = frozenset(
    "notes misc miscellaneous other others general details more info information stuff todo "
    "various untitled introduction intro overview".split()
)


class Finding(BaseModel):
    severity: str = Field(description="error (exit status 1) or warning.")
    check: str = Field(description="Which check found it.")
    path: str = Field(description="Display path of the file.")
    start_line: int | None = None
    end_line: int | None = None
    message: str = Field(description="What is wrong.")
    fix: str = Field(description="How to fix it.")


class Report(BaseModel):
    files: int
    sections: int
    errors: int
    warnings: int
    findings: list[Finding]
    instructions: str = Field(description="The server instructions exactly as a Claude Code model would see them.")


def diagnose(
    corpus: Corpus,
    library: Library,
    pinned_budget: int = briefing.PINNED_BUDGET_BYTES,
    instructions_budget: int = briefing.INSTRUCTIONS_BUDGET_CHARS,
) -> Report:
    findings: list[Finding] = []
    searchable = briefing.searchable(corpus)
    all_sections = 0
    for f in sorted(corpus.files.values(), key=lambda f: f.path):
        units = sections_of(f)
        if f.root.kind.value == "agents":
            all_sections += len(units)
            findings += _structure(f, units, library.tokenize)
        findings += _secrets(f) + _links(f, units, corpus)
    findings += _budgets(corpus, pinned_budget, instructions_budget)
    findings += [
        Finding(
            severity="warning",
            check="skipped",
            path=f"{s.root.label}/{s.rel}",
            message=f"not served: {s.reason}",
            fix="move it out of the root, or fix it if it should be served",
        )
        for s in corpus.skipped
    ]
    findings += _self_retrieval(searchable, library)
    has_docs = any(r.kind.value == "docs" for r in corpus.roots)
    shown = briefing.instructions(corpus, instructions_budget, has_docs)[: briefing.INSTRUCTIONS_BUDGET_CHARS]
    return Report(
        files=len(corpus.files),
        sections=all_sections,
        errors=sum(x.severity == "error" for x in findings),
        warnings=sum(x.severity == "warning" for x in findings),
        findings=findings,
        instructions=shown,
    )


def _warn(
    f: CorpusFile | str, check: str, message: str, fix: str, unit: Unit | None = None, error: bool = False
) -> Finding:
    return Finding(
        severity="error" if error else "warning",
        check=check,
        path=f if isinstance(f, str) else f.path,
        start_line=unit.start_line if unit else None,
        end_line=unit.end_line if unit else None,
        message=message,
        fix=fix,
    )


def _body_words(u: Unit) -> list[str]:
    lines = u.text.split("\n")
    body = lines[1:] if u.heading != INTRO else lines
    return " ".join(body).split()


def _structure(f: CorpusFile, units: list[Unit], tokenize: Callable[[str], Sequence[str]]) -> list[Finding]:
    out: list[Finding] = []
    headings = Counter(u.heading for u in units if u.heading and u.heading != INTRO)
    for i, u in enumerate(units):
        words = _body_words(u)
        nxt = units[i + 1] if i + 1 < len(units) else None
        has_children = nxt is not None and len(nxt.trail) > len(u.trail)
        if len(words) > LARGE_WORDS:
            out.append(
                _warn(
                    f,
                    "large-section",
                    f"section {u.heading!r} has {len(words)} words",
                    "split it under more specific headings (a search hit should be a few hundred words)",
                    u,
                )
            )
        elif len(words) < SMALL_WORDS and not has_children and u.heading != INTRO:
            out.append(
                _warn(
                    f,
                    "small-section",
                    f"section {u.heading!r} has {len(words)} words",
                    "merge it into its neighbour or say more: a hit this small carries no rule",
                    u,
                )
            )
        if u.heading and u.heading != INTRO and not f.pinned:
            if u.heading.strip().casefold() in VAGUE and not f.pinned:
                out.append(
                    _warn(
                        f,
                        "vague-heading",
                        f"heading {u.heading!r} says nothing a search could match",
                        "name what the section is about (the words people search for)",
                        u,
                    )
                )
            if headings[u.heading] > 1:
                out.append(
                    _warn(
                        f,
                        "duplicate-heading",
                        f"heading {u.heading!r} appears {headings[u.heading]} times in this file",
                        "give each its own name so citations and anchors are unambiguous",
                        u,
                    )
                )
            heading_words = set(tokenize(u.heading))
            if len(words) >= 20 and heading_words and not heading_words & set(tokenize(" ".join(words))):
                out.append(
                    _warn(
                        f,
                        "heading-body-mismatch",
                        f"heading {u.heading!r} shares no word with its text",
                        "use the words of the text in the heading, or the heading's words in the text",
                        u,
                    )
                )
        last = next((line.strip() for line in reversed(u.text.split("\n")) if line.strip()), "")
        if nxt is not None and words and last.endswith((":", ",", ";")) and not last.startswith("#"):
            out.append(
                _warn(
                    f,
                    "split-rule",
                    f"section {u.heading!r} ends mid-rule ({last[-40:]!r}) and the next heading continues it",
                    "keep a rule under one heading: a search returns one section, so half a rule",
                    u,
                )
            )
    return out


_SECRETS: Sequence[tuple[str, re.Pattern[str]]] = (
    ("AWS access key", re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("GitHub token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b")),
    ("Slack token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b")),
    ("private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    ("OpenAI or Anthropic key", re.compile(r"\bsk-(?:ant-)?[A-Za-z0-9_-]{20,}\b")),
    ("JSON web token", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\b")),
    (
        "assigned secret",
        re.compile(r"(?i)\b(?:api[_-]?key|secret|token|password|passwd)\s*[:=]\s*['\"]?([A-Za-z0-9+/_\-]{16,})"),
    ),
)


def _secrets(f: CorpusFile) -> list[Finding]:
    out = []
    for number, line in enumerate(f.text.split("\n"), start=1):
        for kind, pattern in _SECRETS:
            match = pattern.search(line)
            if match:
                value = match.group(match.lastindex or 0)
                out.append(
                    Finding(
                        severity="error",
                        check="credential",
                        path=f.path,
                        start_line=number,
                        end_line=number,
                        message=f"looks like a {kind}: {value[:4]}… ({len(value)} characters, not shown)",
                        fix="remove it and rotate it: the corpus reaches every agent and every prompt",
                    )
                )
                break
    return out


def _links(f: CorpusFile, units: list[Unit], corpus: Corpus) -> list[Finding]:
    out = []
    label, _, rel = f.path.partition("/")
    for u in units:
        for text, href in hrefs(u.text):
            if re.match(r"^[a-z][a-z0-9+.-]*:", href, re.I):
                continue
            path, _, fragment = href.partition("#")
            target = rel if not path else _join(rel, path)
            target_file = corpus.files.get(f"{label}/{target}") if target is not None else None
            if target_file is None:
                out.append(
                    _warn(
                        f,
                        "broken-link",
                        f"link [{text}]({href}) points to no file of the corpus",
                        "fix the path (relative to this file) or remove the link",
                        u,
                        error=True,
                    )
                )
            elif fragment:
                known = [x.anchor or "" for x in sections_of(target_file)]
                if fragment.casefold() not in known:
                    out.append(
                        _warn(
                            f,
                            "broken-link",
                            f"link [{text}]({href}): {target_file.path} has no section #{fragment}",
                            f"use one of its anchors: {', '.join('#' + a for a in known[:8])}",
                            u,
                            error=True,
                        )
                    )
    return out


def _join(rel: str, href: str) -> str | None:
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(rel), unquote(href)))
    return None if joined.startswith("..") else joined


def _budgets(corpus: Corpus, pinned_budget: int, instructions_budget: int) -> list[Finding]:
    out = []
    pinned = briefing.pinned(corpus)
    total = sum(len(f.text.rstrip("\n").encode("utf-8")) for f in pinned)
    if total > pinned_budget:
        out.append(
            _warn(
                pinned[-1].path if pinned else "",
                "pinned-budget",
                f"the pinned files hold {total} bytes; pinned_context returns {pinned_budget}, cuts the rest",
                "move topical rules into searchable files, or raise --pinned-budget",
                error=True,
            )
        )
    full = briefing.manifest(corpus, 0)
    if len(full) > instructions_budget:
        out.append(
            _warn(
                "(instructions)",
                "manifest-budget",
                f"the full manifest is {len(full)} characters, over the {instructions_budget}-character "
                "instructions budget; clients see a shortened one",
                "fewer, better-named headings per file (or accept it: pinned_context has the full manifest)",
            )
        )
    return out


def _self_retrieval(files: list[CorpusFile], library: Library) -> list[Finding]:
    """A section that a query made of its own heading does not find first will rarely be found."""
    out = []
    index: BM25Index[Unit] = library.sections
    tokenize: Callable[[str], Sequence[str]] = library.tokenize
    for f in files:
        for u in index.payloads(f.path):
            if not u.heading or u.heading == INTRO or not tokenize(u.heading):
                continue
            hits = index.search(tokenize(u.heading), 3)
            if not hits or hits[0].payload.id != u.id:
                rank = next((i + 1 for i, h in enumerate(hits) if h.payload.id == u.id), None)
                first = hits[0].payload.citation if hits else "nothing"
                where = f"rank {rank}" if rank else "not in the top 3"
                out.append(
                    _warn(
                        f,
                        "self-retrieval",
                        f"searching its own heading {u.heading!r} finds it {where}; first is {first}",
                        "make the heading more specific (words only this section uses)",
                        u,
                    )
                )
    return out
