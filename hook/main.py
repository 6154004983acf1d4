"""`agents-context-hook CLIENT` (also `agents-context hook CLIENT`): run by a coding agent's host
as a hook, it adds to the model's context what the host would not: at a session's start (and
after a compaction) the pinned files the client does not load itself; when a file is touched,
the rules that apply to it as `context_for_path` decides, less what the client adds itself, each
rule once per session. It reads the host's JSON on stdin and prints the host's way of adding
context (`clients.known.HOOKED`: each client's `Hook`); it keeps what each session was given in the user's state folder
(`hook.sessions`).

Never in the way: it always exits 0, whatever its arguments, its input and its state folder hold;
on any problem it prints nothing (or the host's empty answer) and logs one line to `hook.log` in
the user's state folder; it never writes into the project. A payload of another host (several
hosts run `.claude/settings.json` hooks) is recognised and ignored. A payload over `MAX_PAYLOAD`
bytes, not UTF-8, or not JSON is ignored; so is a path that cannot be a project's file
(`corpus.names.too_long`, `too_deep`, a NUL) or that resolves outside the project, and a project
that is the user's home folder or a file system's top (walking all of it would outlast any host).

Import-light, as it runs before every file the agent touches: no MCP SDK, pydantic or numpy.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO

from clients.client import Client, Hook
from clients.known import HOOKED, loaded_by
from clients.payloads import Event
from corpus.catalog import Corpus, load
from corpus.files import CorpusFile
from corpus.names import too_deep, too_long
from corpus.roots import DEFAULT_ROOT_NAMES, has_conventional_files, make_roots, relative_sources
from hook.memo import Memo
from hook.sessions import Session, log, sweep
from retrieval.chunks.units import Unit, sections_of
from retrieval.render.briefing import listing, pinned
from retrieval.render.grammar import inline
from retrieval.render.rules import Handed, RuleFile, hand
from retrieval.search.applies import Applicable, applicable
from retrieval.search.fitting import best_first, names_the_file

__all__ = ["at_start", "main", "on_touch", "respond"]

MAX_PAYLOAD = 4 << 20
"""The largest payload read, in bytes (a Write of a file over 4 MiB gets no rules)."""
_DRAIN = 64 << 20
"""What is read and dropped of a larger payload, so the host's write ends (then the pipe closes)."""


class Ignored(Exception):
    """A payload, or part of one, the hook does not act on: logged, nothing printed."""


# --- what to add -------------------------------------------------------------------------------

READ_PINNED = "your file tool or the agents-context pinned_context tool"
READ_RULES = "the agents-context read_context tool (path and section) or your file tool"


def corpus_of(project: Path, memo: Memo | None = None) -> Corpus:
    """What `--project` serves for this folder: its `.AGENTS/` and its conventional agent files
    (their front matter as `memo` keeps it, when given)."""
    agents = [project / name for name in DEFAULT_ROOT_NAMES if (project / name).is_dir()][:1]
    roots = make_roots(agents, conventional=project if has_conventional_files(project) else None)
    return load(roots, front_matter=memo.front_matter) if memo is not None else load(roots)


def at_start(event: Event, client: Client, corpus: Corpus, limit: int, memo: Memo | None = None) -> Handed | None:
    """The pinned files the client does not load itself: whole within `limit`, else their best
    sections, the rest named; None when there are none."""
    loaded = loaded_by(client, corpus)
    files = pinned(corpus)
    sent = [f for f in files if f.path not in loaded]
    if not sent:
        return None
    sections = memo.sections if memo is not None else sections_of
    head = "agents-context: the project's pinned agent files, which apply to every task."
    itself = [f.path for f in files if f.path in loaded]
    if itself:
        head += f" ({client.name} loaded {listing([inline(p) for p in itself], len(itself))} itself.)"
    offered = [_rule_file(f, "", sections(f)) for f in sent]
    return hand(head, offered, limit, READ_PINNED)


def on_touch(event: Event, host: Hook, corpus: Corpus, session: Session, limit: int, memo: Memo | None = None) -> str:
    """The rule files that apply to the event's files, less what this session was given and
    what the host adds itself: each named once, the short ones whole, the best-fitting sections
    of the long ones."""
    sections = memo.sections if memo is not None else sections_of
    found: dict[str, list[Applicable]] = {}
    for path in event.paths:
        for item in applicable(corpus, relative_sources(corpus.agents_roots, path, event.cwd), sections):
            f = corpus.files.get(item.unit.path)
            if f is None or f.pinned:  # a pinned file came at the session's start
                continue
            if host.adds(event, f):  # the model has it from the host: given
                session.given.add(item.unit.id)
                continue
            found.setdefault(f.path, []).append(item)
    offered: list[RuleFile] = []
    for path, items in found.items():
        applying = {a.unit.id: a.unit for a in items}
        units = [u for key, u in applying.items() if key not in session.given]
        if len(units) < len(applying):  # given in part before: what names this file
            units = [u for u in units if names_the_file(u, event.paths)]
        if not units:
            continue
        ranked = best_first(sorted(units, key=lambda u: u.start_line), event.paths, event.tool)
        rule = _rule_file(corpus.files[path], items[0].reason, ranked, total=len(applying))
        if f"{path}#outline" in session.given:
            rule = replace(rule, outlined=True)
        offered.append(rule)
    if not offered:
        return ""
    shown = ", ".join(inline(_relative(event, p)) for p in event.paths)
    head = f"agents-context: the project's agent files have rules for {shown}:"
    handed = hand(head, offered, limit, READ_RULES)
    session.given.update(handed.given)
    return handed.text


