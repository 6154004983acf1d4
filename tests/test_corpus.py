"""What belongs to the corpus, what is skipped and why, what is pinned, where the root is."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from corpus.catalog import Corpus, load
from corpus.errors import RootNotFound
from corpus.roots import RootKind, find_agents_root, make_roots
from corpus.rules import PinSet

POSIX = os.name == "posix"


def corpus_of(root: Path, pins: PinSet | None = None, max_bytes: int = 1024 * 1024) -> Corpus:
    return load(make_roots([root]), pins, max_bytes)


def served(corpus: Corpus) -> list[str]:
    return sorted(f.rel for f in corpus.files.values())


def reasons(corpus: Corpus) -> dict[str, str]:
    return {s.rel: s.reason for s in corpus.skipped}


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


def test_bom_and_crlf_are_tolerated(make_tree: Callable[..., Path]) -> None:
    root = make_tree({"a.md": b"\xef\xbb\xbf# Title\r\nline two\r\nold mac\rend\r\n"})
    text = corpus_of(root).files[".AGENTS/a.md"].text
    assert text == "# Title\nline two\nold mac\nend\n"


def test_binary_invalid_utf8_and_too_large_are_skipped(make_tree: Callable[..., Path]) -> None:
    root = make_tree(
        {
            "binary.md": b"# looks like text\x00but has a NUL\n",
            "latin1.md": "café\n".encode("latin-1"),
            "big.md": "x" * 2000,
            "small.md": "fine\n",
        }
    )
    got = reasons(corpus_of(root, max_bytes=1000))
    assert got["binary.md"].startswith("binary")
    assert got["latin1.md"].startswith("not UTF-8 text")
    assert got["big.md"] == "too large (2000 bytes, limit 1000)"
    assert "small.md" not in got


@pytest.mark.parametrize(
    "name",
    [
        ".env",
        ".ENV",
        ".env.local",
        "prod.env",
        "server.KEY",
        "cert.pem",
        "store.p12",
        "store.PFX",
        "site.crt",
        "site.cer",
        "site.der",
        "java.jks",
        "app.keystore",
        "id_rsa",
        "ID_RSA.pub",
        "id_dsa",
        "id_ecdsa_sk",
        "id_ed25519.pub",
        "vault.kdbx",
        ".netrc",
        ".NPMRC",
        ".pypirc",
        "credentials.json",
        "Credentials-prod.JSON",
    ],
)
def test_secrets_are_never_served_whatever_their_case(make_tree: Callable[..., Path], name: str) -> None:
    root = make_tree({name: "TOKEN=abc123\n", "ok.md": "ok\n"})
    corpus = corpus_of(root)
    assert served(corpus) == ["ok.md"]
    assert reasons(corpus) == {name: "looks like a secret (denylist)"}


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
        "dir-out": "symlink target leaves the root",
        "link-out.md": "symlink target leaves the root",
    }
    assert corpus.files[".AGENTS/link-in.md"].text == "inside\n"


@pytest.mark.skipif(not POSIX, reason="FIFOs and unix sockets are POSIX")
def test_fifos_and_sockets_are_skipped_without_being_opened(make_tree: Callable[..., Path]) -> None:
    root = make_tree({"ok.md": "ok\n"})
    os.mkfifo(root / "pipe.md")
    short = Path(tempfile.mkdtemp(prefix="ac"))  # unix socket paths must be short
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
def test_a_socket_inside_the_root_is_skipped(tmp_path: Path) -> None:
    root = Path(tempfile.mkdtemp(prefix="ac"))
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
def test_unreadable_files_and_folders_are_skipped() -> None:
    root = Path(tempfile.mkdtemp(prefix="ac-perm"))
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
            cwd=Path(__file__).parents[1],
        )
        got = json.loads(out.stdout)
    assert got["served"] == ["ok.md"]
    assert got["skipped"] == {
        "closed": "unreadable folder (Permission denied)",
        "locked.md": "unreadable (permission denied)",
    }


def test_default_pins_are_overview_and_conventions_at_the_top_only(make_tree: Callable[..., Path]) -> None:
    root = make_tree(
        {
            "Overview.md": "# O\n",
            "CONVENTIONS.MD": "# C\n",
            "security.md": "# S\n",
            "sub/overview.md": "# nested, not pinned\n",
        }
    )
    files = corpus_of(root).files
    pinned = sorted(f.rel for f in files.values() if f.pinned)
    assert pinned == ["CONVENTIONS.MD", "Overview.md"]
    assert files[".AGENTS/security.md"].searchable
    assert files[".AGENTS/sub/overview.md"].searchable


def test_pin_flag_replaces_the_set_and_empty_pins_nothing(make_tree: Callable[..., Path]) -> None:
    root = make_tree({"overview.md": "o\n", "rules/deploy.md": "d\n"})
    chosen = corpus_of(root, PinSet(["rules/deploy.md"])).files
    assert [f.rel for f in chosen.values() if f.pinned] == ["rules/deploy.md"]
    nothing = corpus_of(root, PinSet([""])).files
    assert not any(f.pinned for f in nothing.values())


def test_root_from_flag_then_env_then_cwd(tmp_path: Path) -> None:
    (tmp_path / "flag").mkdir()
    (tmp_path / "env").mkdir()
    assert find_agents_root("flag", {"AGENTS_CONTEXT_ROOT": "env"}, tmp_path) == tmp_path / "flag"
    assert find_agents_root(None, {"AGENTS_CONTEXT_ROOT": "env"}, tmp_path) == tmp_path / "env"
    with pytest.raises(RootNotFound, match=r"no \.AGENTS folder"):
        find_agents_root(None, {}, tmp_path)
    (tmp_path / ".agents").mkdir()
    assert find_agents_root(None, {}, tmp_path) == tmp_path / ".agents"
    (tmp_path / ".AGENTS").mkdir()
    assert find_agents_root(None, {}, tmp_path).name in (".AGENTS", ".agents")
    with pytest.raises(RootNotFound, match="does not exist"):
        find_agents_root("missing", {}, tmp_path)


@pytest.mark.skipif(not POSIX, reason="symlinks need privileges on Windows")
def test_a_symlinked_root_is_resolved_once(tmp_path: Path) -> None:
    real = tmp_path / "real-agents"
    real.mkdir()
    (real / "a.md").write_text("a\n")
    link = tmp_path / ".AGENTS"
    link.symlink_to(real)
    (root,) = make_roots([link])
    assert root.path == real.resolve()
    assert root.label == "real-agents"
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
