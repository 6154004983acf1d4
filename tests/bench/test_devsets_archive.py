"""The development sets' archives: packed to the same bytes from the same files, unpacked once into
a folder of the cache named by the archive, whole or not at all, and nothing but plain files."""

from __future__ import annotations

import io
import os
import tarfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bench import devsets_archive
from bench.devsets import DEVSETS, load_sets
from bench.devsets_archive import ARCHIVE, UnsafeArchive, digest, main, pack, unpacked
from tests.bench import needs_documents
from tests.conftest import TEST_CACHE

TREE = {
    "index.md": "# Home\n\nWelcome.\n",
    "guide/setup.md": "# Setup\n\n## Install\n\nRun it.\n",
    ".github/copilot-instructions.md": "# Copilot\n",
    "deep/" * 30 + "long-name-of-a-page.md": "# Deep\n",
    "unicode/café.md": "# Café\n",
}


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def a_set(root: Path, make: Callable[..., Path]) -> Path:
    """A set's folder whose archive packs `TREE`."""
    (root / ARCHIVE).parent.mkdir(parents=True, exist_ok=True)
    (root / ARCHIVE).write_bytes(pack(make(TREE, name="tree")))
    return root / ARCHIVE


def test_the_same_files_pack_to_the_same_bytes_whatever_their_order_times_and_modes(
    tmp_path: Path, make_tree: Callable[..., Path]
) -> None:
    first = make_tree(TREE, name="first")
    second = make_tree(dict(reversed(TREE.items())), name="second")
    for path in second.rglob("*.md"):
        os.utime(path, (1_000_000, 1_000_000))
        path.chmod(0o600)
    assert pack(first) == pack(second)
    (tmp_path / "set").mkdir()
    (tmp_path / "set" / ARCHIVE).write_bytes(pack(first))
    assert files_of(unpacked(tmp_path / "set" / ARCHIVE, tmp_path / "cache")) == files_of(first)
    (first / "index.md").write_text("# Home\n\nChanged.\n", encoding="utf-8")
    assert pack(first) != pack(second)


@needs_documents
def test_each_sets_archive_is_what_packing_its_files_again_gives() -> None:
    """A maintainer who unpacks a set, changes nothing and packs it again sees no change."""
    for s in load_sets():
        assert pack(s.files) == s.archive.read_bytes(), s.name


@needs_documents
def test_a_set_is_unpacked_into_the_test_cache_in_a_folder_named_by_its_archive() -> None:
    (httpx,) = (s for s in load_sets() if s.name == "httpx")
    assert httpx.files == TEST_CACHE / "devsets" / f"httpx-{digest(DEVSETS / 'httpx' / ARCHIVE)}" / "files"
    assert (httpx.files / "quickstart.md").is_file()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # 3.12 and 3.13 warn without a filter
