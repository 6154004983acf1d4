"""`agents-context-shared`: sessions started with the same flags in the same folder share one
server, started by the first of them, over real processes (the relay a client starts, the
detached server it starts, the SDK's client over stdio)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from corpus.roots import ENV_ROOT
from live.cache import ENV as CACHE_ENV
from shared import relay as share
from tests.conftest import TEST_ENV, write_tree
from tests.helpers import MODES, TOOLS, search, split_status, text_of
from writes.state import STATE_ENV

RELAY = Path(sys.executable).with_name("agents-context-shared")
"""The console script a client starts."""
IDLE_S = 2
PROJECT = {
    ".AGENTS/overview.md": "# Overview\n\nThe widget service keeps frobnicators in Postgres.\n",
    ".AGENTS/deploy.md": "# Deploy\n\n## Rollback\n\nRoll back with the zebra switch.\n",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "shop", PROJECT)


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The relay's environment: a state folder of the test's own and a short idle time. Every
    server started there is gone at the end (they end on their own; any left is stopped)."""
    state = tmp_path / "state"
    yield {**TEST_ENV, STATE_ENV: str(state), share.IDLE_ENV: str(IDLE_S)}
    for found in (state / "shared").glob("*.json"):
        published = share.published(found)
        if published is not None:
            with contextlib.suppress(OSError):
                os.kill(published.pid, signal.SIGTERM)


def params(project: Path, env: dict[str, str], *flags: str) -> StdioServerParameters:
    return StdioServerParameters(command=str(RELAY), args=["--no-cache", *flags], cwd=str(project), env=env)


