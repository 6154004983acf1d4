"""Every setting of the server and the commands, with its default, in one object; and starting up
from it: which roots to serve, the index those roots make, the log.

`Settings()` holds every default (the flags in `cli.flags` take theirs from it). A setting owned
by a lower layer takes that layer's named constant as its default, so each value is written once.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Literal

from cli.bytecode import uncompiled
from corpus.catalog import Corpus
from corpus.errors import CorpusError, RootNotFound
from corpus.read import DEFAULT_MAX_BYTES
from corpus.roots import (
    CONVENTIONAL_MARKERS,
    DEFAULT_ROOT_NAMES,
    ENV_ROOT,
    Root,
    RootKind,
    Wanted,
    conventional_files,
    find_agents_roots,
    has_conventional_files,
    named,
    project_markers,
    resolve,
)
from corpus.rules import PinSet
from live import cache
from live.index import LiveIndex
from live.watch import WatchOptions
from retrieval.engine.memory import map_large_blocks
from retrieval.engine.ranking import DEFAULT as DEFAULT_RANKING
from retrieval.engine.ranking import Ranking
from retrieval.render.briefing import INSTRUCTIONS_BUDGET_CHARS, PINNED_BUDGET_BYTES, pinned
from retrieval.search.request import DEADLINE_S, Phase
from shared import relay
from shared.relay import Serving

log = logging.getLogger("agents_context")


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """What to serve and how: the flags, as values."""

    agents: tuple[Path, ...] = ()
    """The `.AGENTS` folders (see `find_roots`)."""
    names: tuple[str | None, ...] = ()
    """The label given to each of `agents` (`--root NAME=DIR`), None where none was."""
    docs: tuple[Path, ...] = ()
    conventional: Path | None = None
    """A project folder whose conventional agent files form one more root (`--conventional`)."""
    pins: tuple[str, ...] | None = None
    """`--pin`: replaces every root's default pins (None: the defaults)."""
    max_file_bytes: int = DEFAULT_MAX_BYTES
    score_floor: float = DEFAULT_RANKING.score_floor
    feedback: bool = DEFAULT_RANKING.feedback
    cache_dir: Path | None = None
    """The persistent index's folder (None: `$AGENTS_CONTEXT_CACHE_DIR`, else the user cache)."""
    no_cache: bool = False
    cache_max_mb: int = cache.MAX_MB
    """The cap on the cache entries' total size, in MB (0: no cap); the least recently used go first."""
    pinned_budget: int = PINNED_BUDGET_BYTES
    instructions_budget: int = INSTRUCTIONS_BUDGET_CHARS
    debounce_ms: int = 200
    poll_interval_s: float = 1.0
    """How often the watcher reports in when nothing changes, and polls when it polls."""
    poll: bool = False
    deadline_ms: int = int(DEADLINE_S * 1000)
    transport: Literal["stdio", "http"] = "stdio"
    relayed: Serving | None = None
    """Started by `agents-context-shared` (the state file it named): serve each relayed connection
    as a session, instead of `transport`."""
    host: str = "127.0.0.1"
    port: int = 8000
    hooked: bool = False
    """`--hooked`: the client runs our hook, which adds the pinned files at each session's start."""
    client: str | None = None
    """`--client`: the client to answer as (a key of `clients.known.BY_KEY`, or `other`), whatever
    name it gives; None: as it names itself."""
    log_level: str | None = None
    """None: INFO when serving, WARNING for the other commands."""
    log_file: str | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace, cwd: Path | None = None) -> Settings:
        """The settings the flags name, with the roots found (see `find_roots`). `RootNotFound` if
        there is nothing to serve."""
        cwd = cwd or Path.cwd()
        agents, names, conventional = find_roots(args, cwd)
        # Each other flag's dest is the name of its setting; a command without the flag keeps the default.
        flags = {f.name for f in fields(cls)} - {"agents", "names", "docs", "conventional", "pins", "relayed"}
        return cls(
            agents=tuple(agents),
            names=tuple(names),
            docs=tuple(Path(d) for d in args.docs if d),
            conventional=conventional,
            pins=tuple(args.pin) if args.pin is not None else None,
            relayed=relay.serving() if getattr(args, "command", "serve") == "serve" else None,
            **{name: value for name, value in vars(args).items() if name in flags},
        )

    @property
    def deadline_s(self) -> float:
        return self.deadline_ms / 1000

    @property
    def ranking(self) -> Ranking:
        return DEFAULT_RANKING.but(score_floor=self.score_floor, feedback=self.feedback)

    @property
    def watching(self) -> WatchOptions:
        return WatchOptions(self.debounce_ms, self.poll_interval_s, self.poll)

    def roots(self) -> list[Root]:
        """The roots, each resolved once and labelled (`RootNotFound` if one is gone)."""
        names = (*self.names, *[None] * (len(self.agents) - len(self.names)))
        wanted = [Wanted(RootKind.AGENTS, p, name) for p, name in zip(self.agents, names, strict=True)]
        if self.conventional is not None:
            wanted.append(conventional_files(self.conventional, self.agents))
        wanted += [Wanted(RootKind.DOCS, p) for p in self.docs]
        return resolve(wanted)

    def warnings(self) -> list[str]:
        """What in these settings is probably a mistake: a `--root` that is a whole project."""
        found = []
        for given in self.agents:
            markers = project_markers(given)
            if markers:
                found.append(
                    f"--root {given} looks like a whole project (it has {', '.join(markers)}), so every text "
                    f"file in it is indexed; for its agent files, --project {given} was probably meant"
                )
        return found


