"""The protocol under abuse, over real stdio: malformed JSON, unknown methods, oversized messages,
abrupt disconnects and SIGTERM leave the process serving or exiting cleanly, and stdout carries
only JSON-RPC."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import SERVER
from tests.tally import tried

INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}


class Raw:
    """A server process driven line by line, with every stdout line parsed as it arrives."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, SERVER, "--root", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.lines: list[bytes] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        self.lines.extend(iter(self.proc.stdout.readline, b""))

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def rpc(self, method: str, id_: int | None = None, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if id_ is not None:
            message["id"] = id_
        if params is not None:
            message["params"] = params
        self.send((json.dumps(message) + "\n").encode())

    def reply(self, id_: int, timeout: float = 20) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for m in self.messages():
                if m.get("id") == id_:
                    return m
            time.sleep(0.02)
        raise AssertionError(f"no reply to {id_}; got {self.lines[-3:]}")

    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in list(self.lines)]

    def handshake(self) -> None:
        self.rpc("initialize", 1, INIT)
        self.reply(1)
        self.rpc("notifications/initialized")

    def alive_and_serving(self, id_: int) -> None:
        self.rpc("tools/call", id_, {"name": "context_search", "arguments": {"query": "secrets"}})
        assert "Secrets" in self.reply(id_)["result"]["content"][0]["text"]

    def close(self) -> int:
        if self.proc.stdin and not self.proc.stdin.closed:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self._reader.join(timeout=5)
            if self.proc.stdout and not self.proc.stdout.closed:
                self.proc.stdout.close()

    def only_json_rpc(self) -> None:
        for line in self.lines:
            assert json.loads(line)["jsonrpc"] == "2.0"  # every stdout line is JSON-RPC


@pytest.fixture
def raw(make_tree: Callable[..., Path]) -> Iterator[Raw]:
    server = Raw(make_tree({"security.md": "# Security\n\n## Secrets\n\nNever print tokens.\n"}))
    try:
        yield server
    finally:
        server.close()


def test_malformed_json_and_unknown_methods_leave_the_server_serving(raw: Raw) -> None:
    raw.handshake()
    for bad in (
        b"{not json\n",
        b"[1, 2\n",
        b'{"jsonrpc": "2.0", "id": 99}\n',
        b"\x00\xff\xfe garbage\n",
        b'"just a string"\n',
    ):
        raw.send(bad)
        tried("malformed message")
    raw.rpc("no/such/method", 5, {})
    assert raw.reply(5)["error"]["code"] == -32601
    raw.rpc("tools/call", 6, {"name": "context_search"})  # no arguments
    assert raw.reply(6)["result"]["isError"] is True
    raw.alive_and_serving(7)
    assert raw.close() == 0
    raw.only_json_rpc()
    tried("unknown method")


def test_an_oversized_message_is_refused_or_answered_and_serving_goes_on(raw: Raw) -> None:
    raw.handshake()
    raw.rpc("tools/call", 2, {"name": "context_search", "arguments": {"query": "secrets " * 1_000_000}})  # ~8 MB
    reply = raw.reply(2, timeout=60)
    assert "result" in reply or "error" in reply
    raw.alive_and_serving(3)
    assert raw.close() == 0
    raw.only_json_rpc()
    tried("oversized message")


def test_an_abrupt_disconnect_mid_message_ends_the_process_cleanly(raw: Raw) -> None:
    raw.handshake()
    raw.send(b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "conte')
    assert raw.close() == 0  # close() waits up to 10 s for the exit, then fails
    raw.only_json_rpc()
    tried("abrupt disconnect")


@pytest.mark.skipif(os.name != "posix", reason="SIGTERM is POSIX")
def test_sigterm_ends_the_process_promptly(raw: Raw) -> None:
    raw.handshake()
    raw.alive_and_serving(2)
    raw.proc.send_signal(signal.SIGTERM)
    code = raw.proc.wait(timeout=10)  # raises if the process is still running after 10 s
    assert code in (0, -signal.SIGTERM)
    raw.only_json_rpc()
    tried("SIGTERM")
