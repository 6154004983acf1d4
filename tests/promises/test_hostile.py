"""Hostile input: every parameter that names a file, files that are not normal, secrets, and tool
arguments of every shape. Nothing outside the roots leaks; nothing crashes. The suite counts the
cases it tried and pytest prints the tally at the end (see conftest.py)."""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import socket
import stat
import struct
import sys
import threading
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client, MCPError, StdioServerParameters

from corpus.errors import NotInCorpus
from corpus.read import Changing, Skipped, read_text
from corpus.roots import make_roots
from corpus.scan import walk
from live.cache import ENV
from live.index import LiveIndex
from server import AgentsServer
from tests.helpers import SERVER, make_server, split_status, text_of
from tests.tally import tried

pytestmark = pytest.mark.anyio
OUTSIDE = "TOP-SECRET-OUTSIDE-THE-ROOT"
POSIX = os.name == "posix"


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, AgentsServer]:
    project = tmp_path / "project"
    agents = project / ".AGENTS"
    agents.mkdir(parents=True)
    (tmp_path / "outside.md").write_text(f"# Outside\n\n{OUTSIDE}\n")
    (project / "sibling.md").write_text(f"# Sibling\n\n{OUTSIDE}\n")
    (agents / "rules.md").write_text("# Rules\n\n## Secrets\n\nNever print tokens.\n")
    (agents / ".env").write_text(f"TOKEN={OUTSIDE}\n")
    (agents / "sub").mkdir()
    (agents / "sub" / "deep.md").write_text("# Deep\n\ninside\n")
    return agents, make_server(agents)


TRAVERSALS = [
    "../outside.md",
    "../../outside.md",
    "..\\outside.md",
    "..\\..\\outside.md",
    "sub/../../outside.md",
    "sub/../../../outside.md",
    "%2e%2e/outside.md",
    "%2E%2E/%2E%2E/outside.md",
    "%252e%252e/outside.md",
    "..%2foutside.md",
    "..%2Foutside.md",
    "..%5coutside.md",
    ".%2e/outside.md",
    "%2e./outside.md",
    "．．/outside.md",  # fullwidth full stops
    "．．／outside.md",  # fullwidth solidus
    "‥/outside.md",  # two-dot leader
    "..∕outside.md",  # division slash
    "..／outside.md",
    "../outside.md\x00.md",
    "rules.md\x00../../outside.md",
    "/etc/passwd",
    "//etc/passwd",
    "C:\\Windows\\win.ini",
    "C:/Windows/win.ini",
    "\\\\server\\share\\outside.md",
    "file:///etc/passwd",
    "agents://../outside.md",
    "agents://%2e%2e/outside.md",
    "agents:///etc/passwd",
    "agents://sub/../../outside.md",
    "agents://..%2Foutside.md",
    "agents-docs://docs/../outside.md",
    "agents-context://../outside.md",
    "../project/sibling.md",
    ".AGENTS/../sibling.md",
    "~/outside.md",
    "$HOME/outside.md",
]


@pytest.mark.parametrize("name", TRAVERSALS)
async def test_no_spelling_of_a_path_leaves_the_root(hostile: tuple[Path, AgentsServer], name: str) -> None:
    _, server = hostile
    async with Client(server) as client:
        read = await client.call_tool("read_context", {"path": name})
        assert OUTSIDE not in text_of(read)
        tried("path spelling (read_context)")
        uri = name if "://" in name else f"agents://{name}"
        try:
            got = await client.read_resource(uri)
            assert all(OUTSIDE not in getattr(c, "text", "") for c in got.contents)
        except MCPError:
            pass
        tried("path spelling (resources/read)")
        applies = await client.call_tool("context_for_path", {"path": name})
        assert OUTSIDE not in text_of(applies)
        tried("path spelling (context_for_path)")


