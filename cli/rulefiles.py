"""doctor's checks of the rule files: front matter a tool would misread, rules that can never
apply, one rule kept for two agents, always-on rules larger than the instructions, and what a
client's own budget cuts (Codex's AGENTS.md chain, Claude Code's hook context)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from cli.findings import INSTRUCTIONS_CUTS, Finding, note, warn
from clients import claude_code, codex
from clients.known import loaded_by
from clients.payloads import Event
from corpus.catalog import Corpus
from corpus.conventions import FOLDER_FILES, matches
from corpus.files import CorpusFile
from corpus.markdown import front_matter_end, split_lines
from corpus.roots import RootKind, project_markers, project_of
from corpus.rules import is_ignored_dir
from hook import main as hook
from retrieval.render import briefing

MIN_DUPLICATE_WORDS = 8
"""Fewer words than this are not a rule worth reporting twice (a title, a one-line pointer)."""
MAX_PROJECT_FILES = 200_000
"""A project with more files than this is not walked to check its rules' globs."""


def front_matter(files: Iterable[CorpusFile]) -> list[Finding]:
    """Front matter that did not parse, or sets a condition its convention does not have."""
    out = []
    for f in files:
        if f.meta.problem is None:
            continue
        where, _, problem = f.meta.problem.partition(": ")
        line = int(where.removeprefix("line ")) if where.startswith("line ") else 1
        out.append(
            warn(
                f,
                "front-matter",
                f"{problem}; served as {_served(f)}",
                "fix the front matter as its tool documents it (docs/conventions.md links each)",
                (line, line),
            )
        )
    return out


def _served(f: CorpusFile) -> str:
    if f.pinned:
        return "a rule for every task (pinned)"
    if f.meta.globs:
        return "a rule for the files its globs match"
    return "a file reached only by searching" if f.meta.search_only else "a searchable file"


def never_apply(corpus: Corpus) -> list[Finding]:
    """Rules whose globs match no file of their project: they can never apply. Only where the
    project is known: the conventional root's folder, or an `.AGENTS` folder's parent that is a
    project (`.git`, `pyproject.toml`, ...); each project is walked once."""
    out: list[Finding] = []
    walked: dict[Path, list[str] | None] = {}
    for root in corpus.agents_roots:
        scoped = [f for f in corpus.in_root(root) if f.meta.globs and not f.pinned]
        project = project_of(root)
        if not scoped or not (root.include or project_markers(project)):
            continue
        if project not in walked:
            walked[project] = project_files(project)
        files = walked[project]
        if files is None:
            continue
        for f in scoped:
            for glob in f.meta.globs:
                if not any(matches(glob, rel) for rel in files):
                    line = _line_of(f, glob)
                    out.append(
                        warn(
                            f,
                            "never-applies",
                            f"{f.meta.glob_key or 'globs'}: {glob} matches no file in {project}, "
                            "so this rule never applies through it",
                            "write the glob from the project's top (src/api/**), or drop it",
                            (line, line) if line else None,
                        )
                    )
    return out


def _line_of(f: CorpusFile, text: str) -> int | None:
    """The line of the front matter that holds `text`."""
    lines = split_lines(f.text)
    return next((i + 1 for i, line in enumerate(lines[: front_matter_end(lines)]) if text in line), None)


def project_files(project: Path) -> list[str] | None:
    """Every file of the project (relative POSIX paths), outside the folders never walked
    (`.git`, `node_modules`, ...); None past `MAX_PROJECT_FILES`."""
    found: list[str] = []
    for folder, dirs, names in os.walk(project):
        dirs[:] = [d for d in dirs if not is_ignored_dir(d)]
        here = Path(folder).relative_to(project).as_posix()
        prefix = "" if here == "." else here + "/"
        found.extend(prefix + name for name in names)
        if len(found) > MAX_PROJECT_FILES:
            return None
    return found


def duplicates(corpus: Corpus) -> list[Finding]:
    """The same text (front matter aside) kept for two agents: whoever reads both reads it
    twice, and an edit to one leaves the other behind. A link to the same file is fine, and so
    are files that only import another (`@AGENTS.md`) or say a few words."""
    seen: dict[str, CorpusFile] = {}
    out = []
    for f in sorted(corpus.files.values(), key=lambda f: f.path):
        if f.root.kind is not RootKind.AGENTS:
            continue
        lines = split_lines(f.text)
        body = "\n".join(lines[front_matter_end(lines) :]).strip()
        said = [line for line in body.split("\n") if line.strip() and not line.lstrip().startswith("@")]
        if len(" ".join(said).split()) < MIN_DUPLICATE_WORDS:
            continue
        digest = hashlib.sha256(body.encode()).hexdigest()
        first = seen.setdefault(digest, f)
        if first is f or _owner(first) == _owner(f) or _same_file(first, f):
            continue
        out.append(
            warn(
                f,
                "duplicate-rule",
                f"the same text as {first.path} ({_owner(first)}): an agent that reads both reads it twice, "
                "and an edit to one leaves the other behind",
                "keep it in one file and have the other tool read that one (a symlink, or an import such "
                "as CLAUDE.md's @AGENTS.md)",
            )
        )
    return out


