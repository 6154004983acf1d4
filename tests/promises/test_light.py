"""The small processes start small: the hook (once per file an agent touches), the relay (once
per session) and `agents-context setup` load none of the server's packages. Each runs as its
command does, in a process of its own, on a real project, and says at exit what it loaded."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench import monorepo
from shared import relay
from tests.conftest import TEST_ENV
from writes.state import STATE_ENV

HEAVY = ("mcp", "pydantic", "numpy", "anyio", "watchfiles")
PARSERS = ("markdown_it", "yaml")
PROBE = """
import atexit, sys
atexit.register(lambda: sys.stderr.write("LOADED " + " ".join(sorted({m.split(".")[0] for m in sys.modules})) + "\\n"))
sys.argv = [sys.argv[0], *sys.argv[2:]]
from {module} import main
main_result = main()
sys.exit(main_result)
"""


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    state = tmp_path / "state"
    yield {**TEST_ENV, STATE_ENV: str(state), relay.IDLE_ENV: "2"}
    for found in (state / "shared").glob("*.json"):  # a relay's server ends on its own; any left is stopped
        published = relay.published(found)
        if published is not None:
            with contextlib.suppress(OSError):
                os.kill(published.pid, signal.SIGTERM)


def loaded(module: str, args: list[str], cwd: Path, env: dict[str, str], stdin: str = "") -> set[str]:
    """The top-level packages `module.main` loaded, run with `args` as its command line."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE.replace("{module}", module), "probe", *args],
        input=stdin, capture_output=True, text=True, cwd=cwd, env=env, timeout=120, check=False,
    )  # fmt: skip
    line = next((x for x in done.stderr.splitlines() if x.startswith("LOADED ")), None)
    assert line is not None, done.stderr[-2000:]
    return set(line.split()[1:])


def test_the_hook_loads_none_of_the_servers_packages_and_parses_once(tmp_path: Path, env: dict[str, str]) -> None:
    project = monorepo.write(tmp_path / "mono")
    task = str(project / monorepo.TASK_FILE)

    def touch(session: str) -> set[str]:
        payload: dict[str, object] = {"session_id": session, "hook_event_name": "PreToolUse", "cwd": str(project)}
        payload |= {"tool_name": "Read", "tool_input": {"file_path": task}}
        return loaded("hook.main", ["claude-code"], project, env, json.dumps(payload))

    first = touch("one")
    assert not first & set(HEAVY), first & set(HEAVY)
    assert set(PARSERS) <= first  # the first event parses the rules
    again = touch("two")  # what the parse found is kept between events, in the state folder
    assert not again & {*HEAVY, *PARSERS}, again & {*HEAVY, *PARSERS}
    assert "pathspec" not in again  # the conventions' own patterns and the rules' globs need none
    assert not any(p.suffix == ".json" for p in project.rglob("*") if "parses" in p.parts)  # never in the project


def test_setup_loads_none_of_the_servers_packages(tmp_path: Path, env: dict[str, str]) -> None:
    project = tmp_path / "shop"
    (project / ".AGENTS").mkdir(parents=True)
    (project / ".AGENTS/overview.md").write_text("# Overview\n", encoding="utf-8")
    modules = loaded("cli.entry", ["setup", "claude-code", "--project", str(project)], tmp_path, env)
    assert not modules & set(HEAVY), modules & set(HEAVY)
    assert (project / ".mcp.json").is_file()  # it did its work


def test_the_relay_loads_none_of_the_servers_packages(tmp_path: Path, env: dict[str, str]) -> None:
    project = tmp_path / "shop"
    (project / ".AGENTS").mkdir(parents=True)
    (project / ".AGENTS/overview.md").write_text("# Overview\n", encoding="utf-8")
    modules = loaded("shared.relay", ["--no-cache"], project, env)  # no client: it connects, relays nothing, ends
    assert not modules & set(HEAVY), modules & set(HEAVY)
    assert "socket" in modules  # it did reach for a server
