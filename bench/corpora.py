"""The benchmark's corpora, prepared once per run and given to every engine as the same tokens.

A prepared corpus is a list of sections (each a list of our tokens), grouped into files, plus the
queries to run on it. Real corpora go through our own reading, chunking and tokenizing code
(`corpus.catalog.load`, `retrieval.chunks.units`, `retrieval.text.tokenize`); synthetic ones are drawn from a
fixed seed. Everything is stored as flat integer arrays so a fresh worker process loads 300k
sections in a few seconds.

Corpora:
- `agents`: this repository's `.AGENTS/`, the heading sections `context_search` ranks.
- `tldr`: `../shared/corpora/tldr/` as a `--docs` root, the ~500-word windows `search_docs` ranks.
- `scifact`, `cranfield`: the classic collections of `../shared/eval/` (title + text, one document
  one section), with all their queries.
- `synthetic-N`: N sections from a fixed seed (see `synthetic`).

Queries: the eval collections bring theirs. Elsewhere, 3-term queries are sampled from the
document-frequency distribution with a fixed seed, half of them containing a term among the 1% of
terms with the highest df ("with-top1%"), half without ("no-top1%"), reported separately.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
TLDR = SHARED / "corpora" / "tldr"
EVAL = SHARED / "eval"

SEED = 20_260_607
WITH_TOP = "with-top1%"
NO_TOP = "no-top1%"
ALL = "all"

Int32 = npt.NDArray[np.int32]
Int64 = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Query:
    terms: list[str]
    kind: str
    text: str = ""


@dataclass(slots=True)
class Prepared:
    """Sections as token ids into `vocab`, grouped into files (a group's sections are contiguous)."""

    name: str
    vocab: list[str]
    ids: Int32
    """Every token of every section, flat."""
    offsets: Int64
    """Section i is ids[offsets[i]:offsets[i + 1]]."""
    groups: Int32
    """The file (group) of each section."""
    starts: Int32
    """Each section's start line (the tie-break key, with the file name)."""
    group_names: list[str]
    text_bytes: int
    """UTF-8 bytes of the sections' text (for the memory-to-text ratio)."""
    queries: list[Query] = field(default_factory=list)
    update_groups: list[int] = field(default_factory=list)
    update_words: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def n_sections(self) -> int:
        return len(self.offsets) - 1

    @property
    def n_tokens(self) -> int:
        return len(self.ids)

    def section_tokens(self) -> list[list[str]]:
        """Every section as a list of token strings (shared string objects, one per vocabulary term)."""
        words = np.array(self.vocab, dtype=object)
        flat = words[self.ids]
        bounds = self.offsets.tolist()
        return [flat[bounds[i] : bounds[i + 1]].tolist() for i in range(len(bounds) - 1)]

    def group_slices(self) -> list[tuple[int, int, int]]:
        """(group, first section, end section) for every group, in order."""
        if self.n_sections == 0:
            return []
        change = np.flatnonzero(np.diff(self.groups)) + 1
        firsts = [0, *change.tolist()]
        ends = [*change.tolist(), self.n_sections]
        return [(int(self.groups[a]), a, b) for a, b in zip(firsts, ends, strict=True)]

    # --- storage: flat arrays + a JSON side file ----------------------------------------------

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        np.savez(folder / "arrays.npz", ids=self.ids, offsets=self.offsets, groups=self.groups, starts=self.starts)
        side = {
            "name": self.name,
            "vocab": self.vocab,
            "group_names": self.group_names,
            "text_bytes": self.text_bytes,
            "queries": [{"terms": q.terms, "kind": q.kind, "text": q.text} for q in self.queries],
            "update_groups": self.update_groups,
            "update_words": self.update_words,
            "meta": self.meta,
        }
        (folder / "side.json").write_text(json.dumps(side))

    @classmethod
    def load(cls, folder: Path) -> Prepared:
        arrays = np.load(folder / "arrays.npz")
        side = json.loads((folder / "side.json").read_text())
        return cls(
            name=side["name"],
            vocab=side["vocab"],
            ids=arrays["ids"],
            offsets=arrays["offsets"],
            groups=arrays["groups"],
            starts=arrays["starts"],
            group_names=side["group_names"],
            text_bytes=side["text_bytes"],
            queries=[Query(q["terms"], q["kind"], q["text"]) for q in side["queries"]],
            update_groups=side["update_groups"],
            update_words=side["update_words"],
            meta=side["meta"],
        )


# --- from our own chunker and tokenizer ------------------------------------------------------------


class _Builder:
    """Accumulates token lists into a `Prepared`, giving each new term the next id."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.vocab: dict[str, int] = {}
        self.ids: list[int] = []
        self.offsets: list[int] = [0]
        self.groups: list[int] = []
        self.starts: list[int] = []
        self.group_names: list[str] = []
        self.text_bytes = 0

    def add_file(self, name: str, sections: Sequence[tuple[int, str, Sequence[str]]]) -> None:
        """One file: its (start line, text, tokens) sections."""
        group = len(self.group_names)
        self.group_names.append(name)
        vocab = self.vocab
        for start, text, tokens in sections:
            self.ids.extend(vocab.setdefault(t, len(vocab)) for t in tokens)
            self.offsets.append(len(self.ids))
            self.groups.append(group)
            self.starts.append(start)
            self.text_bytes += len(text.encode())

    def done(self, meta: dict[str, Any]) -> Prepared:
        return Prepared(
            name=self.name,
            vocab=list(self.vocab),
            ids=np.asarray(self.ids, dtype=np.int32),
            offsets=np.asarray(self.offsets, dtype=np.int64),
            groups=np.asarray(self.groups, dtype=np.int32),
            starts=np.asarray(self.starts, dtype=np.int32),
            group_names=self.group_names,
            text_bytes=self.text_bytes,
            meta=meta,
        )


def from_root(name: str, agents: Path | None, docs: Path | None, unit: str) -> Prepared:
    """A real folder read, chunked and tokenized by our own code; the seconds each step took are in meta.

    `unit` is "sections" (what context_search ranks: searchable `.AGENTS` files) or "windows"
    (what search_docs ranks: every file).
    """
    from corpus.catalog import load
    from corpus.roots import make_roots
    from retrieval.chunks.units import section_units, window_units
    from retrieval.text.tokenize import tokenize

    t0 = time.perf_counter()
    roots = make_roots([agents] if agents else [], [docs] if docs else [])
    corpus = load(roots)
    t_read = time.perf_counter() - t0
    chunk_s = tokenize_s = 0.0
    builder = _Builder(name)
    for f in corpus.files.values():
        if unit == "sections" and not f.searchable:
            continue
        t = time.perf_counter()
        units = section_units(f.path, f.uri, f.text) if unit == "sections" else window_units(f.path, f.uri, f.text)
        t2 = time.perf_counter()
        tokens = [tokenize(u.text) for u in units]
        t3 = time.perf_counter()
        chunk_s += t2 - t
        tokenize_s += t3 - t2
        builder.add_file(f.path, [(u.start_line, u.text, tk) for u, tk in zip(units, tokens, strict=True)])
    return builder.done(
        {
            "source": str(docs or agents),
            "unit": unit,
            "files": len(builder.group_names),
            "read_s": t_read,
            "chunk_s": chunk_s,
            "tokenize_s": tokenize_s,
        }
    )


def from_eval(name: str) -> Prepared:
    """SciFact or Cranfield: title + text of each document as one section (one file per document)."""
    from retrieval.text.tokenize import tokenize

    folder = EVAL / name
    builder = _Builder(name)
    tokenize_s = 0.0
    with (folder / "corpus.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            doc = json.loads(line)
            text = f"{doc.get('title', '')}\n{doc.get('text', '')}"
            t = time.perf_counter()
            tokens = tokenize(text)
            tokenize_s += time.perf_counter() - t
            builder.add_file(f"{name}/{doc['id']}", [(1, text, tokens)])
    prepared = builder.done({"source": str(folder), "unit": "documents", "tokenize_s": tokenize_s})
    with (folder / "queries.jsonl").open(encoding="utf-8") as lines:
        texts = [json.loads(line)["text"] for line in lines]
    prepared.queries = [Query(tokenize(t), ALL, t) for t in texts]
    return prepared


# --- synthetic ---------------------------------------------------------------------------------------

VOCAB = 1_000_000
ZIPF_S, ZIPF_Q = 1.3, 10.0
"""Zipf-Mandelbrot p(rank) ~ 1 / (rank + q)^s over a million words: the most frequent term is about
3% of the tokens (stop words are already gone), and the vocabulary grows like a docs tree full of
identifiers (about 100k distinct terms at 10k sections, 400k at 100k, 700k at 300k)."""
MIN_LEN, MAX_LEN = 50, 400
"""Section lengths in tokens, log-uniform between these (mean about 170)."""
TOPIC_SHARE, TOPIC_WORDS, TOPIC_MIN_RANK = 0.25, 8, 100
"""A quarter of a section's tokens come from its own 8 topic words (ranks 100 and rarer), so
terms repeat within a section and co-occur, as in real text; the rest follow the global Zipf."""
FILE_SECTIONS = (1, 8)
"""Sections per file, uniform."""


def _words(rng: np.random.Generator, n: int) -> list[str]:
    """n distinct lowercase pseudo-words, shorter for frequent ranks; never a stop word."""
    from retrieval.text.tokenize import STOP_WORDS

    lengths = np.clip(3 + np.floor(np.log2(np.arange(n) + 2) * 0.45) + rng.integers(-1, 3, n), 2, 14).astype(np.int64)
    letters = rng.integers(97, 123, size=(n, 14), dtype=np.uint8)
    seen: set[str] = set()
    words: list[str] = []
    for row, length in zip(letters, lengths.tolist(), strict=True):
        word = bytes(row[:length]).decode()
        while word in seen or word in STOP_WORDS:
            word = bytes(rng.integers(97, 123, size=length, dtype=np.uint8)).decode()
        seen.add(word)
        words.append(word)
    return words


def synthetic(n_sections: int, seed: int = SEED) -> Prepared:
    rng = np.random.default_rng(seed)
    words = _words(rng, VOCAB)
    weights = 1.0 / (np.arange(VOCAB) + 1 + ZIPF_Q) ** ZIPF_S
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]

    lengths = np.exp(rng.uniform(math.log(MIN_LEN), math.log(MAX_LEN + 1), n_sections)).astype(np.int64)
    total = int(lengths.sum())
    ranks = np.searchsorted(cdf, rng.random(total)).astype(np.int64)
    topic_floor = cdf[TOPIC_MIN_RANK - 1]
    topics = np.searchsorted(cdf, topic_floor + rng.random((n_sections, TOPIC_WORDS)) * (1 - topic_floor))
    section_of = np.repeat(np.arange(n_sections), lengths)
    topical = rng.random(total) < TOPIC_SHARE
    pick = rng.integers(0, TOPIC_WORDS, total)
    ranks[topical] = topics[section_of[topical], pick[topical]]
    ranks = np.minimum(ranks, VOCAB - 1)

    # Keep only the words that occur, numbered in order of rank.
    used = np.flatnonzero(np.bincount(ranks, minlength=VOCAB))
    compact = np.full(VOCAB, -1, dtype=np.int64)
    compact[used] = np.arange(len(used))
    vocab = [words[i] for i in used.tolist()]
    ids = compact[ranks].astype(np.int32)

    sizes: list[int] = []
    while sum(sizes) < n_sections:
        sizes.append(int(rng.integers(FILE_SECTIONS[0], FILE_SECTIONS[1] + 1)))
    sizes[-1] -= sum(sizes) - n_sections
    groups = np.repeat(np.arange(len(sizes)), sizes).astype(np.int32)
    starts = np.concatenate([1 + 20 * np.arange(s) for s in sizes]).astype(np.int32)
    word_bytes = np.array([len(w) for w in vocab], dtype=np.int64)
    text_bytes = int(word_bytes[ids].sum()) + total - n_sections
    return Prepared(
        name=f"synthetic-{_short(n_sections)}",
        vocab=vocab,
        ids=ids,
        offsets=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        groups=groups,
        starts=starts,
        group_names=[f"synthetic/file{g:06d}.md" for g in range(len(sizes))],
        text_bytes=text_bytes,
        meta={
            "seed": seed,
            "zipf": [ZIPF_S, ZIPF_Q],
            "vocab_drawn_from": VOCAB,
            "lengths": [MIN_LEN, MAX_LEN],
            "topic": [TOPIC_SHARE, TOPIC_WORDS],
            "files": len(sizes),
        },
    )


def _short(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 and n >= 1000 else str(n)


# --- queries and updates -----------------------------------------------------------------------------


def document_frequencies(p: Prepared) -> Int64:
    section_of = np.repeat(np.arange(p.n_sections, dtype=np.int64), np.diff(p.offsets))
    pairs = np.unique(section_of * len(p.vocab) + p.ids.astype(np.int64))
    return np.bincount(pairs % len(p.vocab), minlength=len(p.vocab)).astype(np.int64)


def top_terms(df: Int64) -> set[int]:
    """The 1% of (occurring) terms with the highest document frequency; at least one."""
    present = np.flatnonzero(df)
    n_top = max(1, math.ceil(0.01 * len(present)))
    order = present[np.argsort(-df[present], kind="stable")]
    return set(order[:n_top].tolist())


def _draw(rng: np.random.Generator, cdf: npt.NDArray[np.float64], pool: Int64, n: int) -> Iterator[list[int]]:
    while True:
        picks = pool[np.searchsorted(cdf, rng.random(n))].tolist()
        if len(set(picks)) == n:
            yield picks


def sample_queries(p: Prepared, per_kind: int, seed: int = SEED, terms: int = 3) -> list[Query]:
    """`per_kind` queries with a top-1% df term and `per_kind` without, terms drawn in proportion to df."""
    rng = np.random.default_rng(seed + 1)
    df = document_frequencies(p)
    top = top_terms(df)
    pools: dict[str, Int64] = {
        WITH_TOP: np.flatnonzero(df),
        NO_TOP: np.array(sorted(set(np.flatnonzero(df).tolist()) - top), dtype=np.int64),
    }
    queries: list[Query] = []
    for kind, pool in pools.items():
        if len(pool) < terms:
            continue
        cdf = np.cumsum(df[pool].astype(np.float64))
        cdf /= cdf[-1]
        found = 0
        for picks in _draw(rng, cdf, pool, terms):
            if kind == WITH_TOP and not top.intersection(picks):
                continue
            queries.append(Query([p.vocab[i] for i in picks], kind))
            found += 1
            if found == per_kind:
                break
    return queries


def choose_updates(p: Prepared, n: int, seed: int = SEED) -> None:
    """`n` distinct files to re-index one at a time, and the word each edit adds."""
    rng = np.random.default_rng(seed + 2)
    n_groups = len(p.group_names)
    picks = rng.choice(n_groups, size=min(n, n_groups), replace=False)
    p.update_groups = sorted(int(g) for g in picks)
    p.update_words = [p.vocab[int(i)] for i in rng.integers(0, len(p.vocab), len(p.update_groups))]


def edited(tokens: list[list[str]], word: str) -> list[list[str]]:
    """A file's sections after a small edit: each loses its first token and gains `word`."""
    return [[*t[1:], word] if t else [word] for t in tokens]


# --- the registry ----------------------------------------------------------------------------------


SYNTHETIC_SIZES = {"synthetic-10k": 10_000, "synthetic-100k": 100_000, "synthetic-300k": 300_000}
FULL = ["agents", "scifact", "cranfield", "tldr", *SYNTHETIC_SIZES]
SMOKE = ["agents", "synthetic-2k"]


def prepare(name: str, queries_per_kind: int, updates: int) -> Prepared:
    t0 = time.perf_counter()
    if name == "agents":
        p = from_root(name, REPO / ".AGENTS", None, "sections")
    elif name == "tldr":
        p = from_root(name, None, TLDR, "windows")
    elif name in ("scifact", "cranfield"):
        p = from_eval(name)
    elif name.startswith("synthetic-"):
        size = name.removeprefix("synthetic-")
        n = int(size[:-1]) * 1000 if size.endswith("k") else int(size)
        p = synthetic(n)
    else:
        raise SystemExit(f"unknown corpus {name!r}: one of {', '.join(FULL)}, or synthetic-N")
    if not p.queries:
        p.queries = sample_queries(p, queries_per_kind)
    choose_updates(p, updates)
    p.meta["prepare_s"] = time.perf_counter() - t0
    return p
