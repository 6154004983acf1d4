"""One identity per file: its display path and its URI (the table is in docs/contracts.md).

- display path: `<root label>/<relative posix path>`, e.g. `.AGENTS/security.md`;
- `.AGENTS` files: `agents://<rel>` (with several `.AGENTS` roots, `agents://<label>/<rel>`);
  docs roots: `agents-docs://<label>/<rel>`;
- every path segment percent-encoded, so `C#.md` is `agents://C%23.md` and a raw `#` is free to
  start a fragment;
- resources the server generates use `agents-context://`, which no file can shadow.
"""

from __future__ import annotations

from urllib.parse import quote, unquote

from corpus.errors import NotInCorpus
from corpus.names import too_long
from corpus.roots import Root, RootKind

AGENTS_SCHEME = "agents"
DOCS_SCHEME = "agents-docs"
SERVER_SCHEME = "agents-context"


def display_path(root: Root, rel: str) -> str:
    return f"{root.label}/{rel}"


def split_display(path: str) -> tuple[str, str]:
    """`.AGENTS/services/api.md` -> (`.AGENTS`, `services/api.md`): the root label and the path in it."""
    label, _, rel = path.partition("/")
    return label, rel


def _encode(rel: str) -> str:
    return "/".join(quote(segment, safe="") for segment in rel.split("/"))


def file_uri(root: Root, rel: str) -> str:
    if root.kind is RootKind.AGENTS and not root.scoped:
        return f"{AGENTS_SCHEME}://{_encode(rel)}"
    scheme = AGENTS_SCHEME if root.kind is RootKind.AGENTS else DOCS_SCHEME
    return f"{scheme}://{quote(root.label, safe='')}/{_encode(rel)}"


def split_fragment(uri: str) -> tuple[str, str | None]:
    """`agents://a.md#secrets` -> (`agents://a.md`, `secrets`)."""
    base, sep, fragment = uri.partition("#")
    return base, (fragment if sep else None)


def parse_file_uri(uri: str, roots: list[Root]) -> tuple[Root, str]:
    """The root and relative path a file URI names, or `NotInCorpus`.

    Only the shape is checked here (scheme, root label, no empty, `.` or `..` segment, no encoded
    separator or NUL); whether the file exists and stays inside its root is the reader's job.
    """
    base, _ = split_fragment(uri)
    why = too_long(unquote(base.partition("://")[2]))
    if why:
        raise NotInCorpus(why)
    scheme, sep, rest = base.partition("://")
    if not sep:
        raise NotInCorpus(f"not a corpus URI: {uri!r} (expected agents://PATH or agents-docs://ROOT/PATH)")
    if scheme == AGENTS_SCHEME and any(r.scoped for r in roots):
        label_enc, _, encoded = rest.partition("/")
        label = _decode_segment(label_enc, uri)
        root = next((r for r in roots if r.kind is RootKind.AGENTS and r.label == label), None)
        if root is None:
            known = ", ".join(r.label for r in roots if r.kind is RootKind.AGENTS)
            raise NotInCorpus(f"no .AGENTS root labelled {label!r} in {uri!r} (roots: {known})")
    elif scheme == AGENTS_SCHEME:
        root = next((r for r in roots if r.kind is RootKind.AGENTS), None)
        encoded = rest
    elif scheme == DOCS_SCHEME:
        label_enc, _, encoded = rest.partition("/")
        label = _decode_segment(label_enc, uri)
        root = next((r for r in roots if r.kind is RootKind.DOCS and r.label == label), None)
        if root is None:
            known = ", ".join(r.label for r in roots if r.kind is RootKind.DOCS) or "none"
            raise NotInCorpus(f"no docs root labelled {label!r} in {uri!r} (docs roots: {known})")
    else:
        raise NotInCorpus(f"unknown URI scheme {scheme!r} in {uri!r}: use agents:// or agents-docs://")
    if root is None:
        raise NotInCorpus(f"no .AGENTS root is being served, so {uri!r} names nothing")
    segments = [_decode_segment(s, uri) for s in encoded.split("/")]
    return root, "/".join(segments)


def _decode_segment(segment: str, uri: str) -> str:
    try:
        decoded = unquote(segment, errors="strict")
    except UnicodeDecodeError:
        raise NotInCorpus(f"{uri!r} has a percent-encoding that is not UTF-8") from None
    if decoded in ("", ".", ".."):
        raise NotInCorpus(f"{uri!r} has an empty, '.' or '..' path segment")
    if any(c in decoded for c in "/\\\0"):
        raise NotInCorpus(f"{uri!r} has an encoded separator or NUL in a path segment")
    return decoded
