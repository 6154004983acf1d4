"""A client's config file, found, read, edited in memory and rendered back: our server entry and
our hook handlers merged in or taken out, everything of the user's kept.

A file is found through its links (inside the project), read up to a bound, parsed, changed in
memory and compared before it is rendered. A file that does not parse, holds the wrong kind of
value where ours go, or could not be written back as it was read (NaN, a duplicate key, a lone
surrogate, deep nesting) is refused before anything is written. A file whose meaning would not
change is left byte for byte; a rewritten one keeps its byte order mark and CRLF line endings, and
must read back as meaning exactly what was meant. Ours are the server entry named `agents-context`
and the hook handlers whose command holds `agents-context-hook`; taking them out also takes what
this leaves empty (not a TOML table with a header of its own, nor a file reached through a link).

Light on purpose: the standard library, and tomlkit only when a TOML file is edited.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import stat
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clients.entries import ConfigFile, Doc, Refused, kind, plain

# --- one file's change: found, read, parsed, changed in memory, checked ---------------------------


@dataclass(frozen=True, slots=True)
class Change:
    path: Path
    relative: str
    before: str | None
    after: str | None
    """None: the file is not there (before) or is deleted (after)."""
    real: Path
    """The file itself: `path` with its links followed (a link is edited where it leads, and kept)."""

    @property
    def changed(self) -> bool:
        return self.before != self.after


def file_change(project: Path, file: ConfigFile, remove: bool) -> Change:
    """The file's text before and after ours go in (or come out); raises `Refused`, writing nothing."""
    path = project / file.relative
    real, plain_path = located(project, path)
    before = read(real, path)
    if before is None and remove:
        return Change(path, file.relative, None, None, real)
    doc = parse(path, before or "", file.toml)
    original = copy.deepcopy(plain(doc))
    try:
        for part in file.parts:
            (part.remove if remove else part.add)(doc)
    except Refused as exc:
        raise Refused(f"{path} cannot take our entries: {exc}, so nothing was written") from None
    wanted = plain(doc)
    if same(wanted, original):
        return Change(path, file.relative, before, before, real)
    nothing = not render(doc, True) if file.toml else any(same(wanted, e) for e in file.empty)
    if remove and nothing and real == plain_path:  # a file reached through a link is kept, emptied
        return Change(path, file.relative, before, None, real)
    return Change(path, file.relative, before, written(path, before, doc, file, remove), real)


def written(path: Path, before: str | None, doc: Doc, file: ConfigFile, remove: bool) -> str:
    """The text to write: `doc` rendered (for TOML tomlkit cannot lay out, `before` with our table
    appended), with the byte order mark and line endings `before` had, and only if it reads back
    as meaning exactly `doc`; else refused. tomlkit cannot place a table after dotted keys such as
    `mcp_servers.x.command = ...`: such a layout gets our table as text at its end."""
    texts = [render(doc, file.toml)]
    if file.toml and file.appended is not None and not remove:
        import tomlkit

        body = (before or "").removeprefix(BOM)
        texts.append((body.rstrip() + "\n\n" if body.strip() else "") + tomlkit.dumps(file.appended))
    for text in texts:
        text = dressed(text, before)
        if reads_as(path, text, plain(doc), file.toml):
            return text
    raise Refused(
        f"{path} is laid out in a way agents-context cannot edit without changing its meaning, so nothing was written"
    )


def dressed(text: str, before: str | None) -> str:
    """`text` with the byte order mark of `before` and, when its first line ends in CRLF, CRLF line endings."""
    if not before or not text:
        return text
    if (end := before.find("\n")) > 0 and before[end - 1] == "\r":
        text = re.sub(r"(?<!\r)\n", "\r\n", text)
    return BOM + text if before.startswith(BOM) else text


def reads_as(path: Path, text: str, wanted: Any, toml: bool) -> bool:
    """Whether `text`, read as setup reads a file, means exactly `wanted`."""
    try:
        text.encode("utf-8")
        return same(plain(parse(path, text, toml)), wanted)
    except (Refused, UnicodeEncodeError):
        return False


def same(a: Any, b: Any) -> bool:
    """Whether two plain documents mean the same: equal values of the same types, so that 1, 1.0
    and true differ (Python's == holds them equal) and NaN is itself."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(same, a, b))
    return bool(a == b or (a != a and b != b))  # NaN


# --- where a file is, and reading it -------------------------------------------------------------

LIMIT = 4_000_000
"""The most bytes read of a config file: more than any client's config, less than a mistake."""
BOM = "\ufeff"
_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"))


