"""The cache folder over time and for people: entries named after their root and listed with the
root, size and last use (`agents-context cache show`, after a real server ran:
tests/promises/test_cache.py); pruned when unused for 30 days and, least
recently used first, beyond the cap (`--cache-max-mb`), at start-up and after every write; never an
entry in use or one another server holds the lock of, never a file that is not ours, never
outside the cache folder."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from corpus.read import DEFAULT_MAX_BYTES
from corpus.roots import Root, RootKind, make_roots
from live import arrayfile
from live.cache import MB, STALE_AFTER_S, IndexCache, slug
from live.index import LiveIndex
from retrieval.engine.ranking import DEFAULT
from tests.helpers import ENTRY, as_json, cli
from tests.live.support import AGENTS, DOCS, open_live

DAY = 24 * 3600


def age(path: Path, days: float) -> None:
    then = time.time() - days * DAY
    os.utime(path, (then, then))


def entry_of(cache_dir: Path, root: Path) -> Path:
    """The entry of the root at `root` (by the real path its `.json` names)."""
    for about in cache_dir.glob("*.json"):
        if json.loads(about.read_text())["root"] == str(root.resolve()):
            return about.with_suffix(".index")
    raise AssertionError(f"no entry for {root} in {sorted(p.name for p in cache_dir.iterdir())}")


def root_at(path: str, label: str) -> Root:
    return Root(path=Path(path), label=label, kind=RootKind.DOCS, given=path)


# --- names ---------------------------------------------------------------------------------------


def test_an_entry_is_named_after_its_root() -> None:
    assert slug(root_at("/home/u/tldr/docs", "docs")) == "docs-tldr"
    assert slug(root_at("/home/u/myproj/.AGENTS", ".AGENTS")) == "agents-myproj"
    assert slug(root_at("/repo/packages/api/.AGENTS", "api")) == "api-packages"  # not api-api
    assert slug(root_at("/x/Ünïcode Fôlder/Café Docs", "Café Docs")) == "cafe-docs-unicode-folder"
    assert slug(root_at("/数据/文档", "文档")) == "root"  # nothing printable is left
    assert slug(root_at("/x/" + "b" * 300 + "/a", "a" * 300)) == "a" * 24 + "-" + "b" * 24
    assert slug(root_at("/x/y/..\n odd\x00/", "..\n odd\x00")) == "odd-y"


@given(label=st.text(max_size=300), above=st.text(max_size=300))
def test_every_name_is_short_printable_and_safe(label: str, above: str) -> None:
    """Whatever the root is called, the entry's name is a few lowercase ASCII letters, digits and
    dashes: no separator, no dot, nothing a file system refuses or a terminal shows oddly."""
    name = slug(root_at(f"/{above.replace('/', '_')}/r", label))
    assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", name) and len(name) <= 49


def test_entries_say_which_root_they_are_and_locks_are_no_entries(
    make_tree: Callable[..., Path], cache_dir: Path
) -> None:
    agents = make_tree(AGENTS, name="My Project/.AGENTS")
    docs = make_tree(DOCS, name="tldr/docs")
    open_live(agents, docs, cache_dir).close()
    roots = make_roots([agents], [docs])
    store = IndexCache(cache_dir, DEFAULT.fingerprint)
    keys = [
        store.key(r, [] if r.kind is RootKind.DOCS else ["conventions.md", "overview.md"], DEFAULT_MAX_BYTES)
        for r in roots
    ]
    assert [k.rpartition("-")[0] for k in keys] == [slug(r) for r in roots]
    assert "my-project" in keys[0] and "tldr" in keys[1]  # .AGENTS of My Project, docs of tldr
    listing = store.listing(describe=True)
    assert sorted(e.key for e in listing.entries) == sorted(keys)
    assert all(ENTRY.fullmatch(e.name) for e in listing.entries)
    assert {(e.root, e.label, e.kind) for e in listing.entries} == {(str(r.path), r.label, r.kind.value) for r in roots}
    for e in listing.entries:
        assert e.bytes == e.path.stat().st_size + e.path.with_suffix(".json").stat().st_size
    assert sorted(p.name for p in listing.others) == sorted(f"{k}.lock" for k in keys)


# --- last use and the 30 days ------------------------------------------------------------------------


def test_reading_an_entry_is_a_use(make_tree: Callable[..., Path], cache_dir: Path) -> None:
    agents = make_tree(AGENTS)
    open_live(agents, None, cache_dir).close()
    (entry,) = cache_dir.glob("*.index")
    age(entry, 40)
    open_live(agents, None, cache_dir).close()  # restored, nothing changed: nothing written
    assert time.time() - entry.stat().st_mtime < 60
    assert IndexCache(cache_dir, "").prune() == [] and entry.exists()


def test_a_start_up_prunes_entries_unused_for_30_days_even_when_it_writes_nothing(
    make_tree: Callable[..., Path], tmp_path: Path
) -> None:
    one = make_tree({"overview.md": "# One\n\none\n"}, name="one/.AGENTS")
    two = make_tree({"overview.md": "# Two\n\ntwo\n"}, name="two/.AGENTS")
    where = tmp_path / "cache"
    for root in (one, two):
        assert cli("outline", "--root", str(root), "--cache-dir", str(where)).returncode == 0
    old, kept = entry_of(where, two), entry_of(where, one)
    age(old, 31)
    age(kept, 29)
    done = cli("outline", "--root", str(one), "--cache-dir", str(where))  # one is unchanged: no write
    assert done.returncode == 0, done.stderr
    assert not old.exists() and not old.with_suffix(".json").exists() and not old.with_suffix(".lock").exists()
    assert kept.exists() and time.time() - kept.stat().st_mtime < 60  # read now, so used now
    assert sorted(p.stem for p in where.iterdir()) == [kept.stem] * 3


# --- the cap -----------------------------------------------------------------------------------------


def big_docs(make_tree: Callable[..., Path], name: str, seed: int) -> Path:
    """A docs root whose entry is over 1 MB."""
    rng = random.Random(seed)
    words = [f"{name}w{i}" for i in range(3000)]
    return make_tree(
        {f"p{i}.md": "# P\n\n" + " ".join(rng.choices(words, k=600)) + "\n" for i in range(120)}, name=name
    )


def test_beyond_the_cap_the_least_recently_used_entries_go_at_start_up(
    make_tree: Callable[..., Path], tmp_path: Path
) -> None:
    agents = make_tree({"overview.md": "# Overview\n\nhi\n"})
    docs = [big_docs(make_tree, f"docs{i}", i) for i in range(3)]
    where = tmp_path / "cache"
    for d in docs:
        done = cli("status", "--root", str(agents), "--docs", str(d), "--cache-dir", str(where), "--cache-max-mb", "0")
        assert done.returncode == 0, done.stderr  # no cap: all kept
    entries = [entry_of(where, d) for d in docs]
    sizes = [e.stat().st_size + e.with_suffix(".json").stat().st_size for e in entries]
    assert min(sizes) > MB
    for e, days in zip(entries, (3, 2, 1), strict=True):
        age(e, days)  # docs0 the least recently used
    total = sum(s.bytes for s in IndexCache(where, "").listing().entries)
    cap_mb = (total - 1) // MB  # under the total, and at least the total without docs0
    assert total - sizes[0] <= cap_mb * MB < total

    done = cli("outline", "--root", str(agents), "--cache-dir", str(where), "--cache-max-mb", str(cap_mb))
    assert done.returncode == 0, done.stderr
    assert not entries[0].exists() and entries[1].exists() and entries[2].exists()

    done = cli("outline", "--root", str(agents), "--cache-dir", str(where), "--cache-max-mb", "1")
    assert done.returncode == 0, done.stderr  # every docs entry is over the cap: only the one in use stays
    assert not any(e.exists() for e in entries)
    assert [e.root for e in IndexCache(where, "").listing(describe=True).entries] == [str(agents.resolve())]


def test_the_cap_never_removes_an_entry_the_process_uses(make_tree: Callable[..., Path], cache_dir: Path) -> None:
    one = make_tree(AGENTS, name="one/.AGENTS")
    two = make_tree(AGENTS, name="two/.AGENTS")
    open_live(two, None, cache_dir).close()
    (other,) = cache_dir.glob("*.index")
    store = IndexCache(cache_dir, DEFAULT.fingerprint, cap_bytes=1)  # every entry is over it
    live = LiveIndex(make_roots([one]), cache=store, settle_s=0)  # writing one's entry prunes two's
    (entry,) = cache_dir.glob("*.index")
    assert entry == entry_of(cache_dir, one) and not other.exists()
    assert store.prune() == [] and entry.exists()  # in use by this process: kept, over the cap or not
    live.close()
    assert [e.path for e in IndexCache(cache_dir, "", cap_bytes=1).prune()] == [entry]  # another's cap


def test_the_cap_flag_is_checked(make_tree: Callable[..., Path], tmp_path: Path) -> None:
    agents = make_tree({"overview.md": "# Overview\n\nhi\n"})
    for bad in ("-1", "lots"):
        done = cli("outline", "--root", str(agents), "--cache-dir", str(tmp_path / "c"), "--cache-max-mb", bad)
        assert done.returncode == 2 and "--cache-max-mb" in done.stderr
    assert not (tmp_path / "c").exists()


# --- what is never removed ---------------------------------------------------------------------------


@contextmanager
def holding(lock: Path) -> Iterator[None]:
    """Another process holds this lock, as a server writing the entry would."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
                import sys
                from pathlib import Path
                from writes.locks import locked
                with locked(Path({str(lock)!r})):
                    print("locked", flush=True)
                    sys.stdin.read()
            """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield
    finally:
        holder.communicate("", timeout=30)


def test_an_entry_another_server_holds_the_lock_of_is_never_removed(
    make_tree: Callable[..., Path], tmp_path: Path
) -> None:
    agents = make_tree({"overview.md": "# Overview\n\nhi\n"})
    where = tmp_path / "cache"
    assert cli("outline", "--root", str(agents), "--cache-dir", str(where)).returncode == 0
    (entry,) = where.glob("*.index")
    age(entry, 45)
    with holding(entry.with_suffix(".lock")):
        pruned = as_json("cache", "prune", "--cache-dir", str(where), "--cache-max-mb", "1")
        assert pruned["files"] == 0 and pruned["left"] == 1 and entry.exists()
        cleared = cli("cache", "clear", "--cache-dir", str(where))
        assert "removed 0 entries" in cleared.stdout and "another server was writing them" in cleared.stdout
        assert entry.exists()
    pruned = as_json("cache", "prune", "--cache-dir", str(where))
    assert [e["root"] for e in pruned["entries"]] == [str(agents.resolve())] and pruned["left"] == 0
    assert list(where.iterdir()) == []  # with its .json and its lock file


def test_nothing_but_our_own_files_is_ever_removed(tmp_path: Path) -> None:
    where = tmp_path / "cache"
    where.mkdir()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    ours = arrayfile.MAGIC + b"\0" * 64
    theirs = {
        "notes.txt": b"mine",
        "other.lock": b"",
        "README.index": ours,
        "x-0123456789abcdef.index": b"a user's file, named like an entry",
        "x-0123456789abcdef.json": b'{"mine": true}',
        "y-0123456789abcdef.lock": b"not empty: not a lock file of ours",
        "z-0123456789abcdef.abcdefgh.tmp": b"a user's temporary file",
    }
    for name, data in theirs.items():
        (where / name).write_bytes(data)
    (outside / "agents-x-0123456789abcdef.index").write_bytes(ours)
    (where / "link-0123456789abcdef.index").symlink_to(outside / "agents-x-0123456789abcdef.index")
    (where / "dir-0123456789abcdef.index").mkdir()
    for path in [*where.iterdir(), *outside.iterdir()]:
        age(path, 400)
    before = sorted(p.name for p in where.iterdir())

    assert as_json("cache", "show", "--cache-dir", str(where))["files"] == 0
    assert as_json("cache", "prune", "--cache-dir", str(where), "--cache-max-mb", "1")["files"] == 0
    assert as_json("cache", "clear", "--cache-dir", str(where))["files"] == 0
    assert sorted(p.name for p in where.iterdir()) == before
    assert all((where / n).read_bytes() == data for n, data in theirs.items())
    assert (outside / "agents-x-0123456789abcdef.index").read_bytes() == ours


def test_leftovers_of_ours_are_tidied_and_an_earlier_versions_entries_pruned(tmp_path: Path) -> None:
    where = tmp_path / "cache"
    where.mkdir()
    ours = arrayfile.MAGIC + b"\0" * 64
    legacy = "0123456789abcdef0123456789abcdef"  # an entry named by a hash alone
    files = {
        f"{legacy}.index": ours,
        f"{legacy}.lock": b"",
        "gone-0123456789abcdef.lock": b"",  # a lock whose entry is gone
        "gone-0123456789abcdef.json": b'{"agents-context": 1, "root": "/x"}',  # and its .json
        "dead-0123456789abcdef.abcd1234.tmp": ours,  # a write that died two hours ago
        "live-0123456789abcdef.abcd1234.tmp": ours[:10],  # a write under way
    }
    for name, data in files.items():
        (where / name).write_bytes(data)
    age(where / "dead-0123456789abcdef.abcd1234.tmp", 2 / 24)

    (shown,) = as_json("cache", "show", "--cache-dir", str(where))["entries"]
    assert shown["name"] == f"{legacy}.index" and shown["root"] == "?"
    assert as_json("cache", "prune", "--cache-dir", str(where))["files"] == 0  # used now, within the cap
    under_way = "live-0123456789abcdef.abcd1234.tmp"
    assert sorted(p.name for p in where.iterdir()) == [f"{legacy}.index", f"{legacy}.lock", under_way]
    age(where / f"{legacy}.index", STALE_AFTER_S / DAY + 1)
    assert as_json("cache", "prune", "--cache-dir", str(where))["files"] == 1
    assert [p.name for p in where.iterdir()] == [under_way]