def _owner(f: CorpusFile) -> str:
    """Whose file it is: its convention (`claude`, `cursor`, ...; a skill by the folder that holds
    it), or an `.AGENTS` folder (two monorepo packages may share a rule)."""
    if f.meta.convention == "skill":
        return "skill in .agents" if not f.root.include or f.rel.startswith(".agents/") else "skill in .claude"
    return f.meta.convention or ".AGENTS folder"


def _same_file(a: CorpusFile, b: CorpusFile) -> bool:
    try:
        return a.root.path.joinpath(a.rel).samefile(b.root.path.joinpath(b.rel))
    except OSError:
        return False


def always_on(corpus: Corpus, instructions_budget: int) -> list[Finding]:
    """Always-on rules too large for the instructions: clients then show them only when the
    model calls pinned_context."""
    pinned = briefing.pinned(corpus)
    chars = sum(len(f.text) for f in pinned)
    if chars <= instructions_budget:
        return []
    return [
        note(
            "(always-on rules)",
            "always-on-budget",
            f"the {len(pinned)} always-on files ({briefing.pinned_names(corpus)}) hold {chars} characters, "
            f"over the {instructions_budget}-character instructions (the budget is there because clients cut "
            f"them: {INSTRUCTIONS_CUTS}): the model sees them only once it calls pinned_context",
            "make topical rules path-scoped (paths:, globs:) or searchable, so what applies to every task fits",
        )
    ]


def searched_folder(corpus: Corpus) -> str:
    """The `.AGENTS` folder a fix sends text to, as it is named on disk (`.AGENTS/`)."""
    folder = next((r.path.name for r in corpus.agents_roots if not r.include), ".AGENTS")
    return f"{folder}/"


def _sizes(files: Iterable[CorpusFile]) -> str:
    return briefing.listing([f"{f.path} ({f.size:,} bytes)" for f in files], limit=8)


def _cut_line(f: CorpusFile, kept: int) -> tuple[int, int]:
    """The line `f` is cut in after `kept` bytes, and its last line."""
    return f.text.encode("utf-8")[:kept].count(b"\n") + 1, len(split_lines(f.text))


CODEX = codex.CLIENT.name


def codex_chain(corpus: Corpus, budget: int = codex.PROJECT_DOC_BYTES) -> list[Finding]:
    """Codex reads the AGENTS.md chain (the project's top AGENTS.md, then each one on the way to
    the folder it works in) root first, within `budget` bytes in all (`project_doc_max_bytes`),
    and cuts the rest without a word, mid-line. For each nested AGENTS.md: what of its chain
    Codex cuts; for the top one alone over the budget, one finding (every chain is then cut)."""
    out: list[Finding] = []
    folder = searched_folder(corpus)
    for root in corpus.agents_roots:
        if not root.include:
            continue
        docs = {
            PurePosixPath(f.rel).parent.as_posix(): f
            for f in corpus.in_root(root)
            if PurePosixPath(f.rel).name == "AGENTS.md" and f.text.strip()  # Codex skips an empty one
        }
        top = docs.get(".")
        nested = [docs[d] for d in sorted(docs) if d != "."]
        if top is not None and top.size > budget:
            out.append(_top_over(top, nested, budget, folder))
            continue
        for f in nested:
            parts = PurePosixPath(f.rel).parent.parts
            chain = [docs[d] for d in [".", *("/".join(parts[: i + 1]) for i in range(len(parts)))] if d in docs]
            if sum(g.size for g in chain) > budget:
                out.append(_chain_over(chain, budget, folder))
    return out


def _top_over(top: CorpusFile, nested: list[CorpusFile], budget: int, folder: str) -> Finding:
    line, last = _cut_line(top, budget)
    left = f", and leaves out every nested AGENTS.md ({_sizes(nested)})" if nested else ""
    return warn(
        top,
        "codex-chain",
        f"{CODEX} reads at most {budget:,} bytes of the AGENTS.md chain (project_doc_max_bytes), root first; "
        f"this file alone has {top.size:,}: {CODEX} cuts it in line {line}, mid-line and without a word, "
        f"losing its last {top.size - budget:,} bytes{left}",
        f"move at least {top.size - budget:,} bytes of what not every task needs (topical sections, examples, "
        f"references) into {folder} files, which are searched instead of loaded whole; keep here what "
        "applies to every task",
        (line, last),
    )


