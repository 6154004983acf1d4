"""Walking a root: what is served, what is skipped and why, symlinks confined to the root (what a
client of the server gets through such links is in tests/promises/test_served.py)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from corpus import scan
from corpus.catalog import Corpus, load, read_uri
from corpus.roots import make_roots
from corpus.scan import walk
from tests.corpus.support import POSIX, corpus_of, reasons, served
from tests.helpers import DENYLISTED, MARKER, REAL, REPO, linked_tree
from tests.tally import tried


def test_text_files_are_served_whatever_their_name(make_tree: Callable[..., Path]) -> None:
    root = make_tree(
        {
            "overview.md": "# Overview\n",
            "!.md": "bang\n",
            "C#.md": "sharp\n",
            "with space.md": "space\n",
            "ünïcødé.md": "accents\n",
            "日本語.txt": "japanese\n",
            ".hidden.md": "hidden files are included\n",
            ".sub/nested.md": "hidden folders too\n",
            "notes.yaml": "key: value\n",
        }
    )
    corpus = corpus_of(root)
    assert served(corpus) == sorted(
        [
            "overview.md",
            "!.md",
            "C#.md",
            "with space.md",
            "ünïcødé.md",
            "日本語.txt",
            ".hidden.md",
            ".sub/nested.md",
            "notes.yaml",
        ]
    )
    assert corpus.skipped == []


@pytest.mark.parametrize(
    "folder",
    [
        *(".git", ".GIT", ".hg", ".svn", ".jj", "__pycache__", ".mypy_cache", ".ruff_cache"),
        *(".pytest_cache", "node_modules", "Node_Modules", ".venv", ".tox"),
    ],
)
def test_ignored_folders_are_not_walked(make_tree: Callable[..., Path], folder: str) -> None:
    root = make_tree({f"{folder}/inside.md": "never\n", "ok.md": "ok\n"})
    corpus = corpus_of(root)
    assert served(corpus) == ["ok.md"]
    assert reasons(corpus) == {f"{folder}/": "ignored folder"}


@pytest.mark.skipif(not POSIX, reason="symlinks need privileges on Windows")
def test_symlinks_inside_are_followed_and_outside_refused(make_tree: Callable[..., Path], tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("outside the root\n")
    root = make_tree({"real.md": "inside\n", "dir/deep.md": "deep\n"})
    (root / "link-in.md").symlink_to(root / "real.md")
    (root / "link-out.md").symlink_to(outside / "secret.md")
    (root / "dir-out").symlink_to(outside)
    (root / "broken.md").symlink_to(root / "missing.md")
    (root / "dir" / "loop").symlink_to(root / "dir")
    corpus = corpus_of(root)
    assert served(corpus) == ["dir/deep.md", "link-in.md", "real.md"]
    assert reasons(corpus) == {
        "broken.md": "broken symlink",
        "dir/loop/": "link to a folder inside the root (dir/): its files are served under their real path",
        "dir-out": "symlink target leaves the root",
        "link-out.md": "symlink target leaves the root",
    }
    assert corpus.files[".AGENTS/link-in.md"].text == "inside\n"


@pytest.mark.skipif(not POSIX, reason="FIFOs and unix sockets are POSIX")
def test_fifos_and_sockets_are_skipped_without_being_opened(make_tree: Callable[..., Path], short_tmp: Path) -> None:
    root = make_tree({"ok.md": "ok\n"})
    os.mkfifo(root / "pipe.md")
    short = short_tmp  # unix socket paths must be short
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(short / "s"))
        (root / "sock.md").symlink_to(short / "s")
        result: list[Corpus] = []
        worker = threading.Thread(target=lambda: result.append(corpus_of(root)), daemon=True)
        worker.start()
        worker.join(timeout=10)
        assert not worker.is_alive(), "the scan blocked on a FIFO"
    finally:
        sock.close()
    got = reasons(result[0])
    assert got["pipe.md"] == "not a regular file (FIFO)"
    assert got["sock.md"] == "symlink target leaves the root"
    assert served(result[0]) == ["ok.md"]


@pytest.mark.skipif(not POSIX, reason="socket file inside the root needs AF_UNIX")
def test_a_socket_inside_the_root_is_skipped(short_tmp: Path) -> None:
    root = short_tmp
    (root / "ok.md").write_text("ok\n")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(root / "s.md"))
        assert reasons(corpus_of(root)) == {"s.md": "not a regular file (socket)"}
    finally:
        sock.close()


@pytest.mark.skipif(sys.platform != "linux", reason="Linux accepts non-UTF-8 file names")
def test_names_that_are_not_utf8_are_skipped(make_tree: Callable[..., Path]) -> None:
    root = make_tree({"ok.md": "ok\n"})
    fd = os.open(os.fsencode(root) + b"/bad\xff.md", os.O_CREAT | os.O_WRONLY)
    os.close(fd)
    corpus = corpus_of(root)
    assert served(corpus) == ["ok.md"]
    assert reasons(corpus) == {"bad\\xff.md": "name is not valid UTF-8"}


_UNPRIVILEGED_SCAN = """
import json, os, sys
from corpus.catalog import load
from corpus.roots import make_roots
from pathlib import Path
roots = make_roots([Path(sys.argv[1])])
os.setegid(65534); os.seteuid(65534)  # after the imports: the interpreter lives under /root
c = load(roots)
print(json.dumps({"served": sorted(f.rel for f in c.files.values()),
                  "skipped": {s.rel: s.reason for s in c.skipped}}))
