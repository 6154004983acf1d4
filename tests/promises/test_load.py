"""Load and churn: 200 concurrent tool calls while 1,000 edits, renames and deletes happen. Every
answer is well formed and from one complete generation; no call errors; afterwards the live index
equals a fresh one."""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from corpus.roots import make_roots
from live.index import LiveIndex
from retrieval.search.policy import served
from retrieval.search.request import SECTIONS
from retrieval.search.retriever import RetrievalRequest
from tests.helpers import eventually, make_server, split_status, text_of
from tests.tally import tried

pytestmark = pytest.mark.anyio
VERSION = re.compile(r"^# Doc (d\d+)\n\nversion (\d+) of \1, shared churn words\.$")


def content(name: str, version: int) -> str:
    return f"# Doc {name}\n\nversion {version} of {name}, shared churn words.\n"


class Churn:
    """How far the writer is, so each call can tell whether it ran between the churn's first and
    last operation."""

    def __init__(self) -> None:
        self.ops = 0
        self.done = threading.Event()
        self.answered = threading.Event()
        """Set when half the calls are answered: the writer waits for it halfway through, so
        however fast it runs, at least that many calls overlap its second half."""


def churn(root: Path, ops: int, seed: int, state: Churn) -> None:
    rng = random.Random(seed)
    version = 0
    try:
        for _ in range(ops):
            version += 1
            state.ops = version
            if version == ops // 2:
                state.answered.wait(timeout=120)
            a, b = f"d{rng.randrange(60)}", f"d{rng.randrange(60)}"
            src, dst = root / f"{a}.md", root / f"{b}.md"
            op = rng.random()
            try:
                if op < 0.5:
                    src.write_text(content(a, version))
                elif op < 0.75 and src.exists():
                    dst.write_text(content(b, version))  # write the target as itself, then move it in place
                    src.unlink()
                elif src.exists():
                    src.unlink()
            except FileNotFoundError:
                pass
            if version % 50 == 0:
                time.sleep(0.005)
    finally:
        state.done.set()


def ranked(live: LiveIndex, query: str) -> list[tuple[str, float]]:
    with live.view() as view:
        docs = served(view.library, SECTIONS).search(RetrievalRequest(query, 1000)).docs
    return [(d.id, d.score) for d in docs]


async def test_concurrent_calls_during_heavy_churn_stay_correct(make_tree: Callable[..., Path]) -> None:
    root = make_tree({f"d{i}.md": content(f"d{i}", 0) for i in range(40)})
    server = make_server(root)
    state = Churn()
    writer = threading.Thread(target=churn, args=(root, 1000, 7, state))
    answers: list[tuple[str, dict[str, Any] | None, bool]] = []
    during: list[tuple[int, int]] = []  # the writer's progress when each call went out and came back

    async with Client(server) as client:

        async def call(i: int) -> None:
            tool = ("context_search", "search_docs", "context_status")[i % 3]
            args = {} if tool == "context_status" else {"query": "shared churn words", "k": 10}
            sent = state.ops
            result = await client.call_tool(tool, args)
            during.append((sent, state.ops))
            answers.append((text_of(result), result.structured_content, bool(result.is_error)))
            if len(answers) >= 100:
                state.answered.set()

        writer.start()
        async with anyio.create_task_group() as tg:
            for i in range(200):
                tg.start_soon(call, i)
                if i % 20 == 0:
                    await anyio.sleep(0.01)
        await anyio.to_thread.run_sync(writer.join)
        assert state.done.is_set()
        assert state.answered.is_set()

        async def settled() -> bool:
            fresh = LiveIndex(make_roots([root]), settle_s=0)
            return ranked(server.app.live, "shared churn words") == ranked(fresh, "shared churn words")

        await eventually(settled, timeout=30)

    assert len(answers) == 200
    overlapped = sum(1 for sent, back in during if sent > 0 and back < 1000)
    assert overlapped >= 100, f"only {overlapped} calls ran mid-churn"
    for text, structured, is_error in answers:
        assert not is_error, text
        _, status = split_status(text)
        assert structured is not None and str(structured["generation"]) == status["gen"]
        hits = structured.get("hits", [])
        assert isinstance(hits, list)
        for hit in hits:
            assert VERSION.match(hit["text"]), hit["text"]  # a whole version of one file, never a torn mix
    tried("concurrent calls under churn", 200)
    tried("calls answered mid-churn (after the first operation, before the last)", overlapped)
    tried("churn operations", 1000)
    fresh = LiveIndex(make_roots([root]), settle_s=0)
    for query in ("shared churn words", "version", "d7", "d13 d14"):
        assert ranked(server.app.live, query) == ranked(fresh, query)
