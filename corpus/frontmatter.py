"""YAML front matter: the few keys agent-context conventions use, parsed safely.

`title` (or `name`, as skill files have it), `description`, `tags`, the path patterns a rule is
for: `globs` (Cursor), `applyTo` (Copilot's `.github/instructions/*.instructions.md`) or
`applies_to`, each a list or a comma-separated string, and `alwaysApply` (Cursor: the rule is
always in context, so the file is pinned). Anything else is ignored.

Cursor writes globs unquoted (`globs: **/*.tsx, src/**`), which is not valid YAML (`*` starts an
alias). When the YAML does not parse, the plain values of the text keys are quoted and it is
parsed again; front matter that still does not parse is ignored, never an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from corpus.markdown import front_matter_end, is_markdown, split_lines


@dataclass(frozen=True, slots=True)
class FrontMatter:
    title: str | None = None
    description: str | None = None
    tags: tuple[str, ...] = ()
    globs: tuple[str, ...] = ()
    always_apply: bool = False


EMPTY = FrontMatter()

GLOB_KEYS = ("globs", "applyTo", "applies_to")
"""Where the path patterns may be, in order of precedence."""
_TEXT_KEYS = ("title", "name", "description", "tags", *GLOB_KEYS)
_PLAIN = re.compile(rf"^({'|'.join(_TEXT_KEYS)})(\s*:[ \t]+)(?![\s'\"\[{{|>#])(.*?)(\s+#.*)?\s*$")
"""A top-level text key with an unquoted one-line value (not quoted, a flow list, a block), and
its comment."""


def parse(name: str, text: str) -> FrontMatter:
    if not is_markdown(name):
        return EMPTY
    lines = split_lines(text)
    end = front_matter_end(lines)
    if end < 2:
        return EMPTY
    data = _load(lines[1 : end - 1])
    if not isinstance(data, dict):
        return EMPTY
    return FrontMatter(
        title=_text(data.get("title")) or _text(data.get("name")),
        description=_text(data.get("description")),
        tags=_items(data.get("tags")),
        globs=next((found for key in GLOB_KEYS if (found := _items(data.get(key)))), ()),
        always_apply=data.get("alwaysApply") is True or data.get("always_apply") is True,
    )


def _load(lines: list[str]) -> object:
    import yaml  # only files with front matter need it: loaded on the first (start-up stays light)

    try:
        return yaml.safe_load("\n".join(lines))
    except yaml.YAMLError:
        pass
    try:
        return yaml.safe_load("\n".join(_PLAIN.sub(_quoted, line) for line in lines))
    except yaml.YAMLError:
        return None


def _quoted(match: re.Match[str]) -> str:
    key, colon, value = match.group(1, 2, 3)
    escaped = value.replace("'", "''")
    return f"{key}{colon}'{escaped}'"


def _text(value: object) -> str | None:
    return " ".join(str(value).split()) if isinstance(value, (str, int, float)) and str(value).strip() else None


def _items(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(p.strip() for p in value.split(",") if p.strip())
    if isinstance(value, list):
        return tuple(str(v).strip() for v in value if isinstance(v, (str, int, float)) and str(v).strip())
    return ()
