"""The first read of a large docs root, shared with worker processes.

Reading, parsing and tokenizing tens of thousands of files is nearly all of a cold start, and in
the server's process all of it holds the GIL, so every call made meanwhile waited behind it. A
read of at least `PARALLEL_FILES` files nobody has indexed yet is cut into chunks that worker
processes (one per core, fresh interpreters on every platform: `Pool`) read, chunk and tokenize;
each sends its chunk back packed as a cache entry is (`live.codec`: integer arrays and one string
table, cheap to send), and the server only unpacks it into its index. A file a worker finds
changing since it was stat'd, or empty, is left to the server's own careful read (`live.settle`);
a chunk whose worker fails is read by the server as before.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import queue
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any, TypeVar

import numpy.typing as npt

from corpus.catalog import Corpus
from corpus.errors import NotInCorpus
from corpus.read import Changing, Refusal, Skipped, read_text
from corpus.roots import Root
from corpus.rules import PinSet
from corpus.scan import FileRef, SkippedFile
from live import codec
from live.changes import holds_text
from live.settle import hold_still
from retrieval.engine.library import Library
from retrieval.engine.memory import release_free_memory
from retrieval.engine.ranking import Ranking

T = TypeVar("T")
log = logging.getLogger("agents_context.index")

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


_BOOT = "import sys; sys.path[:] = sys.argv[1:]; from live.workers import serve; serve()"
"""A worker's whole command line program: this process's `sys.path`, then `serve`."""


class Failed(Exception):
    """A chunk no worker read: its worker failed, died, or could not be sent it."""


class Pool:
    """Worker processes, each this interpreter running `serve`, sent one chunk at a time through a
    pipe and answering on another. Not `multiprocessing`: its `spawn` imports the server's main
    module in every worker (the MCP SDK and all of ours: a second and tens of MB each), and its
    queues' semaphores start a resource tracker, a process of 12 MB that outlived the read. Plain
    subprocesses and pipes, on every platform; a thread per worker feeds it and collects its
    answers, so chunks come back in the order they are done."""

    def __init__(self, count: int) -> None:
        self._procs: list[subprocess.Popen[bytes]] = []
        try:
            for _ in range(count):
                self._procs.append(_start())
        except BaseException:
            self.close()  # the ones that did start
            raise

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def run(self, parts: list[T], send: Callable[[T], bytes]) -> Iterator[tuple[T, Part | Failed]]:
        """Each part and what a worker made of it (`send(part)`: the pickled call), as each is
        done; `parts` is emptied as they are taken. A part whose worker failed or died comes back
        as `Failed` (a worker that died reads nothing more; once none is left, neither do the
        parts not taken)."""
        todo: deque[T] = deque(parts)
        parts.clear()
        done: queue.SimpleQueue[tuple[T, bytes | Failed] | None] = queue.SimpleQueue()
        feeders = [threading.Thread(target=_feed, args=(p, todo, send, done), daemon=True) for p in self._procs]
        for feeder in feeders:
            feeder.start()
        running = len(feeders)
        while running:
            item = done.get()
            if item is None:
                running -= 1
                continue
            part, answer = item
            del item
            yield part, answer if isinstance(answer, Failed) else _answer(answer)
        while todo:
            yield todo.popleft(), Failed("no worker process is left")

    def close(self) -> None:
        """Stop every worker (a chunk being read is dropped)."""
        for proc in self._procs:
            for pipe in (proc.stdin, proc.stdout):
                with contextlib.suppress(OSError):
                    if pipe is not None:
                        pipe.close()
            with contextlib.suppress(OSError):
                proc.kill()
            proc.wait()


def _start() -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", _BOOT, *sys.path],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),  # no console window on Windows
    )


def _feed(
    proc: subprocess.Popen[bytes],
    todo: deque[T],
    send: Callable[[T], bytes],
    done: queue.SimpleQueue[tuple[T, bytes | Failed] | None],
) -> None:
    """Give `proc` the parts left, one at a time, until none is left or it fails."""
    assert proc.stdin is not None and proc.stdout is not None
    try:
        while True:
            try:
                part = todo.popleft()
            except IndexError:
                return
            try:
                message = send(part)
            except Exception as exc:  # what cannot be sent is read by the server
                done.put((part, Failed(f"it could not be sent: {exc}")))
                continue
            try:
                _write(proc.stdin, message)
                answer = _read(proc.stdout)
            except (OSError, EOFError, ValueError) as exc:  # ValueError: the pool closed its pipes
                done.put((part, Failed(f"the worker process ended ({type(exc).__name__})")))
                return
            done.put((part, answer))
    finally:
        done.put(None)


def _answer(message: bytes) -> Part | Failed:
    """A worker's answer, unpickled by the thread that adopts it (not the thread that read it,
    where it would wait in a queue as objects rather than as bytes)."""
    try:
        answer = pickle.loads(message)
    except pickle.UnpicklingError as exc:
        return Failed(f"its answer could not be read: {exc}")
    return answer if isinstance(answer, Part) else Failed(str(answer))


def _write(pipe: IO[bytes], message: bytes) -> None:
    pipe.write(len(message).to_bytes(8, "little"))
    pipe.write(message)
    pipe.flush()


def _read(pipe: IO[bytes]) -> bytes:
    size = int.from_bytes(_exactly(pipe, 8), "little")
    return _exactly(pipe, size)


def _exactly(pipe: IO[bytes], size: int) -> bytes:
    data = pipe.read(size)
    if len(data) != size:
        raise EOFError("the pipe closed")
    return data


def serve() -> None:
    """A worker's life: read a call from stdin, run it, answer on what was stdout, until stdin
    closes. The answers keep that pipe to themselves: anything else a worker prints goes to the
    server's stderr, which it inherits. A worker yields the processor to the server: a call
    answered while the first index is built must not wait for a core."""
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    if hasattr(os, "nice"):  # not on Windows, where workers run at the server's priority
        os.nice(NICE)
    calls = sys.stdin.buffer
    while True:
        try:
            message = _read(calls)
        except EOFError:
            return
        fn, args = pickle.loads(message)
        del message
        try:
            answer: object = fn(*args)
        except Exception as exc:  # told to the server, which reads the chunk itself
            answer = f"{type(exc).__name__}: {exc}"
        del fn, args  # nothing of this chunk is kept while the next one is read
        _write(answers, pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL))
        del answer


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
    packed = codec.arrays(root, PART, codec.Saved(files, *library.pack(paths)))
    return Part(packed, unread, skipped)


@dataclass(slots=True)
class Packed:
    """One chunk of a shared read as it came back."""

    refs: list[FileRef]
    saved: codec.Saved | None
    """Its files and their units, packed; None when its worker failed (then all are `unread`)."""
    skipped: list[SkippedFile]
    unread: list[FileRef]
    """The files left to this process: changing, empty, or in a chunk whose worker failed."""


def shared(
    root: Root, parts: list[list[FileRef]], max_bytes: int, settle_s: float, ranking: Ranking
) -> Iterator[Packed]:
    """`parts` (files of `root` not indexed yet) read by worker processes, each chunk as it comes
    back; each part is emptied once sent (the walk's records go with it). With no processes to
    be had, every chunk comes back unread."""
    trails: codec.Trails = {}  # one tuple per trail, shared by every chunk's units

    def call(part: list[FileRef]) -> bytes:
        return pickle.dumps((read_part, (root, part, max_bytes, settle_s, ranking)), protocol=pickle.HIGHEST_PROTOCOL)

    try:
        pool = Pool(min(workers(), len(parts)))
    except Exception as exc:  # no processes to be had (no interpreter to start, no room): read here
        log.warning("could not start worker processes (%s); reading %s here", exc, root.label)
        yield from (Packed(part, None, [], part) for part in parts)
        return
    with pool:
        for part, made in pool.run(parts, call):
            try:
                if isinstance(made, Failed):
                    raise made
                saved = codec.restore(root, PART, made.arrays, trails)
            except Exception as exc:  # a worker that failed or sent something unusable: read its chunk here
                log.warning("a worker failed on %d files of %s (%s); reading them here", len(part), root.label, exc)
                yield Packed(part, None, [], part)
                continue
            left = set(made.unread)
            skipped = [SkippedFile(root, rel, refusal) for rel, refusal in made.skipped]
            yield Packed(part, saved, skipped, [ref for ref in part if ref.rel in left])
