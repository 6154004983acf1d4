"""`agents-context doctor`: lint a corpus for what keeps an agent from finding and reading its
rules whole (the checks are listed in docs/configuration.md, "`agents-context doctor`").

Each finding names the file and lines and says how to fix it. Errors (exit status 1) are what
breaks an agent's work: text that looks like a credential, links that point nowhere, pinned files
cut by their budget. Everything else is a warning (it makes the corpus harder to retrieve from) or
a note (worth knowing, nothing wrong: a link to a file the server does not serve). Whatever doctor
prints has every credential masked (`cli.credentials`).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from urllib.parse import unquote

from pydantic import BaseModel, Field

from cli import credentials, rulefiles
from cli.findings import INSTRUCTIONS_CUTS, Finding, note, warn
from clients import claude_code
from corpus.catalog import Corpus
from corpus.errors import Moved
from corpus.files import CorpusFile
from corpus.markdown import split_lines
from corpus.read import SkipKind
from corpus.roots import RootKind
from live import texts
from retrieval.chunks.anchors import line_range
from retrieval.chunks.sections import INTRO
from retrieval.chunks.units import Unit, sections_of
from retrieval.engine.index import BM25Index
from retrieval.engine.library import Library
from retrieval.render import briefing
from retrieval.search.links import hrefs

LARGE_WORDS = 800
"""A section longer than this is a poor search unit: it costs ~1,000 tokens each time it is hit."""
SMALL_WORDS = 5
"""A leaf section with fewer words than this carries too little to be found or to be useful."""
VAGUE = frozenset(
    "notes misc miscellaneous other others general details more info information stuff todo "
    "various untitled introduction intro overview".split()
)


class Report(BaseModel):
    files: int
    sections: int
    errors: int
    warnings: int
    notes: int
    findings: list[Finding]
    instructions: str = Field(
        description=f"The server instructions as a model in {claude_code.CLIENT.name} sees them, with any credential "
        "masked."
    )
    instructions_chars: int = Field(description="How many characters of instructions that model sees.")


def diagnose(
    corpus: Corpus,
    library: Library,
    pinned_budget: int = briefing.PINNED_BUDGET_BYTES,
    instructions_budget: int = briefing.INSTRUCTIONS_BUDGET_CHARS,
    warnings: Sequence[str] = (),
) -> Report:
    """Every finding, and the instructions preview, with every credential masked: doctor's output
    ends up in CI logs, and a key is never echoed in full."""
    findings: list[Finding] = []
    searchable = briefing.on_demand(corpus)
    by_location = {os.path.normpath(f.root.path.joinpath(*f.rel.split("/"))): f for f in corpus.files.values()}
    all_sections = 0
    for f in sorted(corpus.files.values(), key=lambda f: f.path):
        sections, found = _file(f, library, by_location)
        all_sections += sections
        findings += found
    findings += _budgets(corpus, pinned_budget, instructions_budget)
    agents = [f for f in corpus.files.values() if f.root.kind is RootKind.AGENTS]
    findings += rulefiles.front_matter(sorted(agents, key=lambda f: f.path))
    findings += rulefiles.never_apply(corpus) + rulefiles.duplicates(corpus)
    findings += rulefiles.always_on(corpus, instructions_budget)
    findings += rulefiles.codex_chain(corpus) + rulefiles.hook_budget(corpus)
    findings += [
        warn(
            f"{s.root.label}/{s.rel}",
            "skipped",
            f"not served: {s.reason}",
            "move it out of the root, or fix it if it should be served",
        )
        for s in corpus.skipped
        if not _deliberate(s.kind)
    ]
    findings += _self_retrieval(searchable, library)
    findings += [
        warn(
            f"--pin {pin}",
            "pin",
            f"--pin {pin} matches no file of the .AGENTS folders, so it pins nothing",
            "give the path relative to the .AGENTS folder (see 'agents-context outline'), or drop the --pin",
        )
        for pin in corpus.unmatched_pins()
    ]
    findings += [warn("(flags)", "flags", w, "change the flag as the message says") for w in warnings]
    findings = [
        x.model_copy(
            update={
                "path": credentials.redact(x.path),
                "message": credentials.redact(x.message),
                "fix": credentials.redact(x.fix),
            }
        )
        for x in findings
    ]
    has_docs = any(r.kind is RootKind.DOCS for r in corpus.roots)
    full = briefing.instructions(corpus, instructions_budget, has_docs)
    seen = min(len(full), briefing.INSTRUCTIONS_BUDGET_CHARS)
    return Report(
        files=len(corpus.files),
        sections=all_sections,
        errors=sum(x.severity == "error" for x in findings),
        warnings=sum(x.severity == "warning" for x in findings),
        notes=sum(x.severity == "note" for x in findings),
        findings=findings,
        instructions=credentials.redact(full, seen),
        instructions_chars=seen,
    )


def _deliberate(kind: SkipKind) -> bool:
    """Skips that are the corpus working as meant (`.git/`, `node_modules/`, what `.gitignore` or
    `.agentsignore` leaves out, editor scratch files): nothing for an author to fix."""
    return kind in (SkipKind.IGNORED, SkipKind.EDITOR_TEMP)


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
                warn(
                    f,
                    "large-section",
                    f"section {u.heading!r} has {len(words)} words",
                    "split it under more specific headings (a search hit should be a few hundred words)",
                    u,
                )
            )
        elif len(words) < SMALL_WORDS and not has_children and u.heading != INTRO:
            out.append(
                warn(
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
                    warn(
                        f,
                        "vague-heading",
                        f"heading {u.heading!r} says nothing a search could match",
                        "name what the section is about (the words people search for)",
                        u,
                    )
                )
            if headings[u.heading] > 1:
                out.append(
                    warn(
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
                    warn(
                        f,
                        "heading-body-mismatch",
                        f"heading {u.heading!r} shares no word with its text",
                        "use the words of the text in the heading, or the heading's words in the text",
                        u,
                    )
                )
        text = credentials.redact(u.text)  # the message quotes the last line
        last = next((line.strip() for line in reversed(text.split("\n")) if line.strip()), "")
        if nxt is not None and words and last.endswith((":", ",", ";")) and not last.startswith("#"):
            out.append(
                warn(
                    f,
                    "split-rule",
                    f"section {u.heading!r} ends mid-rule ({last[-40:]!r}) and the next heading continues it",
                    "keep a rule under one heading: a search returns one section, so half a rule",
                    u,
                )
            )
    return out


def _file(f: CorpusFile, library: Library, by_location: dict[str, CorpusFile]) -> tuple[int, list[Finding]]:
    """One file's findings, and how many sections it adds to the searchable ones. A docs file's
    text is read from it now (the index does not hold it): one changed since it was indexed is
    left for the next run, which reads it as it is then."""
    try:
        units = sections_of(f)
        findings = _secrets(f) + _links(f, units, by_location)
    except Moved:
        return 0, []
    if f.root.kind is not RootKind.AGENTS:
        return 0, findings
    return len(units), _structure(f, units, library.tokenize) + findings


def _secrets(f: CorpusFile) -> list[Finding]:
    out = []
    for number, line in enumerate(texts.content(f).split("\n"), start=1):
        found = credentials.find(line)
        if found:
            kind, value = found
            out.append(
                Finding(
                    severity="error",
                    check="credential",
                    path=f.path,
                    start_line=number,
                    end_line=number,
                    message=f"looks like a {kind}: {credentials.mask(value)}",
                    fix="remove it and rotate it: the corpus reaches every agent and every prompt",
                )
            )
    return out


def _links(f: CorpusFile, units: list[Unit], by_location: Mapping[str, CorpusFile]) -> list[Finding]:
    """Relative links: to a file of the corpus (and one of its anchors or lines), else to a file
    that exists on disk (a note: agents cannot read it through the server), else an error."""
    out = []
    here = f.root.path.joinpath(*f.rel.split("/")).parent
    for u in units:
        for text, href in hrefs(u.text):
            if re.match(r"^[a-z][a-z0-9+.-]*:", href, re.I) or href.startswith(("/", "#/")):
                continue  # a URL, or a path from a repository root this server does not know
            path, _, fragment = href.partition("#")
            location = os.path.normpath(here / unquote(path)) if path else None
            target = by_location.get(location) if location else f
            if target is None and location and Path(location).exists():
                out.append(
                    note(
                        f,
                        "outside-link",
                        f"link [{text}]({href}) points to {location}, which exists but is not a file of the "
                        "corpus: agents cannot read it through the server",
                        "nothing to fix if agents can read the project's files; otherwise serve its folder "
                        "with --docs, or move what it says into the corpus",
                        u,
                    )
                )
            elif target is None:
                out.append(
                    warn(
                        f,
                        "broken-link",
                        f"link [{text}]({href}) points to no file",
                        "fix the path (relative to this file) or remove the link",
                        u,
                        error=True,
                    )
                )
            elif fragment:
                problem = _fragment_problem(target, unquote(fragment))
                if problem:
                    out.append(
                        warn(f, "broken-link", f"link [{text}]({href}): {problem[0]}", problem[1], u, error=True)
                    )
    return out


def _fragment_problem(target: CorpusFile, fragment: str) -> tuple[str, str] | None:
    """Why `#fragment` names nothing in `target` (the message and the fix), or None. A fragment
    is a section anchor or lines, `#L12` or `#L12-L30`, as `read_context` takes them."""
    lines = line_range(fragment)
    if lines:
        count = len(split_lines(texts.content(target)))
        if 1 <= lines[0] <= lines[1] <= count:
            return None
        return f"{target.path} has {count} lines, not lines {lines[0]}-{lines[1]}", f"use lines within 1-{count}"
    sections = sections_of(target)
    if fragment.casefold() in {(x.anchor or "").casefold() for x in sections}:
        return None
    shown = [x.anchor or "" for x in sections if credentials.find(x.heading or "") is None]
    return (
        f"{target.path} has no section #{fragment}",
        f"use one of its anchors: {', '.join('#' + a for a in shown[:8])}",
    )


def _budgets(corpus: Corpus, pinned_budget: int, instructions_budget: int) -> list[Finding]:
    out = []
    pinned = briefing.pinned(corpus)
    sizes = {f.path: len(f.text.rstrip("\n").encode("utf-8")) for f in pinned}
    total = sum(sizes.values())
    if total > pinned_budget:
        largest = sorted(pinned, key=lambda f: -sizes[f.path])
        named = briefing.listing([f"{f.path} ({sizes[f.path]:,} bytes)" for f in largest], limit=3)
        out.append(
            warn(
                largest[0].path,
                "pinned-budget",
                f"the {len(pinned)} pinned files hold {total:,} bytes, over the {pinned_budget:,} of --pinned-budget: "
                f"pinned_context returns them in pin order up to that and cuts the rest; the largest: {named}",
                f"move what not every task needs from {largest[0].path} into {rulefiles.searched_folder(corpus)} "
                "files that are not pinned, which are searched instead of loaded whole (or raise --pinned-budget)",
                error=True,
            )
        )
    full = briefing.manifest(corpus, 0)
    if len(full) > instructions_budget:
        out.append(
            warn(
                "(instructions)",
                "manifest-budget",
                f"the full manifest is {len(full)} characters, over the {instructions_budget}-character "
                f"instructions budget (it is there because clients cut server instructions: {INSTRUCTIONS_CUTS}); "
                "the instructions carry a shortened one",
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
                    warn(
                        f,
                        "self-retrieval",
                        f"searching its own heading {u.heading!r} finds it {where}; first is {first}",
                        "make the heading more specific (words only this section uses)",
                        u,
                    )
                )
    return out
