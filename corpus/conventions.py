"""The agent-file conventions a project folder is read for, and what each one's front matter means.

Each convention says where its files are (gitignore patterns, from the project's top) and how a
file says when it applies, mapped to the server's three behaviours: always (pinned: the
instructions and `pinned_context`), path-scoped (`context_for_path` for the files its globs
match), or searchable on demand. `docs/conventions.md` has the table, with each tool's own
documentation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum
from functools import lru_cache
from typing import TYPE_CHECKING

from corpus.globs import Globs, InvalidGlob
from corpus.ignore import spec

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec


class Mode(str, Enum):
    ALWAYS = "always"
    """Pinned: reaches the model at the start of every task."""
    PATHS = "paths"
    """Path-scoped: `context_for_path` returns it for the files its globs match."""
    ON_DEMAND = "on demand"
    """Searchable; `context_for_path` may also return it when its headings name the file's folders."""
    SEARCH_ONLY = "search only"
    """Searchable, and nothing else: its own condition is not a path (a description, or by hand)."""


@dataclass(frozen=True, slots=True)
class Convention:
    key: str
    """How `applies=` and doctor name it: `claude paths: src/**`."""
    name: str
    """How the instructions name it: `Claude Code rules`."""
    patterns: tuple[str, ...]
    """Its files, in gitignore syntax from the project's top."""
    docs: str
    """The tool's own documentation of the convention."""
    default: Mode
    """How a file applies when its front matter sets no condition (or a broken one)."""
    glob_keys: tuple[str, ...] = ()
    """The front matter keys that hold its path patterns."""
    mode_key: str | None = None
    """The front matter key that chooses how a file applies (`trigger`, `inclusion`)."""
    modes: Mapping[str, Mode] | None = None
    """What each value of `mode_key` means; `PATHS` needs the globs as well."""
    globs_decide: bool = False
    """Without `mode_key`, globs make the file path-scoped (as Devin's tools infer it)."""
    lists_only: bool = False
    """The tool reads its globs only as a YAML list (a string is served as written, with a note)."""
    always_key: bool = False
    """`alwaysApply: true` pins a file (Cursor's key; also read in the files with no keys of their own)."""


GLOB_KEYS = ("globs", "applyTo", "applies_to")
"""Where path patterns may be outside the conventions that name their own key, in order of precedence."""
_WINDSURF_MODES = {
    "always_on": Mode.ALWAYS,
    "glob": Mode.PATHS,
    "model_decision": Mode.SEARCH_ONLY,
    "manual": Mode.SEARCH_ONLY,
}
_KIRO_MODES = {"always": Mode.ALWAYS, "fileMatch": Mode.PATHS, "manual": Mode.SEARCH_ONLY, "auto": Mode.SEARCH_ONLY}

_WINDSURF = Convention(
    "windsurf",
    "Windsurf rules",
    (".windsurf/rules/**/*.md",),
    "https://docs.windsurf.com/windsurf/cascade/memories#rules",
    Mode.SEARCH_ONLY,
    glob_keys=("globs",),
    mode_key="trigger",
    modes=_WINDSURF_MODES,
    globs_decide=True,
)
"""Devin's rules are Windsurf's, in their own folder."""

