"""Hostile timing: a folder swapped for a link to the outside while it is read, and a file
rewritten in place, at the same size, while it is read. Real files, a real writer thread, the SDK's
client; every answer is the root's text, one version of it, or a plain "changing" error."""

from __future__ import annotations

import ctypes
import random
import re
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from mcp import Client, MCPError

from corpus.read import Changing, read_text
from tests.helpers import make_server, text_of
from tests.tally import tried

pytestmark = pytest.mark.anyio
OUTSIDE = "TOP-SECRET-OUTSIDE-THE-ROOT"
RENAME_EXCHANGE = 2
AT_FDCWD = -100


def _exchange() -> object | None:
    """renameat2(..., RENAME_EXCHANGE): two names swapped in one step (Linux 3.15+, glibc 2.28+)."""
    if sys.platform != "linux":
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    return getattr(libc, "renameat2", None)


@contextmanager
def churning(action: object, *args: object) -> Iterator[threading.Event]:
    """Run `action(*args)` in a loop on a thread until the block ends."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            action(*args)  # type: ignore[operator]

    thread = threading.Thread(target=loop)
    thread.start()
    try:
        yield stop
    finally:
        stop.set()
        thread.join()


@pytest.mark.skipif(_exchange() is None, reason="an atomic rename-exchange is a Linux call")
async def test_a_folder_swapped_for_a_link_outside_never_leads_a_read_out(tmp_path: Path) -> None:
    """`sub/` and a link to an outside folder trade names over and over while `sub/file.md` is
    read by read_context and resources/read and searched: no answer ever holds the outside text
    (the read opens each folder on the way without following links; the index reads the same way)."""
    renameat2 = _exchange()
    project = tmp_path / "project"
    agents = project / ".AGENTS"
    (agents / "sub").mkdir(parents=True)
    (agents / "sub" / "file.md").write_text("# File\n\nalpha inside the root\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "file.md").write_text(f"# File\n\nalpha {OUTSIDE}\n")
    (project / "swap").symlink_to(outside, target_is_directory=True)
    server = make_server(agents)
    a, b = bytes(agents / "sub"), bytes(project / "swap")

    def swap() -> None:
        if renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:  # type: ignore[operator]
            raise OSError(ctypes.get_errno(), "renameat2")

    answers: list[str] = []
    async with Client(server) as client:
        with churning(swap):
            deadline = time.monotonic() + 4
            while time.monotonic() < deadline:
                result = await client.call_tool("read_context", {"path": "sub/file.md"})
                answers.append(text_of(result))
                try:
                    contents = (await client.read_resource("agents://sub/file.md")).contents
                    answers.extend(getattr(c, "text", "") for c in contents)
                except MCPError as exc:
                    answers.append(str(exc))
                answers.extend(
                    [
                        text_of(await client.call_tool(tool, {"query": "alpha"}))
                        for tool in ("context_search", "search_docs")
                    ]
                )
        # The swaps are over (an even or odd number of them): whatever `sub` is now, the index agrees.
        settled = text_of(await client.call_tool("read_context", {"path": "sub/file.md"}))
    leaked = [answer for answer in answers if OUTSIDE in answer]
    assert not leaked, leaked[:3]
    assert OUTSIDE not in settled
    assert any("alpha inside the root" in answer for answer in answers)  # the swap did not stop all reads
    tried("folder swapped for a link mid-read", len(answers))


def _rewriter(path: Path, versions: list[bytes]) -> Iterator[None]:
    """Each call rewrites `path` in place with the next version (same size, no truncation), then
    sometimes pauses up to 80 ms: reads land both on a file being written and on a quiet one."""
    n = 0
    while True:
        n += 1
        with path.open("r+b") as out:
            out.write(versions[n % len(versions)])
        if n % 4 == 0:
            time.sleep(random.uniform(0, 0.08))
        yield


def _versions(size: int) -> list[bytes]:
    """Two texts of exactly `size` bytes, every line saying which one it is."""
    out = []
    for name in ("A", "B"):
        line = f"line of version {name} " * 3 + "\n"
        body = ("# Big\n\n" + line * (size // len(line) + 1)).encode()[:size]
        out.append(body[:-1] + b"\n")
    return out


def _one_version(text: str) -> bool:
    return len(set(re.findall(r"version ([AB])", text))) == 1


async def test_a_file_rewritten_in_place_at_the_same_size_is_never_served_mixed(tmp_path: Path) -> None:
    """A 900 KB file of a `--docs` root is rewritten in place, same size, over and over, while
    resources/read and read_context read it: each answer is one version whole, or says the file is
    changing; the reader the index uses gives the same guarantee."""
    agents = tmp_path / ".AGENTS"
    agents.mkdir()
    (agents / "a.md").write_text("# A\n\nsmall\n")
    docs = tmp_path / "docs"
    docs.mkdir()
    big = docs / "big.md"
    versions = _versions(900_000)
    big.write_bytes(versions[0])
    server = make_server(agents, docs=[docs])
    step = _rewriter(big, versions)
    whole = changing = 0
    async with Client(server) as client:
        with churning(next, step):
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                try:
                    contents = (await client.read_resource("agents-docs://docs/big.md")).contents
                except MCPError as exc:
                    assert "changed while it was read" in str(exc), str(exc)
                    changing += 1
                else:
                    text = "".join(getattr(c, "text", "") for c in contents)
                    assert _one_version(text), "resources/read mixed two versions"
                    whole += 1
                result = await client.call_tool("read_context", {"path": "docs/big.md", "max_tokens": 10_000})
                if result.is_error:
                    assert "changed while it was read" in text_of(result), text_of(result)
                else:
                    assert _one_version(text_of(result).split("[agents-context")[0])
                # The index's reader, directly: the same guarantee for what gets indexed.
                try:
                    assert _one_version(read_text(docs.resolve(), big.resolve()).text), "a mixed read"
                except Changing:
                    changing += 1
                else:
                    whole += 1
    assert whole and changing, (whole, changing)
    tried("read during a same-size rewrite (one version)", whole)
    tried("read during a same-size rewrite (changing)", changing)