DEFAULTS = Settings()


def find_roots(args: argparse.Namespace, cwd: Path) -> tuple[list[Path], list[str | None], Path | None]:
    """The `.AGENTS` folders (with the label given to each), and the project folder whose
    conventional agent files are served, as the flags name them; only folders the user named, or
    the current folder when none is named:

    - `--root [NAME=]DIR` (repeatable): those folders; with `--conventional`, also the agent files
      of the project folder it names (bare: the first root's parent);
    - `--project DIR`: the project's `.AGENTS/` or `.agents/` and its conventional agent files;
    - `--conventional DIR` alone: that project's conventional agent files only;
    - none of these (or a bare `--conventional`): `$AGENTS_CONTEXT_ROOT` if set, else the current
      folder as a project.

    `RootNotFound` when the folders named hold nothing to serve (and no `--docs` is given)."""
    given = [named(g) for g in (args.root or [])]
    project: Path | None = getattr(args, "project", None)
    agents = find_agents_roots([folder for _, folder in given], cwd=cwd) if given else []
    names: list[str | None] = [name for name, _ in given]
    conventional: Path | None = None
    explicit = isinstance(args.conventional, str)
    if project is not None or not (given or explicit):  # a bare --conventional: the current project
        from_env = "" if project is not None else os.environ.get(ENV_ROOT, "").strip()
        if from_env:
            agents, names = find_agents_roots([], cwd=cwd), [None]
            return agents, names, None
        folder = cwd / project if project is not None else cwd
        if not folder.is_dir():
            raise RootNotFound(f"--project {project}: {folder} is not a folder")
        found = project_agents(folder)
        agents, names = [*found, *agents], [*[None] * len(found), *names]
        conventional = folder if has_conventional_files(folder) else None
        if not agents and conventional is None and not any(args.docs):
            markers = ", ".join(CONVENTIONAL_MARKERS[:-1]) + " or " + CONVENTIONAL_MARKERS[-1]
            raise RootNotFound(
                f"no .AGENTS folder and no agent files ({markers}) in {folder}: create .AGENTS/, pass --project "
                "with the project folder, or --root DIR"
            )
    elif args.conventional:
        conventional = cwd / args.conventional if explicit else (agents[0].parent if agents else cwd)
        if not conventional.is_dir():
            raise RootNotFound(f"--conventional {args.conventional}: {conventional} is not a folder")
    return agents, names, conventional


def project_agents(folder: Path) -> list[Path]:
    """A project's agents folder: `.AGENTS/`, else `.agents/` (one folder on a case-insensitive
    file system)."""
    return [folder / name for name in DEFAULT_ROOT_NAMES if (folder / name).is_dir()][:1]


