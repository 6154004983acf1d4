"""The status report (`context_status`, `agents-context status`): health, what each root holds, what was skipped, the last update."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from corpus.roots import make_roots
from live.index import LiveIndex
from live.status import StatusReport, render, report
from live.sync import Progress
from retrieval.render.grammar import utc
from retrieval.search.request import Phase
from tests.conftest import DEPLOY, SECURITY
from tests.helpers import split_status

TREE = {
    "overview.md": "# Overview\n\nPolicy tests.\n",  # pinned by default: windows, no sections
    "security.md": SECURITY,  # five sections
    "services/deploy.md": DEPLOY,  # two
    "services/api.md": "# API\n\n## Errors\n\nReturn problem+json errors.\n",  # two
    ".env": "TOKEN=x\n",
}


@pytest.fixture
def agents(make_tree: Callable[..., Path]) -> Path:
    return make_tree(TREE)


@pytest.fixture
def live(agents: Path) -> LiveIndex:
    return LiveIndex(make_roots([agents]), settle_s=0)


def test_a_one_shot_command_runs_no_watcher_and_is_healthy_when_every_root_is_there(live: LiveIndex) -> None:
    status = report(live, None, time.time())
    assert status.enabled and status.healthy
    assert status.watcher.mode == "none (one-shot command)"
    assert status.watcher.healthy and status.watcher.restarts == 0 and status.watcher.last_error is None
    assert status.generation == live.generation
    assert status.last_error is None and status.last_update is None  # the start-up build is no update


def test_each_root_says_what_it_holds_and_what_was_skipped_and_why(live: LiveIndex, agents: Path) -> None:
    (root,) = report(live, None, time.time()).roots
    assert (root.label, root.kind, root.path, root.present) == (".AGENTS", "agents", str(agents.resolve()), True)
    assert (root.files, root.pinned, root.sections, root.windows) == (4, 1, 10, 4)  # pinned sections too
    assert [(s.path, s.reason) for s in root.skipped] == [(".AGENTS/.env", "looks like a secret (denylist)")]
    assert root.indexing is None
    assert root.fresh_as_of == utc(live.syncs[".AGENTS"].fresh_as_of)


def test_a_docs_root_holds_windows_only(make_tree: Callable[..., Path], agents: Path) -> None:
    docs = make_tree({"guide.md": "# Guide\n\n## Install\n\nRun it.\n", "AGENTS.md": "# Not pinned here\n"}, "docs")
    live = LiveIndex(make_roots([agents], [docs]), settle_s=0)
    _, root = report(live, None, time.time()).roots
    assert (root.label, root.kind, root.present) == ("docs", "docs", True)
    assert (root.files, root.pinned, root.sections, root.windows) == (2, 0, 0, 2)
    assert root.skipped == []


def test_a_root_whose_folder_is_gone_is_missing_and_the_server_not_healthy(live: LiveIndex, agents: Path) -> None:
    shutil.rmtree(agents)
    live.sweep(live.roots[0])
    status = report(live, None, time.time())
    assert not status.healthy
    (root,) = status.roots
    assert not root.present and root.files == 0 and root.sections == 0 and root.windows == 0
    assert root.skipped == []  # nothing of it is known any more, skipped files included
    text = render(status)
    assert text.startswith(f"agents-context is NOT healthy: root .AGENTS is missing ({agents.resolve()}). BM25 search")
    assert f"- .AGENTS (agents, {agents.resolve()}) MISSING: 0 files (0 pinned), 0 sections, 0 windows;" in text
    assert split_status(text)[1]["healthy"] == "0"


def test_the_last_update_lists_what_was_added_changed_and_removed(live: LiveIndex, agents: Path) -> None:
    (agents / "security.md").write_text("# Security\n\nRotated.\n")
    (agents / "services" / "api.md").unlink()
    (agents / "new.md").write_text("# New\n\nArrived.\n")
    before = time.time()
    live.sweep(live.roots[0])
    status = report(live, None, before - 100)
    update = status.last_update
    assert update is not None
    assert update.added == [".AGENTS/new.md"]
    assert update.changed == [".AGENTS/security.md"]
    assert update.removed == [".AGENTS/services/api.md"]
    assert status.age_s < 50  # since that update, not since start-up
    assert status.generation == live.generation == 2
    (root,) = status.roots
    assert (root.files, root.sections) == (4, 1 + 1 + 2 + 1)  # overview.md (pinned), security.md one now, new.md one
    text = render(status)
    assert f"Last update at {update.at}: 1 added, 1 changed, 1 removed." in text


def test_with_no_update_the_age_counts_from_start_up(live: LiveIndex) -> None:
    assert report(live, None, time.time() - 100).age_s >= 100


def test_a_failing_update_makes_the_server_not_healthy_and_says_why(live: LiveIndex) -> None:
    live.store.failed(live.roots[0], PermissionError("security.md is unreadable"))
    status = report(live, None, time.time())
    assert not status.healthy and status.roots[0].present
    assert status.last_error == "PermissionError: security.md is unreadable"
    assert "Last error: PermissionError: security.md is unreadable" in render(status)


def test_the_rendered_report_has_the_health_a_line_per_root_the_skips_and_a_status_line(live: LiveIndex) -> None:
    status = report(live, None, time.time() - 100)
    text = render(status)
    body, fields = split_status(text)
    lines = body.split("\n")
    assert lines[0] == "agents-context is healthy; BM25 search enabled."
    assert lines[1].startswith(f"Index generation {status.generation}, last changed 10")
    assert lines[1].endswith(f"; fresh as of {status.fresh_as_of}.")
    assert lines[2] == "Watcher: none (one-shot command), healthy, 0 restarts."
    (root,) = status.roots
    assert lines[3:] == [
        f"- .AGENTS (agents, {root.path}): 4 files (1 pinned), 10 sections, 4 windows; fresh as of {root.fresh_as_of}",
        "  skipped .AGENTS/.env: looks like a secret (denylist)",
    ]
    assert text.endswith(f"\n\n[agents-context healthy=1 gen={status.generation} fresh_as_of={status.fresh_as_of}]")
    assert fields == {"healthy": "1", "gen": str(live.generation), "fresh_as_of": status.fresh_as_of}


def test_fresh_as_of_is_the_oldest_roots(make_tree: Callable[..., Path], agents: Path) -> None:
    docs = make_tree({"guide.md": "# Guide\n"}, "docs")
    live = LiveIndex(make_roots([agents], [docs]), settle_s=0)
    time.sleep(0.01)
    live.sweep(live.roots[0])  # .AGENTS is fresh as of now, docs as of start-up
    status = report(live, None, time.time())
    agents_status, docs_status = status.roots
    assert agents_status.fresh_as_of and docs_status.fresh_as_of
    assert agents_status.fresh_as_of > docs_status.fresh_as_of
    assert status.fresh_as_of == docs_status.fresh_as_of == utc(live.syncs["docs"].fresh_as_of)


def test_a_root_whose_files_are_still_changing_says_so(live: LiveIndex, agents: Path) -> None:
    (agents / "services" / "api.md").write_text("# API\n\n## Errors\n\nReturn plain errors.\n")
    with live.syncs[".AGENTS"].lock:  # another update under way: the call answers without it
        live.catch_up(lambda _: True, budget_s=0.05)
    status = report(live, None, time.time())
    assert status.roots[0].indexing == "changing"
    assert " INDEXING changing: 4 files" in render(status)
    live.catch_up(lambda _: True)
    assert report(live, None, time.time()).roots[0].indexing is None


def test_a_root_being_indexed_is_reported_from_its_progress_as_it_was_when_asked(
    make_tree: Callable[..., Path], agents: Path
) -> None:
    """The text and the state come from the root's progress (files read of how many, or its
    phase), copied once: the indexer thread moving on meanwhile changes neither. The progress
    itself is no part of the JSON."""
    docs = make_tree({"guide.md": "# Guide\n\nRun it.\n"}, "docs")
    live = LiveIndex(make_roots([agents], [docs]), settle_s=0)
    progress = live.syncs["docs"].progress = Progress(done=40, total=120)
    status = report(live, None, time.time())
    progress.done = 80
    assert status.state == "indexing" and status.roots[1].indexing == "40/120"
    assert render(status).startswith("agents-context is indexing (docs: 40/120 files read);")
    assert "progress" not in status.roots[1].model_dump(mode="json")
    assert "progress" not in StatusReport.model_json_schema()["$defs"]["RootStatus"]["properties"]
    live.syncs["docs"].progress = Progress(phase=Phase.CHECKING)
    status = report(live, None, time.time())
    assert status.state == "indexing" and status.roots[1].indexing == "checking"
    assert render(status).startswith("agents-context is indexing (docs: checking);")
    live.syncs["docs"].progress = None
    assert report(live, None, time.time()).state == "healthy"