@pytest.mark.skipif(not POSIX, reason="symlinks need privileges on Windows")
async def test_symlinks_out_and_loops_are_refused(hostile: tuple[Path, AgentsServer], tmp_path: Path) -> None:
    agents, _ = hostile
    (agents / "out.md").symlink_to(tmp_path / "outside.md")
    (agents / "outdir").symlink_to(tmp_path)
    (agents / "loop").symlink_to(agents / "loop")
    (agents / "a").symlink_to(agents / "b")
    (agents / "b").symlink_to(agents / "a")
    server = make_server(agents)
    async with Client(server) as client:
        for name in ("out.md", "outdir/outside.md", "loop", "a", "loop/x.md"):
            result = await client.call_tool("read_context", {"path": name})
            assert result.is_error and OUTSIDE not in text_of(result)
            tried("symlink")
        found = await client.call_tool("search_docs", {"query": OUTSIDE.lower().replace("-", " ")})
        assert OUTSIDE not in text_of(found)
        report = (await client.call_tool("context_status", {})).structured_content
    assert report is not None
    reasons = {s["path"]: s["reason"] for s in report["roots"][0]["skipped"]}
    assert reasons[".AGENTS/out.md"] == "symlink target leaves the root"
    assert reasons[".AGENTS/outdir"] == "symlink target leaves the root"
    assert reasons[".AGENTS/loop"].startswith("unresolvable path")


@pytest.mark.skipif(not POSIX, reason="symlinks need privileges on Windows")
async def test_a_root_replaced_by_a_symlink_is_reported_gone(tmp_path: Path) -> None:
    agents = tmp_path / ".AGENTS"
    agents.mkdir()
    (agents / "rules.md").write_text("# Rules\n\nthe original\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "rules.md").write_text(f"# Rules\n\n{OUTSIDE}\n")
    server = make_server(agents)
    async with Client(server) as client:
        shutil.rmtree(agents)
        agents.symlink_to(elsewhere)  # same path, now a link elsewhere: never followed
        text = text_of(await client.call_tool("search_docs", {"query": "rules"}))
        report = (await client.call_tool("context_status", {})).structured_content
        read = await client.call_tool("read_context", {"path": "rules.md"})
    assert OUTSIDE not in text and OUTSIDE not in text_of(read)
    assert report is not None and report["roots"][0]["present"] is False
    tried("root replaced by a symlink")


def snapshot(top: Path) -> dict[str, tuple[int, int, int, int, int, str]]:
    """Every file and folder under `top`: mode, size, inode, mtime, ctime (moves a chmod, a link or
    a rename too) and, for files, a digest of the bytes. Reading changes none of these."""
    found = {}
    for path in [top, *top.rglob("*")]:
        st = path.lstat()
        digest = hashlib.blake2b(path.read_bytes()).hexdigest() if stat.S_ISREG(st.st_mode) else ""
        found[str(path.relative_to(top))] = (st.st_mode, st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, digest)
    return found


async def test_the_server_writes_moves_and_deletes_nothing(hostile: tuple[Path, AgentsServer], tmp_path: Path) -> None:
    """A real server process, its cache on, through every tool and every resource: afterwards the
    project (both roots, the secret, the files beside them) is exactly as it was; the only thing
    written is the cache, outside every root."""
    agents, _ = hostile
    project = agents.parent
    docs = project / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\nDeploy on green.\n")
    before = snapshot(project)
    cache = tmp_path / "cache"
    params = StdioServerParameters(
        command=sys.executable, args=[SERVER, "--root", str(agents), "--docs", str(docs)], env={ENV: str(cache)}
    )
    calls: list[tuple[str, dict[str, Any]]] = [
        ("pinned_context", {}),
        ("context_status", {}),
        ("context_search", {"query": "secrets tokens"}),
        ("search_docs", {"query": "deploy green", "detail": "snippets"}),
        ("read_context", {"path": "rules.md", "section": "Secrets"}),
        ("read_context", {"path": ".env"}),
        ("read_context", {"path": "../sibling.md"}),
        ("context_for_path", {"path": "sub/code.py"}),
    ]
    async with Client(params) as client:
        for tool, args in calls:
            await client.call_tool(tool, args)
            tried("read-only: tool call")
        for resource in (await client.list_resources()).resources:
            await client.read_resource(resource.uri)
            tried("read-only: resource read")
    assert snapshot(project) == before
    assert any(cache.iterdir())


# --- files that are not normal ----------------------------------------------------------------------


IN_OPEN = 0x20


class Opens:
    """Counts the times one path is opened, by anyone, through inotify (Linux): a real observer of
    the kernel, so "never opened" is seen, not assumed. Watching a path does not open it."""

    def __init__(self, path: Path) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0 or libc.inotify_add_watch(self.fd, os.fsencode(path), IN_OPEN) < 0:
            raise OSError(ctypes.get_errno(), f"inotify cannot watch {path}")

    def count(self) -> int:
        """Opens since the last count."""
        n = 0
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return n
            offset = 0
            while offset < len(data):
                _, mask, _, length = struct.unpack_from("iIII", data, offset)
                n += bool(mask & IN_OPEN)
                offset += 16 + length

    def close(self) -> None:
        os.close(self.fd)


async def skipped_reasons(client: Client) -> dict[str, str]:
    report = (await client.call_tool("context_status", {})).structured_content
    assert report is not None
    return {s["path"]: s["reason"] for s in report["roots"][0]["skipped"]}


@pytest.mark.skipif(sys.platform != "linux", reason="FIFOs, unix sockets and inotify (to see opens) are Linux here")
async def test_fifos_and_sockets_are_skipped_and_never_opened(short_tmp: Path) -> None:
    agents = short_tmp / ".AGENTS"  # short: a socket path has a length limit
    agents.mkdir()
    (agents / "ok.md").write_text("# Ok\n\nfine\n")
    os.mkfifo(agents / "pipe.md")  # opening it for reading would block until a writer comes
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(agents / "sock.md"))
    (agents / "null.md").symlink_to("/dev/null")  # a device outside the root, through a link
    opens = Opens(agents / "pipe.md")
    try:
        server = make_server(agents)
        async with Client(server) as client:
            reasons = await skipped_reasons(client)
            assert reasons[".AGENTS/pipe.md"] == "not a regular file (FIFO)"
            assert reasons[".AGENTS/sock.md"] == "not a regular file (socket)"
            assert reasons[".AGENTS/null.md"] == "symlink target leaves the root"
            for name in ("pipe.md", "sock.md"):
                result = await client.call_tool("read_context", {"path": name})
                assert result.is_error and "not a regular file" in text_of(result)
                with pytest.raises(MCPError):
                    await client.read_resource(f"agents://{name}")
                tried("special file (FIFO, socket)")
            result = await client.call_tool("read_context", {"path": "null.md"})
            assert result.is_error and "symlink target leaves the root" in text_of(result)
            tried("special file (link to a device outside)")
            assert "ok.md" in text_of(await client.call_tool("context_search", {"query": "fine"}))
        assert opens.count() == 0  # never opened, by the walk, the watcher or a read
        os.close(os.open(agents / "pipe.md", os.O_RDONLY | os.O_NONBLOCK))
        assert opens.count() == 1  # the observer does see an open
    finally:
        opens.close()
        sock.close()


