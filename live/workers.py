"""The first read of a large docs root, shared with worker processes.

Reading, parsing and tokenizing tens of thousands of files is nearly all of a cold start, and in
the server's process all of it holds the GIL, so every call made meanwhile waited behind it. A
read of at least `PARALLEL_FILES` files nobody has indexed yet is cut into chunks that worker
processes (one per core, started fresh with `spawn` on every platform) read, chunk and tokenize;
each sends its chunk back packed as a cache entry is (`live.codec`: integer arrays and one string
table, cheap to send), and the server only unpacks it into its index. A file a worker finds
changing since it was stat'd, or empty, is left to the server's own careful read (`live.settle`);
a chunk whose worker fails is read by the server as before.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import multiprocessing
import os
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

import numpy.typing as npt

from corpus.catalog import Corpus
from corpus.errors import NotInCorpus
from corpus.read import Changing, Refusal, Skipped, read_text
from corpus.roots import Root
from corpus.rules import PinSet
from corpus.scan import FileRef
from live import codec
from live.changes import holds_text
from live.settle import hold_still
from retrieval.engine.library import Library
from retrieval.engine.memory import release_free_memory
from retrieval.engine.ranking import Ranking

P = ParamSpec("P")
R = TypeVar("R")

PARALLEL_FILES = 6000
"""A read of at least this many files not indexed yet goes to worker processes (below it, starting
them costs more than they save)."""
NICE = 10
"""How much lower a worker's scheduling priority is than the server's (POSIX `nice`)."""
PART = "part"
"""The key a worker's packed chunk is written and checked with."""


@dataclass(slots=True)
class Part:
    """What a worker sends back for one chunk."""

    arrays: dict[str, npt.NDArray[Any]]
    """The files it read and their units, packed as a cache entry is."""
    unread: list[str]
    """Relative paths left to the server: changed since stat'd, being written, or empty."""
    skipped: list[tuple[str, Refusal]]
    """(relative path, why) of the files not served."""


def workers() -> int:
    """How many worker processes a large read uses: one per core, at most four."""
    return max(1, min(os.cpu_count() or 1, 4))


def pool(count: int) -> ProcessPoolExecutor:
    """Worker processes, started with `spawn` (never `fork`: the server runs threads), as they
    are needed: each by a `submit`."""
    return _Pool(max_workers=count, mp_context=multiprocessing.get_context("spawn"), initializer=_quiet)


class _Pool(ProcessPoolExecutor):
    def submit(self, fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> Future[R]:
        with _main_left_alone():
            return super().submit(fn, *args, **kwargs)


@contextlib.contextmanager
def _main_left_alone() -> Iterator[None]:
    """Processes started meanwhile do not import the server's main module again. `spawn` imports
    the parent's `__main__` in every child (by path, or by module name), so that what it defines
    can be unpickled there; a worker needs nothing of it (it runs `read_part`, from this module),
    and for the server that import is the MCP SDK and the server's own modules, each worker's
    first second and a third of its memory. A main module named `__main__` is the one
    `multiprocessing` itself leaves alone in the child (a package's `__main__.py`), so that is the
    name it is given while the process starts."""
    with _STARTING:  # one at a time: two interleaved would leave the borrowed name in place
        main = sys.modules["__main__"]
        spec = getattr(main, "__spec__", None)
        main.__spec__ = importlib.machinery.ModuleSpec("__main__", None)
        try:
            yield
        finally:
            main.__spec__ = spec


_STARTING = threading.Lock()


def _quiet() -> None:
    """stdout is the MCP protocol's, and a worker inherits it: nothing a worker does may write
    there. And a worker yields the processor to the server: a call answered while the first index
    is built must not wait for a core."""
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    if hasattr(os, "nice"):  # not on Windows, where workers run at the server's priority
        os.nice(NICE)


def read_part(root: Root, refs: list[FileRef], max_bytes: int, settle_s: float, ranking: Ranking) -> Part:
    """Read, chunk and tokenize `refs` (files of `root` not indexed yet), in a worker process."""
    release_free_memory()  # what the chunk before left free (its scratch went back with it)
    hold_still(refs, settle_s)
    corpus = Corpus([root], PinSet(), max_bytes)
    library = Library(ranking)
    files, unread, skipped = [], [], []
    prepared = {}
    for ref in refs:
        try:
            text = read_text(root.path, ref.path, max_bytes, ref.identity)
        except Changing:
            unread.append(ref.rel)
            continue
        except Skipped as exc:
            skipped.append((ref.rel, exc.refusal))
            continue
        except NotInCorpus:
            continue  # gone since the walk: never indexed, nothing to remove
        if text.stamp != ref.stamp or text.size == 0:
            unread.append(ref.rel)
            continue
        f, units = library.prepare_file(corpus.corpus_file(ref, text), holds_text(root))
        files.append(f)
        prepared[f.path] = units
    library.apply(prepared)
    paths = [f.path for f in files]
    packed = codec.arrays(root, PART, codec.Saved(files, library.sections.pack(paths), library.windows.pack(paths)))
    return Part(packed, unread, skipped)
