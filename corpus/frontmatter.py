"""YAML front matter: the few keys agent-file conventions use, parsed safely.

`title` (or `name`, as skill files have it), `description`, `tags`, and when the file applies: the
path patterns a rule is for (`globs` (Cursor), `applyTo` (Copilot) or `applies_to` in any file;
`paths` in Claude Code's and Cline's rules, `fileMatchPattern` in Kiro's steering), a list or a
comma-separated string; `alwaysApply` (Cursor: the rule is always in context, so the file is
pinned); Windsurf's and Devin's `trigger`, Kiro's `inclusion`. What each means for a file of each
convention is `corpus.conventions`. Anything else is ignored.

Cursor writes globs unquoted (`globs: **/*.tsx, src/**`), which is not valid YAML (`*` starts an
alias). When the YAML does not parse, the plain values of the text keys are quoted and it is
parsed again. Front matter that still does not parse is never an error: the file is served as if
it had none (its convention's default), and `problem` says why, with the line, for `doctor`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache

from corpus.conventions import CONVENTIONS, GLOB_KEYS, Convention, Mode, applies
from corpus.markdown import front_matter_end, is_markdown, split_lines


@dataclass(frozen=True, slots=True)
class FrontMatter:
    title: str | None = None
    description: str | None = None
    tags: tuple[str, ...] = ()
    globs: tuple[str, ...] = ()
    """The paths the file applies to (`context_for_path`), as written."""
    always_apply: bool = False
    """It applies to every task: the file is pinned."""
    convention: str = ""
    """The key of its convention (`claude`, `cursor`, `skill`, ...; see `corpus.conventions`), or ''."""
    glob_key: str = ""
    """The front matter key its globs came from (`paths`, `globs`, `applyTo`, ...)."""
    search_only: bool = False
    """Its own condition is not a path (a description, or by hand): only searching reaches it."""
    problem: str | None = None
    """Why (part of) its front matter was not used, with the line: `line 3: ...`."""


EMPTY = FrontMatter()

_ALL_GLOB_KEYS = tuple(dict.fromkeys(k for c in CONVENTIONS for k in c.glob_keys))
_MODE_KEYS = tuple(dict.fromkeys(c.mode_key for c in CONVENTIONS if c.mode_key))
_TEXT_KEYS = ("title", "name", "description", "tags", *_ALL_GLOB_KEYS, *_MODE_KEYS)
_PLAIN = re.compile(rf"^({'|'.join(_TEXT_KEYS)})(\s*:[ \t]+)(?![\s'\"\[{{|>#])(.*?)(\s+#.*)?\s*$")
"""A top-level text key with an unquoted one-line value (not quoted, a flow list, a block), and
its comment."""
_ITEM = re.compile(r"^(\s+-[ \t]+)(?![\s'\"\[{|>#&!])(.*?)\s*$")
"""An indented list item with an unquoted value (`  - **/*.ts`, a glob YAML reads as an alias)."""


def parse(name: str, text: str, convention: Convention | None = None) -> FrontMatter:
    """The front matter of a file called `name` (a relative path); `convention`: the one it
    belongs to, whose default applies when the front matter sets no condition."""
    if not is_markdown(name):
        return EMPTY if convention is None else _meaning(convention, {}, None, always=False)
    lines = split_lines(text)
    end = front_matter_end(lines)
    raw, problem = _load(lines[1 : end - 1]) if end >= 2 else (None, None)
    data = raw if isinstance(raw, dict) else {}
    if raw is not None and not isinstance(raw, dict):
        problem = "line 2: front matter is not `key: value` lines"
    always = data.get("alwaysApply") is True or data.get("always_apply") is True
    if convention is not None:
        meaning = _meaning(convention, data, problem, always)
        if meaning.problem and not meaning.problem.startswith("line "):
            key = meaning.problem.split(":", 1)[0]
            number = next((i + 1 for i, line in enumerate(lines[:end]) if line.startswith(f"{key}:")), 1)
            meaning = replace(meaning, problem=f"line {number}: {meaning.problem}")
        return meaning
    if not data and problem is None:
        return EMPTY
    key, globs = next(((k, found) for k in GLOB_KEYS if (found := _items(data.get(k)))), ("", ()))
    return FrontMatter(*_about(data), globs=globs, glob_key=key, always_apply=always, problem=problem)


def _meaning(convention: Convention, data: dict[object, object], problem: str | None, always: bool) -> FrontMatter:
    lists = {key: _items(data.get(key)) for key in convention.glob_keys}
    found = applies(convention, {str(k): v for k, v in data.items()}, lists, always)
    return FrontMatter(
        *_about(data),
        globs=found.globs,
        always_apply=found.mode is Mode.ALWAYS,
        convention=convention.key,
        glob_key=found.key,
        search_only=found.mode is Mode.SEARCH_ONLY,
        problem=problem or found.problem,
    )


def _about(data: dict[object, object]) -> tuple[str | None, str | None, tuple[str, ...]]:
    return _text(data.get("title")) or _text(data.get("name")), _text(data.get("description")), _items(data.get("tags"))


def _load(lines: list[str]) -> tuple[object, str | None]:
    """The YAML's value, and what was wrong with it (None when it parsed)."""
    load = _loader()
    try:
        return load("\n".join(lines)), None
    except Exception as exc:  # YAMLError; also ValueError (`2024-02-30`, `!!int x`), RecursionError
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 2}" if mark is not None else "line 2"
        reason = getattr(exc, "problem", None) or (str(exc).splitlines() or [type(exc).__name__])[0][:100]
        problem = f"{where}: not valid YAML ({reason})"
    try:
        return load("\n".join(_PLAIN.sub(_quoted, _ITEM.sub(_quoted_item, line)) for line in lines)), None
    except Exception:
        return None, problem


@lru_cache(maxsize=1)
def _loader() -> Callable[[str], object]:
    """PyYAML's safe loader, but dates stay text (`updated: 2024-02-30` is not an error, and a
    `description: 2024-01-01` is shown as written). Loaded on first use: start-up stays light."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    timestamp = "tag:yaml.org,2002:timestamp"
    Loader.yaml_implicit_resolvers = {
        first: [(tag, pattern) for tag, pattern in resolvers if tag != timestamp]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    return lambda text: yaml.load(text, Loader=Loader)


def _quoted_item(match: re.Match[str]) -> str:
    dash, value = match.group(1, 2)
    escaped = value.replace("'", "''")
    return f"{dash}'{escaped}'"


def _quoted(match: re.Match[str]) -> str:
    key, colon, value = match.group(1, 2, 3)
    escaped = value.replace("'", "''")
    return f"{key}{colon}'{escaped}'"


def _text(value: object) -> str | None:
    shown = isinstance(value, (str, int, float)) and str(value).strip()
    return " ".join(str(value).split()) if shown else None


def _items(value: object) -> tuple[str, ...]:
    """A list, or a comma-separated string (commas inside `{a,b}` braces are the glob's own)."""
    if isinstance(value, str):
        return tuple(p.strip() for p in _commas(value) if p.strip())
    if isinstance(value, list):
        return tuple(str(v).strip() for v in value if isinstance(v, (str, int, float)) and str(v).strip())
    return ()


def _commas(value: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, char in enumerate(value):
        depth += (char == "{") - (char == "}")
        if char == "," and depth <= 0:
            parts.append(value[start:i])
            start = i + 1
    return [*parts, value[start:]]
