"""The cache entry codec: a root's files, units and postings as arrays and back, exactly; an entry for another key or root is refused."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from corpus.files import CorpusFile
from corpus.frontmatter import FrontMatter
from corpus.roots import Root, make_roots
from live import arrayfile
from live.codec import Saved, arrays, restore
from live.index import LiveIndex
from retrieval.chunks.units import Unit
from retrieval.engine.library import Library
from retrieval.engine.packing import Packed

TREE = {
    "overview.md": "# Overview\n\nPinned alpha.\n",
    "security.md": "# Security\n\nalpha beta rules.\n\n## Secrets\n\ngamma delta secrets.\n\n### Deeper\n\nepsilon.\n",
    "notes/deploy.md": "---\ntitle: Deploy notes\ndescription: How we ship\ntags: [release, ops]\nglobs: ['src/**/*.py', 'deploy/*']\n---\n# Deploy\n\nbeta epsilon deploy.\n\n## Rollback\n\nzeta rollback.\n",
    "rules/always.md": "---\nalwaysApply: true\ntitle: Always\n---\n# Always\n\neta always applies.\n",
    "unicode.md": "# Ünïcode 🚀\n\nnaïve café — 🚀 rocket theta.\n\n## Straße\n\nZürich iota 𝒳.\n",
    "crlf.md": "# Windows\r\n\r\nkappa lines end in CRLF.\r\n",
    "C#.md": "# Sharp\n\nzeta eta theta. See [the secret rules](security.md#secrets), [Zürich](./unicode.md).\n",
    "plain.txt": "iota kappa plain text\nwithout headings\n",
    "empty.md": "",
    "long.md": "# Long\n\n" + "\n\n".join(f"## Part {i}\n\n" + " ".join(["lambda"] * 300) for i in range(6)) + "\n",
}
QUERIES = [
    "alpha",
    "beta epsilon",
    "secrets",
    "deploy notes",
    "release ops",
    "rocket café",
    "straße",
    "secret rules",
    "zürich",
    "kappa",
    "lambda",
]


@pytest.fixture
def live(make_tree: Callable[..., Path]) -> LiveIndex:
    return LiveIndex(make_roots([make_tree(TREE)]), settle_s=0)


Entry = tuple[Root, list[CorpusFile], Packed[Unit], Packed[Unit], Packed[Unit]]


def packed(live: LiveIndex, root: Root | None = None) -> Entry:
    """A root's files (by relative path) and its packed sections, windows and links, as `LiveIndex.save` packs them."""
    root = root or live.roots[0]
    files = sorted(live.files_of(root).values(), key=lambda f: f.rel)
    paths = [f.path for f in files]
    return root, files, *live.library.pack(paths)


