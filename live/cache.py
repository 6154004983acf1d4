"""The persistent index: each root's files and postings, kept in the user's cache directory.

A restart then reads nothing but this file: every file's size, mtime, ctime and content digest
come back with its units and postings, and the start-up sweep re-reads only the files whose stat
moved (and re-indexes only those whose digest changed). The cache is a hint, never the truth.

- Where: `platformdirs.user_cache_dir("agents-context")`, or `$AGENTS_CONTEXT_CACHE_DIR`, or
  `--cache-dir`; never inside a corpus root (the server does not write to the user's project).
- One entry per root, named by a hash of everything that decides its content: the root's real
  path and kind, its include patterns and pins, the file size limit, the tokenizer and fields,
  and this format's version. Another configuration simply has another entry.
- Format: one `live.arrayfile` of numpy arrays (integers only, nothing in it can run code; a
  CRC catches torn or flipped bytes), laid out by `live.codec`. Anything unexpected while loading
  (damaged, truncated, another version, arrays that disagree) discards the entry: the root is
  indexed from the files as if there were no cache.
- Entries not written for 30 days are deleted when another one is written (a moved project or an
  old configuration leaves its entry behind).
- Files are readable by the user only (they hold corpus text): the folder is 0700, entries are
  written 0600 through a temporary file and an atomic rename, under a lock file so two servers
  indexing the same tree never write the same entry at once (the second one skips its write).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

import platformdirs
from filelock import FileLock, Timeout

from corpus.catalog import CorpusFile
from corpus.roots import Root
from live import arrayfile, codec
from live.codec import Restored
from retrieval.chunks.units import Unit
from retrieval.engine.index import Packed

log = logging.getLogger("agents_context.cache")

ENV = "AGENTS_CONTEXT_CACHE_DIR"
SUFFIX = ".index"
STALE_AFTER_S = 30 * 24 * 3600


def default_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env[ENV]) if env.get(ENV) else Path(platformdirs.user_cache_dir("agents-context", appauthor=False))


class IndexCache:
    def __init__(self, directory: Path, fingerprint: str) -> None:
        self.directory = directory
        self.fingerprint = fingerprint

    def key(self, root: Root, pins: Sequence[str], max_bytes: int) -> str:
        identity = {
            "format": codec.FORMAT,
            "version": version("agents-context"),
            "root": str(root.path),
            "kind": root.kind.value,
            "label": root.label,
            "scoped": root.scoped,
            "include": list(root.include),
            "pins": sorted(pins),
            "max_bytes": max_bytes,
            "ranking": self.fingerprint,
        }
        return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:32]

    def path(self, key: str) -> Path:
        return self.directory / f"{key}{SUFFIX}"

    # --- reading --------------------------------------------------------------------------

    def load(self, root: Root, key: str) -> Restored | None:
        """The saved root, or None (no entry, or one that cannot be trusted: it is deleted)."""
        path = self.path(key)
        try:
            return codec.restore(root, key, arrayfile.read(path))
        except FileNotFoundError:
            return None
        except Exception as exc:  # corrupt, truncated, foreign: never trusted
            log.warning(
                "discarding the cache for %s (%s: %s); indexing from the files", root.label, type(exc).__name__, exc
            )
            with contextlib.suppress(OSError):
                path.unlink()
            return None

    # --- writing --------------------------------------------------------------------------

    def save(
        self, root: Root, key: str, files: Sequence[CorpusFile], sections: Packed[Unit], windows: Packed[Unit]
    ) -> bool:
        """Write the entry atomically; False if another process holds the entry's lock."""
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            self.directory.chmod(0o700)
        try:
            with FileLock(self.directory / f"{key}.lock", timeout=0, mode=0o600):
                arrays = codec.arrays(root, key, files, sections, windows)
                with _atomic(self.path(key)) as out:
                    arrayfile.write(out, arrays)
        except Timeout:
            log.info("another server is writing the cache for %s; leaving it to that one", root.label)
            return False
        self.prune(keep=key)
        return True

    def prune(self, keep: str, max_age_s: float = STALE_AFTER_S) -> None:
        """Delete entries (and their lock and temporary files) not written for `max_age_s`."""
        now = time.time()
        for path in self.entries():
            if path.name.startswith(keep):
                continue
            with contextlib.suppress(OSError):
                if now - path.stat().st_mtime > max_age_s:
                    path.unlink()

    def entries(self) -> list[Path]:
        if not self.directory.is_dir():
            return []
        return sorted(p for p in self.directory.iterdir() if p.suffix in (SUFFIX, ".lock", ".tmp"))

    def clear(self) -> list[Path]:
        """Delete every entry of this cache (only files this module writes); the removed ones."""
        removed = []
        for path in self.entries():
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(path)
        return removed


@contextlib.contextmanager
def _atomic(target: Path) -> Iterator[Any]:
    """A temporary file (0600) beside `target` that replaces it only once fully written."""
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=target.stem, suffix=".tmp")
    temp = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        temp.chmod(0o600)
        temp.replace(target)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
