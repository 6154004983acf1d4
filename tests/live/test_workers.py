"""The first read of a large docs root by worker processes: the index it leaves is the one a read
in the server's own process builds (same files, same skips, same scores), a worker that fails
leaves its files to the server, and a worker never imports the server's main module again. Through
a real server over stdio, the answers are whole once it is done: tests/promises/test_stdio.py."""

from __future__ import annotations

import logging
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from corpus.roots import make_roots
from corpus.scan import walk
from live import sync, workers
from live.index import LiveIndex
from retrieval.engine.ranking import DEFAULT, Ranking
from tests.conftest import TEST_ENV, write_tree
from tests.live.support import DOCS, ranked

MIXED = {
    **DOCS,
    "guide/install.md": "---\ntitle: Installing\ntags: [setup]\n---\n# Install\n\nalpha setup steps\n\n## Linux\n\nbeta\n",
    "guide/setext.md": "Setext title\n============\n\ngamma under a setext heading\n\n```\n# not a heading\n```\n",
    "notes.txt": "plain text alpha notes without headings\n",
    "empty.md": "",
    "binary.md": "alpha\0beta",
    "big.md": "# Big\n\n" + "alpha " * 40_000,
}


def built(docs: Path, parallel_files: int, ranking: Ranking = DEFAULT) -> LiveIndex:
    return LiveIndex(
        make_roots([], [docs]), settle_s=0, ranking=ranking, max_bytes=100_000, parallel_files=parallel_files
    )


def assert_same_index(a: LiveIndex, b: LiveIndex) -> None:
    assert sorted(a.corpus.files) == sorted(b.corpus.files)
    for path, f in b.corpus.files.items():
        assert a.corpus.files[path].text == f.text and a.corpus.files[path].meta == f.meta
    assert [(s.rel, s.reason) for s in a.corpus.skipped] == [(s.rel, s.reason) for s in b.corpus.skipped]
    for query in ["alpha", "beta gamma", "setup linux", "setext title", "plain notes", "heading", "gamma7 alpha"]:
        assert ranked(a, query) == ranked(b, query)  # exact: same units, same floats, same order


def test_workers_build_the_index_a_read_in_process_builds(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    docs = write_tree(tmp_path / "docs", MIXED)
    with caplog.at_level(logging.INFO, logger="agents_context.index"):
        beside = built(docs, parallel_files=5)
    assert any("read by worker processes" in r.getMessage() for r in caplog.records)
    here = built(docs, parallel_files=0)
    assert_same_index(beside, here)
    assert {s.rel for s in beside.corpus.skipped} >= {"binary.md", "big.md"}
    assert "docs/empty.md" in beside.corpus.files  # left to the server's own read, and kept
    with beside.view() as view:
        assert len(view.library.windows._segments) == 1  # the chunks were merged: a query pays once
    beside.close()
    here.close()


def test_chunks_from_many_workers_merge_into_the_index_one_read_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = write_tree(
        tmp_path / "docs", MIXED | {f"more/{i}.md": f"# Page {i}\n\nterm{i} alpha{i % 3}\n" for i in range(12)}
    )
    monkeypatch.setattr(sync, "CHUNK", 3)  # seven chunks, each merged as it comes back
    beside = built(docs, parallel_files=5)
    here = built(docs, parallel_files=0)
    assert_same_index(beside, here)
    for query in ["term7", "alpha2 page", "page 11"]:
        assert ranked(beside, query) == ranked(here, query)
    beside.close()
    here.close()


def untokenizable(text: str) -> list[str]:
    """A tokenizer that cannot be sent to another process (it lives in a test module's closure)."""
    return list(DEFAULT.tokenize(text))


def test_a_worker_that_fails_leaves_its_files_to_the_server(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    docs = write_tree(tmp_path / "docs", MIXED)
    ranking = Ranking(tokenize=lambda text: untokenizable(text))  # a lambda: no worker can be sent it
    with caplog.at_level(logging.WARNING, logger="agents_context.index"):
        live = built(docs, parallel_files=5, ranking=ranking)
    assert any("reading them here" in r.getMessage() for r in caplog.records)
    here = built(docs, parallel_files=0, ranking=ranking)
    assert_same_index(live, here)
    live.close()
    here.close()


def test_a_worker_never_imports_the_servers_main_module_again(tmp_path: Path) -> None:
    """`spawn` imports the parent's main module in every child; for the server that is the MCP SDK
    and all of its modules, a second and tens of MB per worker for nothing a worker runs. A main
    module that notes each import of itself, starting workers as the server does: imported once,
    and the worker's chunk read all the same."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nalpha\n")
    marks = tmp_path / "imports.txt"
    main = tmp_path / "main.py"
    main.write_text(
        "import os, sys\n"
        "with open(os.environ['MARKS'], 'a') as f:\n"
        "    f.write(__name__ + '\\n')\n"
        "if __name__ == '__main__':\n"
        f"    sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})\n"
        "    import pickle\n"
        "    from pathlib import Path\n"
        "    from corpus.roots import make_roots\n"
        "    from corpus.scan import walk\n"
        "    from live import workers\n"
        "    from retrieval.engine.ranking import DEFAULT\n"
        "    root = make_roots([], [Path(sys.argv[1])])[0]\n"
        "    call = lambda refs: pickle.dumps((workers.read_part, (root, refs, 100_000, 0, DEFAULT)))\n"
        "    with workers.Pool(2) as pool:\n"
        "        [(_, part)] = pool.run([walk(root).files], call)\n"
        "    print(len(part.arrays['f_stat']), part.unread)\n"
    )
    done = subprocess.run(
        [sys.executable, str(main), str(tmp_path / "docs")],
        env={**os.environ, **TEST_ENV, "MARKS": str(marks)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "[]"]
    assert marks.read_text().split() == ["__main__"]  # not `__mp_main__` as well, in the worker


def test_a_worker_that_dies_fails_its_chunk_and_another_reads_the_rest(tmp_path: Path) -> None:
    docs = write_tree(tmp_path / "docs", {f"p{i}.md": f"# Page {i}\n\nalpha{i}\n" for i in range(4)})
    root = make_roots([], [docs])[0]
    refs = walk(root).files
    first, second = refs[:2], refs[2:]

    def call(part: object) -> bytes:
        if part == "die":  # the worker ends at once, as one the system killed would
            return pickle.dumps((os._exit, (3,)))
        return pickle.dumps((workers.read_part, (root, part, 100_000, 0, DEFAULT)))

    with workers.Pool(2) as pool:
        got = {str(part): read for part, read in pool.run([first, "die", second], call)}
    assert isinstance(got["die"], workers.Failed)
    for part in (first, second):
        read = got[str(part)]
        assert isinstance(read, workers.Part) and len(read.arrays["f_stat"]) == 2 and read.unread == []
    with workers.Pool(1) as pool:  # the only worker dies: the parts it never took fail too
        left = [(part, type(read)) for part, read in pool.run(["die", first], call)]
    assert left == [("die", workers.Failed), (first, workers.Failed)]


def test_workers_that_cannot_start_leave_the_read_to_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    docs = write_tree(tmp_path / "docs", MIXED)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python-here"))
    with caplog.at_level(logging.WARNING, logger="agents_context.index"):
        live = built(docs, parallel_files=5)
    assert any("could not start worker processes" in r.getMessage() for r in caplog.records)
    here = built(docs, parallel_files=0)
    assert_same_index(live, here)
    live.close()
    here.close()
