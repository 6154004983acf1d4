"""The development sets' documents: one archive a set, `bench/devsets/<set>/files.tar.xz`, unpacked
on first use into the user's cache, where `bench.devsets` reads them.

    uv run python -m bench.devsets_archive pack bench/devsets/httpx     # its files/ into files.tar.xz
    uv run python -m bench.devsets_archive unpack bench/devsets/httpx   # files.tar.xz into files/, to edit

- Packing is reproducible: the same files give the same bytes whatever their order on the disk,
  mtimes, modes or owners (members sorted by path, regular files only, mode 0644, mtime 0, no
  owner, GNU tar headers, xz at its default preset).
- Where a set is unpacked: `<cache>/devsets/<set>-<first 16 hex of the archive's SHA-256>/files`,
  `<cache>` the one the server's index uses (`$AGENTS_CONTEXT_CACHE_DIR`, else the user's cache
  folder). Another archive has another folder; a folder there is never changed.
- Unpacking is atomic: into a temporary folder beside it, renamed into place once whole. Two
  processes at once each unpack and one rename wins; a crash leaves only a temporary folder, never
  read, removed by a later unpack once it is an hour old.
- Only regular files and folders, below the folder, up to `MAX_BYTES` in all, are unpacked (with
  tarfile's `data` filter where Python has it); anything else refuses the whole archive.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import lzma
import shutil
import tarfile
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path, PurePosixPath, PureWindowsPath

from live.cache import default_dir
from writes.atomic import write_atomic

ARCHIVE = "files.tar.xz"
FOLDER = "files"
"""What an archive unpacks into (and what `pack` packs): the set's documents."""
MAX_BYTES = 200_000_000
"""The most an archive may unpack to: the largest set is 5 MB."""
MAX_MEMBERS = 50_000
HASH_CHARS = 16
STALE_TEMP_S = 3600.0
"""A temporary folder this old is an unpack that died (one takes a second): removed."""
_TEMP_PREFIX, _TEMP_SUFFIX = f".{FOLDER}-", ".tmp"


class UnsafeArchive(ValueError):
    """An archive holding something other than regular files and folders below its top, or too much."""


def pack(folder: Path) -> bytes:
    """The archive of every file below `folder`, at its path from `folder`: the same bytes for the
    same files. Raises `UnsafeArchive` on a link or anything else but a file or a folder."""
    files = []
    for path in folder.rglob("*"):
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            raise UnsafeArchive(f"{path}: not a regular file or folder")
        if path.is_file():
            files.append((path.relative_to(folder).as_posix(), path))
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT, encoding="utf-8") as tar:
        for name, path in sorted(files):
            data = path.read_bytes()
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    return lzma.compress(out.getvalue(), format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64)


def digest(archive: Path) -> str:
    return hashlib.sha256(archive.read_bytes()).hexdigest()[:HASH_CHARS]


def checked(tar: tarfile.TarFile) -> list[tarfile.TarInfo]:
    """The archive's members, once each is known to be a regular file or a folder below the top
    (modes set to 0644 and 0755), and all of them within `MAX_BYTES`; else `UnsafeArchive`."""
    members: list[tarfile.TarInfo] = []
    total = 0
    for member in tar:
        name = member.name
        parts = PurePosixPath(name).parts
        if not (member.isfile() or member.isdir()):
            raise UnsafeArchive(f"{name}: not a regular file or folder")
        if not parts or name.startswith("/") or "\\" in name or ".." in parts or PureWindowsPath(name).drive:
            raise UnsafeArchive(f"{name}: not a path below the archive's top")
        total += member.size
        if total > MAX_BYTES or len(members) >= MAX_MEMBERS:
            raise UnsafeArchive(f"more than {MAX_BYTES:,} bytes or {MAX_MEMBERS:,} members")
        member.mode = 0o644 if member.isfile() else 0o755
        members.append(member)
    return members


def extract(archive: Path, into: Path) -> None:
    """Unpack `archive` into the folder `into` (see `checked`)."""
    with tarfile.open(archive, mode="r:xz") as tar:
        members = checked(tar)
        if hasattr(tarfile, "data_filter"):  # 3.10.12, 3.11.4, 3.12 and later
            tar.extractall(into, members=members, filter="data")
        else:
            tar.extractall(into, members=members)


def unpacked(archive: Path, cache: Path | None = None) -> Path:
    """The folder `archive` unpacks into, in the cache (`cache`, else the server's), unpacked there
    first if it is not yet. Raises `FileNotFoundError` when the archive is not here."""
    if not archive.is_file():
        raise FileNotFoundError(
            f"{archive} is not here: the development sets' documents are in a clone of the repository, not in its sdist"
        )
    base = default_dir() if cache is None else cache
    home = base / "devsets" / f"{archive.parent.name}-{digest(archive)}"
    target = home / FOLDER
    if target.is_dir():
        return target
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    _remove_stale(home)
    temp = Path(tempfile.mkdtemp(prefix=_TEMP_PREFIX, suffix=_TEMP_SUFFIX, dir=home))
    try:
        extract(archive, temp)
        try:
            temp.rename(target)
        except OSError:
            if not target.is_dir():  # not another process's unpack, renamed first
                raise
    finally:
        shutil.rmtree(temp, ignore_errors=True)  # gone once renamed
    return target


def _remove_stale(home: Path) -> None:
    for temp in home.glob(f"{_TEMP_PREFIX}*{_TEMP_SUFFIX}"):
        with contextlib.suppress(OSError):
            if time.time() - temp.lstat().st_mtime > STALE_TEMP_S:
                shutil.rmtree(temp)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.devsets_archive", description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=("pack", "unpack"), help=f"{FOLDER}/ into {ARCHIVE}, or back")
    parser.add_argument("sets", nargs="+", type=Path, metavar="SET", help="a set's folder, bench/devsets/<set>")
    args = parser.parse_args(argv)
    for folder in args.sets:
        archive, files = folder / ARCHIVE, folder / FOLDER
        if args.action == "pack":
            data = pack(files)
            same = archive.is_file() and archive.read_bytes() == data
            if not same:
                write_atomic(archive, data, mode=0o644)
            count = sum(1 for p in files.rglob("*") if p.is_file())
            print(f"{archive}: {count} file{'' if count == 1 else 's'}, {len(data):,} bytes{' (unchanged)' * same}")
        elif files.exists():
            parser.error(f"{files} is already there: pack it, or remove it first")
        else:
            files.mkdir()
            try:
                extract(archive, files)
            except BaseException:
                shutil.rmtree(files, ignore_errors=True)
                raise
            print(f"{files}: unpacked from {archive}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
