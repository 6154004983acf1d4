"""Finding the corpus roots and giving each a stable label.

A root's identity is its real path, resolved once at start-up: a symlinked `.AGENTS` is fine,
and if the folder is later replaced by a link elsewhere, the server keeps meaning the original.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path, PurePosixPath

from corpus.conventions import MARKERS, PATTERNS
from corpus.errors import RootNotFound
from corpus.names import printable

ENV_ROOT = "AGENTS_CONTEXT_ROOT"
DEFAULT_ROOT_NAMES = (".AGENTS", ".agents")


class RootKind(str, Enum):
    AGENTS = "agents"
    """The `.AGENTS` root: pinned files, searchable sections, windows."""
    DOCS = "docs"
    """A `--docs` root: windows for `search_docs` only."""


CONVENTIONAL_FILES: tuple[str, ...] = PATTERNS
"""The files agents already read, in gitignore syntax (`AGENTS.md` at any depth; see `corpus.conventions`)."""

CONVENTIONAL_PINS: tuple[str, ...] = ("AGENTS.md", "GEMINI.md")

CONVENTIONAL_MARKERS: tuple[str, ...] = MARKERS
"""What shows a project folder has conventional agent files, checked at its top."""


_GLOB_CHARS = re.compile(r"[*?\[\]\\]")
"""Characters a folder's name can hold that mean something in gitignore syntax."""


def _on_disk(path: Path) -> Path:
    """`path` with its last name spelled as its folder lists it: on a disk that ignores case,
    `.AGENTS` may be found as `.agents`, and the walk compares names as listed."""
    try:
        names = [entry.name for entry in path.parent.iterdir()]
    except OSError:
        return path
    if path.name in names:
        return path
    return path.with_name(next((n for n in names if n.casefold() == path.name.casefold()), path.name))


def _escaped(rel: str) -> str:
    return _GLOB_CHARS.sub(lambda m: "\\" + m.group(0), rel)


def has_conventional_files(folder: Path) -> bool:
    return any((folder / marker).exists() for marker in CONVENTIONAL_MARKERS)


@dataclass(frozen=True, slots=True)
class Root:
    path: Path
    """Real path, resolved at start-up."""
    label: str
    """The first segment of every display path: the name given with `--root NAME=DIR`, else the
    folder's name, or the nearest folder above that tells two same-named roots apart (see `resolve`)."""
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


PROJECT_MARKERS: tuple[str, ...] = (
    ".git",
    "package.json",
    "pyproject.toml",
    "setup.py",
    "Cargo.toml",
    "go.mod",
    "pom.xml",
    "build.gradle",
    "Gemfile",
    "composer.json",
    "Makefile",
)
"""What shows a folder is a whole project rather than an agents folder (checked at its top)."""


def project_markers(folder: Path) -> list[str]:
    """The markers of a whole project found at the top of `folder` (empty for an agents folder)."""
    return [m for m in PROJECT_MARKERS if (folder / m).exists()]


LABEL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def named(given: str) -> tuple[str | None, str]:
    """`--root NAME=DIR` -> (NAME, DIR); anything else, including an existing folder whose name
    holds `=`, -> (None, given). A NAME is letters, digits, `.`, `_` and `-`."""
    name, sep, folder = given.partition("=")
    if not sep or not name or not folder or Path(given).exists() or not set(name) <= LABEL_CHARS:
        return None, given
    return name, folder


@dataclass(frozen=True, slots=True)
class Wanted:
    """One root as asked for, before it is resolved and labelled."""

    kind: RootKind
    path: Path
    name: str | None = None
    """The label the user gave (`--root NAME=DIR`), else None: labelled by its folder."""
    include: tuple[str, ...] = ()
    pins: tuple[str, ...] | None = None


def make_roots(agents: Sequence[Path], docs: Sequence[Path] = (), conventional: Path | None = None) -> list[Root]:
    """The roots of these folders: `agents` (each a `.AGENTS` folder), the conventional agent
    files of the project folder `conventional`, and `docs`, resolved once and labelled
    (see `resolve`)."""
    wanted = [Wanted(RootKind.AGENTS, p) for p in agents]
    if conventional is not None:
        wanted.append(conventional_files(conventional, agents))
    wanted += [Wanted(RootKind.DOCS, p) for p in docs]
    return resolve(wanted)