"""


@pytest.mark.skipif(not POSIX, reason="POSIX permissions")
def test_unreadable_files_and_folders_are_skipped(short_tmp: Path) -> None:
    root = short_tmp  # an unprivileged user can reach it (pytest's tmp_path is the owner's only)
    root.chmod(0o755)
    (root / "ok.md").write_text("ok\n")
    (root / "locked.md").write_text("no\n")
    (root / "locked.md").chmod(0o000)
    (root / "closed").mkdir()
    (root / "closed" / "x.md").write_text("x\n")
    (root / "closed").chmod(0o000)
    if os.geteuid() != 0:
        corpus = corpus_of(root)
        got = {"served": served(corpus), "skipped": reasons(corpus)}
    else:  # root reads everything: scan as an unprivileged user instead
        out = subprocess.run(
            [sys.executable, "-c", _UNPRIVILEGED_SCAN, str(root)],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO,
        )
        got = json.loads(out.stdout)
    assert got["served"] == ["ok.md"]
    assert got["skipped"] == {
        "closed": "unreadable folder (Permission denied)",
        "locked.md": "unreadable (permission denied)",
    }
    tried("unreadable file or folder", 2)


# Why each link of `linked_tree` (tests/helpers.py) is skipped.
LINK_REASONS: dict[str, str] = {
    "notes.md": DENYLISTED,
    "overview.md": DENYLISTED,
    "api.md": DENYLISTED,
    "chain.md": DENYLISTED,
    "sub/hop.md": DENYLISTED,
    "key.md": "symlink to a denylisted file keys/id_rsa",
    "linkdir/": "symlink to an ignored folder node_modules/",
    "into.md": "symlink into an ignored folder (node_modules/pkg/readme.md)",
    "viadir.md": "symlink into an ignored folder (node_modules/pkg/readme.md)",
    "pub/": "symlink to private/, ignored by .gitignore",
    "draft.md": "symlink to private/draft.md, ignored by .gitignore",
    "alias/": "link to a folder inside the root (plans/): its files are served under their real path",
    "scratch.md": "symlink to an editor temporary file notes.md~",
    "rules.md": "symlink to an ignore file .agentsignore",
}


OTHER_REASONS = {
    ".env": "looks like a secret (denylist)",
    "keys/id_rsa": "looks like a secret (denylist)",
    "node_modules/": "ignored folder",
    "private/": "ignored by .gitignore",
    "notes.md~": "editor temporary file",
    "plans/hidden.md": "ignored by .gitignore",
}


@pytest.mark.skipif(not POSIX, reason="symlinks need privileges on Windows")
def test_a_symlink_is_refused_as_its_target_would_be(make_tree: Callable[..., Path]) -> None:
    from corpus.read import Skipped
    from retrieval.render import briefing
    from retrieval.search import reader

    def read(name: str) -> reader.Excerpt:  # as read_context does: resolve the name, read the file now
        target = reader.target(corpus, name)
        return reader.excerpt(read_uri(corpus, target.uri), target.fragment)

    root = linked_tree(make_tree)
    corpus = corpus_of(root)
    assert served(corpus) == ["ok.md", "plans/open.md", "real.md", "web.md"]
    assert reasons(corpus) == {**OTHER_REASONS, **LINK_REASONS}
    assert not any(MARKER in f.text for f in corpus.files.values())
    assert not [f for f in corpus.files.values() if f.pinned]  # `overview.md -> .env` pins nothing
    assert MARKER not in briefing.pinned_context(corpus).text
    fresh = {  # read fresh from disk by URI, as resources/read does: the same reasons
        **{f"agents://{rel}": why for rel, why in LINK_REASONS.items() if not rel.endswith("/")},
        "agents://linkdir/pkg/readme.md": "symlink into an ignored folder (node_modules/pkg/readme.md)",
        "agents://pub/draft.md": "symlink to private/draft.md, ignored by .gitignore",
        "agents://alias/hidden.md": "symlink to plans/hidden.md, ignored by .gitignore",
        "agents://alias/open.md": LINK_REASONS["alias/"],  # served as plans/open.md only
    }
    for uri, why in fresh.items():
        with pytest.raises(Skipped) as refused:
            read_uri(corpus, uri)
        assert str(refused.value) == f"{uri} is not served: {why}"
    for name in ("notes.md", ".AGENTS/notes.md", "agents://notes.md#env", "notes.md#L1-L3", "pub/draft.md"):
        with pytest.raises(Skipped, match="symlink"):  # read_context, and resources/read with a #fragment
            read(name)
    assert read("ok.md").file.text == REAL  # a link to a served file still serves it
    # A folder walked alone (a live refresh) is walked as its real path would be.
    part = walk(corpus.roots[0], under="linkdir/pkg")
    assert (part.files, [(s.rel, s.reason) for s in part.skipped]) == (
        [],
        [("linkdir/pkg/", "symlink into an ignored folder (node_modules/pkg/)")],
    )
    part = walk(corpus.roots[0], under="alias")
    assert (part.files, [(s.rel, s.reason) for s in part.skipped]) == ([], [("alias/", LINK_REASONS["alias/"])])


@pytest.mark.skipif(not POSIX, reason="symlinks need privileges on Windows")
def test_each_skip_carries_the_kind_of_its_reason(make_tree: Callable[..., Path]) -> None:
    """Code decides on a skip's kind, never on its sentence: a link refused for where it leads is a
    link whatever the target (`symlink to private/, ignored by .gitignore`), and only what is left
    out on purpose (an ignored folder, the ignore rules, editor scratch) is of those kinds."""
    from corpus.read import SkipKind, Skipped

    root = linked_tree(make_tree)
    (root / "bin.md").write_bytes(b"a\0b")
    (root / "latin.md").write_bytes(b"caf\xe9")
    (root / "big.md").write_text("x" * 200)
    corpus = corpus_of(root, max_bytes=100)
    assert {s.rel: s.kind for s in corpus.skipped} == {
        **dict.fromkeys(LINK_REASONS, SkipKind.LINK),
        ".env": SkipKind.SECRET,
        "keys/id_rsa": SkipKind.SECRET,
        "node_modules/": SkipKind.IGNORED,
        "private/": SkipKind.IGNORED,
        "plans/hidden.md": SkipKind.IGNORED,
        "notes.md~": SkipKind.EDITOR_TEMP,
        "bin.md": SkipKind.NOT_TEXT,
        "latin.md": SkipKind.NOT_TEXT,
        "big.md": SkipKind.TOO_LARGE,
    }
    for uri, kind in [
        ("agents://private/draft.md", SkipKind.IGNORED),
        ("agents://pub/draft.md", SkipKind.LINK),
        ("agents://.env", SkipKind.SECRET),
        ("agents://bin.md", SkipKind.NOT_TEXT),
    ]:
        with pytest.raises(Skipped) as refused:
            read_uri(corpus, uri)
        assert refused.value.kind is kind, uri
    part = walk(corpus.roots[0], under="alias")
    assert [s.kind for s in part.skipped] == [SkipKind.LINK]


@pytest.mark.skipif(not POSIX, reason="symlinks need privileges on Windows")
def test_a_symlink_retargeted_at_a_secret_leaves_the_index(make_tree: Callable[..., Path]) -> None:
    from live.index import LiveIndex

    agents = make_tree({"draft.md": "# Draft\n\nFine to serve.\n", ".env": f"{MARKER}\n"})
    docs = make_tree({"guide.md": "# Guide\n\nFine.\n", "prod.key": f"{MARKER}\n"}, name="docs")
    (agents / "notes.md").symlink_to("draft.md")
    (docs / "alias.md").symlink_to("guide.md")
    live = LiveIndex(make_roots([agents], [docs]))
    assert {".AGENTS/notes.md", "docs/alias.md"} <= set(live.corpus.files)
    (agents / "notes.md").unlink()
    (agents / "notes.md").symlink_to(".env")
    (docs / "alias.md").unlink()
    (docs / "alias.md").symlink_to("prod.key")
    agents_root, docs_root = live.roots
    live.sweep(agents_root)  # a `.AGENTS` root is swept on any change
    live.refresh(docs_root, [docs / "alias.md"])  # a docs root re-reads only what changed
    assert ".AGENTS/notes.md" not in live.corpus.files and "docs/alias.md" not in live.corpus.files
    got = {f"{s.root.label}/{s.rel}": s.reason for s in live.corpus.skipped}
    assert got[".AGENTS/notes.md"] == DENYLISTED
    assert got["docs/alias.md"] == "symlink to a denylisted file prod.key"
    assert not any(MARKER in f.text for f in live.corpus.files.values())


@pytest.mark.skipif(not POSIX, reason="symlinks need privileges on Windows")
def test_conventional_files_that_link_to_secrets_are_refused(tmp_path: Path) -> None:
    repo = tmp_path / "shop"
    for rel, text in {
        ".env": f"{MARKER}\n",
        "secrets/prod.env": f"{MARKER}\n",
        "node_modules/gh/copilot-instructions.md": f"{MARKER}\n",
        "docs/AGENTS.md": "# Docs\n\nWrite plainly.\n",
    }.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    (repo / "AGENTS.md").symlink_to(".env")
    (repo / "src").mkdir()
    (repo / "src/AGENTS.md").symlink_to("../secrets/prod.env")
    (repo / ".github").symlink_to("node_modules/gh")
    corpus = load(make_roots([], conventional=repo))
    assert served(corpus) == ["docs/AGENTS.md"]
    assert reasons(corpus) == {
        "AGENTS.md": DENYLISTED,
        "src/AGENTS.md": "symlink to a denylisted file secrets/prod.env",
        ".github/": "symlink into an ignored folder (node_modules/gh/)",
        "node_modules/": "ignored folder",
    }


def test_a_walk_names_the_files_its_index_has_unchanged_and_gives_the_others_whole(
    make_tree: Callable[..., Path],
) -> None:
    root_dir = make_tree({"a.md": "# A\n", "b.md": "# B\n", "sub/c.md": "# C\n"})
    (root,) = make_roots([root_dir])
    corpus = load([root])
    known = corpus.files.of(root.label)
    first = walk(root, known=known)
    assert first.same == {"a.md", "b.md", "sub/c.md"} and first.files == []
    (root_dir / "b.md").write_text("# B, longer now\n")
    (root_dir / "sub" / "d.md").write_text("# D\n")
    found = walk(root, known=known)
    assert found.same == {"a.md", "sub/c.md"}
    assert [ref.rel for ref in found.files] == ["b.md", "sub/d.md"]  # changed and new, as a walk without `known`
    assert [ref for ref in walk(root).files if ref.rel in ("b.md", "sub/d.md")] == found.files


def test_files_stated_by_name_in_their_folder_are_those_stated_by_whole_path(
    make_tree: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the platform can, a walk stats each file by its name in its open folder; elsewhere
    (Windows) by its whole path. Both find the same files with the same stamps and skips."""
    root_dir = make_tree({"a.md": "# A\n", "sub/b.md": "# B\n", "sub/deep/c.md": "# C\n", ".env": "KEY=1\n"})
    (root,) = make_roots([root_dir])
    known = load([root]).files.of(root.label)
    (root_dir / "sub" / "b.md").write_text("# B, longer now\n")
    (root_dir / "sub" / "deep" / "d.md").write_text("# D\n")
    by_name = walk(root, known=known)
    monkeypatch.setattr(scan, "_BY_FOLDER", False)
    by_path = walk(root, known=known)
    assert by_name == by_path
    assert [ref.rel for ref in by_name.files] == ["sub/b.md", "sub/deep/d.md"]
    assert [ref.where for ref in by_name.files] == [
        str(root.path / "sub" / "b.md"),
        str(root.path / "sub" / "deep" / "d.md"),
    ]
    assert by_name.same == {"a.md", "sub/deep/c.md"}
    assert [s.rel for s in by_name.skipped] == [".env"]
