"""`agents-context setup CLIENT`: our MCP server and our hooks, written into a project's own
configuration files for one client, merged with what is there.

This module holds what setup does for each client: which files the client reads and what goes
into each, how our server and our hook are started, and the command itself: every file's change
planned and checked first (a read-only or hard-linked file is refused), then written, every file
or none (or shown as a diff in a dry run), then reported. Reading and editing one file is
`cli.configs`: a file that does not parse is refused before anything is written, and a second run
changes nothing. `--remove` takes out our server entry and our hook handlers, then what this
leaves empty, and nothing else.

Light on purpose: the standard library and `cli.configs` (tomlkit only when a TOML file is edited);
no MCP SDK, no pydantic, no index.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import os
import shlex
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

from cli.bytecode import uncompiled
from cli.configs import Change, file_change, is_text, read
from clients.client import Setup
from clients.entries import HOOK, SERVER, SHARED, ConfigFile, Refused
from clients.known import SET_UP
from shared import relay
from writes.atomic import write_atomic

# --- how the server and the hook are started ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class Launch:
    command: str
    prefix: tuple[str, ...]
    """The arguments before ours (`--from CHECKOUT agents-context` for uvx)."""
    hook: str
    """The hook's command line, without the client's name."""
    shared: bool = False
    """Sessions share one server (`agents-context-shared`)."""

    def args(self, project: Path, hooked: bool = False) -> list[str]:
        """The server's arguments; `hooked`: the client runs our hook (`--hooked`)."""
        return [*self.prefix, "--project", str(project), *(["--hooked"] if hooked else [])]


def launch(command: str | None = None, shared: bool = False) -> Launch:
    """`--command CMD`; else this console script's absolute path; else uvx from this checkout.
    `shared` (`--shared`): `agents-context-shared` beside it, so that sessions share one server."""
    if command is not None:
        return Launch(command, (), _hook_beside(Path(command)))
    name = SHARED if shared else SERVER
    script = console_script()
    if script is not None:
        return Launch(str(script.with_name(name + script.suffix)), (), _hook_beside(script), shared)
    source = checkout()
    if source is not None:
        return Launch("uvx", ("--from", str(source), name), _words("uvx", "--from", str(source), HOOK), shared)
    return Launch(name, (), HOOK, shared)


def console_script() -> Path | None:
    """The `agents-context` script this process runs from, resolved, unless it lives in uv's cache
    (a `uvx` run's environment, which `uv cache prune` may remove)."""
    argv0 = Path(sys.argv[0])
    if argv0.stem != SERVER or argv0.suffix not in ("", ".exe"):
        return None
    for candidate in (argv0, argv0.with_name(argv0.name + ".exe")):  # Windows strips .exe from argv[0]
        if candidate.is_file():
            resolved = candidate.resolve()
            return None if any(part.startswith("archive-v") for part in resolved.parts) else resolved
    return None


def checkout() -> Path | None:
    """The source folder of this agents-context: this tree, or the local folder it was installed from."""
    here = Path(__file__).resolve().parents[1]
    if (here / "pyproject.toml").is_file() and (here / "server.py").is_file():
        return here
    try:
        direct = json.loads(metadata.distribution(SERVER).read_text("direct_url.json") or "{}")
    except (metadata.PackageNotFoundError, ValueError):
        return None
    url = direct.get("url", "") if isinstance(direct, dict) else ""
    if not url.startswith("file:") or "dir_info" not in direct:
        return None
    return Path(url2pathname(urlparse(url).path))


def _hook_beside(command: Path) -> str:
    if command.is_absolute() and command.stem == SERVER:
        return _words(str(command.with_name(HOOK + command.suffix)))
    return HOOK


def _words(*words: str) -> str:
    return " ".join(shlex.quote(w) for w in words)


# --- each client's files -------------------------------------------------------------------------


def files(client: str, project: Path, how: Launch, url: str | None = None) -> list[ConfigFile]:
    """The files `setup CLIENT` writes, each with what goes into it; with `url`, the server entry
    points at a server already running there (streamable HTTP) instead of starting one."""
    writes = _setup(client)
    if url is not None:
        server = writes.url_entry(url)
    else:
        server = {"command": how.command, "args": how.args(project, hooked=SET_UP[client].hook is not None)}
    return writes.files(server, f"{how.hook} {client}")


def _setup(client: str) -> Setup:
    writes = SET_UP[client].setup
    if writes is None:  # SET_UP holds the clients setup writes for
        raise Refused(f"setup writes nothing for {client}")
    return writes