def open_index(settings: Settings, background: bool = False) -> LiveIndex:
    """The corpus the settings name, indexed (`--docs` roots in a background thread with
    `background`); exit status 2, with the reason on stderr, if it cannot be."""
    try:
        roots = settings.roots()
    except CorpusError as exc:
        log.error("%s", exc)
        raise SystemExit(2) from None
    if not 0.0 <= settings.score_floor <= 1.0:
        log.error("--score-floor must be between 0 and 1, not %s", settings.score_floor)
        raise SystemExit(2)
    index_cache = None
    if not settings.no_cache:
        directory = (settings.cache_dir or cache.default_dir()).expanduser().resolve()
        inside = next((r for r in roots if directory.is_relative_to(r.path)), None)
        if inside is not None:
            log.error(
                "the cache folder %s is inside the corpus root %s, and the server never writes to "
                "the corpus: pass --cache-dir elsewhere, or --no-cache",
                directory,
                inside.path,
            )
            raise SystemExit(2)
        if settings.cache_max_mb < 0:
            log.error("--cache-max-mb must be 0 (no cap) or more, not %s", settings.cache_max_mb)
            raise SystemExit(2)
        index_cache = cache.IndexCache(directory, settings.ranking.fingerprint, settings.cache_max_mb * cache.MB)
    pins = PinSet(settings.pins) if settings.pins is not None else None
    live = LiveIndex(
        roots,
        pins,
        settings.max_file_bytes,
        ranking=settings.ranking,
        progress=progress,
        cache=index_cache,
        background=background,
    )
    if index_cache is not None:
        index_cache.prune()  # once the roots' own entries are read (and so marked in use)
    live.store.warnings = settings.warnings()
    return live


def progress(message: str) -> None:
    logging.getLogger("agents_context.progress").info("# %s", message)


SWITCH_INTERVAL_S = 0.0005
"""The interpreter's thread switch interval while serving (see `prepare_process`)."""


def prepare_process(settings: Settings) -> None:
    """The serving process set up: its logging, its thread switch interval, its memory."""
    configure_logging(settings.log_level or "INFO", settings.log_file)
    # Searches are CPU-bound, sweeps and reads wait on the disk: with the default 5 ms switch
    # interval a sweep's thread waits that long for the interpreter after each stat while a search
    # runs, and a 38k-file rescan took 40x its time under back-to-back calls. 0.5 ms bounds that.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    map_large_blocks()  # what a large build drops goes back to the system (see its docstring)


def configure_logging(level: str, log_file: str | None) -> None:
    """Everything to stderr (stdout is the protocol), and to `log_file` too when given."""
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        handlers.append(logging.FileHandler(log_file, encoding="utf-8", errors="backslashreplace"))
    for handler in handlers:
        handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=handlers, force=True)
    logging.getLogger("watchfiles").setLevel(logging.WARNING)


def announce(live: LiveIndex) -> None:
    """The start-up summary, on stderr: the pinned files and what is searched (both halves of the
    context), each docs root, what was skipped, the set-up warnings. Read from one view: a docs
    root's indexer may be updating the corpus meanwhile."""
    with live.view() as view:
        _announce(live, view.corpus, view.library.sections.n_docs)


def _announce(live: LiveIndex, corpus: Corpus, n_sections: int) -> None:
    for f in pinned(corpus):
        log.info("# pinned %s (%dB)", f.path, f.size)
    files = list(corpus.files.agents())  # the searchable ones: no record made of a docs root's (tldr: 0.1 s)
    n_pinned = sum(f.pinned for f in files)
    log.info("# searchable %d sections across %d files (%d pinned)", n_sections, len(files), n_pinned)
    for root in live.roots:
        if root.kind is RootKind.DOCS:
            n_files = len(live.files_of(root))
            building = live.condition(root)
            if building is None or not building.building:
                log.info("# docs %s (%s): %d files", root.label, root.path, n_files)
            elif building.phase is Phase.CHECKING:
                log.info(
                    "# docs %s (%s): %d files from the cache, checked in the background", root.label, root.path, n_files
                )
            else:
                log.info(
                    "# docs %s (%s): indexing in the background; answers are partial until done", root.label, root.path
                )
    for s in corpus.skipped:
        log.info("# skipped %s/%s: %s", s.root.label, s.rel, s.reason)
    for warning in [
        *live.warnings,
        *uncompiled(),
        *(f"--pin {p} matches no file, so it pins nothing" for p in corpus.unmatched_pins()),
    ]:
        log.warning("# %s", warning)