def relay_alone(project: Path, env: dict[str, str], *flags: str) -> subprocess.CompletedProcess[str]:
    """The relay started with no client on its stdin: what it says when it cannot serve."""
    return subprocess.run(
        [str(RELAY), *flags],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def state_files(env: dict[str, str]) -> list[Path]:
    return sorted((Path(env[STATE_ENV]) / "shared").glob("*.json"))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


pytestmark = pytest.mark.skipif(not RELAY.exists(), reason="the console scripts are installed by `uv run`")


@pytest.mark.anyio
async def test_sessions_started_at_once_share_one_server_which_ends_once_idle(
    project: Path, env: dict[str, str]
) -> None:
    answers: list[str] = []

    async def session() -> None:
        async with Client(params(project, env)) as client:
            answers.append(split_status(await search(client, "where are frobnicators kept"))[0])

    async with anyio.create_task_group() as tg:
        for _ in range(3):
            tg.start_soon(session)
    assert len(answers) == 3 and len(set(answers)) == 1, answers
    assert answers[0].startswith('<context path=".AGENTS/overview.md" section="Overview"'), answers[0]
    (state,) = state_files(env)
    first = share.published(state)
    assert first is not None and alive(first.pid)

    (project / ".AGENTS" / "deploy.md").write_text("# Deploy\n\n## Rollback\n\nRoll back with the okapi lever.\n")
    async with Client(params(project, env)) as client:  # a later session: the same server, fresh
        assert "okapi lever" in await search(client, "how to roll back")
        status = text_of(await client.call_tool("context_status", {}))
    assert share.published(state) == first, "a second server was started"
    assert str(project / ".AGENTS") in status

    deadline = time.monotonic() + IDLE_S + 30
    while alive(first.pid) and time.monotonic() < deadline:
        await anyio.sleep(0.1)
    assert not alive(first.pid), "the server did not end once idle"
    assert not state.exists(), "the server left its state file behind"
    assert "no session for 2 s: the shared server stops" in state.with_suffix(".log").read_text()


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_both_protocol_eras_are_served_through_the_relay(project: Path, env: dict[str, str], mode: str) -> None:
    async with Client(params(project, env), mode=mode) as client:
        assert "zebra switch" in await search(client, "how to roll back")
        assert [t.name for t in (await client.list_tools()).tools] == TOOLS
        published = share.published(state_files(env)[0])
    assert published is not None
    deadline = time.monotonic() + IDLE_S + 10  # the session ended with the client, not later
    while alive(published.pid) and time.monotonic() < deadline:
        await anyio.sleep(0.1)
    assert not alive(published.pid)


@pytest.mark.anyio
async def test_other_flags_or_another_folder_get_a_server_of_their_own(project: Path, env: dict[str, str]) -> None:
    other = write_tree(project.parent / "other", {".AGENTS/overview.md": "# Overview\n\nThe other project.\n"})
    pinned = params(project, env, "--pin", "deploy.md")
    async with Client(params(project, env)) as a, Client(params(other, env)) as b, Client(pinned) as c:
        assert "frobnicators" in await search(a, "frobnicators")
        assert "other project" in await search(b, "other project")
        assert "deploy.md" in text_of(await c.call_tool("pinned_context", {}))
    assert len(state_files(env)) == 3


@pytest.mark.anyio
async def test_a_dead_servers_state_file_is_replaced(project: Path, env: dict[str, str]) -> None:
    """A server killed (or a machine restarted) leaves its state file: the next session starts
    another server, and a stranger that answers on the old port is not taken for it."""
    state = share.state_file(["--no-cache"], project, env)
    state.parent.mkdir(parents=True)
    with socket.socket() as stranger:
        stranger.bind(("127.0.0.1", 0))
        stranger.listen()

        stranger.settimeout(0.1)
        done = threading.Event()

        def answer() -> None:
            while not done.is_set():
                with contextlib.suppress(OSError):
                    conn, _ = stranger.accept()
                    with conn:
                        conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")

        answering = threading.Thread(target=answer)
        answering.start()
        with subprocess.Popen([sys.executable, "-c", "pass"]) as gone:  # a server that has ended
            gone.wait()
        fd = os.open(state, os.O_WRONLY | os.O_CREAT, 0o600)  # as a server writes it
        with os.fdopen(fd, "w") as out:
            out.write(json.dumps({"port": stranger.getsockname()[1], "token": "0" * 32, "pid": gone.pid}))
        try:
            async with Client(params(project, env)) as client:
                assert "frobnicators" in await search(client, "frobnicators")
        finally:
            done.set()
            answering.join()
    found = share.published(state)
    assert found is not None and found.pid != gone.pid


def test_a_connection_without_the_token_is_closed_unanswered(project: Path, env: dict[str, str]) -> None:
    with subprocess.Popen(
        [str(RELAY), "--no-cache"], cwd=project, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as relay:
        assert relay.stdin is not None and relay.stdout is not None
        relay.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\nnot json\n')
        relay.stdin.flush()
        answers = sorted((json.loads(relay.stdout.readline()) for _ in range(2)), key=lambda a: "error" in a)
        assert answers[0] == {"jsonrpc": "2.0", "id": 1, "result": {}}
        refused = answers[1]["error"]  # a line the server cannot read is answered, as on stdio
        assert refused["code"] == -32700 and "not valid JSON" in refused["message"]
        published = share.published(state_files(env)[0])
        assert published is not None
        with socket.create_connection(("127.0.0.1", published.port), timeout=10) as intruder:
            intruder.sendall(b"f" * 32 + b"\n" + b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
            assert everything(intruder) == b""
        with socket.create_connection(("127.0.0.1", published.port), timeout=10) as intruder:  # no token to prove with
            intruder.sendall(share.HANDSHAKE + b" hello " + b"0" * 32 + b"\n")
            proof = intruder.recv(1024)
            assert proof.startswith(share.HANDSHAKE + b" server ") and published.token.encode() not in proof
            intruder.sendall(
                share.HANDSHAKE + b" relay " + b"0" * 64 + b"\n" + b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
            )
            assert everything(intruder) == b"", "the server admitted a connection that did not prove it holds the token"
        relay.stdin.write(b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
        relay.stdin.close()
        assert json.loads(relay.stdout.readline())["id"] == 2, "the session was hurt by the intruder"
        assert relay.wait(timeout=30) == 0


def everything(sock: socket.socket) -> bytes:
    """All `sock` receives until the other end closes it."""
    received = b""
    try:
        while chunk := sock.recv(1024):
            received += chunk
    except ConnectionResetError:  # closed with the rest unread
        pass
    return received


def test_a_server_that_cannot_start_is_said_in_one_line(project: Path, env: dict[str, str]) -> None:
    done = relay_alone(project, env, "--docs", str(project / "missing"))
    assert done.returncode == 1 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("agents-context-shared: the shared server stopped as it started: "), line
    assert "missing" in line and "Traceback" not in line
    assert state_files(env) == []


def test_a_bad_idle_time_is_said_in_one_line(project: Path, env: dict[str, str]) -> None:
    done = relay_alone(project, {**env, share.IDLE_ENV: "soon"})
    assert done.returncode == 1
    assert done.stderr == "agents-context-shared: AGENTS_CONTEXT_SHARED_IDLE='soon' is not a number of seconds.\n"


def test_which_server_a_session_shares_depends_on_what_it_would_serve(tmp_path: Path) -> None:
    env = {STATE_ENV: str(tmp_path)}
    base = share.state_file(["--pin", "a.md"], tmp_path / "My Project", env)
    assert base.parent == tmp_path / "shared" and base.name.startswith("my-project-")
    assert share.state_file(["--pin", "a.md"], tmp_path / "My Project", {**env, share.IDLE_ENV: "9"}) == base
    assert share.state_file(["--pin", "b.md"], tmp_path / "My Project", env) != base
    assert share.state_file(["--pin", "a.md"], tmp_path / "Other", env).name.startswith("other-")
    assert share.state_file(["--pin", "a.md"], tmp_path / "My Project", {**env, "AGENTS_CONTEXT_ROOT": "x"}) != base
    assert share.state_file(["--pin", "a.md"], tmp_path / "My Project", {**env, CACHE_ENV: "/c"}) != base
    assert share.SERVED_BY == (ENV_ROOT, CACHE_ENV)


def test_a_transport_flag_is_refused_in_one_line(project: Path, env: dict[str, str]) -> None:
    done = relay_alone(project, env, "--transport", "http")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "agents-context-shared: it relays stdio to a server of its own; leave out --transport\n"
    assert state_files(env) == []


def test_a_state_folder_that_cannot_be_made_is_said_in_one_line(project: Path, env: dict[str, str]) -> None:
    blocker = project.parent / "a-file"
    blocker.write_text("not a folder\n")
    done = relay_alone(project, {**env, STATE_ENV: str(blocker)})
    assert done.returncode == 1 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("agents-context-shared: cannot use the state folder: ") and str(blocker) in line, line