def checked_url(url: str) -> str:
    """`url` if it is an http:// or https:// address with a host; else `Refused`."""
    parts = urlparse(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Refused(f"--url {url!r} is not an http:// or https:// address such as http://127.0.0.1:8000/mcp")
    return url


# --- planning, writing and telling ---------------------------------------------------------------


def plan(client: str, project: Path, how: Launch, remove: bool = False, url: str | None = None) -> list[Change]:
    """Every file's change; raises `Refused` before anything is written (a dry run too)."""
    changes = [file_change(project, f, remove) for f in files(client, project, how, url)]
    check(changes)
    return changes


def check(changes: list[Change]) -> None:
    """Refuses a change that could not be made whole: a file, or the folder it goes in, that is
    read-only; a file with other hard links (replaced, they would keep the old text); two of the
    client's files that are one file."""
    seen: dict[Path, Path] = {}
    for change in (c for c in changes if c.changed):
        if change.real in seen:
            raise Refused(f"{seen[change.real]} and {change.path} are one file, so nothing was written")
        seen[change.real] = change.path
        folder = change.real.parent
        while not folder.exists():
            folder = folder.parent
        for path in (folder, change.real) if change.before is not None else (folder,):
            if _read_only(path):
                raise Refused(f"{path} is read-only, so nothing was written")
        if change.before is not None and change.real.stat().st_nlink > 1:
            raise Refused(f"{change.path} has other hard links, which would keep the old text, so nothing was written")


def _read_only(path: Path) -> bool:
    """No one may write it (its mode says so, whoever runs setup), or this process may not."""
    folder = path.is_dir()
    return not path.stat().st_mode & 0o222 or not os.access(path, os.W_OK | (os.X_OK if folder else 0))


@dataclass(frozen=True, slots=True)
class _Was:
    """What a path was before `apply` changed it: a file's text, or None where there was none; its
    mode, or None where there was nothing."""

    path: Path
    text: str | None
    mode: int | None
    folder: bool = False


def apply(changes: list[Change], project: Path) -> None:
    """Writes every change or none. Each file is read again first, and refused if it changed since
    it was planned. When one cannot be written, every file written before it gets back its bytes
    and mode, the folders made for them go, and `Refused` says what failed."""
    done: list[_Was] = []
    current: Change | None = None
    try:
        for current in (c for c in changes if c.changed):
            real = current.real
            if read(real, current.path) != current.before:
                raise Refused(f"{current.path} changed while setup ran")
            mode = None if current.before is None else stat.S_IMODE(real.stat().st_mode)
            if current.after is None:
                real.unlink()
                done.append(_Was(real, current.before, mode))
                folder = real.parent
                if folder != project and not any(folder.iterdir()):  # the folder setup made for it
                    was = _Was(folder, None, stat.S_IMODE(folder.stat().st_mode), folder=True)
                    with contextlib.suppress(OSError):
                        folder.rmdir()
                        done.append(was)
                continue
            missing = [f for f in real.parents if not f.exists()]
            for folder in reversed(missing):
                folder.mkdir()
                done.append(_Was(folder, None, None, folder=True))
            write_atomic(real, current.after.encode("utf-8"))
            done.append(_Was(real, current.before, mode))
    except BaseException as exc:
        failed = _put_back(done)
        if not isinstance(exc, (Refused, OSError)) or current is None:
            raise
        what = str(exc) if isinstance(exc, Refused) else f"{current.path} could not be written ({exc.strerror or exc})"
        back = "so nothing was written" if not done else "so setup put every file back as it was"
        raise Refused(f"{what}, {back}" if failed is None else f"{what}, and {failed}") from None


def _put_back(done: list[_Was]) -> str | None:
    """Puts back what `apply` changed, last first; says what could not be put back, else None."""
    failed = [f for f in map(_restore, reversed(done)) if f]
    return failed[0] if failed else None


def _restore(was: _Was) -> str | None:
    try:
        if was.folder and was.mode is None:
            was.path.rmdir()
        elif was.folder:
            was.path.mkdir()
        elif was.text is None:
            was.path.unlink(missing_ok=True)
        else:
            write_atomic(was.path, was.text.encode("utf-8"), mode=was.mode)
        if was.mode is not None:
            was.path.chmod(was.mode)
    except OSError as exc:
        return f"{was.path} could not be put back ({exc.strerror or exc})"
    return None


def diff(change: Change) -> str:
    before = [] if change.before is None else change.before.splitlines(keepends=True)
    after = [] if change.after is None else change.after.splitlines(keepends=True)
    old = "/dev/null" if change.before is None else f"a/{change.relative}"
    new = "/dev/null" if change.after is None else f"b/{change.relative}"
    return "".join(difflib.unified_diff(before, after, old, new))


def _verb(change: Change) -> str:
    if change.before is None:
        return "created"
    return "deleted" if change.after is None else "updated"


def report(
    client: str,
    project: Path,
    changes: list[Change],
    remove: bool,
    dry_run: bool,
    url: str | None = None,
    how: Launch | None = None,
) -> str:
    name, done = SET_UP[client].name, [c for c in changes if c.changed]
    lines = [diff(c).rstrip("\n") for c in done] if dry_run else [f"{_verb(c)} {c.path}" for c in done]
    if not done:
        lines.append(
            f"agents-context is not set up for {name} in {project}: nothing to remove."
            if remove
            else f"agents-context is already set up for {name} in {project}: nothing changed."
        )
    elif dry_run:
        lines.append(f"Dry run: {len(done)} file(s) would change; nothing was written.")
    else:
        lines.append(
            f"agents-context is removed from {name}'s files in {project}."
            if remove
            else f"agents-context is set up for {name} in {project}; restart {name} to load it."
        )
    note = _setup(client).note
    if note and not remove:
        lines.append(note)
    if url is not None and not remove:
        lines.append(shared(client, project, url))
    if how is not None and how.shared and not remove:
        idle = f"{relay.IDLE_S / 60:.0f} minutes"
        lines.append(
            f"Each {name} session in {project} joins one shared server: "
            f"the first starts it; it stops {idle} after the last."
        )
    return "\n".join(lines)


def shared(client: str, project: Path, url: str) -> str:
    """What to run for the server at `url`, which setup does not start."""
    parts = urlparse(url)
    flags = ["--transport", "http", "--host", parts.hostname or "127.0.0.1", "--port", str(parts.port or 8000)]
    hooked = ["--hooked"] if SET_UP[client].hook is not None else []
    command = _words(SERVER, "--project", str(project), *flags, *hooked)
    name = SET_UP[client].name
    return f"{name} connects to the server at {url}; setup does not start it. Keep one running: {command}"


def project_folder(given: Path | None) -> Path:
    """`--project` (else the current folder), absolute, its links resolved; refused unless a folder."""
    try:
        project = (given or Path.cwd()).expanduser().resolve()
        if project.is_dir():
            return project
    except (OSError, RuntimeError):  # a link loop, an unknown ~user, a current folder since removed
        pass
    raise Refused(f"{given or Path.cwd()} is not a folder, so nothing was written")


def text_only(*texts: str) -> None:
    """Refuses a path or command that is not UTF-8 text (a file name's undecodable bytes): a config
    file cannot hold it."""
    for text in texts:
        if not is_text(text):
            shown = text.encode("utf-8", "backslashreplace").decode()
            raise Refused(f"{shown} is not UTF-8 text, which a config file cannot hold, so nothing was written")


def run(args: argparse.Namespace) -> int:
    """`agents-context setup CLIENT [--project DIR] [--dry-run] [--remove] [--command CMD | --url URL | --shared]`."""
    try:
        project = project_folder(args.project)
        url = None if args.url is None else checked_url(args.url)
        how = launch(args.server_command, args.shared)
        text_only(str(project), how.command, *how.prefix, how.hook, url or "")
        changes = plan(args.client, project, how, args.remove, url)
        if not args.dry_run:
            apply(changes, project)
    except (Refused, OSError) as exc:  # an OSError here comes before any write (`apply` says its own)
        said = str(exc) if isinstance(exc, Refused) else f"{exc.filename or exc} cannot be used ({exc.strerror})"
        done = "" if isinstance(exc, Refused) else ", so nothing was written"
        print(f"agents-context setup: {said}{done}", file=sys.stderr)  # noqa: T201 - a CLI command
        return 2
    print(report(args.client, project, changes, args.remove, args.dry_run, url, how))  # noqa: T201 - a CLI command
    if not args.remove:
        for advice in uncompiled():  # the server and the hook will run from this installation
            print(f"Note: {advice}.")  # noqa: T201 - a CLI command
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`setup` and its flags, as a command of `agents-context`."""
    setup_cmd = commands.add_parser(
        "setup",
        help="write our MCP server and hooks into a client's configuration files in a project",
        description="Write the agents-context MCP server entry and its hooks into the project's own "
        "configuration files for CLIENT, merged with what is there (other servers, hooks and settings are "
        "kept). Running it again changes nothing; --remove takes out exactly what it added.",
    )
    setup_cmd.add_argument("client", metavar="CLIENT", choices=list(SET_UP), help=f"one of: {', '.join(SET_UP)}")
    setup_cmd.add_argument(
        "--project",
        metavar="DIR",
        type=Path,
        help="the project whose configuration files are written, and that the server serves (default: the "
        "current folder)",
    )
    setup_cmd.add_argument(
        "--dry-run", action="store_true", help="print each file's change as a unified diff; write nothing"
    )
    setup_cmd.add_argument(
        "--remove",
        action="store_true",
        help="take out what setup added (our server entry, our hook handlers, and the groups and files that "
        "this leaves empty), nothing else",
    )
    how = setup_cmd.add_mutually_exclusive_group()
    how.add_argument(
        "--command",
        metavar="CMD",
        dest="server_command",  # not `command`: that names the subcommand
        help="the command that starts the server (default: the absolute path of this agents-context "
        "script, else uvx --from this checkout)",
    )
    how.add_argument(
        "--url",
        metavar="URL",
        help="connect to one server already running over streamable HTTP, shared by every session "
        "(such as http://127.0.0.1:8000/mcp), instead of starting one per session",
    )
    how.add_argument(
        "--shared",
        action="store_true",
        help="start the server through agents-context-shared: every session of the project shares one "
        "server, which the first starts and which stops once unused for 5 minutes",
    )


def main(argv: Sequence[str]) -> int:
    """`agents-context setup ...` as the command line runs it (`cli.entry`), without the flags of
    the other commands, which load the index and the server."""
    parser = argparse.ArgumentParser(prog="agents-context")
    add_parser(parser.add_subparsers(dest="command"))
    return run(parser.parse_args(["setup", *argv]))
