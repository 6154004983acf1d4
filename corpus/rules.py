"""Which names a root never serves, and which files are pinned.

Every match here is case-insensitive on every OS: a `.ENV` on Linux is as secret as a `.env` on
macOS, and a `Overview.md` is as pinned as `overview.md`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from fnmatch import translate

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
    # environments and shells
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    # private keys, certificates and key stores
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
    # tools' credential files
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".pgpass",
    ".my.cnf",
    ".htpasswd",
    ".s3cfg",
    ".boto",
    ".vault-token",
    ".dockercfg",
    ".docker/config.json",
    ".aws/credentials",
    ".kube/config",
    "kubeconfig",
    "*.kubeconfig",
    # cloud keys and secrets files
    "credentials*.json",
    "application_default_credentials.json",
    "service-account*.json",
    "service_account*.json",
    "secrets.json",
    "secrets.yaml",
    "secrets.yml",
    "secrets.toml",
    # Terraform variables and state (state holds every secret it created, in clear)
    "*.tfvars",
    "*.tfvars.json",
    "*.tfstate",
    "*.tfstate.backup",
)
"""Patterns of files that hold credentials: never indexed, listed, pinned or served. A pattern
matches a file's name (`*.pem`), or, when it has a `/`, the last parts of its path inside the root
(`.docker/config.json` is any `config.json` in a `.docker` folder); case-insensitively, as
`fnmatch` does. Only credential files: `secrets.md` (a policy) and `config.json` are served."""

EDITOR_TEMP_PATTERNS: tuple[str, ...] = ("*~", "*.sw[a-p]", ".#*", "#*#", "4913", "*.tmp")
"""Editor scratch files (vim swap and backup, emacs locks and autosaves, atomic-save temps):
transient copies of real files, so never indexed and never a reason to re-index."""

DEFAULT_PINS: tuple[str, ...] = ("overview.md", "conventions.md")
"""Files directly under the `.AGENTS` root that reach the model at the start of every task."""


def is_ignored_dir(name: str) -> bool:
    return name.casefold() in IGNORED_DIRS


def _compiled(patterns: Iterable[str]) -> re.Pattern[str]:
    """One regular expression for several `fnmatch` patterns (a walk checks every name it lists)."""
    return re.compile("|".join(translate(p) for p in patterns) or "(?!)")


_SECRET_NAMES = _compiled(p for p in SECRET_PATTERNS if "/" not in p)
_SECRET_PATHS = {
    depth: _compiled(p for p in SECRET_PATTERNS if p.count("/") + 1 == depth)
    for depth in sorted({p.count("/") + 1 for p in SECRET_PATTERNS if "/" in p})
}
"""The path-shaped patterns by their number of parts: each matches that many last parts."""
_SECRET_PATH_NAMES = _compiled(p.rsplit("/", 1)[-1] for p in SECRET_PATTERNS if "/" in p)
"""The names path-shaped patterns end with: only a file so named needs its path checked."""


def is_secret(rel: str) -> bool:
    """Whether a file, by its relative POSIX path inside a root (or just its name), is a secret:
    its name matches a name pattern, or its last parts a path pattern."""
    folded = rel.casefold()
    name = folded.rsplit("/", 1)[-1]
    if _SECRET_NAMES.match(name):
        return True
    if not _SECRET_PATH_NAMES.match(name):
        return False
    parts = folded.split("/")
    return any(
        len(parts) >= depth and pattern.match("/".join(parts[-depth:])) is not None
        for depth, pattern in _SECRET_PATHS.items()
    )


_EDITOR_TEMP = _compiled(EDITOR_TEMP_PATTERNS)


def is_editor_temp(name: str) -> bool:
    return _EDITOR_TEMP.match(name.casefold()) is not None


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