@pytest.mark.skipif(sys.platform != "linux", reason="device nodes and inotify (to see opens) are Linux here")
async def test_a_device_inside_a_root_is_skipped_and_never_opened(make_tree: Callable[..., Path]) -> None:
    agents = make_tree({"ok.md": "# Ok\n\nfine\n"})
    device = agents / "null.md"
    try:
        os.mknod(device, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # what /dev/null is
    except PermissionError:
        pytest.skip("creating a device node needs root (CAP_MKNOD)")
    opens = Opens(device)
    try:
        server = make_server(agents)
        async with Client(server) as client:
            assert (await skipped_reasons(client))[".AGENTS/null.md"] == "not a regular file (device)"
            result = await client.call_tool("read_context", {"path": "null.md"})
            assert result.is_error and "not a regular file (device)" in text_of(result)
            with pytest.raises(MCPError):
                await client.read_resource("agents://null.md")
            assert "ok.md" in text_of(await client.call_tool("context_search", {"query": "fine"}))
        assert opens.count() == 0
        os.close(os.open(device, os.O_RDONLY))
        assert opens.count() == 1  # the observer does see an open
    finally:
        opens.close()
    tried("special file (device)")


NOT_UTF8 = {
    "latin1.md": "# Caf\xe9\n".encode("latin-1"),
    "cp1252.md": "# \u201cquoted\u201d\n".encode("cp1252"),
    "truncated.md": "# Tokyo \u6771\u4eac\n".encode()[:-2],  # a multibyte character cut short
    "overlong.md": b"# slash \xc0\xaf\n",  # an overlong "/": never valid UTF-8
    "surrogate.md": b"# half \xed\xa0\x80 of a pair\n",  # an encoded surrogate (CESU-8)
    "beyond.md": b"# \xf4\x90\x80\x80 past U+10FFFF\n",
    "utf16.md": "# Title\n\nwide text\n".encode("utf-16"),  # BOM and NUL bytes
    "nul.md": b"# looks like text\x00but holds a NUL\n",
}


async def test_text_that_is_not_utf8_is_skipped_with_the_reason_and_never_served(
    make_tree: Callable[..., Path],
) -> None:
    """Each file that is not valid UTF-8 (or holds a NUL) is skipped, says why in context_status,
    refuses read_context and resources/read with that reason, and takes no other file down."""
    agents = make_tree({"ok.md": "# Ok\n\nfine\n", **NOT_UTF8})
    server = make_server(agents)
    async with Client(server) as client:
        reasons = await skipped_reasons(client)
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        for name in NOT_UTF8:
            reason = reasons[f".AGENTS/{name}"]
            assert reason.startswith(("not UTF-8 text", "binary")), (name, reason)
            assert f"agents://{name}" not in listed
            result = await client.call_tool("read_context", {"path": name})
            assert result.is_error and reason in text_of(result), (name, text_of(result))
            with pytest.raises(MCPError, match=r"not UTF-8|binary"):
                await client.read_resource(f"agents://{name}")
            tried("not UTF-8 text (status, read_context, resources/read)")
        found = await client.call_tool("context_search", {"query": "fine wide text quoted"})
        body, _ = split_status(text_of(found))
        assert "ok.md" in body and not any(name in body for name in NOT_UTF8)


async def test_hard_links_are_served_like_any_file_in_the_root(
    hostile: tuple[Path, AgentsServer], tmp_path: Path
) -> None:
    """A hard link is the file itself: nothing tells it from any other file, so a file linked into
    a root is served under its name there, wherever else it is linked (docs/corpus.md says so)."""
    agents, _ = hostile
    try:
        os.link(tmp_path / "outside.md", agents / "linked.md")
    except OSError as exc:
        pytest.skip(f"no hard links here ({exc.strerror})")
    os.link(agents / "rules.md", agents / "twin.md")
    server = make_server(agents)
    async with Client(server) as client:
        uris = {r.uri for r in (await client.list_resources()).resources}
        assert {"agents://linked.md", "agents://twin.md", "agents://rules.md"} <= uris
        assert OUTSIDE in text_of(await client.call_tool("read_context", {"path": "linked.md"}))
        twin = text_of(await client.call_tool("read_context", {"path": "twin.md"}))
        assert "Never print tokens." in twin
    tried("hard link", 2)


async def test_a_10_mb_single_line_is_skipped_or_served_within_budget(make_tree: Callable[..., Path]) -> None:
    line = "word " * 2_000_000  # 10 MB, one line
    agents = make_tree({"huge.md": line, "ok.md": "# Ok\n\nword\n"})
    default = make_server(agents)
    async with Client(default) as client:
        report = (await client.call_tool("context_status", {})).structured_content
        assert report is not None
        assert any(s["reason"].startswith("too large") for s in report["roots"][0]["skipped"])
    raised = make_server(agents, max_file_bytes=20_000_000)
    async with Client(raised) as client:
        for tool in ("context_search", "search_docs"):
            text = text_of(await client.call_tool(tool, {"query": "word", "max_tokens": 1000}))
            assert len(text) <= 4000
            tried("10 MB single line")
        read = text_of(await client.call_tool("read_context", {"path": "huge.md", "max_tokens": 500}))
        assert len(read) <= 2000


async def test_deep_nesting_and_a_crowded_folder(tmp_path: Path) -> None:
    agents = tmp_path / ".AGENTS"
    deep = agents
    for i in range(200):
        deep = deep / f"d{i}"
    deep.mkdir(parents=True)
    (deep / "bottom.md").write_text("# Bottom\n\nthe abyss\n")
    crowd = agents / "crowd"
    crowd.mkdir()
    for i in range(10_000):
        (crowd / f"f{i:05d}.md").write_text(f"# File {i}\n\nnumber n{i}\n")
    live = LiveIndex(make_roots([agents]), settle_s=0)
    assert len(live.corpus.files) == 10_001
    server = make_server(agents)
    async with Client(server) as client:
        assert "bottom.md" in text_of(await client.call_tool("context_search", {"query": "abyss"}))
        assert "f09999.md" in text_of(await client.call_tool("context_search", {"query": "n9999"}))
    tried("deep nesting", 200)
    tried("files in one folder", 10_000)


@pytest.mark.skipif(sys.platform != "linux", reason="Linux allows these names")
async def test_odd_names_are_served_exactly_as_named(tmp_path: Path) -> None:
    agents = tmp_path / ".AGENTS"
    agents.mkdir()
    nfd = unicodedata.normalize("NFD", "café.md")
    names = {
        "line\nbreak.md": "newline",
        "CON": "reserved con",
        "NUL.md": "reserved nul",
        "aux.txt": "reserved aux",
        nfd: "decomposed accent",
        "Security.md": "upper case",
        "security.md": "lower case",
        " leading space.md": "spaces",
        "tab\tname.md": "tab",
    }
    for name, words in names.items():
        (agents / name).write_text(f"# {words}\n\n{words} marker\n")
    server = make_server(agents)
    async with Client(server) as client:
        listed = {r.name: r.uri for r in (await client.list_resources()).resources if r.uri.startswith("agents://")}
        for name, words in names.items():
            assert name in listed, name  # never normalized, never merged
            read = await client.read_resource(listed[name])
            assert words in getattr(read.contents[0], "text", "")
            tried("odd file name")
        nfc = unicodedata.normalize("NFC", "café.md")
        with pytest.raises(MCPError):  # the NFC spelling names no file: paths are never normalized
            await client.read_resource("agents://" + nfc)
        upper = text_of(await client.call_tool("context_search", {"query": "upper case", "k": 1}))
        assert ".AGENTS/Security.md" in upper


async def test_files_that_vanish_or_change_before_a_refresh_are_not_fatal(make_tree: Callable[..., Path]) -> None:
    agents = make_tree({f"f{i}.md": f"# F{i}\n\nchurn {i}\n" for i in range(50)})
    live = LiveIndex(make_roots([agents]), settle_s=0)
    (r,) = live.roots
    for i in range(50):
        path = agents / f"f{i}.md"
        if i % 2:
            path.unlink()
        else:
            path.write_text(f"# F{i}\n\nchanged {i}\n" * (i + 1))
        live.refresh(r, [path])
        tried("vanish or change before a refresh")
    assert len(live.corpus.files) == 25 and live.last_error is None


# A walk reaches each file without following links and keeps its (device, inode); the read then
# opens that path without following a final link and checks it opened that very file. The next
# three tests change the file between the walk and the read, as an editor's save can.


async def test_a_file_replaced_between_the_walk_and_the_read_is_read_again(make_tree: Callable[..., Path]) -> None:
    agents = make_tree({"rules.md": "# Rules\n\nold words\n"})
    live = LiveIndex(make_roots([agents]), settle_s=0)
    (r,) = live.roots
    (ref,) = walk(r).files
    fresh = agents.parent / "rules.md.new"
    fresh.write_text("# Rules\n\nnew words\n")
    fresh.replace(agents / "rules.md")  # an atomic save: another inode under the same name
    with pytest.raises(Changing, match=r"rules\.md was replaced"):
        read_text(r.path, ref.path, identity=ref.identity)
    live.refresh(r, [agents / "rules.md"])
    assert "new words" in live.corpus.files[".AGENTS/rules.md"].text
    tried("replaced mid-read")


@pytest.mark.skipif(not POSIX, reason="symlinks need privileges on Windows")
async def test_a_file_that_becomes_a_symlink_mid_read_is_never_followed(
    make_tree: Callable[..., Path], tmp_path: Path
) -> None:
    agents = make_tree({"rules.md": "# Rules\n\nordinary words\n"})
    (tmp_path / "outside.md").write_text(f"# Outside\n\n{OUTSIDE}\n")
    live = LiveIndex(make_roots([agents]), settle_s=0)
    (r,) = live.roots
    (ref,) = walk(r).files
    link = tmp_path / "swap"
    link.symlink_to(tmp_path / "outside.md")
    link.replace(agents / "rules.md")  # the name now points out of the root
    with pytest.raises(Changing, match=r"rules\.md \(or a folder on its way\) became a symlink"):
        read_text(r.path, ref.path, identity=ref.identity)
    with pytest.raises(Skipped, match="symlink target leaves the root"):
        read_text(r.path, ref.path)
    live.refresh(r, [agents / "rules.md"])
    assert ".AGENTS/rules.md" not in live.corpus.files
    assert {s.rel: s.reason for s in live.corpus.skipped}["rules.md"] == "symlink target leaves the root"
    tried("became a symlink mid-read")


async def test_a_file_that_vanishes_between_the_walk_and_the_read_is_gone(make_tree: Callable[..., Path]) -> None:
    agents = make_tree({"rules.md": "# Rules\n\nwords\n"})
    live = LiveIndex(make_roots([agents]), settle_s=0)
    (r,) = live.roots
    (ref,) = walk(r).files
    (agents / "rules.md").unlink()
    with pytest.raises(NotInCorpus, match=r"no such file: rules\.md"):
        read_text(r.path, ref.path, identity=ref.identity)
    live.refresh(r, [agents / "rules.md"])
    assert live.corpus.files == {} and live.last_error is None
    tried("vanished mid-read")


async def test_a_file_rewritten_during_the_read_is_never_served_torn(tmp_path: Path) -> None:
    """A writer rewrites a file over and over, in small flushed chunks, while it is read in a loop:
    reads that overlap a write are caught ("changed while it was read"); every read that succeeds
    holds one version only, never a mix of two."""
    root = tmp_path.resolve()
    path = root / "big.md"
    path.write_text("BEGIN 0\nEND 0\n")
    stop = threading.Event()

    def writer() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            with path.open("w") as out:
                out.write(f"BEGIN {n}\n")
                for i in range(2000):
                    out.write(f"line {i} of version {n} " * 4 + "\n")
                    if i % 20 == 0:
                        out.flush()
                out.write(f"END {n}\n")

    thread = threading.Thread(target=writer)
    thread.start()
    caught = served = 0
    deadline = time.monotonic() + 60  # a generous bound; it usually takes a fraction of a second
    try:
        while caught < 20 and time.monotonic() < deadline:
            try:
                text = read_text(root, path, max_bytes=10_000_000).text
            except Changing as exc:
                assert str(exc) == "big.md changed while it was read"
                caught += 1
                continue
            served += 1
            assert len(set(re.findall(r"version (\d+)", text))) <= 1, "a torn read mixing two versions"
    finally:
        stop.set()
        thread.join()
    assert caught == 20
    tried("changed while read (caught)", caught)
    tried("read during a rewrite (served whole)", served)


# --- secrets --------------------------------------------------------------------------------------


async def test_secrets_are_never_indexed_listed_linked_pinned_or_served(
    make_tree: Callable[..., Path],
) -> None:
    agents = make_tree(
        {
            ".env": f"TOKEN={OUTSIDE}\n",
            "id_rsa": f"-----BEGIN KEY-----{OUTSIDE}\n",
            "credentials-prod.json": f'{{"key": "{OUTSIDE}"}}\n',
            "rules.md": "# Rules\n\nSee [the env](.env) and [the key](id_rsa).\n",
        }
    )
    server = make_server(agents, pins=[".env", "rules.md"])
    async with Client(server) as client:
        uris = [r.uri for r in (await client.list_resources()).resources]
        pinned = text_of(await client.call_tool("pinned_context", {}))
        search = await client.call_tool("search_docs", {"query": "token key rules", "k": 10})
        outline = await client.read_resource("agents-context://outline")
        for name in (".env", "id_rsa", "credentials-prod.json"):
            assert f"agents://{name}" not in uris
            read = await client.call_tool("read_context", {"path": name})
            assert read.is_error and "looks like a secret" in text_of(read)
            with pytest.raises(MCPError):
                await client.read_resource(f"agents://{name}")
            tried("secret")
    everything = pinned + text_of(search) + getattr(outline.contents[0], "text", "")
    assert OUTSIDE not in everything
    assert search.structured_content is not None
    links = [link["uri"] for hit in search.structured_content["hits"] for link in hit["links"]]
    assert links == []


# --- tool arguments -------------------------------------------------------------------------------


ARGUMENTS: list[tuple[str, dict[str, Any], str]] = [
    ("context_search", {"query": "x" * 100_000}, "ok"),
    ("context_search", {"query": "\x00\x01\x02\x1b[31m\u202e\ufeff"}, "ok"),
    ("context_search", {"query": "🔥 secrets 🔥"}, "ok"),
    ("context_search", {"query": ""}, "error"),
    ("context_search", {}, "error"),
    ("context_search", {"query": None}, "error"),
    ("context_search", {"query": 7}, "error"),
    ("context_search", {"query": ["secrets"]}, "error"),
    ("context_search", {"query": "secrets", "k": -5}, "ok"),
    ("context_search", {"query": "secrets", "k": 10**12}, "ok"),
    ("context_search", {"query": "secrets", "k": "7"}, "ok"),  # a number as a string: coerced
    ("context_search", {"query": "secrets", "k": True}, "error"),  # a boolean: refused
    ("context_search", {"query": "secrets", "k": 2.5}, "error"),
    ("context_search", {"query": "secrets", "k": None}, "error"),
    ("context_search", {"query": "secrets", "max_tokens": -1}, "ok"),
    ("context_search", {"query": "secrets", "max_tokens": 10**9}, "ok"),
    ("context_search", {"query": "secrets", "offset": -1}, "ok"),  # clamped to 0
    ("context_search", {"query": "secrets", "offset": 10**9}, "ok"),
    ("context_search", {"query": "secrets", "detail": "everything"}, "error"),
    ("context_search", {"query": "secrets", "path_prefix": "../"}, "ok"),
    ("context_search", {"query": "secrets", "bogus": 1}, "error"),
    ("search_docs", {"query": "secrets", "root": "../.."}, "error"),
    ("search_docs", {"query": "secrets", "k": "many"}, "error"),
    ("read_context", {"path": "rules.md", "start_line": 0}, "ok"),  # clamped to 1
    ("read_context", {"path": "rules.md", "start_line": 10**9}, "error"),
    ("read_context", {"path": "rules.md", "section": "\x00"}, "error"),
    ("read_context", {"path": ""}, "error"),
    ("context_for_path", {"path": ""}, "error"),
    ("context_for_path", {"path": "\x00"}, "ok"),
    ("pinned_context", {"extra": 1}, "error"),
    ("context_status", {"verbose": True}, "error"),
    ("no_such_tool", {}, "error"),
]


@pytest.mark.parametrize(("tool", "args", "expected"), ARGUMENTS)
async def test_any_arguments_give_an_answer_or_a_clear_error(
    hostile: tuple[Path, AgentsServer], tool: str, args: dict[str, Any], expected: str
) -> None:
    _, server = hostile
    async with Client(server) as client:
        result = await client.call_tool(tool, args)
    text = text_of(result)
    assert result.is_error is (expected == "error"), text
    assert text.strip()
    if expected == "ok":
        assert split_status(text)[1]["method"]
    tried("tool arguments")


async def test_a_whole_number_as_a_string_is_coerced_and_a_boolean_is_refused(
    hostile: tuple[Path, AgentsServer],
) -> None:
    """The contract docs/contracts.md states under "Numbers and line ranges": `"7"` and `7.0` mean 7; `true` and `false`
    are refused (pydantic would read them as 1 and 0), as are fractions and other strings."""
    _, server = hostile
    async with Client(server) as client:

        async def body(**args: Any) -> str:
            result = await client.call_tool("context_search", {"query": "never print tokens", **args})
            assert not result.is_error, text_of(result)
            return split_status(text_of(result))[0]

        assert await body(k="1") == await body(k=1) == await body(k=1.0)
        assert await body(max_tokens="300") == await body(max_tokens=300)
        for value in (True, False):
            for name in ("k", "max_tokens", "offset"):
                result = await client.call_tool("context_search", {"query": "tokens", name: value})
                assert result.is_error
                assert text_of(result) == f"{name} must be a whole number, not {str(value).lower()}"
                tried("number coercion")
        for other in ("true", "1e1", "many", 2.5):
            result = await client.call_tool("context_search", {"query": "tokens", "k": other})
            assert result.is_error and "k" in text_of(result)
            tried("number coercion")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    query=st.text(max_size=300),
    k=st.integers(-(10**6), 10**6),
    detail=st.sampled_from(["paths", "snippets", "sections"]),
)
async def test_any_query_in_any_unicode_category_is_answered(
    hostile: tuple[Path, AgentsServer], query: str, k: int, detail: str
) -> None:
    _, server = hostile
    async with Client(server) as client:
        for tool in ("context_search", "search_docs"):
            result = await client.call_tool(tool, {"query": query, "k": k, "detail": detail})
            text = text_of(result)
            if query.strip():
                assert not result.is_error, text
                assert OUTSIDE not in text
            else:
                assert result.is_error
            tried("random query")