def assert_same_packed(got: Packed[Unit], want: Packed[Unit]) -> None:
    assert list(got.payloads) == list(want.payloads)  # text, lines, headings, trails, chunk ids, anchors, tags
    assert (
        list(got.groups) == list(want.groups)
        and list(got.orders) == list(want.orders)
        and list(got.words) == list(want.words)
    )
    for name in ("indptr", "docs", "tfs", "fwd", "counts", "lengths", "text"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name


def search(library: Library, query: str) -> list[tuple[str, float]]:
    terms = library.tokenize(query)
    return [(h.payload.id, h.score) for index in library.indexes for h in index.search(terms, 100)]


def test_a_root_comes_back_with_the_same_files_and_units(live: LiveIndex) -> None:
    root, files, sections, windows, links = packed(live)
    restored = restore(root, "key", arrays(root, "key", Saved(files, sections, windows, links)))
    assert list(restored.files) == files  # text, stamps, digest, pins and front matter
    assert_same_packed(restored.sections, sections)
    assert_same_packed(restored.windows, windows)
    assert_same_packed(restored.links, links)
    assert [(u.text, u.anchor) for u in restored.links.payloads] == [
        ("the secret rules", "security.md"),
        ("Zürich", "unicode.md"),
    ]


def test_restored_units_share_their_heading_trails(live: LiveIndex) -> None:
    root, files, sections, windows, links = packed(live)
    restored = restore(root, "key", arrays(root, "key", Saved(files, sections, windows, links)))
    units = [*restored.sections.payloads, *restored.windows.payloads]
    trails = {u.trail for u in units if u.trail}
    assert len({id(u.trail) for u in units if u.trail}) == len(trails) < len(units)  # one tuple per trail


def test_front_matter_comes_back_whole(live: LiveIndex) -> None:
    root, files, sections, windows, links = packed(live)
    restored = {f.rel: f for f in restore(root, "k", arrays(root, "k", Saved(files, sections, windows, links))).files}
    deploy = restored["notes/deploy.md"]
    assert deploy.meta == FrontMatter(
        "Deploy notes", "How we ship", ("release", "ops"), ("src/**/*.py", "deploy/*"), False, glob_key="globs"
    )
    assert deploy.title == "Deploy notes" and not deploy.pinned
    always = restored["rules/always.md"]
    assert always.meta.always_apply and always.meta.title == "Always" and always.pinned
    assert restored["security.md"].meta == FrontMatter()
    units = list(restore(root, "k", arrays(root, "k", Saved(files, sections, windows, links))).sections.payloads)
    assert {u.trail[0] for u in units if u.path == ".AGENTS/notes/deploy.md"} == {"Deploy notes"}
    assert {u.tags for u in units if u.path == ".AGENTS/notes/deploy.md"} == {("release", "ops")}


def test_units_after_non_ascii_text_come_back_from_the_right_offsets(live: LiveIndex) -> None:
    """A unit's text is stored as a character offset into its file's text: characters outside
    the BMP and multi-byte ones before it must not shift it."""
    root, files, sections, windows, links = packed(live)
    restored = restore(root, "k", arrays(root, "k", Saved(files, sections, windows, links)))
    by_id = {u.id: u for u in restored.sections.payloads}
    assert by_id[".AGENTS/unicode.md:5"].text == "## Straße\n\nZürich iota 𝒳."
    assert by_id[".AGENTS/unicode.md:1"].text == "# Ünïcode 🚀\n\nnaïve café — 🚀 rocket theta."


def test_a_restored_root_answers_searches_exactly_like_the_index_it_came_from(live: LiveIndex) -> None:
    root, files, sections, windows, links = packed(live)
    restored = restore(root, "k", arrays(root, "k", Saved(files, sections, windows, links)))
    library = Library(live.library.ranking)
    library.unpack((restored.sections, restored.windows, restored.links))
    for query in QUERIES:
        assert search(library, query) == search(live.library, query), query  # same units, floats and order


def test_an_entry_survives_the_trip_through_an_array_file(live: LiveIndex, tmp_path: Path) -> None:
    root, files, sections, windows, links = packed(live)
    path = tmp_path / "cache" / "root.index"
    path.parent.mkdir()
    with path.open("wb") as out:
        arrayfile.write(out, arrays(root, "k", Saved(files, sections, windows, links)))
    restored = restore(root, "k", arrayfile.read(path))
    assert list(restored.files) == files
    assert_same_packed(restored.sections, sections)
    assert_same_packed(restored.windows, windows)


def test_an_empty_root_comes_back_empty(make_tree: Callable[..., Path]) -> None:
    live = LiveIndex(make_roots([make_tree({})]), settle_s=0)
    root, files, sections, windows, links = packed(live)
    restored = restore(root, "k", arrays(root, "k", Saved(files, sections, windows, links)))
    assert list(restored.files) == [] and len(restored.sections.payloads) == 0 == len(restored.windows.payloads)


def test_a_unit_whose_text_is_not_in_its_file_at_its_line_is_kept_verbatim(live: LiveIndex) -> None:
    root, files, sections, windows, links = packed(live)
    odd = sections.payloads.index(next(u for u in sections.payloads if u.id == ".AGENTS/security.md:5"))
    units = list(sections.payloads)
    units[odd] = units[odd]._replace(source="## Secrets\n\ntext the file does not hold at line 5", at=0, end=-1)
    moved = units[odd + 1]._replace(start_line=1)  # its text is in the file, but not at this line
    units[odd + 1] = moved
    changed = dataclasses.replace(sections, payloads=units)
    restored = restore(root, "k", arrays(root, "k", Saved(files, changed, windows, links)))
    assert list(restored.sections.payloads) == units
    assert restored.sections.payloads[odd].text == "## Secrets\n\ntext the file does not hold at line 5"
    assert restored.sections.payloads[odd + 1] == moved


def test_a_unit_beyond_its_files_last_line_is_kept_verbatim(live: LiveIndex) -> None:
    root, files, sections, windows, links = packed(live)
    units = [
        u._replace(start_line=10_000, end_line=10_001) if u.path == ".AGENTS/C#.md" else u for u in windows.payloads
    ]
    restored = restore(
        root, "k", arrays(root, "k", Saved(files, sections, dataclasses.replace(windows, payloads=units), links))
    )
    assert list(restored.windows.payloads) == units


@pytest.mark.parametrize("key", ["another key", "", "KEY"])
def test_an_entry_restored_with_another_key_is_refused(live: LiveIndex, key: str) -> None:
    root, files, sections, windows, links = packed(live)
    encoded = arrays(root, "key", Saved(files, sections, windows, links))
    with pytest.raises(ValueError, match="another format or root"):
        restore(root, key, encoded)


def test_an_entry_restored_for_another_root_is_refused(live: LiveIndex, make_tree: Callable[..., Path]) -> None:
    root, files, sections, windows, links = packed(live)
    encoded = arrays(root, "key", Saved(files, sections, windows, links))
    (other,) = make_roots([make_tree(TREE, name="elsewhere/.AGENTS")])
    assert other.label == root.label  # the same label, another folder
    with pytest.raises(ValueError, match="another format or root"):
        restore(other, "key", encoded)


def test_an_entry_of_another_format_is_refused(live: LiveIndex) -> None:
    root, files, sections, windows, links = packed(live)
    encoded: dict[str, npt.NDArray[Any]] = arrays(root, "key", Saved(files, sections, windows, links))
    header = encoded["header"].tobytes().replace(b'"format": ', b'"format": 1')  # 7 -> 17, say
    encoded["header"] = np.frombuffer(header, dtype=np.uint8)
    with pytest.raises(ValueError, match="another format or root"):
        restore(root, "key", encoded)


@pytest.mark.parametrize("field", ["text", "rel"])
def test_a_string_holding_a_nul_character_cannot_be_encoded(live: LiveIndex, field: str) -> None:
    root, files, sections, windows, links = packed(live)
    files[1] = files[1]._replace(**{field: getattr(files[1], field) + "\0tail"})
    with pytest.raises(ValueError, match="NUL"):
        arrays(root, "key", Saved(files, sections, windows, links))


@pytest.mark.parametrize("digest", ["\0tail", "00", "zz" * 16])
def test_a_digest_that_is_not_16_bytes_in_hex_cannot_be_encoded(live: LiveIndex, digest: str) -> None:
    root, files, sections, windows, links = packed(live)
    files[1] = files[1]._replace(digest=digest)
    with pytest.raises(ValueError, match="digest"):
        arrays(root, "key", Saved(files, sections, windows, links))


def test_a_heading_holding_a_nul_character_cannot_be_encoded(live: LiveIndex) -> None:
    root, files, sections, windows, links = packed(live)
    units = [sections.payloads[0]._replace(heading="bad\0heading"), *sections.payloads[1:]]
    with pytest.raises(ValueError, match="NUL"):
        arrays(root, "key", Saved(files, dataclasses.replace(sections, payloads=units), windows, links))


def test_restored_files_belong_to_the_root_they_were_restored_for(live: LiveIndex) -> None:
    root, files, sections, windows, links = packed(live)
    restored = restore(root, "k", arrays(root, "k", Saved(files, sections, windows, links)))
    assert all(f.root is root for f in restored.files)  # what `Corpus.in_root` counts by
    assert [f.path for f in restored.files] == [f.path for f in files]
