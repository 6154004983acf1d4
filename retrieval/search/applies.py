"""Path-scoped rules: which sections apply to a source file (`context_for_path`).

For `src/api/auth.py`, most specific first:
1. files whose front matter paths match it (Cursor's `globs`, Copilot's `applyTo`, Claude Code's
   and Cline's `paths`, Windsurf's and Devin's `globs`, Kiro's `fileMatchPattern`; see
   `corpus.conventions`), the glob with the most literal characters first;
2. `AGENTS.md`, `CLAUDE.md` and `GEMINI.md` files in its folders (the conventional root) and the
   pinned files of a monorepo package's `.AGENTS` that contains it, nearest folder first;
3. sections whose own heading, or files whose path, name one of its folders (or its own name),
   the deepest folder first.

This module imports nothing of the engine (no numpy): the hook (`hook/main.py`) runs it in a
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
from bisect import bisect_right
from collections.abc import Callable, Mapping
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
OUTSIDE = "no context applies to: {path} (it is outside the project, and the project's rules are about its own files)"
"""The miss line for a path that resolves outside every root's project (`src/../../etc/passwd`)."""


@dataclass(frozen=True, slots=True)
class Applicable:
    unit: Unit
    reason: str
    tier: int
    specificity: float

    @property
    def order(self) -> tuple[int, float, str, int]:
        return (-self.tier, -self.specificity, self.unit.path, self.unit.start_line)


def applicable(
    corpus: Corpus, where: Mapping[str, str], sections: Callable[[CorpusFile], list[Unit]] = sections_of
) -> list[Applicable]:
    """The sections that apply to a source file, most specific first; `where` gives the file's
    path relative to each `.AGENTS` root's project, by root label (`corpus.roots.relative_source`:
    a root whose project does not hold the file is left out). `sections`: a file's sections (the
    hook's are parsed once and kept between events)."""
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
        evidence = _Evidence.of(rel)
        for f in corpus.in_root(root):
            if f.meta.search_only:  # its own condition is not a path (a description, or by hand)
                continue
            units = sections(f)
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
            named = max(((evidence.words[s], s) for s in _path_names(f.rel) if s in evidence.words), default=None)
            if named is not None:
                for u in units:
                    offer(Applicable(u, f"file path names {named[1]}", 1, named[0]))
            title = _title(units)
            for u in units:
                if not u.heading or u.heading == INTRO or u is title:
                    continue
                own = _LINK.sub(r"\1", u.heading).casefold()  # its own heading: not the title above it
                heading = evidence.in_heading(own)
                if heading is not None:
                    offer(Applicable(u, f"heading names {heading[1]}", 1, heading[0]))
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


_BEFORE_WORD = re.compile(r"(?<![\w/-])")
"""Where a name may start in a heading: not after a word character, `/` or `-`."""
_BEFORE_PATH = re.compile(r"(?<![\w./-])")
"""Where a path may start: not after a word character, `.`, `/` or `-`."""
_AFTER = re.compile(r"(?![\w-]|/[\w.-])")
"""Where a name or a path may end: not before a word character or `-`, nor before another name
after a `/` (`api` in `api/` or `api.`, not in `api/v1`)."""
_AFTER_FOLDER = re.compile(r"(?![\w.-])")
"""Where a top folder written with its slash may end (`src/`, not `src/api`)."""


@dataclass(frozen=True, slots=True)
class _Evidence:
    """A source file's path as evidence in headings and rule files' paths, case folded: the names
    of its folders and its own (the stem: `auth` for `auth.py`) that are `specific`, each at its
    deepest (`depth` 1 for the top folder), and the paths down to each (`src/api`).

    A heading is read once, whatever the path's length: its places where a name can start and end
    are found in one pass, and the text between them looked up among the names; a path is found
    as the longest common start of the heading there and the file's path. Nothing is compiled per
    folder, so a path of thousands of folders costs what its characters do."""

    rel: str
    words: dict[str, int]
    """Each specific name, at its deepest."""
    longest: int
    """The longest of `words`."""
    ends: tuple[int, ...]
    """Where a prefix of `rel` ends: before each `/` (a folder), and at its end (the file)."""

    @classmethod
    def of(cls, rel: str) -> _Evidence:
        parts = rel.casefold().split("/")
        words: dict[str, int] = {}
        for depth, part in enumerate(parts, start=1):
            name = PurePosixPath(part).stem if depth == len(parts) else part
            if specific(name):
                words[name] = depth
        folded = "/".join(parts)
        ends = (*(i for i, c in enumerate(folded) if c == "/"), len(folded))
        return cls(folded, words, max(map(len, words), default=0), ends)

    def in_heading(self, heading: str) -> tuple[float, str] | None:
        """The deepest of the file's folders (or its name) a heading names, as specificity and
        what it names: a path of the file from the top, written whole (`src/api`, `src/api/`,
        `src/api/auth.py`; a top folder with its slash: `src/`), counts half a folder more than
        a specific name written as a whole word (`api`)."""
        best: tuple[float, str] | None = None
        ends = [m.start() for m in _AFTER.finditer(heading)]
        at_end = set(ends)
        for start in (m.start() for m in _BEFORE_PATH.finditer(heading)):
            found = self._path_at(heading, start, at_end)
            if found is not None and (best is None or found[0] > best[0]):
                best = found
        if not self.words:
            return best
        for start in (m.start() for m in _BEFORE_WORD.finditer(heading)):
            for i in range(bisect_right(ends, start), len(ends)):
                if ends[i] - start > self.longest:
                    break
                depth = self.words.get(heading[start : ends[i]])
                if depth is not None and (best is None or depth + 0.25 > best[0]):
                    best = (depth + 0.25, heading[start : ends[i]])
        return best

    def _path_at(self, heading: str, start: int, ends: set[int]) -> tuple[float, str] | None:
        """The deepest path of the file that `heading` writes from `start` (where `ends` are the
        places a path may end), if any."""
        rel = self.rel
        if not heading.startswith(rel[:1], start):
            return None
        low, high = 1, min(len(rel), len(heading) - start)  # the longest common start, by halves
        while low < high:
            middle = (low + high + 1) // 2
            if heading.startswith(rel[:middle], start):
                low = middle
            else:
                high = middle - 1
        for depth in range(bisect_right(self.ends, low), 0, -1):  # the deepest first
            end = self.ends[depth - 1]
            if depth > 1 and start + end in ends:
                return depth + 0.5, rel[:end]
            if depth == 1 and end < min(low, len(rel)) and _AFTER_FOLDER.match(heading, start + end + 1):
                return 1.5, rel[: end + 1]  # a top folder, with its slash
        return None


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
