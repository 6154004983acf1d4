"""The cache folder as people see it once a real server has run: `agents-context cache show` (as
text, as JSON, with its JSON schema) lists each entry with its root, size and last use, and the
lock file apart (docs/freshness.md, "Persistent index and start-up")."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from rich.console import Console

from cli import commands
from live.cache import MB
from tests.helpers import ENTRY, SERVER, as_json, cli


@pytest.mark.anyio
async def test_cache_show_lists_each_entry_with_its_root_size_and_last_use(
    make_tree: Callable[..., Path], tmp_path: Path
) -> None:
    agents = make_tree({"overview.md": "# Overview\n\nShown.\n", "rules.md": "# Rules\n\nalpha rules\n"})
    where = tmp_path / "cache folder"
    params = StdioServerParameters(
        command=sys.executable, args=[SERVER, "--root", str(agents), "--cache-dir", str(where)]
    )
    async with Client(params, mode="legacy") as client:
        assert not (await client.call_tool("context_search", {"query": "alpha"})).is_error
    served = time.time()

    shown = as_json("cache", "show", "--cache-dir", str(where))
    (entry,) = where.glob("*.index")
    assert shown["action"] == "show" and shown["directory"] == str(where)
    assert shown["files"] == shown["left"] == 1 and shown["other_files"] == 1  # the lock file, apart
    (listed,) = shown["entries"]
    assert listed["name"] == entry.name and ENTRY.fullmatch(entry.name)
    assert listed["root"] == str(agents.resolve()) and listed["kind"] == "agents" and listed["label"]
    assert listed["bytes"] == shown["bytes"] == entry.stat().st_size + entry.with_suffix(".json").stat().st_size
    last_used = datetime.fromisoformat(listed["last_used"].replace("Z", "+00:00"))
    assert last_used.utcoffset() == timedelta(0) and abs(last_used.timestamp() - served) < 120
    assert shown["cap_bytes"] == 1024 * MB and shown["stale_after_days"] == 30

    text = cli("cache", "--cache-dir", str(where))
    assert text.returncode == 0, text.stderr
    assert f"{where}: 1 entry, " in text.stdout and "cap 1024 MB; unused for 30 days: removed" in text.stdout
    assert f"  {agents.resolve()}  " in text.stdout and "used just now" in text.stdout and entry.name in text.stdout
    assert "and 1 lock or temporary file" in text.stdout
    console = Console(record=True, width=300)
    rendered = commands.run_cache(where)
    assert rendered.show is not None
    rendered.show(console)
    screen = console.export_text()
    assert str(agents.resolve()) in screen and "just now" in screen and entry.name in screen

    schema = cli("cache", "--json-schema")
    properties = json.loads(schema.stdout)["$defs"]["CacheEntry"]["properties"]
    assert {"name", "root", "label", "kind", "bytes", "last_used"} <= properties.keys()