CONVENTIONS: tuple[Convention, ...] = (
    Convention(
        "claude",
        "Claude Code rules",
        (".claude/rules/**/*.md",),
        "https://code.claude.com/docs/en/memory#path-specific-rules",
        Mode.ALWAYS,
        glob_keys=("paths",),
    ),
    Convention(
        "skill",
        "skills",
        tuple(
            f"{home}/skills/*/{name}" for home in (".claude", ".agents") for name in ("SKILL.md", "references/**/*.md")
        ),
        "https://agentskills.io/specification (Claude Code: https://code.claude.com/docs/en/skills)",
        Mode.SEARCH_ONLY,
    ),
    Convention(
        "cursor",
        "Cursor rules",
        ("**/.cursor/rules/**/*.mdc",),
        "https://cursor.com/docs/context/rules",
        Mode.ON_DEMAND,
        glob_keys=GLOB_KEYS,
        always_key=True,
    ),
    Convention(
        "copilot",
        "Copilot instructions",
        (".github/copilot-instructions.md", ".github/instructions/**/*.md"),
        "https://docs.github.com/en/copilot/customizing-copilot/adding-repository-custom-instructions-for-github-copilot",
        Mode.ON_DEMAND,
        glob_keys=("applyTo", "globs", "applies_to"),
        always_key=True,
    ),
    _WINDSURF,
    Convention(
        "windsurf",
        "Windsurf rules",
        ("/.windsurfrules",),
        "https://docs.windsurf.com/windsurf/cascade/memories#rules",
        Mode.ALWAYS,
    ),
    replace(
        _WINDSURF,
        key="devin",
        name="Devin rules",
        patterns=(".devin/rules/**/*.md",),
        docs="https://docs.devin.ai/desktop/cascade/memories",
    ),
    Convention(
        "cline",
        "Cline rules",
        ("/.clinerules", "!/.clinerules/**", "/.clinerules/**/*.md"),
        "https://docs.cline.bot/customization/cline-rules",
        Mode.ALWAYS,
        glob_keys=("paths",),
        lists_only=True,
    ),
    Convention(
        "kiro",
        "Kiro steering",
        (".kiro/steering/*.md",),
        "https://kiro.dev/docs/steering/#inclusion-modes",
        Mode.ALWAYS,
        glob_keys=("fileMatchPattern",),
        mode_key="inclusion",
        modes=_KIRO_MODES,
    ),
    Convention(
        "AGENTS.md", "AGENTS.md", ("AGENTS.md",), "https://agents.md", Mode.ON_DEMAND, GLOB_KEYS, always_key=True
    ),
    Convention(
        "CLAUDE.md",
        "CLAUDE.md",
        ("CLAUDE.md",),
        "https://code.claude.com/docs/en/memory",
        Mode.ON_DEMAND,
        GLOB_KEYS,
        always_key=True,
    ),
    Convention(
        "GEMINI.md",
        "GEMINI.md",
        ("GEMINI.md",),
        "https://geminicli.com/docs/cli/gemini-md",
        Mode.ON_DEMAND,
        GLOB_KEYS,
        always_key=True,
    ),
)
"""Every convention read, folders before bare names (a file belongs to the first that matches:
`.clinerules/AGENTS.md` is a Cline rule)."""

PATTERNS: tuple[str, ...] = tuple(p for c in CONVENTIONS for p in c.patterns)
"""Every convention's files, in gitignore syntax: what the conventional root serves."""

SHOWN: tuple[str, ...] = ("AGENTS.md", "CLAUDE.md", "GEMINI.md", "claude", "skill", "cursor", "copilot")
"""The order the instructions name the conventions in (the rest follow in `CONVENTIONS` order)."""

FOLDER_FILES = frozenset({"AGENTS.md", "CLAUDE.md", "GEMINI.md"})
"""Files whose folder is their scope: below the project's top they apply to what that folder holds."""

MARKERS: tuple[str, ...] = (
    "AGENTS.md",
    "CLAUDE.md",
    "GEMINI.md",
    ".claude/rules",
    ".claude/skills",
    ".cursor/rules",
    ".github/copilot-instructions.md",
    ".github/instructions",
    ".windsurf/rules",
    ".windsurfrules",
    ".devin/rules",
    ".clinerules",
    ".kiro/steering",
)
"""What shows a project folder has conventional agent files, checked at its top."""


@lru_cache(maxsize=1024)
def _spec(patterns: tuple[str, ...]) -> GitIgnoreSpec:
    return spec(patterns)


@lru_cache(maxsize=64)
def _own(patterns: tuple[str, ...]) -> Globs:
    """A convention's own patterns, matched as gitignore reads them, without pathspec."""
    return Globs.of(patterns)


@lru_cache(maxsize=4096)
def convention_of(rel: str) -> Convention | None:
    """The convention of a file of the conventional root, by its path from the project's top."""
    return next((c for c in CONVENTIONS if _own(c.patterns).match(rel)), None)


@dataclass(frozen=True, slots=True)
class Applies:
    """When a file applies, as its convention reads its front matter."""

    mode: Mode
    globs: tuple[str, ...] = ()
    key: str = ""
    """The front matter key the globs came from."""
    problem: str | None = None
    """Why a condition it sets was not used (the file then follows its convention's default), or
    what its tool would read differently; it starts with the key (`trigger: ...`)."""


