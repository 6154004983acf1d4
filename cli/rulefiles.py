"""doctor's checks of the rule files: front matter a tool would misread, rules that can never
apply, one rule kept for two agents, and always-on rules larger than the instructions."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

from cli.findings import Finding, note, warn
from corpus.catalog import Corpus, CorpusFile
from corpus.conventions import matches
from corpus.markdown import front_matter_end, split_lines
from corpus.roots import RootKind, project_markers, project_of
from corpus.rules import is_ignored_dir
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
            f"over the {instructions_budget}-character instructions: the model sees them only once it "
            "calls pinned_context",
            "make topical rules path-scoped (paths:, globs:) or searchable, so what applies to every task fits",
        )
    ]