def conventional_files(project: Path, agents: Sequence[Path] = ()) -> Wanted:
    """The project's conventional agent files, as a root to resolve. The `.AGENTS` folders inside
    it are left out: they are roots of their own (a project's `.agents/skills/` is served once)."""
    try:
        real = project.resolve()
        inside = [
            _on_disk(a.resolve()).relative_to(real).as_posix() for a in agents if a.resolve().is_relative_to(real)
        ]
    except (OSError, RuntimeError):
        inside = []
    left_out = tuple(f"!/{_escaped(rel)}/**" for rel in inside if rel != ".")
    return Wanted(RootKind.AGENTS, project, include=CONVENTIONAL_FILES + left_out, pins=CONVENTIONAL_PINS)


def resolve(wanted: Sequence[Wanted]) -> list[Root]:
    """Resolve each root once and label it: the name the user gave, else its folder's name as
    given; roots whose folder names are the same are labelled by the nearest folder above that
    tells them apart (`packages/api/.AGENTS` and `packages/web/.AGENTS` are `api` and `web`),
    and only when nothing does, `-2`, `-3`.

    Labels are compared case-insensitively, so two roots never get labels that differ only in case
    (they would collide on macOS and Windows). A given name that is taken is a `RootNotFound`.
    """
    scoped = sum(w.kind is RootKind.AGENTS for w in wanted) > 1
    reals = [_existing_dir(w.path, str(w.path)).resolve(strict=True) for w in wanted]
    # The name the user gave (a symlinked `.AGENTS` still shows as `.AGENTS/...`), else the
    # real folder's (for `.` or a bare drive).
    chains = [_names_up(w.path, real) for w, real in zip(wanted, reals, strict=True)]
    given = {w.name.casefold() for w in wanted if w.name}
    if len(given) < sum(1 for w in wanted if w.name):
        raise RootNotFound("two --root NAME=DIR give the same NAME: each root needs its own")
    labels: list[str] = []
    for i, (w, chain) in enumerate(zip(wanted, chains, strict=True)):
        if w.name:
            labels.append(w.name)
            continue
        rivals = [
            c for j, c in enumerate(chains) if j != i and not wanted[j].name and c[0].casefold() == chain[0].casefold()
        ]
        labels.append(_apart(chain, rivals))
    roots: list[Root] = []
    taken: set[str] = set(given)
    for w, real, base in zip(wanted, reals, labels, strict=True):
        label, n = base, 1
        while not w.name and label.casefold() in taken:
            n += 1
            label = f"{base}-{n}"
        taken.add(label.casefold())
        roots.append(
            Root(
                real,
                label,
                w.kind,
                str(w.path),
                scoped=scoped and w.kind is RootKind.AGENTS,
                include=w.include,
                pins=w.pins,
            )
        )
    return roots


def _names_up(given: Path, real: Path) -> list[str]:
    """The folder's name, then the names of the folders above it, nearest first."""
    absolute = Path(os.path.normpath(Path(given).absolute()))
    names = [printable(p.name) for p in (absolute, *absolute.parents) if p.name]
    return names or [printable(real.name or "root")]


def _apart(chain: list[str], rivals: list[list[str]]) -> str:
    """The nearest name in `chain` (after its own) that no rival has at the same height; the folder's
    own name when there is no rival or nothing tells them apart."""
    if not rivals:
        return chain[0]
    for height in range(1, len(chain)):
        name = chain[height].casefold()
        if all(height >= len(r) or r[height].casefold() != name for r in rivals):
            return chain[height]
    return chain[0]


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
    else as relative to the project. Either way the path is resolved first (links followed, `..`
    taken away), so `src/../../etc/passwd` is outside, not under `src/`. A path that cannot be
    resolved (a link loop, a NUL) is taken as written, `..` applied to the names before it."""
    text = source.strip().replace("\\", "/")
    project = project_of(root)
    if PurePosixPath(text).is_absolute() or (len(text) > 1 and text[1] == ":"):
        given = Path(text)
        return _inside(_real(given), project) if given.is_absolute() else None  # a drive path on POSIX: none here
    here = _inside(_real((base or Path.cwd()) / text), project)
    return here if here is not None else _inside(_real(project / text), project)


def relative_sources(roots: Iterable[Root], source: str, base: Path | None = None) -> dict[str, str]:
    """`source` relative to the project of each root that holds it, by root label
    (`relative_source`, `base` as there): where `context_for_path` and the hook ask which rules
    apply (`retrieval.search.applies.applicable`)."""
    return {r.label: rel for r in roots if (rel := relative_source(r, source, base)) is not None}


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):  # a link loop (RuntimeError before 3.13), a NUL
        return Path(os.path.normpath(path))


def _inside(path: Path, project: Path) -> str | None:
    try:
        rel = path.relative_to(project).as_posix()
    except ValueError:
        return None
    return None if rel == "." else rel
