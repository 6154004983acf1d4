"""Which names a root never serves, and which files are pinned.

Every match here is case-insensitive on every OS: a `.ENV` on Linux is as secret as a `.env` on
macOS, and a `Overview.md` is as pinned as `overview.md`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from fnmatch import fnmatchcase

IGNORED_DIRS: frozenset[str] = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".jj",
        "__pycache__",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        "node_modules",
        ".venv",
        ".tox",
    }
)
"""Directory names never walked (version control, caches, environments)."""

SECRET_PATTERNS: tuple[str, ...] = (
    ".env",
    ".env.*",
    "*.env",
    "*.key",
    "*.pem",
    "*.p12",
    "*.pfx",
    "*.crt",
    "*.cer",
    "*.der",
    "*.jks",
    "*.keystore",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "*.kdbx",
    ".netrc",
    ".npmrc",
    ".pypirc",
    "credentials*.json",
)
"""File-name patterns that look like credentials: never indexed, listed, pinned or served."""

EDITOR_TEMP_PATTERNS: tuple[str, ...] = ("*~", "*.sw[a-p]", ".#*", "#*#", "4913", "*.tmp")
"""Editor scratch files (vim swap and backup, emacs locks and autosaves, atomic-save temps):
transient copies of real files, so never indexed and never a reason to re-index."""

DEFAULT_PINS: tuple[str, ...] = ("overview.md", "conventions.md")
"""Files directly under the `.AGENTS` root that reach the model at the start of every task."""


def is_ignored_dir(name: str) -> bool:
    return name.casefold() in IGNORED_DIRS


def is_secret(name: str) -> bool:
    folded = name.casefold()
    return any(fnmatchcase(folded, pattern) for pattern in SECRET_PATTERNS)


def is_editor_temp(name: str) -> bool:
    folded = name.casefold()
    return any(fnmatchcase(folded, pattern) for pattern in EDITOR_TEMP_PATTERNS)


class PinSet:
    """The pinned relative paths of the `.AGENTS` root, compared case-insensitively.

    `PinSet()` pins the defaults; `PinSet([...])` replaces them (`--pin REL`, repeatable);
    an empty string among them (`--pin ''`) pins nothing.
    """

    def __init__(self, pins: Iterable[str] | None = None) -> None:
        chosen = DEFAULT_PINS if pins is None else tuple(pins)
        self._order = [p.replace("\\", "/").strip("/").casefold() for p in chosen if p.strip()]
        self._folded = frozenset(self._order)

    def __contains__(self, rel: str) -> bool:
        return rel.casefold() in self._folded

    def __iter__(self) -> Iterator[str]:
        """The pins, case-folded, in the order given."""
        return iter(self._order)

    def rank(self, rel: str) -> int:
        """Position in the pin list, so pinned files are shown in the order they were pinned."""
        folded = rel.casefold()
        return self._order.index(folded) if folded in self._folded else len(self._order)

    def __bool__(self) -> bool:
        return bool(self._folded)
