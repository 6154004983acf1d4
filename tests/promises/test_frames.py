"""Frames the SDK would drop, sent as raw lines to a real server over stdio: each gets
the answer JSON-RPC 2.0 asks for, with the request's id and code, the server keeps serving, stdout
stays pure JSON-RPC, and valid frames get exactly the SDK's own answers (docs/contracts.md, "Frames")."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO, SERVER
from tests.protocol.test_frames import one_sentence

INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
TIMEOUT = 30.0
"""Seconds to wait for any one answer: generous, the machine is shared."""
SDK_TRANSPORT = "import server, sys; server.serve_stdio = lambda s: s.run_stdio_async(); server.main(sys.argv[1:])"
"""The same server on the SDK's own stdio transport, without the guard: the reference for valid frames."""


class Wire:
    """A real server process, written to line by line, every stdout line kept as it arrives."""

    def __init__(self, command: list[str], log: Path) -> None:
        self.log = log
        with log.open("wb") as err:
            self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, cwd=REPO)
        self.lines: list[bytes] = []
        self._next_id = 1000
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        self.lines.extend(iter(self.proc.stdout.readline, b""))

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def rpc(self, method: str, id_: int | str | None = None, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if id_ is not None:
            message["id"] = id_
        if params is not None:
            message["params"] = params
        self.send(json.dumps(message).encode())

    def messages(self, start: int = 0) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.lines[start:]]

    def reply(self, id_: int | str, start: int = 0) -> tuple[int, dict[str, Any]]:
        """The answer to `id_` among the lines from `start`, and the index of its line."""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            for i, message in enumerate(self.messages(start)):
                if message.get("id") == id_ and ("result" in message or "error" in message):
                    return start + i, message
            time.sleep(0.02)
        raise AssertionError(f"no answer to id {id_!r} within {TIMEOUT} s; last lines {self.lines[-3:]}")

    def handshake(self) -> None:
        self.rpc("initialize", 1, INIT)
        self.reply(1)
        self.rpc("notifications/initialized")

    def exchange(self, line: bytes) -> list[dict[str, Any]]:
        """Send `line`, then a ping: the answers that arrived before the ping's (the guard writes
        its answer before it reads the next line, so they are the line's answers)."""
        start = len(self.lines)
        self._next_id += 1
        self.send(line)
        self.rpc("ping", self._next_id)
        at, pong = self.reply(self._next_id, start)
        assert pong == {"jsonrpc": "2.0", "id": self._next_id, "result": {}}, pong
        return [m for m in self.messages(start)[: at - start] if "result" in m or "error" in m]

    def serving(self, id_: int) -> None:
        """A normal tool call still gets its normal answer."""
        self.rpc("tools/call", id_, {"name": "context_search", "arguments": {"query": "rollback"}})
        _, answer = self.reply(id_)
        assert "zebra switch" in answer["result"]["content"][0]["text"], answer

    def close(self) -> int:
        if self.proc.stdin and not self.proc.stdin.closed:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=TIMEOUT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self._reader.join(timeout=5)
            if self.proc.stdout and not self.proc.stdout.closed:
                self.proc.stdout.close()

    def stdout_is_pure_json_rpc(self) -> None:
        """One JSON object per line, each a JSON-RPC 2.0 message, nothing else."""
        for raw in self.lines:
            assert raw.endswith(b"\n") and raw.count(b"\n") == 1, raw
            message = json.loads(raw.decode("utf-8"))
            assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", raw
            assert len({"method", "result", "error"} & message.keys()) == 1, raw

    def stderr(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


@pytest.fixture
def agents(make_tree: Callable[..., Path]) -> Path:
    return make_tree({"deploy.md": "# Deploy\n\n## Rollback\n\nRoll back a deploy with the zebra switch.\n"})


def start(agents: Path, log: Path, *prefix: str) -> Wire:
    return Wire([sys.executable, *(prefix or (SERVER,)), "--root", str(agents), "--no-cache"], log)


@pytest.fixture
def wire(agents: Path, tmp_path: Path) -> Iterator[Wire]:
    server = start(agents, tmp_path / "stderr.log")
    try:
        server.handshake()
        yield server
    finally:
        server.close()


HOSTILE = [
    # (the line as the client wrote it, the id of the answer, its code)
    pytest.param(rb'{"jsonrpc":"2.0","id":21,"method":"tools/list","params":"all"}', 21, -32600, id="params-string"),
    pytest.param(rb'{"jsonrpc":"2.0","id":"p22","method":"tools/list","params":[1]}', "p22", -32602, id="params-array"),
    pytest.param(rb'{"jsonrpc":"1.0","id":23,"method":"tools/list"}', 23, -32600, id="jsonrpc-1.0"),
    pytest.param(rb'{"id":24,"method":"tools/list"}', 24, -32600, id="no-jsonrpc"),
    pytest.param(rb'{"jsonrpc":"2.0","id":25,"method":7}', 25, -32600, id="numeric-method"),
    pytest.param(rb'{"jsonrpc":"2.0","id":26}', 26, -32600, id="no-method"),
    pytest.param(rb'{"jsonrpc":"2.0","id":27.5,"method":"tools/list"}', None, -32600, id="fractional-id"),
    pytest.param(rb'{"jsonrpc":"2.0","id":true,"method":"tools/list"}', None, -32600, id="boolean-id"),
    pytest.param(rb'{"jsonrpc":"2.0","id":null,"method":"tools/list"}', None, -32600, id="null-id"),
    pytest.param(rb'{"jsonrpc":"2.0","method":1,"params":"bar"}', None, -32600, id="numeric-method-no-id"),
    pytest.param(rb'{"jsonrpc":"2.0","id":28,"method":"tools/list"', None, -32700, id="truncated"),
    pytest.param(b"{not json", None, -32700, id="not-json"),
    pytest.param(b"\xff\xfe garbage", None, -32700, id="not-utf8"),
    pytest.param(b"42", None, -32600, id="number"),
    pytest.param(b"null", None, -32600, id="null"),
    pytest.param(b'"tools/list"', None, -32600, id="string"),
    pytest.param(b"[]", None, -32600, id="empty-array"),
]


@pytest.mark.parametrize(("line", "id_", "code"), HOSTILE)
def test_a_hostile_frame_gets_one_answer_with_its_id_and_code(
    wire: Wire, line: bytes, id_: int | str | None, code: int
) -> None:
    (answer,) = wire.exchange(line)
    assert answer["id"] == id_ and answer["error"]["code"] == code, answer
    message = answer["error"]["message"]
    assert one_sentence(message), message
    assert "pydantic" not in message and "validation error" not in message, message
    wire.serving(2)
    assert wire.close() == 0
    wire.stdout_is_pure_json_rpc()


def test_a_batch_gets_one_answer_per_request_and_none_for_its_notifications(wire: Wire) -> None:
    batch = b"".join(
        (
            b'[{"jsonrpc":"2.0","id":31,"method":"tools/list"},',
            b'{"jsonrpc":"2.0","method":"notifications/initialized"},',
            b'{"jsonrpc":"2.0","id":"b32","method":"ping"}, 7]',
        )
    )
    answers = wire.exchange(batch)
    assert [(a["id"], a["error"]["code"]) for a in answers] == [(31, -32600), ("b32", -32600), (None, -32600)]
    assert all("batches are not supported" in a["error"]["message"] for a in answers)
    wire.serving(2)
    assert wire.close() == 0
    wire.stdout_is_pure_json_rpc()
    assert "refused a batch of 4 messages (3 answered)" in wire.stderr()


def test_a_lone_surrogate_is_replaced_and_the_query_still_answered(wire: Wire) -> None:
    call = rb'{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"context_search",'
    call += rb'"arguments":{"query":"\ud800 rollback \udc00"}}}'
    wire.send(call)
    _, answer = wire.reply(41)  # a tool call runs beside the next line: wait for it, not for a ping
    assert answer["id"] == 41 and "zebra switch" in answer["result"]["content"][0]["text"], answer
    wire.serving(2)
    assert wire.close() == 0
    wire.stdout_is_pure_json_rpc()
    assert "replaced 2 lone surrogate(s) with U+FFFD in tools/call (id 41)" in wire.stderr()


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(rb'{"jsonrpc":"2.0","method":"notifications/initialized","params":"x"}', id="params-string"),
        pytest.param(rb'{"jsonrpc":"1.0","method":"notifications/initialized"}', id="jsonrpc-1.0"),
        pytest.param(rb'{"jsonrpc":"2.0","id":51,"result":"not an object"}', id="response"),
    ],
)
def test_an_invalid_notification_or_response_is_logged_and_never_answered(wire: Wire, line: bytes) -> None:
    assert wire.exchange(line) == []
    wire.serving(2)
    assert wire.close() == 0
    wire.stdout_is_pure_json_rpc()
    assert "refused a notification or response (JSON-RPC answers neither)" in wire.stderr()