PATHS = st.one_of(
    st.text(max_size=120),
    st.sampled_from(["rules.md", "sub/deep.md", ".env", "sub", "", *TRAVERSALS]),
    st.builds(
        lambda a, b: a + b, st.sampled_from(["", "../", "sub/", "%2e%2e/", "agents://", "/"]), st.text(max_size=40)
    ),
)
LINES = st.one_of(st.none(), st.integers(-(10**6), 10**6))


def answered_or_refused(result: Any) -> str:
    """The shape every tool result must have: a normal answer with a STATUS line, or an error
    result with a message; never a crash, never a byte from outside the root."""
    text = text_of(result)
    assert text.strip()
    assert OUTSIDE not in text
    if not result.is_error:
        assert split_status(text)[1]["method"]
    return text


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    path=PATHS,
    section=st.one_of(st.none(), st.text(max_size=40), st.sampled_from(["Rules", "Secrets", "Deep"])),
    start_line=LINES,
    end_line=LINES,
    max_tokens=st.one_of(st.none(), st.integers(-(10**6), 10**6)),
)
async def test_read_context_with_any_arguments_answers_or_refuses(
    hostile: tuple[Path, AgentsServer],
    path: str,
    section: str | None,
    start_line: int | None,
    end_line: int | None,
    max_tokens: int | None,
) -> None:
    _, server = hostile
    given_args = {"section": section, "start_line": start_line, "end_line": end_line, "max_tokens": max_tokens}
    args: dict[str, Any] = {"path": path, **{k: v for k, v in given_args.items() if v is not None}}
    async with Client(server) as client:
        result = await client.call_tool("read_context", args)
    text = answered_or_refused(result)
    if not path.strip():
        assert result.is_error
    if not result.is_error:
        assert "TOKEN=" not in text  # the secret file is never served
    tried("random read_context arguments")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    path=PATHS,
    max_tokens=st.one_of(st.none(), st.integers(-(10**6), 10**6)),
    detail=st.sampled_from([None, "paths", "snippets", "sections"]),
)
async def test_context_for_path_with_any_arguments_answers_or_refuses(
    hostile: tuple[Path, AgentsServer], path: str, max_tokens: int | None, detail: str | None
) -> None:
    _, server = hostile
    given_args = {"max_tokens": max_tokens, "detail": detail}
    args: dict[str, Any] = {"path": path, **{k: v for k, v in given_args.items() if v is not None}}
    async with Client(server) as client:
        result = await client.call_tool("context_for_path", args)
    answered_or_refused(result)
    if not path.strip():
        assert result.is_error
    tried("random context_for_path arguments")
