"""Finding roots and labelling them."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus.catalog import load
from corpus.errors import RootNotFound
from corpus.roots import RootKind, find_agents_roots, make_roots
from tests.corpus.support import POSIX


def test_root_from_flag_then_env_then_cwd(tmp_path: Path) -> None:
    (tmp_path / "flag").mkdir()
    (tmp_path / "env").mkdir()
    assert find_agents_roots(["flag"], {"AGENTS_CONTEXT_ROOT": "env"}, tmp_path) == [tmp_path / "flag"]
    assert find_agents_roots([], {"AGENTS_CONTEXT_ROOT": "env"}, tmp_path) == [tmp_path / "env"]
    assert find_agents_roots([], {}, tmp_path) == []
    (tmp_path / ".agents").mkdir()
    assert find_agents_roots([], {}, tmp_path) == [tmp_path / ".agents"]
    (tmp_path / ".AGENTS").mkdir()
    assert [p.name for p in find_agents_roots([], {}, tmp_path)] in ([".AGENTS"], [".agents"])
    with pytest.raises(RootNotFound, match="does not exist"):
        find_agents_roots(["missing"], {}, tmp_path)


@pytest.mark.skipif(not POSIX, reason="symlinks need privileges on Windows")
def test_a_symlinked_root_is_resolved_once(tmp_path: Path) -> None:
    real = tmp_path / "real-agents"
    real.mkdir()
    (real / "a.md").write_text("a\n")
    link = tmp_path / ".AGENTS"
    link.symlink_to(real)
    (root,) = make_roots([link])
    assert root.path == real.resolve()
    assert root.label == ".AGENTS"  # paths show the name the user knows, not the link's target
    assert [f.rel for f in load([root]).files.values()] == ["a.md"]


def test_labels_are_folder_names_made_unique(tmp_path: Path) -> None:
    for d in ("a/.AGENTS", "a/docs", "b/docs", "c/Docs"):
        (tmp_path / d).mkdir(parents=True)
    roots = make_roots([tmp_path / "a/.AGENTS"], [tmp_path / "a/docs", tmp_path / "b/docs", tmp_path / "c/Docs"])
    assert [(r.label, r.kind) for r in roots] == [
        (".AGENTS", RootKind.AGENTS),
        ("docs", RootKind.DOCS),
        ("docs-2", RootKind.DOCS),
        ("Docs-3", RootKind.DOCS),
    ]