def applies(
    convention: Convention, data: Mapping[str, object], globs: Mapping[str, tuple[str, ...]], always: bool = False
) -> Applies:
    """How a file of `convention` applies, from its front matter (`data`; `globs`: the patterns
    under each key, already read as lists; `always`: `alwaysApply: true`, which conventions
    without a key of their own for it follow, as Cursor's does)."""
    invalid = [(key, g) for key in convention.glob_keys for g in globs.get(key, ()) if not valid(g)]
    globs = {key: tuple(g for g in found if valid(g)) for key, found in globs.items()}
    found = next(((key, globs[key]) for key in convention.glob_keys if globs.get(key)), None)
    bad = next((key for key in convention.glob_keys if key in data and data[key] and not globs.get(key)), None)
    problem = f"{bad}: expected a glob or a list of globs" if bad else None
    if invalid:
        problem = f"{invalid[0][0]}: {invalid[0][1]} is not a glob this server can match, so it is left out"
    if found and convention.lists_only and isinstance(data.get(found[0]), str):
        problem = f"{found[0]}: {convention.name} read only a YAML list (as a string, the rule applies to every file)"
    if convention.mode_key is None or convention.modes is None:
        if always and convention.always_key:
            return Applies(Mode.ALWAYS, problem=problem)
        if found:
            return Applies(Mode.PATHS, found[1], found[0], problem)
        return Applies(convention.default, problem=problem)
    raw = data.get(convention.mode_key)
    if raw is None:
        if found and convention.globs_decide:
            return Applies(Mode.PATHS, found[1], found[0], problem)
        return Applies(convention.default, problem=problem)
    mode = convention.modes.get(str(raw))
    if mode is None:
        accepted = ", ".join(convention.modes)
        return Applies(convention.default, problem=f"{convention.mode_key}: {raw} is not one of {accepted}")
    if mode is Mode.PATHS:
        if found:
            return Applies(Mode.PATHS, found[1], found[0], problem)
        wanted = " or ".join(convention.glob_keys)
        return Applies(convention.default, problem=f"{convention.mode_key}: {raw} needs {wanted} with the paths")
    return Applies(mode, problem=problem)


MAX_ALTERNATIVES = 64
"""The most patterns one glob's braces may expand to (`{a,b}{c,d}` is four)."""


@lru_cache(maxsize=1024)
def valid(glob: str) -> bool:
    """Whether a glob can be matched: gitignore syntax once its braces are expanded (at most
    `MAX_ALTERNATIVES` patterns). A rule's invalid glob is dropped, with a problem for doctor."""
    expanded = expand_braces(glob)
    if not expanded or len(expanded) > MAX_ALTERNATIVES:
        return False
    try:
        _spec(tuple(expanded))
    except Exception:  # pathspec's own errors (GitIgnorePatternError) and whatever a pattern raises
        return False
    return True


def matches(glob: str, rel: str) -> bool:
    """Whether a rule's glob (gitignore syntax, braces expanded) matches a file's path from the
    project's top, in time linear in the path (`corpus.globs`); a glob that is not `valid`
    matches nothing."""
    found = _matcher(glob)
    return found is not None and found.match(rel)


@lru_cache(maxsize=1024)
def _matcher(glob: str) -> Globs | None:
    """The glob's matcher; None when it is not gitignore syntax once expanded. A rule's globs were
    checked by `valid` when its front matter was read; this takes no pathspec (the hook matches
    globs before every file touched), and reads invalid the same lines (`tests/corpus/test_globs.py`)."""
    expanded = expand_braces(glob)
    if not expanded or len(expanded) > MAX_ALTERNATIVES:
        return None
    try:
        return Globs.of(expanded)
    except InvalidGlob:
        return None


def expand_braces(glob: str) -> list[str]:
    """`src/**/*.{ts,tsx}` -> `src/**/*.ts`, `src/**/*.tsx` (as Claude Code and Kiro write globs;
    gitignore syntax has no braces). Nested braces expand too; an unclosed one is literal. Past
    `MAX_ALTERNATIVES` patterns the expansion stops (the glob is then not `valid`)."""
    done: list[str] = []
    todo = [glob]
    while todo and len(done) <= MAX_ALTERNATIVES:
        current = todo.pop(0)
        group = _first_group(current)
        if group is None:
            done.append(current)
            continue
        start, end, parts = group
        todo[:0] = [current[:start] + part + current[end + 1 :] for part in parts]
    return done + todo


def _first_group(glob: str) -> tuple[int, int, list[str]] | None:
    """The first closed `{...}` group: where it starts and ends, and its top-level alternatives."""
    start = glob.find("{")
    while start >= 0:
        depth, begin = 0, start + 1
        parts: list[str] = []
        for i in range(start, len(glob)):
            if glob[i] == "{":
                depth += 1
            elif glob[i] == "}":
                depth -= 1
                if depth == 0:
                    return start, i, [*parts, glob[begin:i]]
            elif glob[i] == "," and depth == 1:
                parts.append(glob[begin:i])
                begin = i + 1
        start = glob.find("{", start + 1)  # unclosed: look for a later group
    return None