def located(project: Path, path: Path) -> tuple[Path, Path]:
    """The file `path` is, its links followed, and where it would be without links. Refused: a link
    that leads nowhere (a missing target, a loop) or out of the project, a file where a folder
    goes, and anything but a regular file."""
    root = Path(os.path.realpath(project))
    relative = path.relative_to(project)
    for step in [*(project / p for p in reversed(relative.parents[:-1])), path]:
        if step.is_symlink() and not step.exists():
            raise Refused(f"{step} is a link that leads nowhere (a missing file or a loop), so nothing was written")
        if step != path and os.path.lexists(step) and not step.is_dir():
            raise Refused(f"{step} is a file where setup needs a folder, so nothing was written")
    real = Path(os.path.realpath(path))
    if not real.is_relative_to(root):
        raise Refused(f"{path} leads to {real}, outside the project, so nothing was written")
    try:
        mode = real.stat().st_mode
    except FileNotFoundError:
        return real, root / relative
    except OSError as exc:
        raise Refused(f"{path} cannot be read ({exc.strerror}), so nothing was written") from None
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "a device")
        raise Refused(f"{path} is {kind}, not a file, so nothing was written")
    return real, root / relative


def read(path: Path, name: Path | None = None) -> str | None:
    """The text of the regular file at `path` (named `name` in what is said); None when it is not
    there. Never follows a link, never waits on a pipe, reads at most `LIMIT` bytes."""
    name = name or path
    try:
        fd = os.open(path, _READ)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Refused(f"{name} cannot be read ({exc.strerror}), so nothing was written") from None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Refused(f"{name} is not a regular file, so nothing was written")
        data = file.read(LIMIT + 1)
    if len(data) > LIMIT:
        raise Refused(f"{name} is over {LIMIT // 1_000_000} MB, more than any client config, so nothing was written")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(f"{name} is not UTF-8 text, so nothing was written") from None


# --- parsing: only what can be written back as it was read ---------------------------------------

DEPTH = 100
"""The deepest nesting setup edits (a client's config nests five or six levels)."""


class _Unwritable(Exception):
    """JSON that parses, but that setup could not write back as it was (said after the file's name)."""


def parse(path: Path, text: str, toml: bool) -> Doc:
    """The file's text (a byte order mark aside) as a document to edit; empty JSON text is an empty
    object. Refused: text that does not parse, and what could not be written back as it was read."""
    text = text.removeprefix(BOM)
    try:
        doc = _parse_toml(path, text) if toml else _parse_json(path, text)
        _check_nesting(path, plain(doc))
    except RecursionError:
        raise Refused(f"{path} nests deeper than {DEPTH} levels, so nothing was written") from None
    return doc


def _parse_json(path: Path, text: str) -> Doc:
    if not text.strip():
        return {}
    try:
        doc = json.loads(text, object_pairs_hook=_object, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except json.JSONDecodeError as exc:
        comments = " (comments are not JSON)" if "//" in text or "/*" in text else ""
        raise Refused(
            f"{path} is not valid JSON{comments}: {exc.msg} at line {exc.lineno}, column {exc.colno}, "
            "so nothing was written"
        ) from None
    except _Unwritable as exc:
        raise Refused(f"{path} {exc}, so nothing was written") from None
    if not isinstance(doc, dict):
        raise Refused(f"{path} holds {kind(doc)}, not a JSON object, so nothing was written")
    return doc


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    doc = dict(pairs)
    if len(doc) < len(pairs):
        key = next(k for k, n in Counter(k for k, _ in pairs).items() if n > 1)
        raise _Unwritable(f'has the key "{key}" twice in one object, and setup would keep only the last')
    return doc


def _constant(name: str) -> float:
    raise _Unwritable(f"holds {name}, which is not JSON")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Unwritable(f"holds the number {text}, too large to write back")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise _Unwritable(f"holds an integer of {len(text)} digits, too long to read") from None


def _check_nesting(path: Path, doc: Any) -> None:
    """Refuses nesting deeper than `DEPTH`, and strings that are not text (JSON's `\\ud800`)."""
    stack: list[tuple[Any, int]] = [(doc, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > DEPTH:
            raise Refused(f"{path} nests deeper than {DEPTH} levels, so nothing was written")
        if isinstance(value, dict):
            texts, children = list(value), list(value.values())
        else:
            texts, children = ([value] if isinstance(value, str) else []), (value if isinstance(value, list) else [])
        if not all(map(is_text, texts)):
            raise Refused(f"{path} holds a lone surrogate such as \\ud800, which is not text, so nothing was written")
        stack += [(child, depth + 1) for child in children]


def is_text(text: str) -> bool:
    """Whether `text` can be written as UTF-8 (no lone surrogate, such as a file name's undecodable byte)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _parse_toml(path: Path, text: str) -> Doc:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise Refused(f"{path} is not valid TOML: {exc}, so nothing was written") from None


def render(doc: Doc, toml: bool) -> str:
    """The document as text: JSON with a 2-space indent, TOML as tomlkit lays it out; a final newline."""
    if not toml:
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    import tomlkit

    text = tomlkit.dumps(doc).rstrip()
    return text + "\n" if text else ""
