"""Finding the corpus roots and giving each a stable label.

A root's identity is its real path, resolved once at start-up: a symlinked `.AGENTS` is fine,
and if the folder is later replaced by a link elsewhere, the server keeps meaning the original.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path, PurePosixPath

from corpus.errors import RootNotFound
from corpus.names import printable

ENV_ROOT = "AGENTS_CONTEXT_ROOT"
DEFAULT_ROOT_NAMES = (".AGENTS", ".agents")


class RootKind(str, Enum):
    AGENTS = "agents"
    """The `.AGENTS` root: pinned files, searchable sections, windows."""
    DOCS = "docs"
    """A `--docs` root: windows for `search_docs` only."""


CONVENTIONAL_FILES: tuple[str, ...] = (
    "AGENTS.md",
    "CLAUDE.md",
    "**/.cursor/rules/**/*.mdc",
    ".github/copilot-instructions.md",
    ".github/instructions/**/*.md",
)
"""The files agents already read, in gitignore syntax (`AGENTS.md` at any depth)."""

CONVENTIONAL_PINS: tuple[str, ...] = ("AGENTS.md",)

CONVENTIONAL_MARKERS: tuple[str, ...] = (
    "AGENTS.md",
    "CLAUDE.md",
    ".cursor/rules",
    ".github/copilot-instructions.md",
    ".github/instructions",
)
"""What shows a project folder has conventional agent files, checked at its top."""


def has_conventional_files(folder: Path) -> bool:
    return any((folder / marker).exists() for marker in CONVENTIONAL_MARKERS)


@dataclass(frozen=True, slots=True)
class Root:
    path: Path
    """Real path, resolved at start-up."""
    label: str
    """Folder name, made unique with `-2`, `-3`: the first segment of every display path."""
    kind: RootKind
    given: str
    """The path as the user gave it, for messages."""
    scoped: bool = False
    """Its `agents://` URIs carry the label (there are several `.AGENTS` roots)."""
    include: tuple[str, ...] = ()
    """When set, only files matching these patterns belong to the corpus (the conventional root)."""
    pins: tuple[str, ...] | None = None
    """Default pins of this root, when they differ from overview.md and conventions.md."""


def find_agents_roots(
    given: Sequence[str], env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> list[Path]:
    """Every `--root` (each must exist), else `$AGENTS_CONTEXT_ROOT`, else `./.AGENTS` or
    `./.agents`, else none (the caller may fall back to the conventional files)."""
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else cwd
    if given:
        return [_existing_dir(cwd / g, f"--root {g}") for g in given]
    from_env = env.get(ENV_ROOT, "").strip()
    if from_env:
        return [_existing_dir(cwd / from_env, f"{ENV_ROOT}={from_env}")]
    return [cwd / name for name in DEFAULT_ROOT_NAMES if (cwd / name).is_dir()][:1]


def _existing_dir(path: Path, source: str) -> Path:
    if not path.exists():
        raise RootNotFound(f"{source}: {path} does not exist")
    if not path.is_dir():
        raise RootNotFound(f"{source}: {path} is not a folder")
    return path


def make_roots(agents: Sequence[Path], docs: Sequence[Path] = (), conventional: Path | None = None) -> list[Root]:
    """Resolve each root once and label it by its folder name as given, `-2`, `-3` on repeats.

    Labels are compared case-insensitively, so two roots never get labels that differ only in case
    (they would collide on macOS and Windows). `conventional` is a project folder whose
    AGENTS.md, CLAUDE.md, Cursor rules and Copilot instructions form one more `.AGENTS`-like root.
    """
    wanted: list[tuple[RootKind, Path, tuple[str, ...], tuple[str, ...] | None]] = [
        (RootKind.AGENTS, p, (), None) for p in agents
    ]
    if conventional is not None:
        wanted.append((RootKind.AGENTS, conventional, CONVENTIONAL_FILES, CONVENTIONAL_PINS))
    wanted += [(RootKind.DOCS, p, (), None) for p in docs]
    scoped = sum(kind is RootKind.AGENTS for kind, *_ in wanted) > 1
    roots: list[Root] = []
    taken: set[str] = set()
    for kind, given, include, pins in wanted:
        real = _existing_dir(given, str(given)).resolve(strict=True)
        # The name the user gave (a symlinked `.AGENTS` still shows as `.AGENTS/...`), else the
        # real folder's (for `.` or a bare drive).
        base = printable(Path(given).absolute().name or real.name or "root")
        label, n = base, 1
        while label.casefold() in taken:
            n += 1
            label = f"{base}-{n}"
        taken.add(label.casefold())
        roots.append(
            Root(
                real,
                label,
                kind,
                str(given),
                scoped=scoped and kind is RootKind.AGENTS,
                include=include,
                pins=pins,
            )
        )
    return roots


FolderId = tuple[int, int]
"""A folder's (device, inode): another one at the same path means it was deleted and recreated."""


def folder_id(path: Path) -> FolderId | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


_PRESENT: dict[str, FolderId] = {}
"""Each root folder's (device, inode) when it was last found present at its real path."""


def root_present(root: Root) -> bool:
    """The root folder exists at its start-up real path, and is not now a link elsewhere. A folder
    that is, by device and inode, the one found there last time needs no resolving of its path
    again (this runs before every answer); anything else is resolved."""
    where = str(root.path)
    try:
        st = os.lstat(where)
        if not stat.S_ISDIR(st.st_mode):  # gone, a file, or a link now
            return False
        identity = (st.st_dev, st.st_ino)
        if st.st_ino and _PRESENT.get(where) == identity:
            return True
        present = os.path.realpath(where) == where
    except OSError:
        return False
    if present and st.st_ino:
        _PRESENT[where] = identity
    return present


def project_of(root: Root) -> Path:
    """The folder a root's rules are about: the conventional root itself, else the `.AGENTS` parent."""
    return root.path if root.include else root.path.parent


def relative_source(root: Root, source: str, base: Path | None = None) -> str | None:
    """`source` relative to the root's project folder, or None if it is outside it. A relative
    `source` is taken from `base` (the server's working folder) when that lands in the project,
    else as already relative to the project."""
    text = source.strip().replace("\\", "/")
    path = PurePosixPath(text)
    absolute = path.is_absolute() or (len(text) > 1 and text[1] == ":")
    candidate = Path(text) if absolute else (base or Path.cwd()) / text
    try:
        real = candidate.resolve()
    except (OSError, RuntimeError, ValueError):  # a link loop (RuntimeError before 3.13), a NUL: as written
        real = Path(os.path.normpath(candidate))
    try:
        return real.relative_to(project_of(root)).as_posix()
    except ValueError:
        if absolute:
            return None
    rel = PurePosixPath(*[p for p in path.parts if p not in (".", "")]).as_posix()
    return None if rel.startswith("..") or rel == "." else rel
