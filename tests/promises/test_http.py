"""Streamable HTTP: one server process, several real HTTP clients, DNS-rebinding protection."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.helpers import SERVER, eventually, search

pytestmark = pytest.mark.anyio


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_server(make_tree: Callable[..., Path]) -> Iterator[tuple[str, Path]]:
    agents = make_tree(
        {
            "overview.md": "# Overview\n\nHTTP test.\n",
            "security.md": "# Security\n\n## Secrets\n\nNever print tokens.\n",
        }
    )
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            SERVER,
            "--root",
            str(agents),
            "--transport",
            "http",
            "--port",
            str(port),
            "--debounce-ms",
            "50",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp", agents
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
        assert out == b""  # nothing on stdout, whatever the transport


async def test_http_clients_of_both_eras_share_one_server(http_server: tuple[str, Path]) -> None:
    url, agents = http_server
    async with Client(url, mode="legacy") as old, Client(url) as new:
        assert old.protocol_version == "2025-11-25" and new.protocol_version == "2026-07-28"
        assert "Secrets" in await search(old, "secrets")
        assert "Secrets" in await search(new, "secrets")
        (agents / "shared.md").write_text("# Shared\n\nthe wombat\n")

        async def both_see_it() -> bool:
            return "shared.md" in await search(old, "wombat") and "shared.md" in await search(new, "wombat")

        await eventually(both_see_it)
        assert "agents-context" in (old.instructions or "")


def post(url: str, headers: dict[str, str]) -> int:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


async def test_dns_rebinding_is_refused_on_localhost(http_server: tuple[str, Path]) -> None:
    url, _ = http_server
    assert await anyio.to_thread.run_sync(post, url, {"Host": "evil.example"}) == 421
    assert await anyio.to_thread.run_sync(post, url, {"Origin": "http://evil.example"}) in (400, 403)
