"""Finding the corpus roots and giving each a stable label.

A root's identity is its real path, resolved once at start-up: a symlinked `.AGENTS` is fine,
and if the folder is later replaced by a link elsewhere, the server keeps meaning the original.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from corpus.errors import RootNotFound

ENV_ROOT = "AGENTS_CONTEXT_ROOT"
DEFAULT_ROOT_NAMES = (".AGENTS", ".agents")


class RootKind(str, Enum):
    AGENTS = "agents"
    """The `.AGENTS` root: pinned files, searchable sections, windows."""
    DOCS = "docs"
    """A `--docs` root: windows for `search_docs` only."""


@dataclass(frozen=True, slots=True)
class Root:
    path: Path
    """Real path, resolved at start-up."""
    label: str
    """Folder name, made unique with `-2`, `-3`: the first segment of every display path."""
    kind: RootKind
    given: str
    """The path as the user gave it, for messages."""


def find_agents_root(
    given: str | None, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> Path:
    """The `.AGENTS` folder: `--root`, else `$AGENTS_CONTEXT_ROOT`, else `./.AGENTS` or `./.agents`.

    Raises `RootNotFound` with a message that says where it looked and how to point elsewhere.
    """
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else cwd
    if given:
        return _existing_dir(cwd / given, f"--root {given}")
    from_env = env.get(ENV_ROOT, "").strip()
    if from_env:
        return _existing_dir(cwd / from_env, f"{ENV_ROOT}={from_env}")
    for name in DEFAULT_ROOT_NAMES:
        candidate = cwd / name
        if candidate.is_dir():
            return candidate
    raise RootNotFound(
        f"no .AGENTS folder in {cwd}: create one, run from the project folder, "
        f"or pass --root DIR (or set {ENV_ROOT})"
    )


def _existing_dir(path: Path, source: str) -> Path:
    if not path.exists():
        raise RootNotFound(f"{source}: {path} does not exist")
    if not path.is_dir():
        raise RootNotFound(f"{source}: {path} is not a folder")
    return path


def make_roots(agents: Sequence[Path], docs: Sequence[Path] = ()) -> list[Root]:
    """Resolve each root once and label it by its folder name, `-2`, `-3` on repeats.

    Labels are compared case-insensitively, so two roots never get labels that differ only in case
    (they would collide on macOS and Windows).
    """
    roots: list[Root] = []
    taken: set[str] = set()
    for kind, paths in ((RootKind.AGENTS, agents), (RootKind.DOCS, docs)):
        for given in paths:
            real = _existing_dir(given, str(given)).resolve(strict=True)
            base = real.name or "root"
            label, n = base, 1
            while label.casefold() in taken:
                n += 1
                label = f"{base}-{n}"
            taken.add(label.casefold())
            roots.append(Root(path=real, label=label, kind=kind, given=str(given)))
    return roots


def root_present(root: Root) -> bool:
    """The root folder exists at its start-up real path, and is not now a link elsewhere."""
    try:
        return root.path.is_dir() and os.path.realpath(root.path) == str(root.path)
    except OSError:
        return False