VALID = [
    ("initialize", 1, INIT),
    ("notifications/initialized", None, None),
    ("ping", 2, None),
    ("tools/list", 3, {}),
    ("prompts/list", 4, None),
    ("resources/list", 5, None),
    ("resources/templates/list", 6, None),
    ("resources/read", 7, {"uri": "agents://nope.md"}),
    ("no/such/method", 8, {}),
    ("tools/call", "nine", {"name": "no_such_tool", "arguments": {}}),
]


def test_valid_frames_get_the_sdks_own_answers_byte_for_byte(agents: Path, tmp_path: Path) -> None:
    outputs = []
    for name, prefix in (("guard", (SERVER,)), ("sdk", ("-c", SDK_TRANSPORT))):
        wire = start(agents, tmp_path / f"{name}.log", *prefix)
        try:
            for method, id_, params in VALID:
                start_at = len(wire.lines)
                wire.rpc(method, id_, params)
                if id_ is not None:
                    wire.reply(id_, start_at)  # one at a time, so both write in the same order
            assert wire.close() == 0, wire.stderr()
        finally:
            wire.close()
        wire.stdout_is_pure_json_rpc()
        outputs.append(wire.lines)
    guarded, sdk = outputs
    assert len(guarded) == sum(1 for _, id_, _ in VALID if id_ is not None)
    assert guarded == sdk
