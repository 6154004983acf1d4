"""`agents-context-hook CLIENT` (also `agents-context hook CLIENT`): run by a coding agent's host
as a hook, it adds to the model's context what the host would not: at a session's start (and
after a compaction) the pinned files the client does not load itself; when a file is touched,
the rules that apply to it as `context_for_path` decides, less what the client adds itself, each
rule once per session. It reads the host's JSON on stdin and prints the host's way of adding
context (`cli.payloads.HOSTS`); it keeps what each session was given in the user's state folder
(`cli.hookstate`).

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

from cli.hookstate import Session, log, sweep
from cli.payloads import HOSTS, Event, Host, shell_paths
from corpus.catalog import Corpus, load
from corpus.clients import BY_KEY, Client, loaded_by
from corpus.names import too_deep, too_long
from corpus.roots import DEFAULT_ROOT_NAMES, has_conventional_files, make_roots, relative_source
from retrieval.search.applies import Applicable, applicable

__all__ = ["HOSTS", "Event", "Host", "answer", "at_start", "main", "on_touch", "shell_paths"]

MAX_PAYLOAD = 4 << 20
"""The largest payload read, in bytes (a Write of a file over 4 MiB gets no rules)."""
_DRAIN = 64 << 20
"""What is read and dropped of a larger payload, so the host's write ends (then the pipe closes)."""


class Ignored(Exception):
    """A payload, or part of one, the hook does not act on: logged, nothing printed."""


# --- what to add -------------------------------------------------------------------------------


def corpus_of(project: Path) -> Corpus:
    """What `--project` serves for this folder: its `.AGENTS/` and its conventional agent files."""
    agents = [project / name for name in DEFAULT_ROOT_NAMES if (project / name).is_dir()][:1]
    return load(make_roots(agents, conventional=project if has_conventional_files(project) else None))


def at_start(event: Event, client: Client, corpus: Corpus, limit: int) -> str:
    """The pinned files the client does not load itself, whole within `limit`, the rest named."""
    loaded = loaded_by(client, corpus)
    files = sorted((f for f in corpus.files.values() if f.pinned), key=lambda f: (f.root.label, f.rel))
    sent = [f for f in files if f.path not in loaded]
    if not sent:
        return ""
    names = _names([f.path for f in sent])
    head = f"agents-context: the project's pinned agent files, which apply to every task: {names}."
    itself = [f.path for f in files if f.path in loaded]
    if itself:
        head += f" ({client.name} loaded {_names(itself)} itself.)"
    blocks = [(f.path, f"From {f.path}:\n{f.content().strip()}") for f in sent]
    return fit(head, blocks, limit, "read them with your file tool or the agents-context pinned_context tool")


def on_touch(event: Event, host: Host, corpus: Corpus, session: Session, limit: int) -> str:
    """The rules that apply to the event's files and this session has not been given."""
    rules: list[Applicable] = []
    seen: set[str] = set()
    for path in event.paths:
        where = {r.label: rel for r in corpus.agents_roots if (rel := relative_source(r, path, event.cwd)) is not None}
        for item in applicable(corpus, where):
            f = corpus.files.get(item.unit.path)
            if f is None or f.pinned or item.unit.id in seen or item.unit.id in session.given:
                continue  # a pinned file came at the session's start
            if host.adds(event, f):  # the model has it from the host: given
                session.given.add(item.unit.id)
                continue
            seen.add(item.unit.id)
            rules.append(item)
    if not rules:
        return ""
    shown = [_relative(event, p) for p in event.paths]
    head = f"agents-context: the project's agent files have rules for {', '.join(shown)}: " + _names(
        [f"{a.unit.path}:{a.unit.start_line}-{a.unit.end_line} ({a.reason})" for a in rules]
    )
    blocks = [
        (
            a.unit.id,
            f"From {a.unit.path}, lines {a.unit.start_line}-{a.unit.end_line} ({a.reason}):\n{a.unit.text.strip()}",
        )
        for a in rules
    ]
    text = fit(head + ".", blocks, limit, "read them with your file tool or the agents-context read_context tool")
    session.given.update(a.unit.id for a in rules)
    return text


def fit(head: str, blocks: Sequence[tuple[str, str]], limit: int, how: str) -> str:
    """`head`, then each block whole while the text stays within `limit`; the blocks left out are
    named, with how to read them."""
    parts = [head]
    left: list[str] = []
    size = len(head)
    for name, block in blocks:
        if not left and size + 2 + len(block) <= limit - 300:
            parts.append(block)
            size += 2 + len(block)
        else:
            left.append(name)
    if left:
        parts.append(f"Not shown here, over this hook's {limit:,} characters ({how}): {_names(left)}.")
    return "\n\n".join(parts)[:limit]


def _names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


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


def answer(client: str, payload: object) -> str:
    """What the hook prints for `payload` ('' for nothing)."""
    host = HOSTS[client]
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
    corpus = corpus_of(project_of(event))
    with Session.held(client, event.session, event.reset) as session:
        if event.start:
            sweep(frozenset(HOSTS))
            text = at_start(event, BY_KEY[client], corpus, host.limit)
        else:
            text = on_touch(event, host, corpus, session, host.limit)
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
    client = args[0] if args and args[0] in HOSTS else None
    started = time.monotonic()
    out = ""
    try:
        if client is None:
            raise Ignored(f"the first argument must be one of {', '.join(HOSTS)}, not {args[:1]}")
        out = answer(client, read_payload(getattr(sys.stdin, "buffer", None)))
    except Exception as exc:  # never in the way: log and say nothing (or the host's "nothing")
        why = str(exc) if isinstance(exc, Ignored) else f"{type(exc).__name__}: {exc}"
        log(f"{' '.join(args)}: {why}")
    else:
        if os.environ.get("AGENTS_CONTEXT_HOOK_TIMING"):
            log(f"{' '.join(args)}: {1000 * (time.monotonic() - started):.1f} ms")
    _print(out or (HOSTS[client].silent if client else ""))
    return 0


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
