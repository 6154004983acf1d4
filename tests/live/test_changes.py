"""Finding what changed: the patrol of a docs root, one bounded step at a time."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from corpus.roots import Root, make_roots
from live.index import LiveIndex
from live.sync import PATROL_S
from tests.live.support import QUERIES, WORDS, doc, ranked


def one_pass(live: LiveIndex, root: Root, budget_s: float = PATROL_S) -> int:
    """Patrol steps until the root's fresh_as_of moves (a pass is complete); how many it took."""
    started = live.syncs[root.label].fresh_as_of
    for steps in range(1, 100):
        live.patrol(root, budget_s)
        if live.syncs[root.label].fresh_as_of != started:
            return steps
    raise AssertionError("the patrol pass never ended")


def test_a_patrol_pass_finds_new_changed_and_deleted_docs_a_folder_at_a_time(make_tree: Callable[..., Path]) -> None:
    agents = make_tree({"a.md": "# A\n\nalpha\n"})
    docs = make_tree({f"d{i}/f{j}.md": doc(WORDS[i : i + 3], f"h{i}{j}") for i in range(4) for j in range(3)}, "docs")
    live = LiveIndex(make_roots([agents], [docs]))
    root = live.roots[1]
    (docs / "d0" / "f0.md").write_text(doc(["kappa", "kappa"], "edited"))
    shutil.rmtree(docs / "d1")
    (docs / "new" / "deeper").mkdir(parents=True)
    (docs / "new" / "deeper" / "found.md").write_text(doc(["iota", "kappa"], "found"))
    (docs / "d2" / ".env").write_text("TOKEN=x\n")
    assert one_pass(live, root, budget_s=0) >= 6  # the top, d0, d2, d3, new, new/deeper: a step each
    fresh = LiveIndex(make_roots([agents], [docs]))
    assert sorted(live.corpus.files) == sorted(fresh.corpus.files)
    assert [(s.root.label, s.rel, s.reason) for s in live.corpus.skipped] == [
        ("docs", "d2/.env", "looks like a secret (denylist)")
    ]
    for query in [*QUERIES, "kappa", "found edited"]:
        assert ranked(live, query) == ranked(fresh, query)
    (docs / "d2" / ".env").unlink()
    shutil.rmtree(docs / "new")
    one_pass(live, root)
    assert live.corpus.skipped == []
    assert not any(p.startswith("docs/new/") for p in live.corpus.files)
