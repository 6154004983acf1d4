"""What the hook keeps of each agent file's parse between events: its front matter and its
sections, found once and then read back, so an event parses no markdown and no YAML unless a
rule changed (the parsers' import and work were most of an event's time).

One JSON file per project in the user's state folder (`parses/<digest of the project's path>.json`),
never in the project. An entry is keyed by the file's path, its convention and the digest of its
bytes, which every event reads afresh: a rule edited since is parsed again before it is given,
whatever its timestamps say, and its old entry is dropped. The file holds the entries the last
event used, is written only when that changed (`writes.atomic`), and is read like the session
records (`hook.sessions.read_json`: a plain file, bounded, never through a link): anything
else is parsed afresh and replaced.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import astuple, dataclass, field
from pathlib import Path
from typing import Any

from corpus.conventions import Convention
from corpus.files import CorpusFile
from corpus.frontmatter import FrontMatter
from corpus.markdown import is_markdown, is_mdx
from corpus.read import FileText
from hook.sessions import read_json
from retrieval.chunks.sections import SectionSpan, sections
from retrieval.chunks.units import Unit, sections_of
from writes.atomic import write_atomic
from writes.state import state_dir

VERSION = 1
"""Changes when an entry's shape or meaning does: an entry of another version is parsed again."""
MAX_MEMO = 8 << 20
"""The largest memo read, in bytes (some 20,000 rule files' sections)."""


@dataclass(slots=True)
class Memo:
    """The parses of one project's agent files: read at an event's start, saved at its end."""

    where: Path | None
    """Its file; None: kept for this event only (no state folder)."""
    known: dict[str, dict[str, Any]]
    used: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, project: Path) -> Memo:
        """The memo of `project` (resolved), empty if there is none or it cannot be read."""
        base = state_dir()
        if not base.is_absolute():
            return cls(None, {})
        digest = hashlib.sha256(str(project.resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:32]
        where = base / "parses" / f"{digest}.json"
        data = read_json(where, MAX_MEMO, "parse memo")
        entries = data.get("files") if isinstance(data, dict) and data.get("version") == VERSION else None
        known = {k: v for k, v in entries.items() if isinstance(v, dict)} if isinstance(entries, dict) else {}
        return cls(where, known)

    def front_matter(self, rel: str, text: FileText, convention: Convention | None) -> FrontMatter:
        """`frontmatter.parse`, or what it found for these bytes before."""
        key = _key(rel, convention.key if convention else "", text.digest)
        entry = self._entry(key)
        meta = _front_matter(entry.get("meta"))
        if meta is None:
            from corpus.frontmatter import parse

            meta = parse(rel, text.text, convention)
            entry["meta"] = [list(v) if isinstance(v, tuple) else v for v in astuple(meta)]
        return meta

    def sections(self, f: CorpusFile) -> list[Unit]:
        """`sections_of(f)`, from the sections found for these bytes before when there are."""
        entry = self._entry(_key(f.rel, f.meta.convention, f.digest))
        spans = _spans(entry.get("spans"))
        if spans is None:
            spans = sections(f.content(), markdown=is_markdown(f.rel), jsx=is_mdx(f.rel))
            entry["spans"] = [[s.heading, list(s.trail), s.level, s.start_line, s.end_line, s.anchor_id] for s in spans]
        return sections_of(f, spans)

    def _entry(self, key: str) -> dict[str, Any]:
        if key not in self.used:
            self.used[key] = dict(self.known.get(key, {}))
        return self.used[key]

    def save(self) -> None:
        """Written when this event's entries differ from what was read: the ones it used."""
        if self.where is None or self.used == self.known:
            return
        self.where.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        data = {"version": VERSION, "files": self.used}
        write_atomic(self.where, json.dumps(data, separators=(",", ":")).encode("utf-8"), mode=0o600)


def _key(rel: str, convention: str, digest: str) -> str:
    return f"{rel}\0{convention}\0{digest}"


def _front_matter(value: object) -> FrontMatter | None:
    """A `FrontMatter` from its stored fields, or None when they are not what one holds."""
    if not isinstance(value, list) or len(value) != len(FrontMatter.__slots__):
        return None
    title, description, tags, globs, always, convention, glob_key, search_only, problem = value
    if not (
        _str_or_none(title)
        and _str_or_none(description)
        and _strings(tags)
        and _strings(globs)
        and isinstance(always, bool)
        and isinstance(convention, str)
        and isinstance(glob_key, str)
        and isinstance(search_only, bool)
        and _str_or_none(problem)
    ):
        return None
    return FrontMatter(
        title, description, tuple(tags), tuple(globs), always, convention, glob_key, search_only, problem
    )


def _spans(value: object) -> list[SectionSpan] | None:
    if not isinstance(value, list):
        return None
    spans: list[SectionSpan] = []
    for item in value:
        if not (isinstance(item, list) and len(item) == 6):
            return None
        heading, trail, level, start, end, anchor = item
        if not (
            isinstance(heading, str)
            and _strings(trail)
            and all(isinstance(n, int) and not isinstance(n, bool) for n in (level, start, end))
            and _str_or_none(anchor)
        ):
            return None
        spans.append(SectionSpan(heading, tuple(trail), level, start, end, anchor))
    return spans


def _str_or_none(value: object) -> bool:
    return value is None or isinstance(value, str)


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)
