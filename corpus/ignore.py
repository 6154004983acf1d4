"""Ignore rules inside a root: an `.agentsignore` at its top and the `.gitignore` files in it.

Both use gitignore syntax (through `pathspec`). A `.gitignore` applies to its own folder and
below; deeper files override shallower ones, and `.agentsignore` has the last word. The ignore
files themselves are never part of the corpus.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec


AGENTSIGNORE = ".agentsignore"
GITIGNORE = ".gitignore"
IGNORE_FILES = frozenset({AGENTSIGNORE, GITIGNORE})


def spec(lines: Collection[str]) -> GitIgnoreSpec:
    """gitignore-syntax patterns, matched by pathspec (loaded on first use: a root without ignore
    files or patterns never needs it)."""
    from pathspec import GitIgnoreSpec

    return GitIgnoreSpec.from_lines(lines)


def names_in(folder: str) -> tuple[str, ...]:
    """The ignore files that count in `folder` (relative, "" for the root)."""
    return (GITIGNORE, AGENTSIGNORE) if folder == "" else (GITIGNORE,)


class IgnoreRules:
    """The ignore files of one root, loaded folder by folder as the walk (or a lookup) needs them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._specs: dict[str, list[tuple[str, GitIgnoreSpec]]] = {}
        self._chains: dict[str, list[tuple[int, str, GitIgnoreSpec]]] = {}
        """Per folder: the ignore files of it and its ancestors, with the depth of each (a walk
        asks about every file of a folder; most roots have one ignore file or none)."""

    def load(self, folder: str, present: Collection[str] | None = None) -> None:
        """Read the ignore files of `folder` (relative, "" for the root), once; `present`, when
        known, names the entries of the folder (so absent files are not even tried)."""
        if folder in self._specs:
            return
        specs: list[tuple[str, GitIgnoreSpec]] = []
        for name in names_in(folder):
            if present is not None and name not in present:
                continue
            path = Path(self.root, *folder.split("/"), name) if folder else self.root / name
            try:
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
            specs.append((name, spec(lines)))
        self._specs[folder] = specs

    def ignored(self, rel: str, is_dir: bool = False) -> str | None:
        """Why `rel` is ignored (`ignored by .gitignore`), or None. Loads ancestors as needed."""
        parts = rel.split("/")
        verdict: str | None = None
        for depth, name, spec in self._chain(parts):
            result = spec.check_file("/".join(parts[depth:]) + ("/" if is_dir else ""))
            if result.include is not None:
                verdict = f"ignored by {name}" if result.include else None
        return verdict

    def _chain(self, parts: list[str]) -> list[tuple[int, str, GitIgnoreSpec]]:
        """The ignore files that rule on a path of these parts, shallowest first."""
        folder = "/".join(parts[:-1])
        chain = self._chains.get(folder)
        if chain is None:
            chain = []
            for depth in range(len(parts)):
                above = "/".join(parts[:depth])
                self.load(above)
                chain += [(depth, name, spec) for name, spec in self._specs[above]]
            self._chains[folder] = chain
        return chain
