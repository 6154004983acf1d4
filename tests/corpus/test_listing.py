"""Listings remembered between walks never miss a change."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from corpus import listing as listings_module
from corpus.listing import listings_for
from corpus.roots import Root, make_roots
from corpus.scan import walk, walked


def settle(root: Root) -> None:
    """Walk until every folder listing is trusted (listed well after its folder last changed), so
    the next walk takes the remembered listings wherever the folders did not move."""
    deadline = time.monotonic() + 30
    while True:
        walk(root)
        if all(listing.trusted for listing in listings_for(root.path, root.include).folders.values()):
            return
        assert time.monotonic() < deadline, "the listings never settled"
        time.sleep(0.02)


def test_a_walk_over_remembered_listings_misses_no_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(listings_module, "RACY_NS", 100_000_000)  # trust a listing 0.1 s after a change
    repo = tmp_path / "shop"
    for rel, text in {
        "AGENTS.md": "# Shop\n",
        ".gitignore": "dist/\n",
        "src/api/auth.py": "pass\n",
        "src/web/app.ts": "export {}\n",
        "node_modules/x/AGENTS.md": "# Not ours\n",
        "dist/AGENTS.md": "# Built\n",
    }.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    (root,) = make_roots([], conventional=repo)

    def found() -> dict[str, int]:
        return {f.rel: f.size for f in walk(root).files}

    def why() -> dict[str, str]:
        return {s.rel: s.reason for s in walk(root).skipped}

    settle(root)
    assert found() == {"AGENTS.md": 7}
    assert why() == {"dist/": "ignored by .gitignore", "node_modules/": "ignored folder"}
    assert sorted(Path(p).relative_to(repo).as_posix() for p in walked(root) or ()) == [
        ".",
        "src",
        "src/api",
        "src/web",
    ]

    (repo / "src/api/AGENTS.md").write_text("# API\n")  # a new file in a settled folder
    settle(root)
    assert found() == {"AGENTS.md": 7, "src/api/AGENTS.md": 6}
    with (repo / "src/api/AGENTS.md").open("a") as f:  # an in-place edit moves no folder
        f.write("Never log tokens.\n")
    assert found()["src/api/AGENTS.md"] == 24
    settle(root)
    (repo / ".gitignore").write_text("dist/\nsrc/api/\n")  # the rules change, no folder moves
    assert "src/api/AGENTS.md" not in found() and why()["src/api/"] == "ignored by .gitignore"
    settle(root)
    (repo / ".gitignore").write_text("dist/\n")
    assert "src/api/AGENTS.md" in found()
    settle(root)
    (repo / "src/api/.gitignore").write_text("AGENTS.md\n")  # a new ignore file deeper down
    assert "src/api/AGENTS.md" not in found() and why()["src/api/AGENTS.md"] == "ignored by .gitignore"
    settle(root)
    (repo / "src/api/.gitignore").unlink()
    assert "src/api/AGENTS.md" in found()
    settle(root)
    (repo / "src/web/deep").mkdir()
    (repo / "src/web/deep/AGENTS.md").write_text("# Deep\n")
    assert "src/web/deep/AGENTS.md" in found()
    settle(root)
    shutil.rmtree(repo / "src/web")
    assert found() == {"AGENTS.md": 7, "src/api/AGENTS.md": 24}
    assert sorted(Path(p).relative_to(repo).as_posix() for p in walked(root) or ()) == [".", "src", "src/api"]