def _rule_file(f: CorpusFile, applies: str, units: Sequence[Unit], total: int | None = None) -> RuleFile:
    """`f` as the hook offers it: `units` not given yet, best first; `total` sections apply."""
    return RuleFile(
        path=f.path,
        applies=applies,
        description=f.meta.description or "",
        lines=f.text.count("\n") + (0 if f.text.endswith("\n") else 1),
        sections=tuple(units),
        total=len(units) if total is None else total,
    )


def _relative(event: Event, path: str) -> str:
    try:
        return Path(path).resolve().relative_to(event.project.resolve()).as_posix()
    except (OSError, ValueError):
        return path


def usable(path: str) -> str | None:
    """Why the hook ignores a path a payload names, or None."""
    if "\0" in path:
        return "a path with a NUL character names no file"
    return too_long(path) or too_deep(path)


def project_of(event: Event) -> Path:
    """The event's project folder; `Ignored` if it is not one the hook reads."""
    project = event.project
    if not project.is_dir():
        raise Ignored(f"the project folder {project} is not a folder")
    real = project.resolve()
    try:
        home = Path("~").expanduser().resolve()
    except RuntimeError:  # no home folder known
        home = None
    if real.parent == real or real == home:
        raise Ignored(f"the project folder {project} is the home folder or a file system's top: not read")
    return project


# --- the command ---------------------------------------------------------------------------------


def respond(client: str, payload: object) -> str:
    """What the hook prints for `payload` ('' for nothing)."""
    known = HOOKED[client]
    host = known.hook
    if host is None:  # HOOKED holds the clients with a hook
        raise Ignored(f"{client} runs no hook")
    event = host.read(payload) if isinstance(payload, dict) else None
    if event is None:
        return ""
    if not event.start:
        for path in event.paths:
            if why := usable(path):
                log(f"{client}: {why}: ignored")
        event = replace(event, paths=tuple(p for p in event.paths if usable(p) is None))
        if not event.paths:
            return ""
    project = project_of(event)
    memo = Memo.of(project)
    corpus = corpus_of(project, memo)
    with Session.held(client, event.session, event.reset) as session:
        if event.start:
            sweep(frozenset(HOOKED))
            handed = at_start(event, known, corpus, host.limit, memo)
            text = handed.text if handed is not None else ""
        else:
            text = on_touch(event, host, corpus, session, host.limit, memo)
    memo.save()
    return host.write(event, text) if text else ""


def read_payload(stream: BinaryIO | None) -> object:
    """The host's JSON, read as bytes: `Ignored` when there is none, when it is over
    `MAX_PAYLOAD` bytes (the rest read and dropped, up to `_DRAIN`), not UTF-8, not JSON, or
    nested deeper than Python's parser goes."""
    if stream is None:
        raise Ignored("no standard input")
    data = stream.read(MAX_PAYLOAD + 1)
    if len(data) > MAX_PAYLOAD:
        dropped = 0
        while dropped < _DRAIN and (chunk := stream.read(1 << 20)):
            dropped += len(chunk)
        raise Ignored(f"a payload over {MAX_PAYLOAD:,} bytes")
    try:
        return json.loads(data.decode("utf-8") or "null")
    except UnicodeDecodeError:
        raise Ignored("a payload that is not UTF-8") from None
    except RecursionError:
        raise Ignored("a payload nested too deep to read") from None
    except ValueError as exc:
        raise Ignored(f"a payload that is not JSON ({exc})") from None


def main(argv: Sequence[str] | None = None) -> int:
    """`agents-context-hook CLIENT`: always 0; the host's output on stdout, or nothing."""
    warnings.simplefilter("ignore")  # a warning (a glob Python reads oddly) would reach the host
    args = list(sys.argv[1:] if argv is None else argv)
    client = args[0] if args and args[0] in HOOKED else None
    started = time.monotonic()
    out = ""
    try:
        if client is None:
            raise Ignored(f"the first argument must be one of {', '.join(HOOKED)}, not {args[:1]}")
        out = respond(client, read_payload(getattr(sys.stdin, "buffer", None)))
    except Exception as exc:  # never in the way: log and say nothing (or the host's "nothing")
        why = str(exc) if isinstance(exc, Ignored) else f"{type(exc).__name__}: {exc}"
        log(f"{' '.join(args)}: {why}")
    else:
        if os.environ.get("AGENTS_CONTEXT_HOOK_TIMING"):
            log(f"{' '.join(args)}: {1000 * (time.monotonic() - started):.1f} ms")
    _print(out or (_silent(client) if client else ""))
    return 0


def _silent(client: str) -> str:
    hook = HOOKED[client].hook
    return hook.silent if hook is not None else ""


def _print(out: str) -> None:
    """`out` on stdout; a host that closed its end gets nothing, and no error at exit."""
    if not out:
        return
    try:
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    except (OSError, ValueError, AttributeError) as exc:
        log(f"the answer could not be written ({type(exc).__name__}): the host closed its end?")
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # Python flushes stdout at exit: nothing left to fail


if __name__ == "__main__":
    sys.exit(main())