def _chain_over(chain: list[CorpusFile], budget: int, folder: str) -> Finding:
    """The finding for the chain that ends in its last file, over `budget` bytes."""
    kept: list[tuple[CorpusFile, int]] = []
    left = budget
    for f in chain:
        kept.append((f, min(f.size, left)))
        left -= kept[-1][1]
    total = sum(f.size for f in chain)
    last, last_kept = kept[-1]
    where = PurePosixPath(last.rel).parent.as_posix()
    said = (
        f"working in {where}/ (or below), {CODEX} reads the AGENTS.md chain {_sizes(chain)}: {total:,} bytes, "
        f"over the {budget:,} it reads (project_doc_max_bytes), root first, cutting the rest without a word"
    )
    at: tuple[int, int] | None = None
    if last_kept:
        at = _cut_line(last, last_kept)
        fate = (
            f"it cuts this file in line {at[0]}, mid-line, after {last_kept:,} of its {last.size:,} bytes: "
            f"{last.size - last_kept:,} bytes lost"
        )
    else:
        cut = next(((f, k) for f, k in kept if 0 < k < f.size), None)
        before = f"; {cut[0].path} is cut after {cut[1]:,} of its {cut[0].size:,} bytes" if cut else ""
        fate = f"the files before it use up the budget{before}, so this file ({last.size:,} bytes) is left out entirely"
    largest = max(chain, key=lambda f: f.size)
    return warn(
        last,
        "codex-chain",
        f"{said}: {fate}",
        f"move at least {total - budget:,} bytes of what not every task in {where}/ needs (the largest file is "
        f"{largest.path}, {largest.size:,} bytes) into {folder} files, which are searched instead of loaded "
        "whole; keep in each AGENTS.md what applies to every task in its folder",
        at,
    )


def _path_scoped(f: CorpusFile) -> bool:
    """A rule the hook sends when a file it applies to is touched: globs of its own, or a nested
    AGENTS.md, CLAUDE.md or GEMINI.md (it applies to its folder)."""
    if f.pinned or f.root.kind is not RootKind.AGENTS:
        return False
    name = PurePosixPath(f.rel).name
    return bool(f.meta.globs) or (bool(f.root.include) and "/" in f.rel and name in FOLDER_FILES)


def hook_budget(corpus: Corpus) -> list[Finding]:
    """What the agents-context hook cannot send Claude Code whole: at a session's start, the
    pinned files Claude Code does not load itself (past the limit the hook names the rest); when a
    file is touched, a path-scoped rule larger than the limit (the hook names the sections past it)."""
    client, hooked = claude_code.CLIENT, claude_code.HOOK
    limit = hooked.limit
    folder = searched_folder(corpus)
    cap = f"{client.name} takes at most {hooked.takes:,} characters of a hook's added context, and the "
    cap += f"agents-context hook sends at most {limit:,}"
    out: list[Finding] = []
    loaded = loaded_by(client, corpus)
    sent = [f for f in briefing.pinned(corpus) if f.path not in loaded]
    if sent:
        start = Event(True, "doctor", Path(), Path())
        handed = hook.at_start(start, client, corpus, limit)
        left = [f for f in sent if handed is not None and f.path not in handed.whole]
        if left:
            largest = max(sent, key=lambda f: len(f.text))
            chars = sum(len(f.text.strip()) for f in sent)
            out.append(
                warn(
                    largest,
                    "hook-pinned-budget",
                    f"{cap}: the {len(sent)} pinned files {client.name} does not load itself "
                    f"({briefing.listing([f.path for f in sent], limit=8)}) hold {chars:,} characters, so at a "
                    f"session's start the hook sends {briefing.listing([f.path for f in left], limit=8)} in part "
                    "or by name only",
                    f"move what not every task needs from the pinned files (the largest is this one, "
                    f"{len(largest.text):,} characters) into {folder} files that are not pinned, which are "
                    f"searched instead of loaded whole, until the pinned files fit in {limit:,} characters",
                )
            )
    out += [
        warn(
            f,
            "hook-rule-budget",
            f"{cap}: this path-scoped rule has {len(f.text):,} characters, so when a file it applies to is "
            "touched the hook sends the sections that best fit that file and names the others",
            "keep here what must be known before touching the files it applies to, and move background, "
            f"examples and references into {folder} files without paths, which are searched instead of sent whole",
        )
        for f in sorted(corpus.files.values(), key=lambda f: f.path)
        if _path_scoped(f) and len(f.text) > limit
    ]
    return out
