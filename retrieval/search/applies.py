"""Path-scoped rules: which sections apply to a source file (`context_for_path`).

For `src/api/auth.py`, most specific first:
1. files whose front matter paths match it (Cursor's `globs`, Copilot's `applyTo`, Claude Code's
   and Cline's `paths`, Windsurf's and Devin's `globs`, Kiro's `fileMatchPattern`; see
   `corpus.conventions`), the glob with the most literal characters first;
2. `AGENTS.md`, `CLAUDE.md` and `GEMINI.md` files in its folders (the conventional root) and the
   pinned files of a monorepo package's `.AGENTS` that contains it, nearest folder first;
3. sections whose own heading, or files whose path, name one of its folders (or its own name),
   the deepest folder first.

This module imports nothing of the engine (no numpy): the hook (`cli/hook.py`) runs it in a
process of its own before every file an agent touches. `policy.path_answer` makes its sections an
`Answer` for the tool.

Globs and a file's place are evidence; a name is weaker, so it counts only when it means
something. A rule whose own condition is not a path (Windsurf's `manual` and `model_decision`,
Kiro's `manual` and `auto`, a skill) is never returned: only searching reaches it. A file with
globs applies through them alone (a `**/*.tsx` rule never reaches
`tests/test_x.py`, whatever its headings say), and a nested `AGENTS.md`, `CLAUDE.md` or
`GEMINI.md` through its folder alone. A heading counts only through the section's own heading, never the headings above
it, and never the file's title (`VS Code Copilot Instructions`, over every section, does not make
the file apply to `src/vs/`); and only when it writes a path of the file from the top (`src/api`,
`src/`) or, as a whole word, a name that is `specific`: three characters or more, not hidden, not
all digits, not one of `GENERIC_NAMES` (`src`, `lib`, `tests`, `utils`, ...). A rule file's path
counts on the same terms.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

from corpus.catalog import Corpus
from corpus.conventions import FOLDER_FILES, matches
from corpus.files import CorpusFile
from retrieval.chunks.sections import INTRO
from retrieval.chunks.units import Unit, sections_of

_WILDCARDS = set("*?[]!{},")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
MIN_NAME = 3
"""The fewest characters a folder or file name needs to be evidence when a heading says it."""
GENERIC_NAMES = frozenset(
    {
        # where code lives in any project
        "src", "source", "sources", "lib", "libs", "app", "apps", "pkg", "pkgs", "package", "packages",
        "internal", "include", "vendor", "third_party", "modules", "module", "bin", "build", "dist",
        "out", "target", "public", "static", "assets", "resources", "res",
        # what every project has
        "test", "tests", "testing", "spec", "specs", "doc", "docs", "example", "examples", "core",
        "common", "shared", "base", "main", "index", "init", "__init__", "mod", "utils", "util",
        "utilities", "helpers", "helper", "misc", "tools", "scripts", "config", "configs", "types",
        # the conventions' own folders
        "rules", "instructions", "agents", "prompts",
    }
)  # fmt: skip
"""Folder and file names too common to tie a section to a file by its heading or its name."""
MISS = (
    "no context applies to: {path} (give a rule the paths it is for in its front matter: globs:, "
    "paths:, applyTo:; or add an AGENTS.md in its folder, or a heading that names its folder)"
)


@dataclass(frozen=True, slots=True)
class Applicable:
    unit: Unit
    reason: str
    tier: int
    specificity: float

    @property
    def order(self) -> tuple[int, float, str, int]:
        return (-self.tier, -self.specificity, self.unit.path, self.unit.start_line)


def applicable(corpus: Corpus, where: Mapping[str, str]) -> list[Applicable]:
    """The sections that apply to a source file, most specific first; `where` gives the file's
    path relative to each `.AGENTS` root's project, by root label (`corpus.roots.relative_source`:
    a root whose project does not hold the file is left out)."""
    found: dict[str, Applicable] = {}

    def offer(item: Applicable) -> None:
        best = found.get(item.unit.id)
        if best is None or item.order < best.order:
            found[item.unit.id] = item

    several = len(corpus.agents_roots) > 1
    for root in corpus.agents_roots:
        rel = where.get(root.label)
        if rel is None:
            continue
        parts = rel.split("/")
        names = _names(parts)
        for f in corpus.in_root(root):
            if f.meta.search_only:  # its own condition is not a path (a description, or by hand)
                continue
            units = sections_of(f)
            if f.meta.globs:  # the front matter says where the file applies, and nothing else does
                for glob in f.meta.globs:
                    if matches(glob, rel):
                        literal = sum(c not in _WILDCARDS for c in glob)
                        for u in units:
                            offer(Applicable(u, f"{condition(f)}: {glob}", 3, literal))
                continue
            if several and f.pinned and not root.include:
                for u in units:
                    offer(Applicable(u, f"package rules of {root.label}", 2, 0.5))
            if f.pinned:
                continue
            folder = str(PurePosixPath(f.rel).parent)
            kind = f.rel.rsplit("/", 1)[-1]
            if kind in FOLDER_FILES and folder != ".":  # its folder is its scope
                if (rel + "/").startswith(folder + "/"):
                    for u in units:
                        offer(Applicable(u, f"{kind} in {folder}/", 2, folder.count("/") + 1))
                continue
            stems = _path_names(f.rel)
            for name in names:
                if name.specific and name.name in stems:
                    for u in units:
                        offer(Applicable(u, f"file path names {name.name}", 1, name.depth))
            title = _title(units)
            for u in units:
                if not u.heading or u.heading == INTRO or u is title:
                    continue
                own = _LINK.sub(r"\1", u.heading).casefold()  # its own heading: not the title above it
                for name in names:
                    if name.prefix is not None and name.prefix.search(own):
                        shown = name.path if "/" in name.path else f"{name.path}/"
                        offer(Applicable(u, f"heading names {shown}", 1, name.depth + 0.5))
                    elif name.word is not None and name.word.search(own):
                        offer(Applicable(u, f"heading names {name.name}", 1, name.depth + 0.25))
    return sorted(found.values(), key=lambda a: a.order)


def condition(f: CorpusFile) -> str:
    """Which convention's condition a file's globs are: `claude paths`, `cursor globs`, `copilot
    applyTo`; `globs` in an `.AGENTS` folder."""
    key = f.meta.glob_key or "globs"
    return f"{f.meta.convention} {key}" if f.meta.convention else key


def specific(name: str) -> bool:
    """Whether a folder or file name (case folded) means something when a heading or a rule file's
    path says it: `MIN_NAME` characters or more, not hidden (`.github`), not all digits, not one of
    `GENERIC_NAMES`."""
    return len(name) >= MIN_NAME and not name.startswith(".") and not name.isdigit() and name not in GENERIC_NAMES


@dataclass(frozen=True, slots=True)
class _Name:
    """One folder of a source file (or its own name), as evidence: `depth` 1 for the top folder."""

    name: str
    depth: int
    specific: bool
    word: re.Pattern[str] | None
    """The name as a whole word (`api`, `api/`; not `v1/api` or `api/v1`, other paths), when it is
    specific."""
    path: str
    prefix: re.Pattern[str] | None
    """The path down to it as written (`src/api`; `src/` for a top folder)."""


def _names(parts: list[str]) -> list[_Name]:
    """The folders of a source path and its own name (the stem: `auth` for `auth.py`), case folded."""
    out = []
    for depth, part in enumerate(parts, start=1):
        name = (PurePosixPath(part).stem if depth == len(parts) else part).casefold()
        path = "/".join(parts[:depth]).casefold()
        good = specific(name)
        out.append(
            _Name(
                name,
                depth,
                good,
                re.compile(rf"(?<![\w/-]){re.escape(name)}(?![\w-]|/[\w.-])") if good else None,
                path,
                _path_pattern(path, depth < len(parts)),
            )
        )
    return out


def _path_pattern(path: str, folder: bool) -> re.Pattern[str] | None:
    """A path of the file as a heading writes it: `src/api`, `src/api/` or `src/api/auth.py`, from
    the top and whole (not `src/api/v2`, another folder); a top folder with its slash (`src/`),
    whatever its name, for it names a folder."""
    if "/" in path:
        return re.compile(rf"(?<![\w./-]){re.escape(path)}(?![\w-]|/[\w.-])")
    return re.compile(rf"(?<![\w./-]){re.escape(path)}/(?![\w.-])") if folder else None


def _title(units: list[Unit]) -> Unit | None:
    """The file's title: its first heading when every later section is under it (`# VS Code Copilot
    Instructions` over the whole file). It names what the file is about, not where it applies."""
    heads = [u for u in units if u.heading and u.heading != INTRO]
    if len(heads) < 2:
        return None
    first, depth = heads[0], len(heads[0].trail)
    return first if all(len(u.trail) > depth and u.trail[:depth] == first.trail for u in heads[1:]) else None


def _path_names(rel: str) -> set[str]:
    """The names in a rule file's path, case folded: its folders and its stem (`api` for
    `.AGENTS/api.md`, `tests` for `.github/instructions/tests.instructions.md`)."""
    parts = PurePosixPath(rel).with_suffix("").parts
    return {p.casefold().removesuffix(".instructions") for p in parts}