def test_a_python_without_tarfiles_data_filter_unpacks_the_same_files(
    tmp_path: Path, make_tree: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python 3.10 before 3.10.12, 3.11 before 3.11.4: the members are checked by us alone."""
    archive = a_set(tmp_path / "mine", make_tree)
    monkeypatch.delattr(tarfile, "data_filter", raising=False)
    files = unpacked(archive, tmp_path / "cache")
    assert files_of(files) == files_of(tmp_path / "tree")
    assert {p.stat().st_mode & 0o777 for p in files.rglob("*.md")} == {0o644}


def test_a_set_is_unpacked_once_and_another_archive_has_another_folder(
    tmp_path: Path, make_tree: Callable[..., Path]
) -> None:
    archive, cache = a_set(tmp_path / "mine", make_tree), tmp_path / "cache"
    files = unpacked(archive, cache)
    assert files == cache / "devsets" / f"mine-{digest(archive)}" / "files" and files_of(files) == files_of(
        tmp_path / "tree"
    )
    (files / "index.md").write_text("# Kept\n", encoding="utf-8")
    assert unpacked(archive, cache) == files and (files / "index.md").read_text(encoding="utf-8") == "# Kept\n"
    (tmp_path / "tree" / "new.md").write_text("# New\n", encoding="utf-8")
    archive.write_bytes(pack(tmp_path / "tree"))
    again = unpacked(archive, cache)
    assert again != files and (again / "new.md").is_file() and (files / "index.md").is_file()


def test_a_half_unpacked_folder_is_never_read_and_an_old_one_is_removed(
    tmp_path: Path, make_tree: Callable[..., Path]
) -> None:
    archive, cache = a_set(tmp_path / "mine", make_tree), tmp_path / "cache"
    home = cache / "devsets" / f"mine-{digest(archive)}"
    dead, recent = home / ".files-dead.tmp", home / ".files-live.tmp"
    for temp in (dead, recent):
        (temp / "guide").mkdir(parents=True)
        (temp / "index.md").write_text("# Half\n", encoding="utf-8")
    old = time.time() - 2 * devsets_archive.STALE_TEMP_S
    os.utime(dead, (old, old))
    files = unpacked(archive, cache)
    assert files_of(files) == files_of(tmp_path / "tree")
    assert not dead.exists() and recent.is_dir()  # another process's unpack may still be running
    assert sorted(p.name for p in home.iterdir()) == [".files-live.tmp", "files"]


def test_many_unpacking_at_once_all_get_the_whole_tree_and_nothing_is_left(
    tmp_path: Path, make_tree: Callable[..., Path]
) -> None:
    archive, cache = a_set(tmp_path / "mine", make_tree), tmp_path / "cache"
    with ThreadPoolExecutor(max_workers=8) as pool:
        folders = list(pool.map(lambda _: unpacked(archive, cache), range(16)))
    assert len(set(folders)) == 1 and files_of(folders[0]) == files_of(tmp_path / "tree")
    assert [p.name for p in folders[0].parent.iterdir()] == ["files"]


def a_tar(add: Callable[[tarfile.TarFile], None]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:xz") as tar:
        add(tar)
    return out.getvalue()


def member(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"# x\n", link: str = "") -> Callable[..., None]:
    def add(tar: tarfile.TarFile) -> None:
        info = tarfile.TarInfo(name)
        info.type, info.linkname, info.size = kind, link, len(data) if kind == tarfile.REGTYPE else 0
        tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)

    return add


@pytest.mark.parametrize(
    "add",
    [
        member("link.md", tarfile.SYMTYPE, link="/etc/passwd"),
        member("hard.md", tarfile.LNKTYPE, link="index.md"),
        member("fifo", tarfile.FIFOTYPE),
        member("/tmp/absolute.md"),
        member("../outside.md"),
        member("guide/../../outside.md"),
        member("C:/drive.md"),
        member("back\\slash.md"),
    ],
    ids=["symlink", "hardlink", "fifo", "absolute", "dotdot", "nested-dotdot", "drive", "backslash"],
)
def test_an_archive_with_anything_but_plain_files_below_its_top_is_refused_whole(
    tmp_path: Path, add: Callable[[tarfile.TarFile], None]
) -> None:
    def first_a_good_file(tar: tarfile.TarFile) -> None:
        member("index.md")(tar)
        add(tar)

    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / ARCHIVE).write_bytes(a_tar(first_a_good_file))
    with pytest.raises(UnsafeArchive):
        unpacked(tmp_path / "bad" / ARCHIVE, tmp_path / "cache")
    assert [p.name for p in (tmp_path / "cache").rglob("*")] == ["devsets", f"bad-{digest(tmp_path / 'bad' / ARCHIVE)}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad", "cache"]


def test_an_archive_larger_than_the_bound_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / ARCHIVE).write_bytes(a_tar(member("big.md", data=b"x" * 5000)))
    monkeypatch.setattr(devsets_archive, "MAX_BYTES", 4000)
    with pytest.raises(UnsafeArchive, match="more than 4,000 bytes"):
        unpacked(tmp_path / "big" / ARCHIVE, tmp_path / "cache")


def test_a_link_in_the_files_is_not_packed(tmp_path: Path, make_tree: Callable[..., Path]) -> None:
    tree = make_tree(TREE, name="tree")
    (tree / "link.md").symlink_to(tree / "index.md")
    with pytest.raises(UnsafeArchive, match=r"link\.md"):
        pack(tree)


def test_a_missing_archive_says_where_the_documents_are(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="in a clone of the repository, not in its sdist"):
        unpacked(tmp_path / "gone" / ARCHIVE, tmp_path / "cache")


def test_a_maintainer_unpacks_a_set_to_edit_it_and_packs_it_again(
    tmp_path: Path, make_tree: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    archive = a_set(tmp_path / "mine", make_tree)
    before = archive.read_bytes()
    assert main(["unpack", str(archive.parent)]) == 0
    assert files_of(archive.parent / "files") == files_of(tmp_path / "tree")
    assert main(["pack", str(archive.parent)]) == 0
    assert archive.read_bytes() == before and "5 files" in capsys.readouterr().out.splitlines()[-1]
    (archive.parent / "files" / "new.md").write_text("# New\n", encoding="utf-8")
    assert main(["pack", str(archive.parent)]) == 0
    assert "6 files" in capsys.readouterr().out
    with tarfile.open(archive) as tar:
        assert "new.md" in tar.getnames()
    with pytest.raises(SystemExit):
        main(["unpack", str(archive.parent)])  # files/ is there: not overwritten
    assert (archive.parent / "files" / "new.md").is_file()
