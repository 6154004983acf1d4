"""YAML front matter: the few keys agent-context conventions use, parsed safely.

`title` (or `name`, as skill files have it), `description`, `tags`, `globs` (Cursor) or
`applies_to` (the path patterns a rule is for; a list or a comma-separated string), and
`alwaysApply` (Cursor: the rule is always in context, so the file is pinned). Anything else is
ignored; malformed YAML gives empty front matter, never an error.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from retrieval.sections import front_matter_end, is_markdown, split_lines


@dataclass(frozen=True, slots=True)
class FrontMatter:
    title: str | None = None
    description: str | None = None
    tags: tuple[str, ...] = ()
    globs: tuple[str, ...] = ()
    always_apply: bool = False


EMPTY = FrontMatter()


def parse(name: str, text: str) -> FrontMatter:
    if not is_markdown(name):
        return EMPTY
    lines = split_lines(text)
    end = front_matter_end(lines)
    if end < 2:
        return EMPTY
    try:
        data = yaml.safe_load("\n".join(lines[1 : end - 1]))
    except yaml.YAMLError:
        return EMPTY
    if not isinstance(data, dict):
        return EMPTY
    return FrontMatter(
        title=_text(data.get("title")) or _text(data.get("name")),
        description=_text(data.get("description")),
        tags=_items(data.get("tags")),
        globs=_items(data.get("globs")) or _items(data.get("applies_to")),
        always_apply=data.get("alwaysApply") is True or data.get("always_apply") is True,
    )


def _text(value: object) -> str | None:
    return " ".join(str(value).split()) if isinstance(value, (str, int, float)) and str(value).strip() else None


def _items(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(p.strip() for p in value.split(",") if p.strip())
    if isinstance(value, list):
        return tuple(str(v).strip() for v in value if isinstance(v, (str, int, float)) and str(v).strip())
    return ()
